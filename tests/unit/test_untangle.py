"""Curves drawn alike at a contact: the one that jumped onto the other's line jumps off it (`untangle.jumped`)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from tests.maps import blank, paint, worst_read_error
from veernet_pipeline.config import Settings
from veernet_pipeline.io.classes import style_class
from veernet_pipeline.reading import extract, untangle
from veernet_pipeline.reading.untangle import jumped

SOLID = style_class("solid")


def _ride(after: tuple[float, float]) -> np.ndarray:
    """Curve 0 at row 20 and curve 1 at 60 in columns 0-9; both on curve 1's line (60) in 10-19; `after` in 20-29."""
    rows = np.full((2, 30), 60.0)
    rows[0, :10] = 20.0
    rows[:, 20:] = np.asarray(after)[:, None]
    return rows


def test_the_curve_that_rode_in_but_stayed_on_swaps_its_tail() -> None:
    rows = _ride((60.0, 20.0))  # curve 0 jumped 20 -> 60 at column 10 and stays; curve 1 jumps 60 -> 20 at 20
    assert jumped(rows, 0, 1, 10, 19) is True
    confidence = np.stack([np.full(30, 0.9), np.full(30, 0.4)])
    untangle.untangle(rows, confidence, [(0, 1)])
    np.testing.assert_array_equal(rows[0, 20:], np.full(10, 20.0))
    np.testing.assert_array_equal(rows[1, 20:], np.full(10, 60.0))
    np.testing.assert_array_equal(confidence[0, 20:], np.full(10, 0.4))


def test_the_curve_that_rode_in_and_jumped_off_keeps_its_tail() -> None:
    rows = _ride((20.0, 60.0))
    assert jumped(rows, 0, 1, 10, 19) is False


@pytest.mark.parametrize(("edit", "why"), [
    (lambda r: r.__setitem__((0, slice(0, 10)), 57.0), "both steady into the contact: a touch or crossing"),
    (lambda r: r.__setitem__((1, slice(0, 10)), 30.0), "both jump into it (60 - 30 = 30 > 8)"),
    (lambda r: r.__setitem__((slice(None), slice(20, None)), 60.0), "both steady out of it"),
])
def test_no_decision_when_the_rows_do_not_single_out_one_jump_each_side(
        edit: Callable[[np.ndarray], None], why: str) -> None:
    rows = _ride((60.0, 20.0))
    edit(rows)
    assert jumped(rows, 0, 1, 10, 19) is None, why


def test_an_absent_row_before_the_contact_counts_as_a_jump_and_a_scan_edge_decides_nothing() -> None:
    rows = _ride((60.0, 20.0))
    rows[0, :10] = np.nan  # curve 0 comes out of an absence onto curve 1's line
    assert jumped(rows, 0, 1, 10, 19) is True
    # The largest steady step is STEADY_PX: 8 rows is steady, 8.5 a jump (by hand on the column before).
    steady, jump = _ride((60.0, 20.0)), _ride((60.0, 20.0))
    steady[0, :10], jump[0, :10] = 52.0, 51.5
    assert jumped(steady, 0, 1, 10, 19) is None and jumped(jump, 0, 1, 10, 19) is True
    assert jumped(rows, 0, 1, 0, 19) is None and jumped(rows, 0, 1, 10, 29) is None


@pytest.mark.parametrize("gap", [(300, 420), (300, 520)])
def test_a_curve_riding_the_other_through_its_pen_gap_comes_back_to_its_own_line(
        test_settings: Settings, gap: tuple[int, int], monkeypatch: pytest.MonkeyPatch) -> None:
    height, width = 96, 800
    x = np.arange(width)
    top, low = 24 + 6 * np.sin(x / 61.0), 70 + 6 * np.cos(x / 54.0)
    probs = blank(height, width)
    paint(probs, top, SOLID, np.r_[0:gap[0], gap[1]:width])  # the top curve's pen lifts over the gap
    paint(probs, low, SOLID)
    drawn = np.r_[0:gap[0], gap[1]:width]

    def worst_error() -> float:
        return worst_read_error(probs, test_settings.extract, [(SOLID,), (SOLID,)], [top, low], drawn)

    assert worst_error() <= 1.0
    # Without the rule the search rides the low curve through the gap and sends the wrong one off (~46 rows apart).
    monkeypatch.setattr(untangle, "jumped", lambda *args: None)
    assert worst_error() > 30


def _handed(before: tuple[float, float], after: tuple[float, float]) -> np.ndarray:
    """Curves 0 and 1 at `before` in columns 0-9 and at `after` from column 10 on (one jump each, at column 10)."""
    rows = np.empty((2, 20))
    rows[:, :10], rows[:, 10:] = np.asarray(before)[:, None], np.asarray(after)[:, None]
    return rows


def test_a_line_handed_over_in_a_steep_stroke_goes_back_to_the_stroke() -> None:
    # Val log 000441 as read: the curve at 260 jumped to 159 just as the one at 401 landed on 258. By hand: as read
    # 101 + 143 = 244 rows moved; traded, 260 -> 258 stays and one stroke 401 -> 159 moves 242.
    rows = _handed((260.0, 401.0), (159.0, 258.0))
    assert untangle.handed_off(rows, 0, 1, 10, 10)
    confidence = np.stack([np.full(20, 0.9), np.full(20, 0.4)])
    untangle.hand_offs(rows, confidence, [(0, 1)])
    np.testing.assert_array_equal(rows, _handed((260.0, 401.0), (258.0, 159.0)))
    np.testing.assert_array_equal(confidence[0, 10:], np.full(10, 0.4))


@pytest.mark.parametrize(("before", "after", "why"), [
    ((275.0, 463.0), (470.0, 262.0), "both jumped across each other's lines: 395 rows as read, 20 traded"),
    ((100.0, 300.0), (150.0, 200.0), "two moves apart: traded, both would move (100 -> 200, 300 -> 150)"),
    ((260.0, 401.0), (260.0, 159.0), "read as one stroke already: only one moved"),
    ((260.0, 401.0), (159.0, 380.0), "traded, 260 -> 380 and 401 -> 159: both would move"),
    ((300.0, 401.0), (420.0, 296.0), "traded, 300 -> 296 stays but 401 -> 420 passes no line: 225 rows against 23"),
    ((260.0, 401.0), (159.0, np.nan), "no level after the jump for one of them"),
])
def test_no_hand_off_where_trading_does_not_leave_one_stroke_through_a_line(
        before: tuple[float, float], after: tuple[float, float], why: str) -> None:
    rows = _handed(before, after)
    assert not untangle.handed_off(rows, 0, 1, 10, 10), why
    kept = rows.copy()
    untangle.hand_offs(rows, np.zeros_like(rows), [(0, 1)])
    np.testing.assert_array_equal(rows, kept)


def test_the_trade_starts_where_it_leaves_the_fewest_rows_stepped() -> None:
    # Columns 2-5 of a zigzag hand-off, by hand: trading from column 3 leaves curve 0 at 100 (0 rows stepped) and
    # curve 1 200 -> 60 -> 20 (180); from column 4, curve 0 100 -> 60 -> 100 (80) and curve 1 200 -> 100 -> 20 (180).
    rows = np.array([[100, 100, 100, 60, 20, 20, 20, 20], [200, 200, 200, 100, 100, 100, 100, 100]], dtype=float)
    assert untangle.least_steps_cut(rows, 0, 1, 3, 4) == 3


def test_a_steep_stroke_across_a_line_drawn_alike_keeps_both_identities(
        test_settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    height, width = 160, 400
    x = np.arange(width)
    line = 60.0 + 3.0 * np.sin(x / 9.0)
    stroke = np.full(width, 120.0)  # jumps to 15 across the line in 5 columns, stays, and comes back in 5
    stroke[150:250] = 15.0
    stroke[145:150], stroke[250:255] = np.linspace(120, 15, 7)[1:-1], np.linspace(15, 120, 7)[1:-1]
    probs = blank(height, width)
    paint(probs, line, SOLID)
    paint(probs, stroke, SOLID)
    flat = np.r_[0:140, 160:240, 260:width]  # off the strokes, where a read row is the painted one

    def worst_error() -> float:
        return worst_read_error(probs, test_settings.extract, [(SOLID,), (SOLID,)], [line, stroke], flat)

    assert worst_error() <= 1.0
    # Without it the search hands the line over where the stroke comes back (the tails 63 px apart).
    monkeypatch.setattr(extract, "hand_offs", lambda *args: None)
    assert worst_error() > 40
