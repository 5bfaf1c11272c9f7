"""The compiled single-curve search (`reading.skips`) against a hand-worked case and the numpy loop it replaced
(`benchmarks/_skips_numpy.py`)."""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks._skips_numpy import numpy_skipping_paths
from veernet_pipeline.reading.skips import best_skipping_paths

INF = np.inf


HEIGHT, SKIPS, JUMP_PX, ABSENT = 48, 8, 16.0, 1.5


def read(emission: np.ndarray, step: np.ndarray, top: np.ndarray, bottom: np.ndarray) -> list[list[int]]:
    """One curve, no backup scale."""
    return best_skipping_paths(emission, step[None], top, bottom, np.zeros(1, dtype=bool), np.zeros(1, np.int64),
                               HEIGHT, SKIPS, JUMP_PX, ABSENT).tolist()


def test_a_skip_over_two_empty_columns_is_taken_where_it_costs_less_than_staying_absent() -> None:
    # One candidate (state 0) in columns 0 and 3 only, absence (state 1) at 1 a column; leaving or re-entering
    # absence costs 10. Staying absent throughout: 4. Candidate, absent, absent, candidate: 0 + 10 + 1 + 1 + 10 + 0
    # = 22. The skip from column 0 to column 3 costs the move between the two runs (gap / 16 + the middle's travel
    # in track heights) plus 1.5 for each of the two columns skipped.
    emission = np.array([[[0.0, 1.0], [INF, 1.0], [INF, 1.0], [0.0, 1.0]]])
    step = np.array([[[INF, 10.0], [10.0, 0.0]]] * 3)  # no two neighbouring columns both have the candidate
    top = np.array([[10.0], [np.nan], [np.nan], [10.0]])
    # The same rows: no gap, no travel, the skip costs 3 < 4.
    assert read(emission, step, top, top + 1.0) == [[0, 1, 1, 0]]
    # Rows 40-41 in column 3: 28 paper rows between, 28 / 16 = 1.75, travel (81 - 21) / 96 = 0.625, and 3: 5.375 > 4.
    top[3] = 40.0
    assert read(emission, step, top, top + 1.0) == [[1, 1, 1, 1]]


@pytest.mark.parametrize(("width", "m", "seed"), [(1, 3, 0), (2, 2, 1), (9, 1, 2), (40, 4, 3), (120, 8, 4),
                                                  (60, 2, 5)])
def test_the_compiled_search_finds_numpys_paths_ties_and_missing_candidates_included(width: int, m: int,
                                                                                      seed: int) -> None:
    rng = np.random.default_rng(seed)
    n, curves = m + 1, 5
    # Small integer costs and rows tie often, so the tie rules (first minimum: lowest state, shortest skip, a step
    # first) decide many columns; inf marks impossible moves and NaN rows missing candidates, as in the reading.
    emission = rng.integers(0, 4, (curves, width, n)).astype(float)
    emission[rng.random(emission.shape) < 0.2] = INF
    emission[..., m] = 2.0
    step = rng.integers(0, 5, (2, max(width - 1, 0), n, n)).astype(float)
    step[rng.random(step.shape) < 0.15] = INF
    top = rng.integers(0, HEIGHT - 4, (width, m)).astype(float)
    bottom = top + rng.integers(0, 4, (width, m))
    missing = rng.random((width, m)) < 0.3
    top[missing], bottom[missing] = np.nan, np.nan
    cyclic = np.array([False, True])  # curves 1, 2 and 4 move through the edges (a backup scale)
    variant = np.array([0, 1, 1, 0, 1], dtype=np.int64)
    args = (emission, step, top, bottom, cyclic, variant, HEIGHT, SKIPS, JUMP_PX, ABSENT)
    np.testing.assert_array_equal(best_skipping_paths(*args), numpy_skipping_paths(*args))
