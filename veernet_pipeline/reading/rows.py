"""The row a curve reads in each column of its path: a run's centre, a steep stroke's end, or across an upright stroke.

The path search (`reading.extract`) picks one run of ink per column for each curve; this module
turns that run into a row. A run no taller than about twice the stroke width is read at its
weighted centre; a taller one is a steep stroke, read at its far end where the path turns in that
column; a tall run reaching well past the curve's rows on both sides is an upright stroke the
curve crosses (a heavy depth line, lettering), read along the straight line between its rows
either side (docs/reading.md).
"""

from __future__ import annotations

import numpy as np

from veernet_pipeline.reading.candidates import Candidates

# A steep run reaching this many stroke widths past the curve's rows on both sides is an upright stroke the
# curve crosses (`refine_rows`); the rows are those of its nearest ordinary columns within PASS_COLUMNS.
PASS_STROKES = 2.0
PASS_COLUMNS = 4


def refine_rows(cands: Candidates, curve: int, path: np.ndarray, wrap_height: int | None = None) -> np.ndarray:
    """The row a curve reads in each column of its path: the run's centre, or its far end where a steep path turns.

    The stroke width is the median run height along the path. A run taller than twice that is a
    steep stroke: the column's depth extent sweeps the curve over the whole run, and the value at
    the column's centre is the run's middle where the stroke passes through, but its far end where
    the stroke turns back (both neighbours' centres on one side: a spike's tip). The far end is
    taken half a stroke width in, the centre of the tip's pen.

    A curve with a backup scale (`wrap_height`, the track's height) leaves one edge and re-enters at the
    other: a neighbour is on the side the short way round, so a stroke leaving through the bottom edge
    passes through its column rather than turning at the bottom (its next row, near the top, is below it).

    Shape:
        path: (W,) states (M = absent). Returns (W,) rows, NaN where absent.
    """
    m = cands.top.shape[1]
    width = path.shape[0]
    present = path < m
    cols = np.arange(width)
    safe = np.where(present, path, 0)
    centre = np.where(present, cands.centre[curve, cols, safe], np.nan)
    top = np.where(present, cands.top[cols, safe], np.nan)
    bottom = np.where(present, cands.bottom[cols, safe], np.nan)
    if not present.any():
        return centre
    height = bottom - top + 1.0
    stroke = float(np.nanmedian(height))
    before = np.concatenate([[np.nan], centre[:-1]])
    after = np.concatenate([centre[1:], [np.nan]])
    if wrap_height is not None:  # each neighbour where it lies the short way round the cylinder
        half_turn = wrap_height / 2.0
        before = centre + np.mod(before - centre + half_turn, wrap_height) - half_turn
        after = centre + np.mod(after - centre + half_turn, wrap_height) - half_turn
    steep = height > 2.0 * stroke
    tip_down = steep & (before < centre) & (after < centre)  # both neighbours above: the curve turns at the bottom
    tip_up = steep & (before > centre) & (after > centre)
    half = (stroke - 1.0) / 2.0
    rows = centre.copy()
    rows[tip_down] = bottom[tip_down] - half
    rows[tip_up] = top[tip_up] + half
    through, level = _passing(centre, top, bottom, steep, stroke)
    rows[through] = level[through]
    return rows


def _passing(centre: np.ndarray, top: np.ndarray, bottom: np.ndarray, steep: np.ndarray,
             stroke: float) -> tuple[np.ndarray, np.ndarray]:
    """Where the curve passes across an upright stroke (a heavy depth line, lettering), and its row there.

    A steep run whose ink reaches well past the curve's rows on both sides, the curve's rows being
    those of its nearest ordinary (not steep) columns within `PASS_COLUMNS` each side (one side
    only where the curve comes out of a gap), is no stroke of the curve's: a curve's steep stretch
    runs from one side's row to the other's, a spike's tip lies beyond them on one side only. There
    the curve reads the straight line between those rows.

    Shape:
        centre, top, bottom, steep: (W,). Returns (W,) bool and (W,) rows.
    """
    width = centre.shape[0]
    cols = np.arange(width)
    ordinary = np.isfinite(centre) & ~steep
    seen = np.where(ordinary, cols, -1)
    left = np.maximum.accumulate(seen)
    right = np.minimum.accumulate(np.where(ordinary, cols, width)[::-1])[::-1]
    left_at = np.concatenate([[-1], left[:-1]])  # the nearest ordinary column strictly before
    right_at = np.concatenate([right[1:], [width]])
    has_a = (left_at >= 0) & (cols - left_at <= PASS_COLUMNS)
    has_b = (right_at < width) & (right_at - cols <= PASS_COLUMNS)
    a, b = np.clip(left_at, 0, width - 1), np.clip(right_at, 0, width - 1)
    # A side without an ordinary column near (the curve enters from a gap) takes the other side's row.
    row_a = np.where(has_a, centre[a], centre[b])
    row_b = np.where(has_b, centre[b], centre[a])
    margin = PASS_STROKES * stroke
    with np.errstate(invalid="ignore"):
        through = steep & (has_a | has_b) & (top < np.minimum(row_a, row_b) - margin) & (
            bottom > np.maximum(row_a, row_b) + margin)
        level = row_a + (row_b - row_a) * (cols - a) / np.maximum(b - a, 1)
    return through, level
