"""The single-curve path search in numpy, as it ran before it was compiled (`reading.skips`): a baseline.

`numpy_skipping_paths` takes `skips.best_skipping_paths`' arguments, builds the seven tables of skip costs
as `paths.viterbi_single` built them, with `paths.transitions(step=d)` (vectorised numpy, where the compiled
search computes each cost alone), and runs the column loop with numpy calls. `benchmarks/skips.py` times the
compiled search against it; tests/unit/test_skips.py checks the compiled one by it.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from veernet_pipeline.reading.candidates import Candidates
from veernet_pipeline.reading.paths import transitions


def skip_tables(top: np.ndarray, bottom: np.ndarray, cyclic: np.ndarray, height: int, skip_columns: int,
                jump_px: float, absent_cost: float) -> np.ndarray:
    """skip[v, x, d - 2, i, j]: from run i of column x - d to run j of column x (inf before column d or where none),
    from `paths.transitions(step=d)` as `viterbi_single` built them.

    Shape:
        top, bottom: (W, M); cyclic: (V,). Returns (V, W, skip_columns - 1, M, M).
    """
    width, m = top.shape
    runs = Candidates(top=top, bottom=bottom, peak=np.zeros_like(top), centre=np.zeros((0, width, m)),
                      share=np.zeros((0, width, m)), thickness=np.zeros_like(top))
    params = SimpleNamespace(jump_px=jump_px, gap_cost=0.0)  # the absent state's entries are not used here
    tables = np.full((len(cyclic), width, skip_columns - 1, m, m), np.inf)
    for v, wrap in enumerate(cyclic):
        for d in range(2, min(skip_columns, width - 1) + 1):
            tables[v, d:, d - 2] = transitions(runs, params, height, d, bool(wrap))[:, :m, :m] + (d - 1) * absent_cost
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
