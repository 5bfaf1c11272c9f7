"""The single-curve path search in numpy, as it ran before it was compiled (`reading.skips`): a baseline.

`numpy_skipping_paths` takes `skips.best_skipping_paths`' arguments, builds the seven tables of skip costs
the way `paths.viterbi_single` built them with `paths.transitions(step=d)`, and runs the column loop with
numpy calls. `benchmarks/skips.py` times the compiled search against it; tests/unit/test_skips.py checks
the compiled one by it, a second formula written apart.
"""

from __future__ import annotations

import numpy as np


def skip_tables(top: np.ndarray, bottom: np.ndarray, cyclic: np.ndarray, height: int, skip_columns: int,
                jump_px: float, absent_cost: float) -> np.ndarray:
    """skip[v, x, d - 2, i, j]: from run i of column x - d to run j of column x (inf before column d or where none).

    Shape:
        top, bottom: (W, M); cyclic: (V,). Returns (V, W, skip_columns - 1, M, M).
    """
    width, m = top.shape
    tables = np.full((len(cyclic), width, skip_columns - 1, m, m), np.inf)
    for v, wrap in enumerate(cyclic):
        for d in range(2, min(skip_columns, width - 1) + 1):
            top_prev, bot_prev = top[:-d, :, None], bottom[:-d, :, None]
            top_cur, bot_cur = top[d:, None, :], bottom[d:, None, :]
            gap = np.maximum(0.0, np.maximum(top_cur - bot_prev, top_prev - bot_cur) - 1.0)
            drift = np.abs((top_cur + bot_cur) - (top_prev + bot_prev)) / (2.0 * height)
            if wrap:
                through = np.minimum((height - 1.0 - bot_prev) + top_cur, top_prev + (height - 1.0 - bot_cur))
                gap = np.minimum(gap, np.maximum(0.0, through))
                drift = np.minimum(drift, 1.0 - drift)
            with np.errstate(invalid="ignore"):
                cost = np.where(np.isfinite(gap), gap / jump_px + drift, np.inf)
            tables[v, d:, d - 2] = cost + (d - 1) * absent_cost
    return tables


def numpy_skipping_paths(emission: np.ndarray, step_cost: np.ndarray, top: np.ndarray, bottom: np.ndarray,
                         cyclic: np.ndarray, variant: np.ndarray, height: int, skip_columns: int, jump_px: float,
                         absent_cost: float) -> np.ndarray:
    """`skips.best_skipping_paths` in numpy, as `paths.viterbi_single` ran it before 2026-12-07 (same arguments)."""
    skip_cost = skip_tables(top, bottom, cyclic, height, skip_columns, jump_px, absent_cost)
    n_curves, width, n = emission.shape
    m, window = n - 1, skip_cost.shape[2] + 1
    distances = np.arange(2, window + 1)
    back = np.zeros((width, n_curves, n), dtype=np.int64)
    came = np.ones((width, n_curves, n), dtype=np.int64)
    recent = np.full((window, n_curves, n), np.inf)
    recent[0] = emission[:, 0]
    for x in range(1, width):
        moved = recent[(x - 1) % window][:, :, None] + step_cost[variant, x - 1]
        back[x] = moved.argmin(axis=1)
        total = moved.min(axis=1)
        jumped = recent[(x - distances) % window][:, :, :m, None] + skip_cost[variant, x].swapaxes(0, 1)
        jumped = jumped.transpose(1, 0, 2, 3).reshape(n_curves, -1, m)
        pick = jumped.argmin(axis=1)
        best = np.take_along_axis(jumped, pick[:, None], axis=1)[:, 0]
        better = best < total[:, :m]
        total[:, :m] = np.where(better, best, total[:, :m])
        back[x, :, :m] = np.where(better, pick % m, back[x, :, :m])
        came[x, :, :m] = np.where(better, pick // m + 2, 1)
        recent[x % window] = total + emission[:, x]
    states = np.full((n_curves, width), m, dtype=np.int64)
    final = recent[(width - 1) % window]
    for curve in range(n_curves):
        x, state = width - 1, int(final[curve].argmin())
        while True:
            states[curve, x] = state
            if x == 0:
                break
            state, x = int(back[x, curve, state]), x - int(came[x, curve, state])
    return states
