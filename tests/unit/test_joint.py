"""The compiled joint search (`reading.joint`, through `paths.viterbi`) against hand-worked cases and the numpy
search it replaced (`benchmarks/_joint_numpy.py`)."""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks._joint_numpy import numpy_viterbi
from veernet_pipeline.reading.paths import JOINT_STATES, viterbi

INF = np.inf


def test_two_curves_pay_the_crossing_cost_to_share_a_run_and_take_the_two_runs_when_it_is_dearer() -> None:
    # Two columns, two runs (states 0, 1) and absence (2). Run 0 costs 0 to either curve, run 1 costs 1, absence 5;
    # staying on a state costs nothing, changing it 5. Sharing run 0 costs the crossing cost in each column: at 0.4,
    # 0.8 in all against 2 for taking runs 0 and 1; at 2, 4 against 2. Runs 0 and 1 either way round cost the same:
    # the first final state in C order, (0, 1), wins.
    emission = np.array([[[[0.0, 1.0, 5.0]] * 2] * 2])
    moves = np.full((1, 3, 3), 5.0)
    moves[0, [0, 1, 2], [0, 1, 2]] = 0.0
    assert viterbi(emission, moves, 0.4).tolist() == [[[0, 0], [0, 0]]]
    assert viterbi(emission, moves, 2.0).tolist() == [[[0, 0], [1, 1]]]


def test_a_curve_follows_the_cheap_moves_between_columns() -> None:
    # One curve, three columns, two runs each at cost 1, absence 9. From run 0 only run 1 is cheap (0), from run 1
    # only run 0 (0), others cost 5: the path alternates, and ties in the first column go to the first state.
    emission = np.array([[[[1.0, 1.0, 9.0]] * 3]])
    moves = np.full((2, 3, 3), 5.0)
    moves[:, 0, 1] = moves[:, 1, 0] = 0.0
    assert viterbi(emission, moves, 1.0).tolist() == [[[0, 1, 0]]]


@pytest.mark.parametrize(("g", "width", "n", "seed"), [(1, 1, 4, 0), (1, 30, 5, 1), (2, 2, 3, 2), (2, 40, 6, 3),
                                                        (3, 25, 4, 4), (3, 12, 11, 5)])
def test_the_compiled_search_finds_numpys_paths_ties_and_impossible_moves_included(g: int, width: int, n: int,
                                                                                    seed: int) -> None:
    rng = np.random.default_rng(seed)
    groups = 3
    # Small integer costs tie often, so the tie rules (the first minimum over the moving curve's previous state, the
    # first final state in C order) decide many columns; inf marks missing candidates and impossible moves.
    emission = rng.integers(0, 4, (groups, g, width, n)).astype(float)
    emission[rng.random(emission.shape) < 0.2] = INF
    emission[..., n - 1] = 2.0
    tables = rng.integers(0, 5, (2, max(width - 1, 0), n, n)).astype(float)
    tables[rng.random(tables.shape) < 0.15] = INF
    variant = rng.integers(0, 2, (groups, g))
    for transition, chosen in ((tables, variant), (tables[0], None)):
        np.testing.assert_array_equal(viterbi(emission, transition, 1.0, chosen),
                                      numpy_viterbi(emission, transition, 1.0, chosen))


def test_more_states_than_the_back_pointers_hold_is_refused_with_the_knob_to_turn() -> None:
    emission = np.zeros((1, 1, 2, JOINT_STATES + 1))
    with pytest.raises(ValueError, match="lower extract.max_candidates"):
        viterbi(emission, np.zeros((1, JOINT_STATES + 1, JOINT_STATES + 1)), 1.0)
