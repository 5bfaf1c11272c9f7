"""Curve geometry: from native samples to the exact set of pixels a curve inks.

The drawn row of a curve in column x is what a reader of the LAS and the sidecar computes:
interpolate the native samples at the column's depth, map the value through the curve's scale,
wrap it onto a backup scale when it leaves the track (or peg it at the edge), add the skew offset
of column x, and take the nearest row, ``floor(row + 0.5)``.

A stroke is then built as pixel lists, never as full-image layers (the image is up to 640 x 12800
and a curve touches a few hundred thousand pixels at most):

1. each column gets the vertical run from its row halfway towards both neighbours' rows, so steep
   stretches stay 8-connected; a neighbour drawn on another backup scale pulls the run to the
   track edge instead (the curve leaves through one edge and re-enters through the other);
2. every run pixel gets a position along the curve (arc length), and a broken style keeps the
   pixels on its pattern's ink stretches; pen skips drop whole columns;
3. the kept pixels are thickened to the line width by offsets over a width x width square
   (``(width - 1) // 2`` before, ``width // 2`` after, in rows and columns). An even width cannot
   be centred on the pixel grid, so the side that gets the extra pixel alternates with the parity
   of the other coordinate: the stroke stays centred on its curve. Always putting it after would
   draw a steep stretch half a column late, half its row change per column away from its depth;
   for a 2 px curve falling 40 px per column that is 20 px, a misread no reader could avoid;
4. pixels outside the image or outside the (skewed) track are dropped.
"""

from __future__ import annotations

import numpy as np

from veernet_pipeline.io.calibration import Calibration
from veernet_pipeline.synthetic.styles import CurveStyle, pattern_on


def nearest_row(rows: np.ndarray) -> np.ndarray:
    """The pixel row holding a subpixel row (pixel centres at integers). Shape: like `rows`, int64."""
    return np.floor(np.asarray(rows, dtype=np.float64) + 0.5).astype(np.int64)


def track_top(calibration: Calibration, width: int) -> np.ndarray:
    """Image row of track row 0 in each column (0 everywhere without skew). Shape: (W,) int64."""
    return nearest_row(calibration.skew_offset(np.arange(width)))


def drawn_rows(calibration: Calibration, depth: np.ndarray, values: np.ndarray, width: int, height: int,
               curve: int) -> tuple[np.ndarray, np.ndarray]:
    """Subpixel image row and wrap count of a curve in each column.

    Returns:
        (rows, wraps), both shape (W,): rows float64 with backup wrap, edge pegging and skew applied;
        wraps int64, the backup scale each column is drawn on (see `Calibration.row_to_value`).
    """
    at_columns = np.interp(calibration.column_depths(width), depth, values)
    rows, wraps = calibration.value_to_drawn_row(at_columns, height, curve)
    return rows + calibration.skew_offset(np.arange(width)), wraps


def _shifted(a: np.ndarray, step: int) -> np.ndarray:
    # Neighbour values: step -1 gives each column its left neighbour, +1 its right; the ends repeat.
    return np.concatenate((a[:1], a[:-1])) if step < 0 else np.concatenate((a[1:], a[-1:]))


def centre_runs(rows: np.ndarray, wraps: np.ndarray, top: np.ndarray, height: int) -> tuple[np.ndarray, ...]:
    """Per-column vertical runs of a one-pixel stroke.

    Returns:
        (row, low, high): the nearest row and the inclusive run bounds in each column, clipped to
        the track and the image (low > high where nothing is drawn). Shape: (W,) each.
    """
    row = nearest_row(rows)
    low, high = row.copy(), row.copy()
    far = 2 * height
    for step in (-1, 1):
        other, other_wraps = _shifted(row, step), _shifted(wraps, step)
        # A neighbour drawn on another backup scale lies beyond an edge: run to that edge.
        target = np.where(other_wraps == wraps, other, row + np.sign(other_wraps - wraps) * far)
        half = (row + target) / 2.0
        low = np.minimum(low, np.ceil(half).astype(np.int64))
        high = np.maximum(high, np.floor(half).astype(np.int64))
    floor_row, ceil_row = np.maximum(top, 0), np.minimum(top + height - 1, height - 1)
    return row, np.maximum(low, floor_row), np.minimum(high, ceil_row)


def stroke_pixels(rows: np.ndarray, wraps: np.ndarray, top: np.ndarray, height: int,
                  style: CurveStyle) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The pixels a curve inks and their gray levels.

    Args:
        rows, wraps: from `drawn_rows`. Shape: (W,).
        top: `track_top` of the image. Shape: (W,).
        height: image (and track) height H.
        style: the curve's style.

    Returns:
        (ys, xs, grays): pixel coordinates (int64) and ink gray (float32); a pixel may repeat.
    """
    width = rows.size
    row, low, high = centre_runs(rows, wraps, top, height)
    lengths = np.maximum(high - low + 1, 0)
    xs = np.repeat(np.arange(width), lengths)
    first = np.cumsum(lengths) - lengths
    ys = low[xs] + (np.arange(xs.size) - first[xs])
    if style.pattern:
        unwrapped = (row + wraps * height).astype(np.float64)
        arc = np.concatenate(([0.0], np.cumsum(np.hypot(1.0, np.diff(unwrapped)))))
        # Along the run, arc length grows in the direction the curve travels through the column.
        heading = np.sign(_shifted(unwrapped, 1) - _shifted(unwrapped, -1))
        heading[heading == 0] = 1.0
        keep = pattern_on(arc[xs] + (ys - row[xs]) * heading[xs], style.pattern, style.phase)
        ys, xs = ys[keep], xs[keep]
    if style.gaps:
        keep = style.column_inked(width)[xs]
        ys, xs = ys[keep], xs[keep]
    grays = style.column_grays(width)[xs]
    if style.width > 1:
        before, after = (style.width - 1) // 2, style.width // 2
        offsets = [(dy, dx) for dy in range(-before, after + 1) for dx in range(-before, after + 1)]
        # Mirror the offsets on odd rows (columns) so an even width's extra pixel alternates sides;
        # for an odd width the mirrored square is the same square.
        row_sign = np.where(ys % 2 == 0, 1, -1)
        column_sign = np.where(xs % 2 == 0, 1, -1)
        ys, xs = (np.concatenate([ys + dy * column_sign for dy, _ in offsets]),
                  np.concatenate([xs + dx * row_sign for _, dx in offsets]))
        grays = np.tile(grays, len(offsets))
    inside = (xs >= 0) & (xs < width)
    ys, xs, grays = ys[inside], xs[inside], grays[inside]
    column_top = top[xs]
    inside = (ys >= np.maximum(column_top, 0)) & (ys <= np.minimum(column_top + height - 1, height - 1))
    return ys[inside], xs[inside], grays[inside]
