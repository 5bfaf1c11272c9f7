"""The single-curve path search's dynamic programme, compiled: best paths that may skip a gap in place.

`paths.viterbi_single` builds the one-column step costs with numpy (`paths.transitions`) and hands
them here with the candidates' extents; the cost of a skip over d columns is computed here, as it is
needed, by `paths.transitions`' formula. The programme is a loop over columns in which each column's
work is small (for 8 candidates, a 9 x 9 step and a 7 x 8 x 8 block of skips per curve): written
with numpy it made about a dozen array calls a column, whose overhead, not their arithmetic, took
82 % of a track's reading on 12 val logs (cProfile, 2026-12-07), and its seven tables of skip costs
(46 MB each on a 12,800-column strip) most of the rest. numba compiles the same loop; it adds the
same costs in the same order and keeps numpy's tie rules (the first minimum: on equal totals the
lowest previous state, the shortest skip, and a step before any skip), so the paths are the ones
numpy's loop gave, element for element (tests/unit/test_skips.py).
"""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True)
def skip_cost(top: np.ndarray, bottom: np.ndarray, x: int, d: int, i: int, j: int, height: int, cyclic: bool,
              jump_px: float, absent_cost: float) -> float:
    """Cost of a skip from candidate i of column x-d to candidate j of column x: `paths.transitions(step=d)`'s
    move between the two runs plus `absent_cost` for each of the d-1 columns skipped; inf where either is missing."""
    top_prev, bottom_prev, top_cur, bottom_cur = top[x - d, i], bottom[x - d, i], top[x, j], bottom[x, j]
    if np.isnan(top_prev) or np.isnan(bottom_prev) or np.isnan(top_cur) or np.isnan(bottom_cur):
        return np.inf
    gap = max(0.0, max(top_cur - bottom_prev, top_prev - bottom_cur) - 1.0)
    drift = abs((top_cur + bottom_cur) - (top_prev + bottom_prev)) / (2.0 * height)
    if cyclic:
        through = min((height - 1.0 - bottom_prev) + top_cur, top_prev + (height - 1.0 - bottom_cur))
        gap = min(gap, max(0.0, through))
        drift = min(drift, 1.0 - drift)
    return gap / jump_px + drift + (d - 1) * absent_cost


@numba.njit(cache=True)
def best_skipping_paths(emission: np.ndarray, step_cost: np.ndarray, top: np.ndarray, bottom: np.ndarray,
                        cyclic: np.ndarray, variant: np.ndarray, height: int, skip_columns: int, jump_px: float,
                        absent_cost: float) -> np.ndarray:
    """Exact best path of each curve over its states, by one-column steps or skips over absent columns.

    A curve on state i of column x-1 moves to state j of column x for `step_cost[v, x-1, i, j]`; a
    curve on candidate i (not absent) of column x-d, 2 <= d <= `skip_columns`, moves straight to
    candidate j of column x for `skip_cost` (the skipped columns are absent). Each column adds the
    curve's emission. v is the curve's table (`variant`), `cyclic[v]` whether it moves through the
    edges (a backup scale, `paths.transitions(wrap=True)`).

    Args:
        emission: per curve, the cost of each state in each column; the last state is absence.
        step_cost: per table, the cost of one column's move between states.
        top, bottom: the candidates' first and last rows, NaN where a column has fewer.
        cyclic: per table, whether its curves' rows wrap through the edges.
        variant: each curve's table.
        height: the track's height in px.
        skip_columns: the longest skip (`paths.SKIP_COLUMNS`).
        jump_px, absent_cost: `extract:`'s knobs of the same names.

    Returns:
        States per curve and column (the last state = absent).

    Shape:
        emission: (G, W, M+1); step_cost: (V, W-1, M+1, M+1); top, bottom: (W, M); cyclic: (V,); variant: (G,).
        Returns (G, W) int64.
    """
    n_curves, width, n = emission.shape
    m = n - 1
    window = skip_columns  # the columns of totals kept
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
                for d in range(2, min(window, x) + 1):  # no skip lands before column d
                    earlier = recent[(x - d) % window]
                    for i in range(m):
                        if earlier[i] == np.inf:
                            continue  # inf + any cost is never below the best
                        cost = earlier[i] + skip_cost(top, bottom, x, d, i, j, height, cyclic[v], jump_px,
                                                      absent_cost)
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
