"""Run heights tell curves drawn alike apart: typical heights from lone runs, a relative misfit cost."""

from __future__ import annotations

import numpy as np

from veernet_pipeline.reading.candidates import Candidates
from veernet_pipeline.reading.run_heights import (
    MIN_HEIGHT_COLUMNS,
    height_emission,
    height_emission_all,
    typical_heights,
)


def _cands(heights: list[list[float]]) -> Candidates:
    """Candidates with runs of the given heights per column (NaN = no run), all starting at row 10."""
    height = np.asarray(heights, dtype=np.float64)
    top = np.where(np.isfinite(height), 10.0, np.nan)
    shape = (1,) + height.shape
    return Candidates(top=top, bottom=top + height - 1.0, peak=np.ones_like(height), centre=np.zeros(shape),
                      share=np.ones(shape))


def test_a_curve_s_typical_height_counts_only_the_runs_it_holds_alone() -> None:
    n = 2 * MIN_HEIGHT_COLUMNS  # each half holds enough lone runs
    cands = _cands([[2.0, 6.0, 9.0]] * n)
    # Curve 0 holds run 0 (2 px) everywhere, curve 1 run 1 (6 px) in the first half and run 0,
    # shared with curve 0, in the second: its lone runs are all 6 px; curve 2 has too few runs alone.
    states = np.zeros((3, n), dtype=np.int64)
    states[1, : n // 2] = 1
    states[2] = 3  # absent (M = 3)
    states[2, :3] = 2
    typical = typical_heights(cands, states)
    assert typical[0] == 2.0 and typical[1] == 6.0 and np.isnan(typical[2])


def test_the_height_cost_is_relative_and_capped() -> None:
    cands = _cands([[2.0, 5.0, 30.0, np.nan]])
    cost = height_emission(cands, np.array([2.0, 5.0]), weight=0.5)
    # By hand: misfits |h - typical| capped at 4 are (0, 3, 4) for curve 0 and (3, 0, 4) for curve 1;
    # less the better curve's, times 0.5.
    np.testing.assert_allclose(cost[:, 0, :3], [[0.0, 1.5, 0.0], [1.5, 0.0, 0.0]])
    assert (cost[:, 0, 3:] == 0).all()  # no run, and absence, cost nothing
    same = height_emission(cands, np.array([2.0, 2.5]), weight=0.5)  # closer than MIN_HEIGHT_DIFFERENCE
    assert not same.any()


def test_every_curve_with_a_typical_height_is_charged_relative_to_the_others() -> None:
    cands = _cands([[2.0, 5.0, 30.0, np.nan]])
    cost = height_emission_all(cands, np.array([2.0, np.nan, 5.0]), weight=0.5)
    # By hand, as above for curves 0 and 2; curve 1 has no typical height: charged nothing, and not a measure.
    np.testing.assert_allclose(cost[[0, 2], 0, :3], [[0.0, 1.5, 0.0], [1.5, 0.0, 0.0]])
    assert not cost[1].any()
    assert not height_emission_all(cands, np.array([2.0, np.nan, np.nan]), weight=0.5).any()  # one known: no cue
