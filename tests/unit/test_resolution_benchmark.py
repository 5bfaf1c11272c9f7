"""benchmarks/resolution.py's own parts: the enlarged scan and the per-curve scores (hand-computed)."""

from __future__ import annotations

import importlib
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


@pytest.fixture
def resolution(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """benchmarks/resolution.py as its command line runs it: with its folder on the import path."""
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    return importlib.import_module("resolution")


def test_a_1_bit_scan_is_enlarged_by_replication_and_a_gray_one_smoothly(resolution: ModuleType) -> None:
    bilevel = np.array([[0, 255], [255, 255]], np.uint8)
    np.testing.assert_array_equal(resolution.enlarge(bilevel, 2.0), np.kron(bilevel, np.ones((2, 2), np.uint8)))
    gray = np.array([[0, 200], [200, 200]], np.uint8)
    big = resolution.enlarge(gray, 2.0)
    assert big.shape == (4, 4) and len(np.unique(big)) > 2  # bilinear: values between 0 and 200 appear


def test_curve_scores_assign_curves_drawn_alike_and_score_each(resolution: ModuleType) -> None:
    height = 100
    truth = np.array([np.full(50, 0.2), np.linspace(0.5, 0.9, 50)])
    # Read in the other order and exactly on the truth's rows (row r is track fraction (r + 0.5) / height).
    rows = truth[::-1] * height - 0.5
    scores = resolution.curve_scores(rows, truth, [(2,), (2,)], ["solid", "solid"], height)
    assert [s["style"] for s in scores] == ["solid", "solid"]
    assert scores[1]["r2"] == pytest.approx(1.0) and scores[1]["mae"] == pytest.approx(0.0, abs=1e-12)
    assert scores[0]["mae"] == pytest.approx(0.0, abs=1e-12)
    # A reading 5 rows low everywhere: 0.05 of the track from a flat truth. A rising truth's band reaches half a
    # step (0.4 / 49 / 2) towards the reading in every column but the last, which has no right neighbour.
    worse = resolution.curve_scores(truth * height - 0.5 + 5.0, truth, [(2,), (3,)], ["solid", "dashed"], height)
    half_step = 0.4 / 49 / 2
    assert [s["mae"] for s in worse] == pytest.approx([0.05, (49 * (0.05 - half_step) + 0.05) / 50])
