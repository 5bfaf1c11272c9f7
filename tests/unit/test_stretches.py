"""Pens of curves drawn alike from the stretches of line a first reading holds: found where trades mixed the medians."""

from __future__ import annotations

from unittest import mock

import numpy as np
import pytest

from veernet_pipeline.reading import run_heights
from veernet_pipeline.reading.candidates import Candidates
from veernet_pipeline.reading.run_heights import (
    MIN_HEIGHT_COLUMNS,
    MIN_HEIGHT_DIFFERENCE,
    alike_measure,
    typical_measure,
)
from veernet_pipeline.reading.stretches import MIN_STRETCH, kmeans_1d, lone_stretches, stretch_typical

N = 4 * MIN_HEIGHT_COLUMNS


def _lines(thickness: np.ndarray, height: np.ndarray | None = None) -> Candidates:
    """Two flat lines, run 0 at rows 10.. and run 1 at rows 50.., with per-column measures.

    Shape:
        thickness, height: (W, 2). Heights default to the thicknesses.
    """
    height = thickness if height is None else height
    top = np.broadcast_to(np.array([10.0, 50.0]), thickness.shape).copy()
    shape = (1,) + thickness.shape
    return Candidates(top=top, bottom=top + height - 1.0, peak=np.ones_like(top), centre=np.zeros(shape),
                      share=np.ones(shape), thickness=np.asarray(thickness, dtype=float))


def _traded(cut: int) -> np.ndarray:
    """Curve 0 reads line 0 up to `cut`, then line 1; curve 1 the other way round."""
    states = np.zeros((2, N), dtype=np.int64)
    states[0, cut:] = 1
    states[1, :cut] = 1
    return states


def test_exact_weighted_k_means_by_hand() -> None:
    # Values 1, 2, 4, 7 weighing 3, 1, 1, 2 in two clusters: the splits' weighted squared errors by hand are
    # {1,2,4}|{7}: 1.8 mean, 3(.64) + .04 + 4.84 = 6.80; {1,2}|{4,7}: 3(.0625) + .5625 + (4 + 2) = 6.75;
    # {1}|{2,4,7}: 9 + 1 + 2(4) = 18. The best is {1,2}|{4,7}, centres 1.25 and 6.
    centres = kmeans_1d(np.array([7.0, 1.0, 4.0, 2.0]), np.array([2.0, 3.0, 1.0, 1.0]), 2)
    np.testing.assert_allclose(centres, [1.25, 6.0])
    np.testing.assert_allclose(kmeans_1d(np.array([5.0, 5.0, 9.0]), np.ones(3), 1), [19 / 3])
    assert kmeans_1d(np.array([3.0, 3.0, 3.0]), np.ones(3), 2) is None  # one distinct value: no two clusters


def test_a_stretch_ends_where_the_reading_jumps_or_shares_its_run() -> None:
    cands = _lines(np.full((N, 2), 3.0))
    states = _traded(60)
    assert lone_stretches(cands, states, 0) == [(0, 60), (60, N)]  # rows 10 -> 50: the runs do not touch
    states[1, 100:110] = 1  # curve 1 rides curve 0's run for 10 columns: neither holds them alone
    assert lone_stretches(cands, states, 0) == [(0, 60), (60, 100), (110, N)]
    states[1, [150, 153]] = 2  # absent twice, 2 columns apart: a piece shorter than MIN_STRETCH, dropped
    assert MIN_STRETCH > 2
    assert lone_stretches(cands, states, 1) == [(0, 60), (60, 100), (110, 150), (154, N)]


def test_pens_are_found_where_trades_mixed_each_curve_s_median() -> None:
    # Line 0 is a 3-px pen, line 1 a 6-px one; each curve reads one line for half the columns, then the other's.
    pens = np.broadcast_to(np.array([3.0, 6.0]), (N, 2)).copy()
    cands = _lines(pens)
    states = _traded(N // 2)
    assert typical_measure(cands.thickness, states).tolist() == [4.5, 4.5]  # the medians meet
    # The two curves are interchangeable here (half on each line), so either may get either pen.
    assert sorted(stretch_typical(cands.thickness, cands, states, MIN_HEIGHT_COLUMNS).tolist()) == [3.0, 6.0]
    # Each curve gets the pen of the line it reads longest: 60 % on its own line, and 40 %.
    np.testing.assert_allclose(stretch_typical(cands.thickness, cands, _traded(int(0.6 * N)), MIN_HEIGHT_COLUMNS),
                               [3.0, 6.0])
    np.testing.assert_allclose(stretch_typical(cands.thickness, cands, _traded(int(0.4 * N)), MIN_HEIGHT_COLUMNS),
                               [6.0, 3.0])


def test_alike_curves_whose_medians_meet_are_read_by_their_pens_not_their_heights() -> None:
    # A light busy pen (3 px thick, runs 9 tall) and a heavy quiet one (6 thick, 6 tall), traded half way: the
    # medians meet in both measures (4.5 and 7.5 each), so before the stretches the group was read by heights.
    cands = _lines(np.broadcast_to(np.array([3.0, 6.0]), (N, 2)).copy(),
                   height=np.broadcast_to(np.array([9.0, 6.0]), (N, 2)).copy())
    states = _traded(N // 2)
    assert typical_measure(cands.height, states).tolist() == [7.5, 7.5]
    measure, typical = alike_measure(cands, states)
    assert measure is cands.thickness
    assert sorted(typical.tolist()) == [3.0, 6.0]


@pytest.mark.parametrize(("every", "found"), [(100, False), (40, True)])
def test_a_cluster_no_curve_holds_for_long_is_not_a_pen(every: int, found: bool) -> None:
    # Both curves are 3-px pens; curve 1 crosses grid lines in stretches of 10 columns that measure 10 px, cut
    # off by a column where it is absent either side. Every 100 columns they are 20 of its 192 stretch columns
    # (10 %, under MIN_SUPPORT): no pens. Every 40, 50 of 186 (27 %): a pen of 10 px, as the rule says.
    thickness = np.full((N, 2), 3.0)
    states = np.zeros((2, N), dtype=np.int64)
    states[1] = 1
    for a in range(5, N - 11, every):
        thickness[a:a + 10, 1] = 10.0
        states[1, [a - 1, a + 10]] = 2  # absent
    cands = _lines(thickness, height=np.full((N, 2), 3.0))
    assert [b - a for a, b in lone_stretches(cands, states, 1)].count(10) == len(range(5, N - 11, every))
    typical = stretch_typical(cands.thickness, cands, states, MIN_HEIGHT_COLUMNS)
    if found:
        np.testing.assert_allclose(typical, [3.0, 10.0])
    else:
        assert np.isnan(typical).all()


@pytest.mark.parametrize("columns", [MIN_HEIGHT_COLUMNS - 1, MIN_HEIGHT_COLUMNS])
def test_too_few_stretch_columns_give_no_pens(columns: int) -> None:
    pens = np.broadcast_to(np.array([3.0, 6.0]), (N, 2)).copy()
    cands = _lines(pens)
    states = _traded(int(0.6 * N))
    states[1, columns:] = 2  # curve 1 absent after `columns`
    typical = stretch_typical(cands.thickness, cands, states, MIN_HEIGHT_COLUMNS)
    assert np.isnan(typical).all() == (columns < MIN_HEIGHT_COLUMNS)


def test_pens_under_a_pixel_apart_from_stretches_are_told_apart() -> None:
    """A 1-px pen whose line measures 1.0 px in the first half of the track and 1.4 in the second (its stroke's
    whole-pixel rows vary), beside a 2-px pen, traded half way. The medians (1.5 / 1.7) and the heights (5 / 5) do not
    tell the curves apart; the stretch medians 1.0, 2.0 | 2.0, 1.4 cluster into pens (1.0 + 1.4) / 2 = 1.2 and 2.0,
    0.8 px apart: told apart at `MIN_PEN_DIFFERENCE` (0.75), not at the medians' 1 px."""
    thickness = np.empty((N, 2))
    thickness[:, 1] = 2.0
    thickness[: N // 2, 0], thickness[N // 2:, 0] = 1.0, 1.4
    cands = _lines(thickness, height=np.full((N, 2), 5.0))
    states = _traded(N // 2)
    np.testing.assert_allclose(typical_measure(cands.thickness, states), [1.5, 1.7])
    measure, typical = alike_measure(cands, states)
    assert measure is cands.thickness
    np.testing.assert_allclose(sorted(typical.tolist()), [1.2, 2.0])
    with mock.patch.object(run_heights, "MIN_PEN_DIFFERENCE", MIN_HEIGHT_DIFFERENCE):
        measure, _ = alike_measure(cands, states)
    assert measure is not cands.thickness  # run heights (a fresh array each time: `Candidates.height`)
    np.testing.assert_array_equal(measure, cands.height)
