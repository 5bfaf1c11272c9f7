"""The single-curve path search's dynamic programme, compiled: best paths that may skip a gap in place.

`paths.viterbi_single` builds the cost tables (one step, and skips of 2..`SKIP_COLUMNS` columns)
with numpy and hands them here. The programme itself is a loop over columns in which each column's
work is small (for 8 candidates, a 9 x 9 step and a 7 x 8 x 8 block of skips per curve): written
with numpy it made about a dozen array calls a column, whose overhead, not their arithmetic, took
82 % of a track's reading on 12 val logs (cProfile, 2026-12-07). numba compiles the same loop; it
adds the same costs in the same order and keeps numpy's tie rules (the first minimum: on equal
totals the lowest previous state, the shortest skip, and a step before any skip), so the paths
are the ones numpy's loop gave, element for element (tests/unit/test_skips.py).
"""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True)
def best_skipping_paths(emission: np.ndarray, step_cost: np.ndarray, skip_cost: np.ndarray,
                        variant: np.ndarray) -> np.ndarray:
    """Exact best path of each curve over its states, by one-column steps or skips over absent columns.

    A curve on state i of column x-1 moves to state j of column x for `step_cost[v, x-1, i, j]`; a
    curve on candidate i (not absent) of column x-d, 2 <= d <= S, moves straight to candidate j of
    column x for `skip_cost[v, x, d-2, i, j]` (the skipped columns are absent). Each column adds the
    curve's emission. v is the curve's table (`variant`).

    Args:
        emission: per curve, the cost of each state in each column; the last state is absence.
        step_cost: per table, the cost of one column's move between states.
        skip_cost: per table and column x, the cost of a skip of d columns landing there (inf where none).
        variant: each curve's table.

    Returns:
        States per curve and column (the last state = absent).

    Shape:
        emission: (G, W, M+1); step_cost: (V, W-1, M+1, M+1); skip_cost: (V, W, S-1, M, M); variant: (G,).
        Returns (G, W) int64.
    """
    n_curves, width, n = emission.shape
    m = n - 1
    window = skip_cost.shape[2] + 1  # S: the longest skip, and the columns of totals kept
    states = np.full((n_curves, width), m, dtype=np.int64)
    back = np.zeros((width, n), dtype=np.int64)
    came = np.ones((width, n), dtype=np.int64)
    recent = np.empty((window, n))
    total = np.empty(n)
    for g in range(n_curves):
        v = variant[g]
        recent[:] = np.inf
        recent[0] = emission[g, 0]
        for x in range(1, width):
            previous = recent[(x - 1) % window]
            for j in range(n):
                best, arg = np.inf, 0
                for i in range(n):
                    cost = previous[i] + step_cost[v, x - 1, i, j]
                    if cost < best:
                        best, arg = cost, i
                # numpy's argmin of an all-inf column is its first entry.
                total[j], back[x, j], came[x, j] = best, arg, 1
            for j in range(m):
                best, arg, distance = np.inf, 0, 0
                for d in range(2, window + 1):
                    earlier = recent[(x - d) % window]
                    for i in range(m):
                        cost = earlier[i] + skip_cost[v, x, d - 2, i, j]
                        if cost < best:
                            best, arg, distance = cost, i, d
                if best < total[j]:
                    total[j], back[x, j], came[x, j] = best, arg, distance
            for j in range(n):
                recent[x % window, j] = total[j] + emission[g, x, j]
        final = recent[(width - 1) % window]
        state = 0
        for j in range(1, n):
            if final[j] < final[state]:
                state = j
        x = width - 1
        while True:
            states[g, x] = state
            if x == 0:
                break
            state, x = back[x, state], x - came[x, state]
    return states
