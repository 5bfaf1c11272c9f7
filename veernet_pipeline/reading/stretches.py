"""Pens of curves drawn alike found from the stretches of line they were read on, not from each curve's median.

`run_heights.alike_measure` tells curves drawn alike apart by their pens' stroke thickness, measured on
a first reading. But where that reading trades lines (which is what the measure is there to mend), a
curve's runs are half one pen's and half another's, and the medians of two such curves meet: on val
000090, three solid pens of 4, 6 and 3 px on their true lines measured 3, 5 and 5 px on the first
reading, so the group fell back to run heights (busyness), which traded the lines further (swaps 55 %).

A trade happens where a reading jumps across paper or meets another curve, so between such places a
reading holds one line. So each curve's reading is cut into stretches (`lone_stretches`: columns it
holds a run alone, each run touching the last), each stretch measured by its median, and the stretches
of the whole group clustered into as many pens as it has curves (`kmeans_1d`, weighted by length). Each
curve gets the pen most of its stretches lie nearest (`scipy.optimize.linear_sum_assignment`), and
only if at least `MIN_SUPPORT` of its own stretches' columns lie nearest that pen: a pen no curve holds
for long is a cluster of outliers (grid crossings, a steep stroke's tall runs), not a pen. 000090 reads
pens of 3.0, 6.2 and 4.1 px (docs/accuracy.md, "Pens of curves drawn alike found from their stretches").
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import linear_sum_assignment

from veernet_pipeline.reading.candidates import Candidates

# Columns a stretch needs before its median counts: shorter ones are crossings' edges and single dots.
MIN_STRETCH = 5
# Share of a curve's stretch columns that must lie nearest the pen it is given.
MIN_SUPPORT = 0.2


def held_alone(states: np.ndarray, k: int, absent: int) -> np.ndarray:
    """Where curve k reads a run no other curve of `states` reads (absent columns: False).

    Shape:
        states: (K, W), candidate index per column, `absent` where absent. Returns (W,) bool.
    """
    others = np.delete(states, k, axis=0)
    return (states[k] < absent) & ~np.any(others == states[k][None], axis=0)


def lone_stretches(cands: Candidates, states: np.ndarray, k: int) -> list[tuple[int, int]]:
    """Curve k's stretches: `(start, stop)` column ranges, at least `MIN_STRETCH` long, of runs it holds alone,
    each touching (within a row) the run before it.

    Shape:
        states: (K, W), candidate index per column, M = absent.
    """
    width = states.shape[1]
    alone = held_alone(states, k, cands.top.shape[1])
    run = np.where(alone, states[k], 0)
    cols = np.arange(width)
    top = np.where(alone, cands.top[cols, run], np.nan)
    bottom = np.where(alone, cands.bottom[cols, run], np.nan)
    with np.errstate(invalid="ignore"):
        touch = (top[1:] <= bottom[:-1] + 1) & (bottom[1:] >= top[:-1] - 1)  # False where either is absent
    edges = np.flatnonzero(np.concatenate([[True], ~touch, [True]]))
    return [(int(a), int(b)) for a, b in zip(edges[:-1], edges[1:], strict=True) if alone[a] and b - a >= MIN_STRETCH]


def kmeans_1d(values: np.ndarray, weights: np.ndarray, n: int) -> np.ndarray | None:
    """The `n` centres of the weighted 1-D k-means optimum (dynamic programming over the sorted values), ascending.

    Exact rather than scikit-learn's `KMeans`: from fixed starting centres Lloyd's iterations ended in
    another optimum than the exact one on 4 of the 19 val logs holding curves drawn alike, and random
    starts would be a seed the reading does not have; the values are a few dozen distinct medians.

    Returns:
        None where the values hold fewer than `n` distinct numbers.

    Shape:
        values, weights: (N,). Returns (n,).
    """
    distinct, inverse = np.unique(values, return_inverse=True)
    if distinct.size < n:
        return None
    mass = np.bincount(inverse, weights=weights)
    w, s, ss = (np.concatenate([[0.0], np.cumsum(x)]) for x in (mass, mass * distinct, mass * distinct**2))
    size = distinct.size
    # sse[i, j]: weighted squared error of distinct[i:j] about its mean (i < j).
    i, j = np.triu_indices(size + 1, k=1)
    sse = np.full((size + 1, size + 1), np.inf)
    sse[i, j] = ss[j] - ss[i] - (s[j] - s[i]) ** 2 / (w[j] - w[i])
    cost = np.full((n + 1, size + 1), np.inf)
    cost[0, 0] = 0.0
    start = np.zeros((n + 1, size + 1), dtype=np.int64)
    for c in range(1, n + 1):
        total = cost[c - 1][:, None] + sse  # (first index of cluster c, end)
        start[c] = np.argmin(total, axis=0)
        cost[c] = total[start[c], np.arange(size + 1)]
    centres, end = [], size
    for c in range(n, 0, -1):
        first = start[c, end]
        centres.append((s[end] - s[first]) / (w[end] - w[first]))
        end = first
    return np.array(centres[::-1])


def stretch_typical(measure: np.ndarray, cands: Candidates, states: np.ndarray, min_columns: int) -> np.ndarray:
    """Each curve's typical measure: the pen (cluster of stretch medians) its stretches lie nearest.

    Args:
        measure: a measure of every run in px (`Candidates.thickness` or `Candidates.height`).
        cands: the column candidates the states index.
        states: the group's paths from a first search.
        min_columns: stretch columns each curve needs before the pens are trusted.

    Returns:
        Typical measure per curve in px; all NaN where a curve has too few stretch columns, the stretches
        hold fewer distinct medians than curves, or a curve holds its pen in under `MIN_SUPPORT` of them.

    Shape:
        measure: (W, M); states: (g, W). Returns (g,).
    """
    n = states.shape[0]
    typical = np.full(n, np.nan)
    medians, lengths, owners = [], [], []
    for k in range(n):
        for a, b in lone_stretches(cands, states, k):
            cols = np.arange(a, b)
            medians.append(float(np.median(measure[cols, states[k, cols]])))
            lengths.append(b - a)
            owners.append(k)
    lengths_arr, owners_arr = np.asarray(lengths, dtype=float), np.asarray(owners, dtype=np.int64)
    own = np.bincount(owners_arr, weights=lengths_arr, minlength=n)
    if (own < min_columns).any():
        return typical
    medians_arr = np.asarray(medians)
    centres = kmeans_1d(medians_arr, lengths_arr, n)
    if centres is None:
        return typical
    nearest = np.argmin(np.abs(medians_arr[:, None] - centres[None]), axis=1)
    votes = np.zeros((n, n))
    np.add.at(votes, (owners_arr, nearest), lengths_arr)
    curves, pens = linear_sum_assignment(votes, maximize=True)
    if (votes[curves, pens] < MIN_SUPPORT * own[curves]).any():
        return typical
    typical[curves] = centres[pens]
    return typical
