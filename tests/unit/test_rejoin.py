"""Curves drawn alike keep their sides across a stretch where both are absent (`reading.rejoin`)."""

from __future__ import annotations

import numpy as np
import pytest

from tests.maps import blank, paint, worst_read_error
from veernet_pipeline.config import Settings
from veernet_pipeline.io.classes import style_class
from veernet_pipeline.reading import extract
from veernet_pipeline.reading.rejoin import joint_absences, rejoin

SOLID = style_class("solid")
H, W = 96, 800
X = np.arange(W)
DRAWN = np.r_[0:300, 520:W]  # a banner blanks columns 300-519: neither curve is drawn there


def _rows(before: tuple[float, float], after: tuple[float, float]) -> np.ndarray:
    """Two flat curves read at rows `before` in columns 0-9 and `after` in 20-29, absent in 10-19."""
    rows = np.full((2, 30), np.nan)
    rows[:, :10] = np.asarray(before)[:, None]
    rows[:, 20:] = np.asarray(after)[:, None]
    return rows


def test_joint_absences_are_the_interior_stretches_where_both_are_absent() -> None:
    a = np.array([np.nan, 1, np.nan, np.nan, np.nan, 1, 1, np.nan, np.nan])
    b = np.array([np.nan, 1, 1, np.nan, np.nan, np.nan, 1, np.nan, np.nan])
    # Columns 3-4 (both absent, between read columns); 0 and 7-8 touch an end; 2 and 5 only one is absent.
    assert joint_absences(a, b) == [(3, 4)]


def test_tails_that_continue_into_each_other_are_swapped() -> None:
    rows = _rows((20.0, 70.0), (71.0, 19.0))
    confidence = np.stack([np.full(30, 0.9), np.full(30, 0.4)])
    rejoin(rows, confidence, [(0, 1)])
    # By hand: as read |20 - 71| + |70 - 19| = 102; swapped |20 - 19| + |70 - 71| = 2 < 0.5 x 102.
    np.testing.assert_array_equal(rows[0, 20:], np.full(10, 19.0))
    np.testing.assert_array_equal(rows[1, 20:], np.full(10, 71.0))
    np.testing.assert_array_equal(confidence[0], np.r_[np.full(20, 0.9), np.full(10, 0.4)])


@pytest.mark.parametrize(("after", "why"), [((22.0, 68.0), "the pairing as read fits"),
                                            ((46.0, 44.0), "swapped fits better, not by half: 48 vs 52")])
def test_tails_stay_where_the_pairing_as_read_is_not_clearly_worse(after: tuple[float, float], why: str) -> None:
    rows = _rows((20.0, 70.0), after)
    expected = rows.copy()
    rejoin(rows, np.zeros_like(rows), [(0, 1)])
    np.testing.assert_array_equal(rows, expected, err_msg=why)


def test_a_curve_unread_on_one_side_leaves_the_tails_as_read() -> None:
    rows = _rows((20.0, 70.0), (71.0, 19.0))
    rows[1, :10] = np.nan  # curve 1 has no rows before the stretch: nothing to continue
    expected = rows.copy()
    rejoin(rows, np.zeros_like(rows), [(0, 1)])
    np.testing.assert_array_equal(rows, expected)


@pytest.mark.parametrize("period", [40.0, 47.0, 61.0])
def test_two_solid_curves_keep_their_sides_across_a_banner(test_settings: Settings, period: float,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    top, low = 24 + 6 * np.sin(X / period), 70 + 6 * np.cos(X / (period - 7))
    probs = blank(H, W)
    paint(probs, top, SOLID, DRAWN)
    paint(probs, low, SOLID, DRAWN)

    def worst_error() -> float:
        return worst_read_error(probs, test_settings.extract, [(SOLID,), (SOLID,)], [top, low], DRAWN)

    assert worst_error() <= 1.0
    # Without it the search comes out of the banner with the two swapped (by hand: the curves lie ~46 rows apart).
    monkeypatch.setattr(extract, "rejoin", lambda *args: None)
    assert worst_error() > 30
