"""benchmarks/wrong_columns.py: a curve's wrong columns sorted by kind, and the R^2 with each kind mended, by hand."""

from __future__ import annotations

import importlib
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

H, W = 100, 20
X = np.arange(W)


@pytest.fixture
def wrong_columns(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """benchmarks/wrong_columns.py as its command line runs it: with its folder on the import path."""
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[2] / "benchmarks"))
    return importlib.import_module("wrong_columns")


def _two_curves() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Curve 0 read on curve 1's line in columns 5-7 and bridged 0.13 too low in columns 12-19; right elsewhere."""
    truth = np.stack([0.3 + 0.001 * X, np.full(W, 0.6)])
    pred = truth.copy()
    pred[0, 5:8] = 0.6
    pred[0, 12:] = 0.45
    confidence = np.ones((2, W))
    confidence[0, 12:] = 0.0
    return pred, confidence, truth


def test_wrong_columns_fall_into_their_kinds(wrong_columns: ModuleType) -> None:
    pred, confidence, truth = _two_curves()
    records = wrong_columns.curve_records(pred, confidence, truth, ["dashed", "solid"], H)
    first = records[0]
    # By hand: 3 columns on curve 1's line (one stretch of 3: a blip), 8 bridged, none steep (0.1 row a column).
    assert (first["n on another curve"], first["n bridged"], first["n blip"], first["n steep"],
            first["n all wrong"]) == (3, 8, 3, 0, 11)
    assert first["read"] == W and records[1]["n all wrong"] == 0
    # With every wrong column in its band the curve reads exactly; each kind alone mends part of it.
    assert first["r2 all wrong"] == pytest.approx(1.0)
    assert first["r2"] < first["r2 on another curve"] < 1.0 and first["r2"] < first["r2 bridged"] < 1.0


def test_steep_columns_are_where_the_truth_moves_fast(wrong_columns: ModuleType) -> None:
    truth = np.stack([0.1 + 0.04 * X])  # 4 rows a column: not steep
    truth[0, 10:] = 0.5 + 0.08 * (X[10:] - 10)  # 8 rows a column from column 10
    pred = truth + 0.1
    kinds = wrong_columns.wrong_kinds(pred, np.ones((1, W)), truth, *wrong_columns.truth_band(truth), 0, H)
    # np.gradient, central differences: (0.58 - 0.46) / 2 x 100 = 6 rows at column 10 (not more than 6), 8 after.
    np.testing.assert_array_equal(np.flatnonzero(kinds["steep"]), np.arange(11, W))
    assert kinds["all wrong"].all() and not kinds["blip"].any()
