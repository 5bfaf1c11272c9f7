"""The compiled single-curve search (`reading.skips`) against a hand-worked case and the numpy loop it replaced
(`benchmarks/_skips_numpy.py`)."""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks._skips_numpy import numpy_skipping_paths
from veernet_pipeline.reading.skips import best_skipping_paths

INF = np.inf


def test_a_skip_over_two_empty_columns_beats_staying_absent_and_is_taken_only_when_offered() -> None:
    # One candidate (state 0) in columns 0 and 3 only, absence (state 1) at 1 a column. Leaving or re-entering
    # absence costs 10. Staying absent throughout: 4. Candidate, absent, absent, candidate: 0 + 10 + 1 + 1 + 10 + 0
    # = 22. The skip from column 0 to column 3 (3 as priced here): 0 + 3 + 0 = 3, the best of all.
    emission = np.array([[[0.0, 1.0], [INF, 1.0], [INF, 1.0], [0.0, 1.0]]])
    step = np.array([[[INF, 10.0], [10.0, 0.0]]] * 3)  # no two neighbouring columns both have the candidate
    skip = np.full((1, 4, 7, 1, 1), INF)
    no_skips = best_skipping_paths(emission, step[None], skip, np.zeros(1, dtype=np.int64))
    assert no_skips.tolist() == [[1, 1, 1, 1]]
    skip[0, 3, 3 - 2, 0, 0] = 3.0
    assert best_skipping_paths(emission, step[None], skip, np.zeros(1, dtype=np.int64)).tolist() == [[0, 1, 1, 0]]


@pytest.mark.parametrize(("width", "m", "seed"), [(1, 3, 0), (2, 2, 1), (9, 1, 2), (40, 4, 3), (120, 8, 4),
                                                  (60, 2, 5)])
def test_the_compiled_search_finds_numpys_paths_ties_and_missing_candidates_included(width: int, m: int,
                                                                                      seed: int) -> None:
    rng = np.random.default_rng(seed)
    n, curves = m + 1, 5
    # Small integer costs tie often, so the tie rules (first minimum: lowest state, shortest skip, a step first)
    # decide many columns; inf marks missing candidates and impossible moves, as `paths.transitions` does.
    emission = rng.integers(0, 4, (curves, width, n)).astype(float)
    emission[rng.random(emission.shape) < 0.2] = INF
    emission[..., m] = 2.0
    step = rng.integers(0, 5, (2, max(width - 1, 0), n, n)).astype(float)
    step[rng.random(step.shape) < 0.15] = INF
    skip = rng.integers(1, 8, (2, width, 7, m, m)).astype(float)
    skip[rng.random(skip.shape) < 0.3] = INF
    for d in range(2, 9):
        skip[:, :d, d - 2] = INF  # no skip lands before column d
    variant = np.array([0, 1, 1, 0, 1], dtype=np.int64)
    expected = numpy_skipping_paths(emission, step, skip, variant)
    np.testing.assert_array_equal(best_skipping_paths(emission, step, skip, variant), expected)
