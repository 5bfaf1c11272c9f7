"""Which read curve is which true curve: the K-curve swap share and best assignments, computed by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from veernet_pipeline.evaluation.identity import band_distance, best_assignment, nearest_turn, swap_share
from veernet_pipeline.reading.alike_order import alike_groups


def test_band_distance_is_zero_inside_and_nan_where_missing() -> None:
    d = band_distance(np.array([0.5, 0.1, 0.9, np.nan]), np.array([0.4, 0.2, 0.3, 0.1]), np.array([0.6, 0.3, 0.7, 0.2]))
    np.testing.assert_allclose(d, [0.0, 0.1, 0.2, np.nan])


def test_nearest_turn_meets_a_truth_across_the_edge() -> None:
    # Read 0.01 (top) against a truth drawn at 0.99 (bottom): one turn up, 1.01, is 0.02 from it. Read 0.97 against
    # 0.02: one turn down, -0.03, is 0.05 from it. A row nearer unturned stays, and so does a missing one.
    turned = nearest_turn(np.array([0.01, 0.97, 0.5, np.nan]), np.array([0.99, 0.02, 0.4, 0.3]),
                          np.array([0.99, 0.02, 0.45, 0.3]))
    np.testing.assert_allclose(turned, [1.01, -0.03, 0.5, np.nan])


def test_swap_share_over_three_curves() -> None:
    truth = np.array([[0.2, 0.2, 0.2, 0.2, 0.2],
                      [0.5, 0.5, 0.5, 0.5, np.nan],
                      [0.8, 0.8, 0.8, 0.8, 0.8]])
    pred = np.array([[0.2, 0.5, 0.8, 0.21, np.nan],
                     [0.5, 0.2, 0.5, 0.8, 0.5],
                     [0.8, 0.8, 0.2, 0.52, 0.8]])
    share, per_curve = swap_share(pred, truth, truth)
    # By hand, column by column (curves read and with truth; distance to the truth, the band being the truth here):
    # 0: all three as labelled, cost 0 -> not swapped.
    # 1: A and B read each other's rows (cost 0.6 as labelled, 0 with A<->B) -> swapped; A and B moved.
    # 2: A and C swapped (cost 1.2 vs 0) -> swapped; A and C moved.
    # 3: B reads 0.8 and C reads 0.52: labelled 0.01 + 0.3 + 0.28 = 0.59, B<->C 0.01 + 0.02 + 0 = 0.03 -> swapped.
    # 4: only A (no read) and B (no truth) missing: C alone is present -> the column does not count.
    assert share == pytest.approx(3 / 4)
    # A is read with truth in columns 0-3 and moved in 1, 2; B in 0-3, moved in 1, 3; C in 0-3, moved in 2, 3.
    np.testing.assert_allclose(per_curve, [0.5, 0.5, 0.5])


def test_swap_share_with_two_curves_is_the_seeds_figure() -> None:
    truth = np.array([[0.2, 0.2, 0.2, 0.2], [0.8, 0.8, 0.8, np.nan]])
    pred = np.array([[0.21, 0.79, 0.2, 0.2], [0.79, 0.21, 0.8, 0.8]])
    share, _ = swap_share(pred, truth, truth)
    assert share == pytest.approx(1 / 3)  # column 1 of the 3 with all four values
    assert math.isnan(swap_share(pred[:1], truth[:1], truth[:1])[0])


def test_swap_share_counts_a_row_inside_the_band_as_exact() -> None:
    # A steep stroke: curve A's band spans 0.2-0.6, curve B sits at 0.5. A reads 0.5 and B 0.45: as labelled
    # 0 + 0.05; crossed, A's row is B's value and B's row lies inside A's band: 0 + 0 -> swapped.
    lo, hi = np.array([[0.2], [0.5]]), np.array([[0.6], [0.5]])
    share, _ = swap_share(np.array([[0.5], [0.45]]), lo, hi)
    assert share == 1.0
    share, _ = swap_share(np.array([[0.3], [0.5]]), lo, hi)  # both exact as labelled
    assert share == 0.0


def test_swap_share_takes_a_backup_scale_the_short_way_round() -> None:
    # Curve A (backup scale) has wrapped to 0.99 and is read at the top edge, 0.01; B lies at 0.97 and is read at
    # 0.985. Straight across the track: as labelled 0.98 + 0.015 = 0.995, crossed 0.96 + 0.005 = 0.965 -> swapped.
    # Round A's edge: as labelled 0.02 + 0.015 = 0.035, crossed 0.96 (B has no backup scale) + 0.005 -> not swapped.
    truth = np.array([[0.99, 0.99, 0.99], [0.97, 0.97, 0.97]])
    pred = np.array([[0.01, 0.01, 0.01], [0.985, 0.985, 0.985]])
    assert swap_share(pred, truth, truth)[0] == 1.0
    share, per_curve = swap_share(pred, truth, truth, np.array([True, False]))
    assert share == 0.0
    np.testing.assert_allclose(per_curve, [0.0, 0.0])


def test_best_assignment_permutes_only_curves_drawn_alike() -> None:
    truth = np.stack([np.linspace(0.1, 0.3, 50), np.linspace(0.8, 0.6, 50), np.full(50, 0.5)])
    swapped = truth[[1, 0, 2]]
    groups = alike_groups([(2,), (2,), (3,)])
    assert groups == [[0, 1], [2]]
    np.testing.assert_array_equal(best_assignment(swapped, truth, truth, groups), [1, 0, 2])
    # Curves of different styles keep their labels, however badly they fit.
    np.testing.assert_array_equal(best_assignment(swapped, truth, truth, [[0], [1], [2]]), [0, 1, 2])
    # A read curve that found nothing is never the better choice.
    partial = truth.copy()
    partial[1] = np.nan
    np.testing.assert_array_equal(best_assignment(partial, truth, truth, [[0, 1, 2]]), [0, 1, 2])
