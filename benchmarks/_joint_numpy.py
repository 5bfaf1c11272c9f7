"""The joint path search in numpy, as `paths.viterbi` ran it before it was compiled (`reading.joint`): a baseline.

`benchmarks/skips.py` times the compiled searches against it; tests/unit/test_joint.py checks them by it.
"""

from __future__ import annotations

import numpy as np

from veernet_pipeline.reading.paths import MAX_JOINT, crossing_penalty

COST_CHUNK = 1 << 20  # joint-state costs precomputed at a time (8 MiB of float64)


def numpy_viterbi(emission: np.ndarray, transition: np.ndarray, crossing_cost: float,
                  variant: np.ndarray | None = None) -> np.ndarray:
    """`paths.viterbi` in numpy, as it ran before 2026-12-07 (same arguments, shapes and result)."""
    n_groups, g, width, n = emission.shape
    if g > MAX_JOINT:
        raise ValueError(f"an exact joint search reads at most {MAX_JOINT} curves at once, got {g}; use peel()")
    tables = transition if transition.ndim == 4 else transition[None]
    variant = np.zeros((n_groups, g), dtype=np.int64) if variant is None else np.asarray(variant, dtype=np.int64)
    # One table for every curve (the common case) is broadcast as it is; otherwise each group's curve picks its own.
    shared = [int(variant[0, a]) if (variant[:, a] == variant[0, a]).all() else None for a in range(g)]
    penalty = crossing_penalty(g, n, crossing_cost)

    def column_costs(start: int, stop: int) -> np.ndarray:
        """Every joint state's emission and crossing cost in columns start..stop-1. Shape: (stop-start, G, n, ...)."""
        total = np.broadcast_to(penalty, (stop - start, n_groups) + penalty.shape)
        for k in range(g):
            shape = [stop - start, n_groups] + [1] * g
            shape[k + 2] = n
            total = total + emission[:, k, start:stop].transpose(1, 0, 2).reshape(shape)
        return total

    back = np.zeros((width, g, n_groups) + (n,) * g, dtype=np.uint8)
    # Curve axis a moved last and back (transpose orders precomputed: np.moveaxis costs more than the step at g = 1).
    to_last = [tuple(i for i in range(g + 1) if i != a) + (a,) for a in range(g + 1)]
    from_last = [tuple(np.argsort(order)) for order in to_last]
    total = column_costs(0, 1)[0]
    chunk = max(1, COST_CHUNK // (n_groups * n**g))  # columns of joint costs held at once
    for start in range(1, width, chunk):
        costs = column_costs(start, min(width, start + chunk))
        for x in range(start, min(width, start + chunk)):
            # One curve axis at a time: axes before `a` already hold current states, those after still previous ones.
            for a in range(1, g + 1):
                if shared[a - 1] is not None:
                    step = tables[shared[a - 1], x - 1]
                else:  # (G, 1, ..., previous, current): group by group
                    step = tables[variant[:, a - 1], x - 1].reshape((n_groups,) + (1,) * (g - 1) + (n, n))
                moved = total.transpose(to_last[a])[..., :, None] + step  # (..., previous, current)
                back[x, a - 1] = moved.argmin(axis=-2).transpose(from_last[a])
                total = moved.min(axis=-2).transpose(from_last[a])
            total = total + costs[x - start]
    states = np.empty((n_groups, g, width), dtype=np.int64)
    for group in range(n_groups):
        state = list(np.unravel_index(int(total[group].argmin()), total[group].shape))
        states[group, :, width - 1] = state
        for x in range(width - 1, 0, -1):
            for a in range(g - 1, -1, -1):  # undo the axis steps in reverse order
                state[a] = int(back[x, a, group][tuple(state)])
            states[group, :, x - 1] = state
    return states
