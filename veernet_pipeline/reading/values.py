"""Pixel rows read for a curve -> its calibrated values, on the backup scale it is drawn on.

The calibration sidecar (`io.calibration`) maps a track row to a value; two things sit between a
row read off the image and that mapping: a skewed scan's rows are image rows, not track rows
(`Calibration.image_rows_to_track` undoes it), and a curve with a backup scale re-enters from
the opposite edge when it runs off the track, so the scale a column is read on has to be
inferred: the counts that keep the curve's value most continuous, staying on the main scale unless
the picture says otherwise (`wrap_counts`).
"""

from __future__ import annotations

import numpy as np

from veernet_pipeline.io.calibration import Calibration

# Cost of one read column one scale off the main one, in track widths of change (`wrap_counts`): a stretch read on a
# backup scale must save a jump worth its length x 0.001 (about 0.6 of the track for 600 columns). Chosen on the
# first 80 val logs read from their true masks (0.0003-0.01 by benchmarks/wraps.py; docs/accuracy.md, backup scales).
OFF_MAIN_COST = 1e-3
# Cost of starting a log one scale off the main one, in the same units: where two readings are equally continuous
# (a curve on the main scale for half the log and wrapped for the other half), the one starting on the main scale.
# 0-1 tried on the same logs: mean error 0.107 (0), 0.103 (0.25), 0.102 (0.5), 0.104 (1) track widths.
START_COST = 0.25


def rows_to_values(calib: Calibration, rows: np.ndarray, height: int, curve: int) -> tuple[np.ndarray, np.ndarray]:
    """Image rows read for one curve -> its physical values, wrapped stretches on their backup scale.

    Shape:
        rows: (W,) subpixel image rows, NaN where the curve was not read. Returns values (W,)
        float (NaN where not read) and wrap counts (W,) int.
    """
    # A skewed scan's rows are image rows; the sidecar's skew turns them back into track rows.
    track_rows = calib.image_rows_to_track(rows, np.arange(rows.shape[-1]))
    wraps = wrap_counts(track_rows, height, calib.curves[curve].backup_wraps)
    return calib.row_to_value(track_rows, height, curve, wraps=wraps), wraps


def wrap_counts(rows: np.ndarray, height: int, max_wraps: int, off_main_cost: float = OFF_MAIN_COST,
                start_cost: float = START_COST) -> np.ndarray:
    """Which backup scale each column of a curve is read on: the scales that keep its value most continuous.

    A curve that runs off one edge re-enters at the other, one scale on; its value does not jump,
    its row does. So the counts are the path through the columns read (states -`max_wraps`..`max_wraps`)
    that minimises the summed change of the unwrapped position (track fraction + count) from one
    read column to the next, plus `off_main_cost` per column and scale away from the main one (a log
    is scaled so its curves mostly fit) and `start_cost` per scale the first read column is off it (a
    log starts on its main scale unless its later columns clearly say otherwise). Solved exactly by
    dynamic programming (Viterbi). Unlike counting edge-to-edge steps, it needs no band at the
    edges: a trace last read at 0.24 of the track before a gap and next at 0.98 has wrapped (a
    change of 0.26 against 0.74). A stroke read column by column across the track changes little per
    column and is not a wrap; a jump of more than half the track between two read columns is. The
    costs' limit: a wrapped stretch must be paid for by the jumps it saves (docs/accuracy.md).

    Shape:
        rows: (W,) subpixel track rows, NaN where the curve was not read. Returns (W,) int (0 where not read).
    """
    wraps = np.zeros(rows.shape, dtype=np.int64)
    fraction = (np.asarray(rows, dtype=np.float64) + 0.5) / height
    seen = np.nonzero(np.isfinite(fraction))[0]
    if max_wraps == 0 or not seen.size:
        return wraps
    states = np.arange(-max_wraps, max_wraps + 1)
    off_main = off_main_cost * np.abs(states)
    unwrapped = fraction[seen][:, None] + states[None, :]
    # Viterbi written out rather than through an HMM library: the costs are not a fitted model's probabilities, and
    # 3-5 states make it a few lines. jumps[j, a, b]: the change from state b at read column j to a at j + 1.
    jumps = np.abs(unwrapped[1:, :, None] - unwrapped[:-1, None, :])
    best_from = np.zeros(jumps.shape[:2], dtype=np.int64)
    cost = off_main + start_cost * np.abs(states)
    for j, jump in enumerate(jumps):
        total = jump + cost[None, :]
        best_from[j] = total.argmin(axis=1)
        cost = total.min(axis=1) + off_main
    path = np.empty(seen.size, dtype=np.int64)
    path[-1] = int(cost.argmin())
    for j in range(seen.size - 2, -1, -1):
        path[j] = best_from[j, path[j + 1]]
    wraps[seen] = states[path]
    return wraps
