"""Pixel rows read for a curve -> its calibrated values, on the backup scale it is drawn on.

The calibration sidecar (`io.calibration`) maps a track row to a value; two things sit between a
row read off the image and that mapping: a skewed scan's rows are image rows, not track rows
(`Calibration.image_rows_to_track` undoes it), and a curve with a backup scale re-enters from
the opposite edge when it runs off the track, so the scale a column is read on has to be
inferred from where the trace leaves and re-enters, and the scale the log starts on from which
start keeps the curve on its main scale longest (`wrap_counts`).
"""

from __future__ import annotations

import numpy as np

from veernet_pipeline.io.calibration import Calibration

# Share of the read columns another starting scale must add on the main scale to be taken (`wrap_counts`).
START_MARGIN = 0.25


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


def wrap_counts(rows: np.ndarray, height: int, max_wraps: int, edge: float = 0.2) -> np.ndarray:
    """Which backup scale each column of a curve is read on, from where the trace leaves and re-enters.

    A trace that leaves near the bottom edge and is next seen near the top has wrapped onto the
    next backup scale (+1); the other way round, back (-1). The count is clipped to the
    sidecar's `max_wraps`; a curve without a backup scale is always on its main scale (0).
    Where the log starts cannot be told from the picture alone. It starts on the main scale unless
    another (-`max_wraps`..`max_wraps`) leaves `START_MARGIN` more of the read columns on the main
    scale: a log is scaled so that its curves mostly fit, and a curve that starts wrapped shows it
    when it comes back.

    Shape:
        rows: (W,) subpixel track rows, NaN where the curve was not read. Returns (W,) int.
    """
    wraps = np.zeros(rows.shape, dtype=np.int64)
    if max_wraps == 0:
        return wraps
    fraction = (np.asarray(rows, dtype=np.float64) + 0.5) / height
    seen = np.nonzero(np.isfinite(fraction))[0]
    if not seen.size:
        return wraps
    before, after = fraction[seen[:-1]], fraction[seen[1:]]
    steps = np.where((before > 1 - edge) & (after < edge), 1, np.where((before < edge) & (after > 1 - edge), -1, 0))

    def follow(start: int) -> list[int]:
        counts = [start]
        for step in steps:
            counts.append(min(max(counts[-1] + int(step), -max_wraps), max_wraps))
        return counts

    # Another start must leave clearly more columns on the main scale: a curve that wraps for half its length
    # keeps the main-scale start. max() keeps the first of equals: the nearest to the main scale.
    main = follow(0)
    others = [follow(start) for start in sorted(range(-max_wraps, max_wraps + 1), key=abs) if start]
    best = max(others, key=lambda counts: counts.count(0))
    wraps[seen] = best if best.count(0) >= main.count(0) + START_MARGIN * len(seen) else main
    return wraps
