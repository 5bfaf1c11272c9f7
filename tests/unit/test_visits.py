"""A broken curve's visits to another curve's line inside its own gaps: found by hand, dropped in the reading."""

from __future__ import annotations

from unittest import mock

import numpy as np
import pytest

from tests.maps import blank, dashes, paint
from veernet_pipeline.config import load_settings
from veernet_pipeline.io.classes import style_class
from veernet_pipeline.reading import extract
from veernet_pipeline.reading.extract import trace_curves
from veernet_pipeline.reading.visits import VISIT_COLUMNS, VISIT_PX, gap_visits

ABSENT = 8


def _path(runs: list[tuple[int, int, float]], width: int = 40, shared: tuple[int, ...] = ()) -> tuple[np.ndarray, ...]:
    """Rows, states and holders of a curve read on `runs` (first, last column, row), absent elsewhere; the columns
    in `shared` are on a run another curve reads too."""
    rows, states, holders = np.full(width, np.nan), np.full(width, ABSENT), np.ones(width, dtype=np.int64)
    for first, last, row in runs:
        rows[first:last + 1], states[first:last + 1] = row, 0
    holders[list(shared)] = 2
    return rows, states, holders


def test_gap_visits_by_hand() -> None:
    # Own line at row 10 up to column 9 and at 12 from column 22; columns 15-16 on another curve's run at row 30.
    # The bridge from (9, 10) to (22, 12) passes 10.92 and 11.08 there: 19 rows off, more than VISIT_PX.
    rows, states, holders = _path([(0, 9, 10.0), (15, 16, 30.0), (22, 39, 12.0)], shared=(15, 16))
    assert VISIT_COLUMNS >= 2 and VISIT_PX < 19
    np.testing.assert_array_equal(np.flatnonzero(gap_visits(rows, states, holders, ABSENT, 40)), [15, 16])
    # The same run 7 rows off the bridge (row 18), not shared in one of its columns, or with the gap longer than the
    # bridge takes (12 columns against 10): kept.
    near = _path([(0, 9, 10.0), (15, 16, 18.0), (22, 39, 12.0)], shared=(15, 16))
    assert not gap_visits(*near, ABSENT, 40).any()
    assert not gap_visits(rows, states, np.where(np.arange(40) == 16, 1, holders), ABSENT, 40).any()
    assert not gap_visits(rows, states, holders, ABSENT, 10).any()
    # VISIT_COLUMNS + 1 columns on the other run: a stretch of line, not a visit.
    long = _path([(0, 9, 10.0), (15, 15 + VISIT_COLUMNS, 30.0), (22, 39, 12.0)], shared=range(15, 16 + VISIT_COLUMNS))
    assert not gap_visits(*long, ABSENT, 40).any()


def test_gap_visits_across_a_wrap_and_in_a_row() -> None:
    # The line re-enters 70 rows from where it left on a 100-row track with a backup scale: a wrap, whose visit stays.
    rows, states, holders = _path([(0, 9, 10.0), (15, 16, 5.0), (22, 39, 80.0)], shared=(15, 16))
    assert not gap_visits(rows, states, holders, ABSENT, 40, wrap_height=100).any()
    # Without one, the bridge from (9, 10) to (22, 80) passes 42.3 and 47.7 there: the visit at 5 is dropped.
    assert gap_visits(rows, states, holders, ABSENT, 40).any()
    # Two visits in a row: the second is judged from the line before the first (row 10 at column 9), not from it.
    rows, states, holders = _path([(0, 9, 10.0), (13, 14, 30.0), (18, 18, 30.0), (24, 39, 10.0)], shared=(13, 14, 18))
    np.testing.assert_array_equal(np.flatnonzero(gap_visits(rows, states, holders, ABSENT, 40)), [13, 14, 18])


def _dips(upper_style: str) -> tuple[np.ndarray, np.ndarray]:
    """A curve in `upper_style` at row 20 (6 columns on, 14 off) over a long-dash line at row 45, the net naming the
    long-dash line in the upper style's class (0.6) in one gap column in 20; the upper curve read with and without
    the visits dropped. Returns its rows both ways."""
    upper, lower = style_class(upper_style), style_class("long_dash")
    probs = blank(80, 240)
    paint(probs, np.full(240, 45.0), lower)
    ink = dashes(240, 6, 14)
    paint(probs, np.full(240, 20.0), upper, ink)
    confused = [x for x in np.setdiff1d(np.arange(240), ink) if x % 20 == 13]
    probs[:, 45:47, confused] = 0.0
    probs[upper, 45:47, confused], probs[lower, 45:47, confused], probs[0, 45:47, confused] = 0.6, 0.35, 0.05
    params, classes = load_settings(None, "cpu").extract, [(lower,), (upper,)]
    dropped, _ = trace_curves(probs, params, classes)
    with mock.patch.object(extract, "gap_visits", lambda rows, *_, **__: np.zeros(rows.shape, dtype=bool)):
        kept, _ = trace_curves(probs, params, classes)
    return dropped[1, 10:-10], kept[1, 10:-10]


@pytest.mark.parametrize("style", ["dashed", "dotted"])
def test_a_broken_curve_does_not_dip_onto_the_line_below_in_its_gaps(style: str) -> None:
    dropped, kept = _dips(style)
    # Its pen draws rows 20-21 (centre 20.5); the long-dash line's 45-46 (45.5).
    assert np.nanmax(np.abs(dropped - 20.5)) < 1e-6
    assert np.nanmax(np.abs(kept - 20.5)) == pytest.approx(25.0)  # the V the visit drew


def test_a_solid_curve_keeps_its_visits() -> None:
    # A solid line has no pen gaps: where it is missing, another line may hide it, and its visit is not dropped.
    dropped, kept = _dips("solid")
    np.testing.assert_array_equal(dropped, kept)
