"""benchmarks/confidence.py's shared stretches (expected values counted by hand)."""

from __future__ import annotations

import importlib
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


@pytest.fixture
def confidence(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    return importlib.import_module("confidence")


def test_shared_stretches_count_copies_by_length(confidence: ModuleType) -> None:
    # Curve a on its truth (row 10) throughout; curve b's truth is row 30. b touches a's line for one column
    # (column 2, 0.5 px away) and rides it for columns 6-11; curve c is never read.
    a = np.full(12, 10.0)
    b = np.array([30, 30, 10.5, 30, 30, 30, 10, 10, 10, 10, 10, 10], dtype=float)
    c = np.full(12, np.nan)
    rows = np.stack([a, b, c])
    truth = np.stack([np.full(12, 10.0), np.full(12, 30.0), np.full(12, 50.0)])
    counts = confidence.shared_stretches(rows, truth)
    # By hand: a 1-column stretch (bin 1-4) and a 6-column one (bin 5-19), b off its truth in both: one only.
    expected = np.zeros((len(confidence.STRETCHES), 4), dtype=np.int64)
    expected[0] = [1, 0, 1, 0]
    expected[1] = [6, 0, 6, 0]
    np.testing.assert_array_equal(counts, expected)
    # Both on their own truth where the truths meet: a true overlap counts as such.
    np.testing.assert_array_equal(confidence.shared_stretches(np.stack([a, a]), np.stack([a, a]))[1], [12, 12, 0, 0])
