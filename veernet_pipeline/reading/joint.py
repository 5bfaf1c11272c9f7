"""The joint path search's dynamic programme, compiled: one, two or three curves of a group at once.

`paths.viterbi` reads groups of up to `paths.MAX_JOINT` curves by an exact search over their joint
states, one curve axis at a time (the transition separates over curves). Written with numpy, each
column took a few array calls per axis; after the single-curve search was compiled (`reading.skips`)
this loop was 41 % of a track's reading on 12 val logs (cProfile, 2026-12-07). Here it is compiled
with numba, one function per group size: the same sums in the same order (a column's cost is the
crossing penalty, then each curve's emission in curve order, added to the moved total) and numpy's
tie rules (the first minimum over the previous state of the axis that moves; the final state is
the first minimum in C order), so the paths are the ones numpy gave (tests/unit/test_joint.py).
Back-pointers are uint8, as numpy's were: states number at most 255.
"""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True)
def _move(previous: np.ndarray, step: np.ndarray, out: np.ndarray, back: np.ndarray) -> None:
    """out[j] = min_i previous[i] + step[i, j], back[j] its first argmin (0 where every sum is inf)."""
    n = previous.shape[0]
    for j in range(n):
        best, arg = np.inf, 0
        for i in range(n):
            cost = previous[i] + step[i, j]
            if cost < best:
                best, arg = cost, i
        out[j], back[j] = best, arg


@numba.njit(cache=True)
def _move_axis(source: np.ndarray, step: np.ndarray, out: np.ndarray, back: np.ndarray) -> None:
    """One curve's move: along the middle axis of (before, curve, after) joint totals, the other curves held.

    Shape:
        source, out: (A, n, C) float; step: (n, n); back: (A, n, C) uint8.
    """
    outer, n, inner = source.shape
    column, moved, arg = np.empty(n), np.empty(n), np.empty(n, dtype=np.uint8)
    for a in range(outer):
        for c in range(inner):
            for i in range(n):
                column[i] = source[a, i, c]
            _move(column, step, moved, arg)
            for j in range(n):
                out[a, j, c], back[a, j, c] = moved[j], arg[j]


@numba.njit(cache=True)
def joint_paths_1(emission: np.ndarray, tables: np.ndarray, variant: np.ndarray, penalty: np.ndarray) -> np.ndarray:
    """Best path of each group of one curve. Shape: emission (G, 1, W, n); see `joint_paths_3`."""
    groups, _, width, n = emission.shape
    states = np.empty((groups, 1, width), dtype=np.int64)
    back = np.zeros((width, n), dtype=np.uint8)
    total, moved, arg = np.empty(n), np.empty(n), np.empty(n, dtype=np.uint8)
    for g in range(groups):
        v0 = variant[g, 0]
        for s0 in range(n):
            total[s0] = penalty[s0] + emission[g, 0, 0, s0]
        for x in range(1, width):
            _move(total, tables[v0, x - 1], moved, arg)
            for j0 in range(n):
                back[x, j0] = arg[j0]
                total[j0] = moved[j0] + (penalty[j0] + emission[g, 0, x, j0])
        s0 = 0
        for j0 in range(1, n):
            if total[j0] < total[s0]:
                s0 = j0
        states[g, 0, width - 1] = s0
        for x in range(width - 1, 0, -1):
            s0 = back[x, s0]
            states[g, 0, x - 1] = s0
    return states


@numba.njit(cache=True)
def joint_paths_2(emission: np.ndarray, tables: np.ndarray, variant: np.ndarray, penalty: np.ndarray) -> np.ndarray:
    """Best joint path of each group of two curves. Shape: emission (G, 2, W, n); see `joint_paths_3`."""
    groups, _, width, n = emission.shape
    states = np.empty((groups, 2, width), dtype=np.int64)
    back0 = np.zeros((width, n, n), dtype=np.uint8)  # [x, j0, s1]: curve 0's previous state
    back1 = np.zeros((width, n, n), dtype=np.uint8)  # [x, j0, j1]: curve 1's previous state
    total, half = np.empty((n, n)), np.empty((n, n))
    for g in range(groups):
        v0, v1 = variant[g, 0], variant[g, 1]
        for s0 in range(n):
            for s1 in range(n):
                total[s0, s1] = (penalty[s0, s1] + emission[g, 0, 0, s0]) + emission[g, 1, 0, s1]
        for x in range(1, width):
            _move_axis(total.reshape(1, n, n), tables[v0, x - 1], half.reshape(1, n, n), back0[x].reshape(1, n, n))
            _move_axis(half.reshape(n, n, 1), tables[v1, x - 1], total.reshape(n, n, 1), back1[x].reshape(n, n, 1))
            for j0 in range(n):
                for j1 in range(n):
                    total[j0, j1] += (penalty[j0, j1] + emission[g, 0, x, j0]) + emission[g, 1, x, j1]
        s0, s1 = 0, 0
        for j0 in range(n):
            for j1 in range(n):
                if total[j0, j1] < total[s0, s1]:
                    s0, s1 = j0, j1
        states[g, 0, width - 1], states[g, 1, width - 1] = s0, s1
        for x in range(width - 1, 0, -1):
            s1 = back1[x, s0, s1]
            s0 = back0[x, s0, s1]
            states[g, 0, x - 1], states[g, 1, x - 1] = s0, s1
    return states


@numba.njit(cache=True)
def joint_paths_3(emission: np.ndarray, tables: np.ndarray, variant: np.ndarray, penalty: np.ndarray) -> np.ndarray:
    """Best joint path of each group of three curves.

    Args:
        emission: per group and curve, each state's cost in each column (state n-1 = absent).
        tables: per table, the cost of one curve's move between states at each column step.
        variant: which table each group's curve moves by.
        penalty: the crossing cost of each joint state (`paths.crossing_penalty`).

    Shape:
        emission: (G, 3, W, n); tables: (V, W-1, n, n); variant: (G, 3); penalty: (n, n, n). Returns (G, 3, W).
    """
    groups, _, width, n = emission.shape
    states = np.empty((groups, 3, width), dtype=np.int64)
    back0 = np.zeros((width, n, n, n), dtype=np.uint8)  # [x, j0, s1, s2]
    back1 = np.zeros((width, n, n, n), dtype=np.uint8)  # [x, j0, j1, s2]
    back2 = np.zeros((width, n, n, n), dtype=np.uint8)  # [x, j0, j1, j2]
    total, first, second = np.empty((n, n, n)), np.empty((n, n, n)), np.empty((n, n, n))
    for g in range(groups):
        v0, v1, v2 = variant[g, 0], variant[g, 1], variant[g, 2]
        for s0 in range(n):
            for s1 in range(n):
                for s2 in range(n):
                    total[s0, s1, s2] = (((penalty[s0, s1, s2] + emission[g, 0, 0, s0]) + emission[g, 1, 0, s1])
                                         + emission[g, 2, 0, s2])
        for x in range(1, width):
            # Curve 0 moves, then 1, then 2; the curves after the moving one still hold their previous states.
            _move_axis(total.reshape(1, n, n * n), tables[v0, x - 1], first.reshape(1, n, n * n),
                       back0[x].reshape(1, n, n * n))
            _move_axis(first, tables[v1, x - 1], second, back1[x])
            _move_axis(second.reshape(n * n, n, 1), tables[v2, x - 1], total.reshape(n * n, n, 1),
                       back2[x].reshape(n * n, n, 1))
            for j0 in range(n):
                for j1 in range(n):
                    for j2 in range(n):
                        total[j0, j1, j2] += (((penalty[j0, j1, j2] + emission[g, 0, x, j0]) + emission[g, 1, x, j1])
                                              + emission[g, 2, x, j2])
        s0, s1, s2 = 0, 0, 0
        for j0 in range(n):
            for j1 in range(n):
                for j2 in range(n):
                    if total[j0, j1, j2] < total[s0, s1, s2]:
                        s0, s1, s2 = j0, j1, j2
        states[g, 0, width - 1], states[g, 1, width - 1], states[g, 2, width - 1] = s0, s1, s2
        for x in range(width - 1, 0, -1):
            s2 = back2[x, s0, s1, s2]
            s1 = back1[x, s0, s1, s2]
            s0 = back0[x, s0, s1, s2]
            states[g, 0, x - 1], states[g, 1, x - 1], states[g, 2, x - 1] = s0, s1, s2
    return states
