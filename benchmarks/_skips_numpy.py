"""The single-curve path search's loop in numpy, as it ran before it was compiled (`reading.skips`): a baseline."""

from __future__ import annotations

import numpy as np


def numpy_skipping_paths(emission: np.ndarray, step_cost: np.ndarray, skip_cost: np.ndarray,
                         variant: np.ndarray) -> np.ndarray:
    """`skips.best_skipping_paths` in numpy, as `paths.viterbi_single` ran it before 2026-12-07.

    The baseline `benchmarks/skips.py` times the compiled loop against, and the second formula
    tests/unit/test_skips.py checks it by. Arguments and shapes as `best_skipping_paths`.
    """
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
