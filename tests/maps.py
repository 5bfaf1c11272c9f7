"""Hand-made class-probability maps for the reading tests: curves painted where the test says, nothing learnt.

A curve is painted the way the renderer draws one: in each column a vertical run from halfway to
the left neighbour's row to halfway to the right one's (so a steep stroke stays connected), `pen`
rows tall at its flattest. Its pixels get 0.95 on the curve's class and 0.05 background; a later
curve overwrites an earlier one where they cross, as the renderer's crossing rule gives a
crossing pixel to one curve.
"""

from __future__ import annotations

import numpy as np

from veernet_pipeline.config import ExtractParams
from veernet_pipeline.io.calibration import Calibration
from veernet_pipeline.io.classes import NUM_CLASSES
from veernet_pipeline.reading.extract import trace_curves


def blank(height: int, width: int, channels: int = NUM_CLASSES) -> np.ndarray:
    """A map of paper only. Shape: (channels, H, W)."""
    probs = np.zeros((channels, height, width))
    probs[0] = 1.0
    return probs


def run_extents(rows: np.ndarray, pen: int = 2) -> tuple[np.ndarray, np.ndarray]:
    """First and last pixel row each column of a curve inks (inclusive).

    Shape:
        rows: (W,) subpixel rows of the pen's top edge. Returns (W,) int64 twice.
    """
    rows = np.asarray(rows, dtype=np.float64)
    left = np.concatenate([rows[:1], (rows[1:] + rows[:-1]) / 2])
    right = np.concatenate([(rows[1:] + rows[:-1]) / 2, rows[-1:]])
    low = np.floor(np.minimum(np.minimum(left, right), rows) + 0.5).astype(np.int64)
    high = np.floor(np.maximum(np.maximum(left, right), rows) + 0.5).astype(np.int64) + pen - 1
    return low, high


def paint(probs: np.ndarray, rows: np.ndarray, cls: int, columns: np.ndarray | None = None, pen: int = 2,
          p: float = 0.95) -> None:
    """Paint a curve of class `cls` along `rows` in `columns` (default all), in place."""
    height, width = probs.shape[1:]
    low, high = run_extents(rows, pen)
    for x in range(width) if columns is None else columns:
        lo, hi = max(low[x], 0), min(high[x], height - 1)
        probs[:, lo:hi + 1, x] = 0.0
        probs[cls, lo:hi + 1, x] = p
        probs[0, lo:hi + 1, x] = 1.0 - p


def dashes(width: int, ink: int, gap: int, phase: int = 0) -> np.ndarray:
    """Columns of a dash pattern: `ink` columns on, `gap` off."""
    x = np.arange(width)
    return x[((x + phase) % (ink + gap)) < ink]


def centre(rows: np.ndarray, pen: int = 2) -> np.ndarray:
    """Where a `pen`-row trace drawn from `rows` has its centre on flat stretches (pixel-index rows)."""
    return np.floor(np.asarray(rows, dtype=np.float64) + 0.5) + (pen - 1) / 2


def read_share(rows: np.ndarray, line: np.ndarray) -> float:
    """Share of columns where a read curve sits within 1.5 rows of a painted line's centre."""
    return float(np.mean(np.abs(rows - centre(line)) <= 1.5))


def sidecar(*styles: str) -> Calibration:
    """A sidecar naming RMED, RDEP and GR (as many as `styles`) in those styles, on a 0-100 linear scale."""
    curves = [{"mnemonic": name, "top_value": 0, "bottom_value": 100, "style": style}
              for name, style in zip(("RMED", "RDEP", "GR"), styles, strict=False)]
    return Calibration.from_dict({"depth": {"top": 0.0, "bottom": 10.0, "unit": "M"}, "curves": curves})


def worst_read_error(probs: np.ndarray, params: ExtractParams, classes: list[tuple[int, ...]],
                     drawn: list[np.ndarray], columns: np.ndarray) -> float:
    """Largest distance, in rows, between each curve as `trace_curves` reads it and its painted centre, over `columns`.

    Shape:
        probs: (C, H, W); drawn: K painted (W,) row arrays in the order of `classes`; columns: indices.
    """
    rows, _ = trace_curves(probs, params, classes)
    return float(np.nanmax(np.abs(rows[:, columns] - np.stack([centre(r) for r in drawn])[:, columns])))
