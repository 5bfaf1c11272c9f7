"""Run heights tell curves drawn alike apart: typical heights from lone runs, a relative misfit cost."""

from __future__ import annotations

import numpy as np

from tests.maps import blank, paint
from veernet_pipeline.io.classes import style_class
from veernet_pipeline.reading.candidates import Candidates, find_candidates
from veernet_pipeline.reading.run_heights import (
    MIN_HEIGHT_COLUMNS,
    alike_measure,
    height_emission,
    height_emission_all,
    track_run_emission,
    typical_measure,
)

SOLID = style_class("solid")


def _cands(heights: list[list[float]], thickness: list[list[float]] | None = None) -> Candidates:
    """Candidates with runs of the given heights per column (NaN = no run), all starting at row 10.

    Their stroke thickness is the height unless given.
    """
    height = np.asarray(heights, dtype=np.float64)
    top = np.where(np.isfinite(height), 10.0, np.nan)
    shape = (1,) + height.shape
    return Candidates(top=top, bottom=top + height - 1.0, peak=np.ones_like(height), centre=np.zeros(shape),
                      share=np.ones(shape), thickness=height if thickness is None else np.asarray(thickness, float))


def test_a_curve_s_typical_height_counts_only_the_runs_it_holds_alone() -> None:
    n = 2 * MIN_HEIGHT_COLUMNS  # each half holds enough lone runs
    cands = _cands([[2.0, 6.0, 9.0]] * n)
    # Curve 0 holds run 0 (2 px) everywhere, curve 1 run 1 (6 px) in the first half and run 0,
    # shared with curve 0, in the second: its lone runs are all 6 px; curve 2 has too few runs alone.
    states = np.zeros((3, n), dtype=np.int64)
    states[1, : n // 2] = 1
    states[2] = 3  # absent (M = 3)
    states[2, :3] = 2
    typical = typical_measure(cands.height, states)
    assert typical[0] == 2.0 and typical[1] == 6.0 and np.isnan(typical[2])


def test_the_height_cost_is_relative_and_capped() -> None:
    cands = _cands([[2.0, 5.0, 30.0, np.nan]])
    cost = height_emission(cands.height, np.array([2.0, 5.0]), weight=0.5)
    # By hand: misfits |h - typical| capped at 4 are (0, 3, 4) for curve 0 and (3, 0, 4) for curve 1;
    # less the better curve's, times 0.5.
    np.testing.assert_allclose(cost[:, 0, :3], [[0.0, 1.5, 0.0], [1.5, 0.0, 0.0]])
    assert (cost[:, 0, 3:] == 0).all()  # no run, and absence, cost nothing
    same = height_emission(cands.height, np.array([2.0, 2.5]), weight=0.5)  # closer than MIN_HEIGHT_DIFFERENCE
    assert not same.any()


def test_every_curve_with_a_typical_height_is_charged_relative_to_the_others() -> None:
    cands = _cands([[2.0, 5.0, 30.0, np.nan]])
    cost = height_emission_all(cands.height, np.array([2.0, np.nan, 5.0]), weight=0.5)
    # By hand, as above for curves 0 and 2; curve 1 has no typical height: charged nothing, and not a measure.
    np.testing.assert_allclose(cost[[0, 2], 0, :3], [[0.0, 1.5, 0.0], [1.5, 0.0, 0.0]])
    assert not cost[1].any()
    assert not height_emission_all(cands.height, np.array([2.0, np.nan, np.nan]), weight=0.5).any()  # one known: no cue


def test_a_steep_stroke_s_thickness_is_its_pen_not_its_run() -> None:
    # A 2-px pen falling 5 rows a column from row 10: in column 4 the renderer's run spans halfway to each
    # neighbour's row (27.5 -> 32.5, rounded 28..33) plus the pen (to row 34): 7 rows. Across its middle row
    # (31) the ink is the columns whose runs hold row 31: column 4 alone (column 3 ends at 29, column 5 starts
    # at 33), so the stroke is 1 px thick there. A flat 3-px pen's run is 3 rows and its row runs on: 3.
    probs = blank(60, 9)
    paint(probs, 10 + 5.0 * np.arange(9), SOLID, pen=2)
    steep = find_candidates(probs, [(SOLID,)], 2, 0.3)
    assert steep.height[4, 0] == 7 and steep.thickness[4, 0] == 1
    flat = blank(20, 9)
    paint(flat, np.full(9, 5.0), SOLID, pen=3)
    cands = find_candidates(flat, [(SOLID,)], 2, 0.3)
    assert cands.height[4, 0] == 3 and cands.thickness[4, 0] == 3
    assert np.isnan(cands.thickness[:, 1]).all()  # no second run: no thickness


def test_curves_drawn_alike_are_told_apart_by_their_pens_where_the_pens_differ() -> None:
    n = 2 * MIN_HEIGHT_COLUMNS
    # Run 0 is 2 px thick and 9 tall (a light busy curve), run 1 4 px thick and 4 tall (a heavy quiet one).
    states = np.array([[0] * n, [1] * n])
    pens = _cands([[9.0, 4.0]] * n, thickness=[[2.0, 4.0]] * n)
    measure, typical = alike_measure(pens, states)
    assert np.array_equal(measure, pens.thickness) and typical.tolist() == [2.0, 4.0]
    # The same pen (2 px) for both: only the heights (9 against 4) tell them apart.
    same_pen = _cands([[9.0, 4.0]] * n, thickness=[[2.0, 2.0]] * n)
    measure, typical = alike_measure(same_pen, states)
    assert np.array_equal(measure, same_pen.height) and typical.tolist() == [9.0, 4.0]
    # Three curves, two of one pen: the pens do not tell every two apart, so heights decide for all.
    three = _cands([[9.0, 4.0, 6.0]] * n, thickness=[[2.0, 4.0, 2.0]] * n)
    measure, _ = alike_measure(three, np.array([[0] * n, [1] * n, [2] * n]))
    assert np.array_equal(measure, three.height)


def test_the_track_is_charged_for_runs_unlike_each_curve_s_in_height_and_in_pen() -> None:
    n = 2 * MIN_HEIGHT_COLUMNS
    # Run 0 is 9 tall and 2 thick (curve 0, light and busy), run 1 4 tall and 4 thick (curve 1, heavy and quiet).
    cands = _cands([[9.0, 4.0]] * n, thickness=[[2.0, 4.0]] * n)
    cost = track_run_emission(cands, np.array([[0] * n, [1] * n]), weight=0.5)
    # By hand, run 0: heights misfit (0, 5 -> capped 4), pens (0, 2); run 1: heights (4, 0), pens (2, 0);
    # each relative to the better curve, summed, times 0.5.
    np.testing.assert_allclose(cost[:, 0, :2], [[0.0, 3.0], [3.0, 0.0]])
    assert (cost[:, :, 2:] == 0).all()  # absence costs nothing
