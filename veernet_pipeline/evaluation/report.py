"""Evaluation outputs a person reads: the per-log CSV and truth-vs-prediction overlays.

Overlays are drawn by `reading.picture` (native pixels, cropped to the worst stretch).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from veernet_pipeline.io.atomic import atomic_path
from veernet_pipeline.reading.picture import Series, curve_name, render_curves_png

# drawn_alike: how many of the track's curves share this one's style and pen (1 = its own); conf_median,
# conf_p10, null_share, low_conf_share: the log's, as the review queue ranks a digitised scan (`reading.confidence`).
PER_LOG_COLUMNS = (
    "id", "well", "curve", "mnemonic", "unit", "style", "width", "height", "n_curves", "drawn_alike", "r2", "r2_flat",
    "mae", "mse", "coverage", "n", "pearson_abs", "misread_share", "swap_share", "curve_swap_share", "own_line",
    "mae_physical", "mean_confidence", "conf_median", "conf_p10", "null_share", "low_conf_share", "scale",
    "wrapped_share", "features",
)
_CURVE_STYLES = ("-", "--", ":", "-.")


def overlay_png(
    path: Path, image: np.ndarray, truth_rows: np.ndarray, pred_rows: np.ndarray, cyclic: np.ndarray | None = None,
    max_columns: int = 1500,
) -> tuple[int, int]:
    """Truth (green) and prediction (red) over the scan, cropped to the worst stretch if wide.

    The stretch is measured as the scores are: a curve with a backup scale (`cyclic`) the short way round
    its track, so a wrap read a column late is a pixel off there, not the track's height.

    Returns:
        The window `(start, stop)` drawn.

    Shape:
        image: (H, W) uint8. truth_rows, pred_rows: (K, W) pixel rows, NaN where absent. cyclic: (K,) bool, None =
        no curve has a backup scale.
    """
    height = image.shape[0]
    series: list[Series] = []
    badness = np.zeros(image.shape[1])
    wraps = np.zeros(len(truth_rows), dtype=bool) if cyclic is None else np.asarray(cyclic, dtype=bool)
    for k, (truth, pred) in enumerate(zip(truth_rows, pred_rows, strict=True)):
        style = _CURVE_STYLES[k % len(_CURVE_STYLES)]
        series.append(Series(truth, "lime", f"truth {curve_name(k)}", style))
        series.append(Series(pred, "red", f"prediction {curve_name(k)}", style))
        off = np.abs(pred - truth)
        if wraps[k]:
            off = np.minimum(off, height - off)
        # A column with truth but no prediction is as bad as the largest miss (the track height).
        miss = np.where(np.isnan(pred), float(height), off)
        badness += np.where(np.isnan(truth), 0.0, miss)
    return render_curves_png(path, image, series, max_columns, badness)


def write_per_log_csv(path: Path, records: Sequence[dict[str, object]]) -> None:
    """Write one row per (log, curve) with the `PER_LOG_COLUMNS` columns, atomically."""
    frame = pd.DataFrame(list(records), columns=list(PER_LOG_COLUMNS))
    with atomic_path(path) as tmp:
        frame.to_csv(tmp, index=False)
