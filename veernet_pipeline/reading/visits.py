"""Visits a broken curve's path pays to another curve's line inside its own gaps, dropped before bridging.

A dashed, dotted, dash-dot or long-dash curve has no ink in its pen gaps, and its path there may be
absent (bridged later) or on any run. Where another curve's line runs near, the path sometimes
steps onto that line's run for a column or two and back, between two stretches of absence: the
bridge then draws a V from the curve's own line down to the other line and back (val 000097's
dashed curve dips onto the long-dash line every 30 columns). The picture says nothing of the
curve there but its own line either side, so such a visit is dropped and the gap bridged straight
(`gap_visits`).

What marks a visit: a run of at most `VISIT_COLUMNS` read columns, absent on both sides, every one of
them on a run another curve reads too (`extract.run_holders`), lying more than `VISIT_PX` off the
straight line between the curve's own runs either side (the nearest that are not such short shared
runs), with the whole stretch between them no longer than the bridge takes (`max_gap`).

Chosen on the first 80 val logs (the `cpu` model of 2026-12-06), with such runs of 3 columns or fewer
dropped from every curve: of the 1,637 on broken curves that moved more than 10 px, 1,116 came nearer
their truth and 501 went further; moves of 10 px or less were a coin toss (676 nearer, 694 further of
1,470: `VISIT_PX`). So only curves in a broken style alone in their kind: a solid curve has no pen gaps
(its absences are its line hidden by another; 37 nearer against 45 further), and for curves drawn alike
the shared run is where `untangle` settles which is which (80 against 82). docs/accuracy.md.
"""

from __future__ import annotations

import numpy as np
from scipy import ndimage

# The longest visit dropped, in read columns, and how far off the bridge it must lie (module docstring).
VISIT_COLUMNS = 3
VISIT_PX = 10.0


def gap_visits(rows: np.ndarray, states: np.ndarray, holders: np.ndarray, absent: int, max_gap: int,
               wrap_height: int | None = None) -> np.ndarray:
    """The columns of one curve's path that visit another curve's run between two of its own absences.

    Args:
        rows: the curve's refined rows before bridging (NaN where absent).
        states: its path (`absent` where it is absent).
        holders: how many curves read its run in each column (`extract.run_holders`).
        absent: the absent state.
        max_gap: the longest absence bridged; a visit is dropped only if the gap it leaves is bridged.
        wrap_height: the track's height for a curve with a backup scale (a gap whose two ends lie more than half
            of it apart is a wrap, whose visit is kept); None: none.

    Returns:
        Boolean (W,), True on the visits' columns.

    Shape:
        rows, states, holders: (W,).
    """
    present = (states != absent) & np.isfinite(rows)
    visits = np.zeros(rows.shape, dtype=bool)
    labels, count = ndimage.label(present)
    if count < 3:
        return visits
    index = np.arange(rows.size)
    starts = ndimage.minimum(index, labels, np.arange(1, count + 1)).astype(int)
    stops = ndimage.maximum(index, labels, np.arange(1, count + 1)).astype(int)
    shared = ndimage.minimum(holders > 1, labels, np.arange(1, count + 1)).astype(bool)
    short = (stops - starts + 1 <= VISIT_COLUMNS) & shared
    # Each short shared run is judged from the curve's own line: the nearest runs either side that are not such runs.
    own = np.flatnonzero(~short)
    for run in np.flatnonzero(short):
        nearest = np.searchsorted(own, run)  # own[nearest - 1] < run < own[nearest]
        if nearest == 0 or nearest == own.size:
            continue
        left, right = stops[own[nearest - 1]], starts[own[nearest]]
        if right - left - 1 > max_gap or (wrap_height is not None and abs(rows[right] - rows[left]) > wrap_height / 2):
            continue
        columns = np.arange(starts[run], stops[run] + 1)
        bridge = np.interp(columns, [left, right], [rows[left], rows[right]])
        if np.median(np.abs(rows[columns] - bridge)) > VISIT_PX:
            visits[columns] = True
    return visits
