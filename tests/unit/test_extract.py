"""The joint Viterbi path keeps each curve's identity on hand-drawn class maps."""

from __future__ import annotations

import numpy as np
import pytest

from veernet_pipeline.config import ExtractParams, Settings
from veernet_pipeline.reading.extract import trace_curves

H, W = 96, 600


def _paint(probs: np.ndarray, rows: np.ndarray, cls: int, share: float, columns: np.ndarray) -> None:
    """Ink 2 px tall at `rows` in `columns`, `share` of it credited to class `cls`, the rest to the other curve."""
    other = 3 - cls
    for x in columns:
        y = int(round(rows[x]))
        for yy in (y, y + 1):
            if 0 <= yy < H:
                probs[:, yy, x] = 0.0
                probs[cls, yy, x] += 0.95 * share
                probs[other, yy, x] += 0.95 * (1 - share)
                probs[0, yy, x] = 0.05


def _maps() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    x = np.arange(W)
    truth_a = 48 + 30 * np.sin(x / 60.0)  # crosses B several times
    truth_b = np.full(W, 46.0) + 0.02 * x
    probs = np.zeros((3, H, W))
    probs[0] = 1.0
    dashes = x[(x % 28) < 18]  # curve B dashed: 18 px ink, 10 px gap
    _paint(probs, truth_b, 2, 0.8, dashes)
    gap = (x >= 300) & (x < 420)  # a 120-column faded stretch of curve A
    _paint(probs, truth_a, 1, 0.8, x[~gap])
    # Where the curves cross, the ink is shared and the class evidence is a coin toss.
    crossing = np.abs(truth_a - truth_b) < 2
    probs[1:, :, crossing] = np.where(probs[0:1, :, crossing] < 0.5, 0.475, probs[1:, :, crossing])
    # A stretch where the net mistakes dashed B for solid A: B's ink credited 70 % to class 1.
    confused = (x >= 150) & (x < 250) & (np.abs(truth_a - truth_b) > 6)
    for col in x[confused]:
        ink = probs[0, :, col] < 0.5
        ink[np.abs(np.arange(H) - truth_a[col]) < 3] = False
        probs[1, ink, col], probs[2, ink, col] = 0.8, 0.15
    # A grid line: a row of weak, unlabelled ink across the whole track.
    probs[:, 80, :] = [[0.68], [0.16], [0.16]]
    return probs, truth_a, truth_b


def test_identity_survives_crossings_dashes_and_a_grid_line(test_settings: Settings) -> None:
    probs, truth_a, truth_b = _maps()
    params: ExtractParams = test_settings.extract
    assert params.max_gap == 40
    rows, confidence = trace_curves(probs, params)
    apart = np.abs(truth_a - truth_b) > 3  # at a crossing both curves read the shared ink
    a_ok = np.isfinite(rows[0]) & apart
    # Curve A: never swapped to B or the grid line where it was read (2-px trace: centre at +0.5).
    assert np.abs(rows[0, a_ok] - (truth_a[a_ok] + 0.5)).max() <= 1.0
    assert np.nanmax(np.abs(rows[0, ~apart] - truth_a[~apart])) < 4
    # Curve B: its dash gaps (10 columns) are bridged; every column is within a pixel of the truth.
    assert np.isfinite(rows[1]).all()
    assert np.abs(rows[1, apart] - (truth_b[apart] + 0.5)).max() <= 1.5
    # The 120-column gap in A stays empty (longer than max_gap); nothing is invented there.
    assert np.isnan(rows[0, 310:410]).all()
    assert (confidence[0, 310:410] == 0).all()
    # Bridged dash gaps are flagged with zero confidence.
    assert (confidence[1, 20:28] == 0).all() and (confidence[1, 4:18] > 0.5).all()


def test_single_curve_and_shape_errors(test_settings: Settings) -> None:
    probs, truth_a, _ = _maps()
    single = np.stack([probs[0], probs[1] + probs[2]])
    single[:, 80, :] = [[1.0], [0.0]]
    rows, _ = trace_curves(single, test_settings.extract)
    assert rows.shape == (1, W)
    with pytest.raises(ValueError, match="C = 2"):
        trace_curves(np.zeros((4, 8, 8)), test_settings.extract)


def test_empty_map_gives_no_curve(test_settings: Settings) -> None:
    probs = np.zeros((3, 32, 64))
    probs[0] = 1.0
    rows, confidence = trace_curves(probs, test_settings.extract)
    assert np.isnan(rows).all() and (confidence == 0).all()
