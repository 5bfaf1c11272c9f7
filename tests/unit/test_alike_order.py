"""Curves drawn alike: the line that steps through an edge is written under the curve with a backup scale.

The maps are hand-painted (tests/maps.py); the expected lines are the painted ones.
"""

from __future__ import annotations

import numpy as np

from tests.maps import blank, centre, paint
from veernet_pipeline.config import Settings
from veernet_pipeline.io.classes import style_class
from veernet_pipeline.reading.alike_order import alike_order, same_class_order, through_edge_steps
from veernet_pipeline.reading.extract import trace_curves

H, W = 96, 300
X = np.arange(W)
SOLID, DASHED = style_class("solid"), style_class("dashed")


def _two_solid_lines(excursions: list[slice]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A solid line near the bottom edge that runs off it and back in at the top for each of `excursions`, and a
    solid line mid-track above it. Returns the map and each line's drawn rows (the wrapping one, the other)."""
    unwrapped = np.full(W, 88.0)
    for excursion in excursions:
        n = excursion.stop - excursion.start
        unwrapped[excursion] = 88.0 + 20.0 * np.sin(np.linspace(0.0, np.pi, n + 2)[1:-1])
    off = unwrapped > H - 2
    probs = blank(H, W)
    paint(probs, unwrapped, SOLID, X[~off])
    paint(probs, unwrapped - H, SOLID, X[off])
    other = 48.0 + 10.0 * np.sin(X / 40.0)
    paint(probs, other, SOLID)
    return probs, np.where(off, unwrapped - H, unwrapped), other


def test_through_edge_steps_by_hand() -> None:
    """Rows on a 100-row track: 90 -> 5 (out at the bottom, in at the top), 5 -> 95 (out at the top) after a
    3-column gap, 95 -> 50 (a steep stroke, not an edge), then 50 -> 90 -> NaN x 5 -> 10: the last step spans 6
    columns, beyond max_gap 4 + 1."""
    rows = np.array([90, 5, np.nan, np.nan, 95, 50, 90, np.nan, np.nan, np.nan, np.nan, np.nan, 10.0])
    assert through_edge_steps(rows, 100, max_gap=4) == 2
    assert through_edge_steps(rows, 100, max_gap=5) == 3
    assert through_edge_steps(np.full(5, np.nan), 100, max_gap=4) == 0


def test_the_wrapping_line_goes_to_the_curve_with_a_backup_scale(test_settings: Settings) -> None:
    """The sidecar lists the curve with a backup scale first. Its line (near the bottom, out and back in twice) is
    the lower one, so the higher-first rule alone would write the mid-track line under it."""
    probs, wrapping, other = _two_solid_lines([slice(90, 95), slice(200, 206)])
    rows, _ = trace_curves(probs, test_settings.extract, [(SOLID,), (SOLID,)], wraps=[True, False])
    # Within 3 rows: a column where the line turns at an edge reads its run's far end (reading.rows); the lines
    # are 30 rows apart or more.
    np.testing.assert_allclose(rows[0], centre(wrapping), atol=3.0)
    np.testing.assert_allclose(rows[1], centre(other), atol=1.0)
    # The same lines without the rule: higher first, the wrapping line under the second curve.
    listed = rows[same_class_order(rows, [(SOLID,), (SOLID,)])]
    np.testing.assert_allclose(listed[0], centre(other), atol=1.0)


def test_without_a_step_through_an_edge_the_higher_line_comes_first(test_settings: Settings) -> None:
    """Neither line leaves the track: nothing tells the curves apart, so the higher line is the first curve's
    whichever has the backup scale."""
    probs, low, other = _two_solid_lines([])
    for wraps in ([True, False], [False, True]):
        rows, _ = trace_curves(probs, test_settings.extract, [(SOLID,), (SOLID,)], wraps=wraps)
        np.testing.assert_allclose(rows[0], centre(other), atol=1.0)
        np.testing.assert_allclose(rows[1], centre(low), atol=1.0)


def test_alike_order_keeps_other_kinds_and_orders_each_part_top_first() -> None:
    """Five curves: a dashed one alone, and four solid ones, two with backup scales. Lines (mean rows): the dashed
    curve's own; solid lines at 10, 30 (steps through an edge twice), 50 and 70 (once)."""
    height, width = 100, 12
    rows = np.tile(np.array([[40.0], [10.0], [30.0], [50.0], [70.0]]), (1, width))
    rows[2, 3], rows[2, 4], rows[2, 8], rows[2, 9] = 95.0, 3.0, 2.0, 96.0
    rows[4, 6], rows[4, 7] = 92.0, 4.0
    kinds = [(DASHED,), (SOLID,), (SOLID,), (SOLID,), (SOLID,)]
    order = alike_order(rows, kinds, [False, False, True, False, True], height, max_gap=4)
    # Curves 2 and 4 (backup) take the lines through an edge, 30 then 70; curves 1 and 3 the others, 10 then 50.
    assert order.tolist() == [0, 1, 2, 3, 4]
    order = alike_order(rows, kinds, [False, True, False, True, False], height, max_gap=4)
    assert order.tolist() == [0, 2, 1, 4, 3]
    # A tie: the line at 10 steps through an edge once too, as often as the line at 70. With one backup curve
    # the line at 30 (twice) still separates; with two, the second place is tied, so the higher line first.
    tied = rows.copy()
    tied[1, 11] = 97.0
    assert alike_order(tied, kinds, [False, True, False, False, False], height, 4).tolist() == [0, 2, 1, 3, 4]
    assert alike_order(tied, kinds, [False, True, False, True, False], height, 4).tolist() == [0, 1, 2, 3, 4]
    # Every solid curve with a backup scale, or none: the higher line first.
    assert alike_order(rows, kinds, [False, True, True, True, True], height, 4).tolist() == [0, 1, 2, 3, 4]
    assert alike_order(rows[::-1], kinds[::-1], [False] * 5, height, 4).tolist() == [3, 2, 1, 0, 4]
