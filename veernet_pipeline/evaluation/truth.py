"""The truth a reading is scored against: where the sidecar draws each LAS curve, column by column.

A log's truth is its native LAS, read at the depth of every column
(`calibration.column_depths(W)`) and drawn through the sidecar (`drawn_tracks`: backup wrap,
edge pegging, skew), in track units: (image row + 0.5) / H, 0 = top edge, 1 = bottom edge.

One pixel column spans a stretch of depth, not a point: over it the curve sweeps every value
between halfway to its left neighbour and halfway to its right one, and the renderer inks exactly
that run. On a flat stretch the sweep is under a pixel; on a steep stroke it is the whole run, and
any row of it is the curve's value at some depth inside the column. `truth_band` gives that
sweep, and a read row inside it is scored as exact (`metrics.curve_metrics`): evaluation does not
punish reading the right stroke at the wrong depth inside one column.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from veernet_pipeline.io.calibration import Calibration
from veernet_pipeline.io.las import read_curves


def truth_values(las_path: Path, calibration: Calibration, width: int, n_curves: int) -> np.ndarray:
    """True curve values at each column's depth, NaN off the LAS depth range.

    Shape:
        Returns (n_curves, W).
    """
    depth, curves, _ = read_curves(las_path)
    columns = calibration.column_depths(width)
    order = np.argsort(depth)
    depth = np.asarray(depth, dtype=np.float64)[order]
    values = np.full((n_curves, width), np.nan)
    inside = (columns >= depth[0]) & (columns <= depth[-1])
    for k, scale in enumerate(calibration.curves[:n_curves]):
        if scale.mnemonic not in curves:
            raise ValueError(f"{las_path}: no curve {scale.mnemonic!r} (the calibration's curve {k}); "
                             f"it holds {sorted(curves)}")
        interpolated = np.interp(columns, depth, np.asarray(curves[scale.mnemonic], dtype=np.float64)[order])
        values[k] = np.where(inside, interpolated, np.nan)
    return values


def truth_tracks(las_path: Path, calibration: Calibration, width: int, n_curves: int, height: int) -> np.ndarray:
    """Where each true curve is drawn, in image track units ((image row + 0.5) / H), NaN off the LAS range.

    "Drawn" follows the sidecar: a value off the track sits on its backup scale (wrap) or pegged at
    the edge, and a skewed scan shifts every row by `calibration.skew_offset`. That is what the
    picture shows, so it is what a read-out of the picture is scored against; where the skew moves
    the drawn row past the image's top or bottom edge, the picture shows nothing and the truth is NaN.

    Shape:
        Returns (n_curves, W).
    """
    return drawn_tracks(truth_values(las_path, calibration, width, n_curves), calibration, height)


def drawn_tracks(values: np.ndarray, calibration: Calibration, height: int) -> np.ndarray:
    """`truth_tracks` from values already read (`truth_values`), so a caller needing both reads the LAS once.

    Shape:
        values: (n_curves, W). Returns (n_curves, W).
    """
    n_curves, width = values.shape
    offset = calibration.skew_offset(np.arange(width))
    tracks = np.full((n_curves, width), np.nan)
    for k in range(n_curves):
        rows, _ = calibration.value_to_drawn_row(values[k], height, k)
        image_rows = rows + offset
        # The renderer inks the nearest pixel row, floor(row + 0.5), and drops rows outside the image.
        nearest = np.floor(np.nan_to_num(image_rows) + 0.5)
        shown = np.isfinite(values[k]) & (nearest >= 0) & (nearest <= height - 1)
        tracks[k] = np.where(shown, (image_rows + 0.5) / height, np.nan)
    return tracks


def truth_band(tracks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The stretch of the track each true curve sweeps over each column's depth extent.

    From halfway to the left neighbour's value to halfway to the right one's, with the column's own
    value: the run the renderer inks. A neighbour without truth, or more than half the track away
    (the other side of a wrap onto a backup scale), adds nothing.

    Shape:
        tracks: (K, W) in track units, NaN where there is no truth. Returns (lo, hi), each (K, W),
        NaN where `tracks` is.
    """
    tracks = np.asarray(tracks, dtype=np.float64)
    pad = np.full((tracks.shape[0], 1), np.nan)
    lo, hi = tracks.copy(), tracks.copy()
    for neighbour in (np.hstack([pad, tracks[:, :-1]]), np.hstack([tracks[:, 1:], pad])):
        with np.errstate(invalid="ignore"):
            same_stroke = np.abs(neighbour - tracks) <= 0.5
        halfway = np.where(same_stroke, (neighbour + tracks) / 2, tracks)
        lo, hi = np.fmin(lo, halfway), np.fmax(hi, halfway)
    return np.where(np.isfinite(tracks), lo, np.nan), np.where(np.isfinite(tracks), hi, np.nan)


def nearest_truth(pred: np.ndarray, truth: np.ndarray) -> np.ndarray:
    """For a one-curve prediction, the index of the true curve nearest to it in each column.

    A column without a prediction takes any true curve present there, so it counts as a miss.

    Shape:
        pred: (W,); truth: (N, W). Returns (W,) int64.
    """
    distance = np.abs(truth - pred[None])
    distance = np.where(np.isnan(distance), np.where(np.isnan(truth), np.inf, np.finfo(float).max), distance)
    return distance.argmin(axis=0)
