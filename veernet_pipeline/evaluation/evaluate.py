"""Measure a model on held-out synthetic logs against their native LAS curves.

For each log of the chosen split: class probabilities (tiled, native resolution), one subpixel
row per column per curve, and the truth read from the log's ground-truth LAS at the depth of
every column. Curves are compared in track units (0 top edge, 1 bottom edge of the track):
prediction = (row + 0.5) / H, truth = where the sidecar draws the LAS value interpolated at
`calibration.column_depths(W)` (`drawn_tracks`: backup wrap, edge pegging, skew). Where the skew
moves a drawn row off the image, the picture does not show the curve, so that column is left out
rather than counted against the model. Physical units compare the values `veernet digitize` would
write (deskewed, unwrapped onto backup scales) with the LAS itself.

A one-logit binary model cannot tell two curves apart; on a two-curve log its single curve is
compared, column by column, with whichever true curve lies nearer.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import tifffile
import torch
from torch import nn

from veernet_pipeline.config import EvaluateParams, ExtractParams
from veernet_pipeline.evaluation.metrics import MaskScores, curve_metrics
from veernet_pipeline.evaluation.report import PER_LOG_COLUMNS, overlay_png, write_per_log_csv
from veernet_pipeline.io.atomic import atomic_dir, write_json_atomic
from veernet_pipeline.io.calibration import Calibration
from veernet_pipeline.io.las import read_curves
from veernet_pipeline.io.sets import INDEX_FILE, read_split
from veernet_pipeline.io.tiff import decode_scan
from veernet_pipeline.model.veernet import load_model
from veernet_pipeline.progress import progress
from veernet_pipeline.reading.extract import trace_curves
from veernet_pipeline.reading.picture import curve_name
from veernet_pipeline.reading.predict import predict_probs
from veernet_pipeline.reading.styles import curve_probs
from veernet_pipeline.reading.values import rows_to_values
from veernet_pipeline.synthetic.strokes import nearest_row

log = logging.getLogger(__name__)

CURVE_METRICS = ("r2", "mae", "mse", "coverage", "pearson_abs", "misread_share", "swap_share", "mae_physical")
OVERLAYS_PER_END = 5  # overlays of the best and of the worst logs


def truth_values(las_path: Path, calibration: Calibration, width: int, n_curves: int) -> np.ndarray:
    """True curve values at each column's depth, NaN off the LAS depth range.

    Shape:
        Returns (n_curves, W).
    """
    depth, curves, _ = read_curves(las_path)
    columns = calibration.column_depths(width)
    order = np.argsort(depth)
    depth = np.asarray(depth, dtype=np.float64)[order]
    values = np.full((n_curves, width), np.nan)
    inside = (columns >= depth[0]) & (columns <= depth[-1])
    for k, scale in enumerate(calibration.curves[:n_curves]):
        if scale.mnemonic not in curves:
            raise ValueError(f"{las_path}: no curve {scale.mnemonic!r} (the calibration's curve {k}); "
                             f"it holds {sorted(curves)}")
        interpolated = np.interp(columns, depth, np.asarray(curves[scale.mnemonic], dtype=np.float64)[order])
        values[k] = np.where(inside, interpolated, np.nan)
    return values


def truth_tracks(las_path: Path, calibration: Calibration, width: int, n_curves: int, height: int) -> np.ndarray:
    """Where each true curve is drawn, in image track units ((image row + 0.5) / H), NaN off the LAS range.

    "Drawn" follows the sidecar: a value off the track sits on its backup scale (wrap) or pegged at
    the edge, and a skewed scan shifts every row by `calibration.skew_offset`. That is what the
    picture shows, so it is what a read-out of the picture is scored against; where the skew moves
    the drawn row past the image's top or bottom edge, the picture shows nothing and the truth is NaN.

    Shape:
        Returns (n_curves, W).
    """
    return drawn_tracks(truth_values(las_path, calibration, width, n_curves), calibration, height)


def drawn_tracks(values: np.ndarray, calibration: Calibration, height: int) -> np.ndarray:
    """`truth_tracks` from values already read (`truth_values`), so a caller needing both reads the LAS once.

    Shape:
        values: (n_curves, W). Returns (n_curves, W).
    """
    n_curves, width = values.shape
    offset = calibration.skew_offset(np.arange(width))
    tracks = np.full((n_curves, width), np.nan)
    for k in range(n_curves):
        rows, _ = calibration.value_to_drawn_row(values[k], height, k)
        image_rows = rows + offset
        # The renderer inks the nearest pixel row and drops rows outside the image.
        nearest = nearest_row(np.nan_to_num(image_rows))
        shown = np.isfinite(values[k]) & (nearest >= 0) & (nearest <= height - 1)
        tracks[k] = np.where(shown, (image_rows + 0.5) / height, np.nan)
    return tracks


def match_binary(pred: np.ndarray, truth: np.ndarray) -> np.ndarray:
    """For a one-curve prediction, the true curve nearest to it in each column.

    A column without a prediction takes any true curve present there, so it counts as a miss.

    Shape:
        pred: (W,); truth: (N, W). Returns (W,).
    """
    distance = np.abs(truth - pred[None])
    distance = np.where(np.isnan(distance), np.where(np.isnan(truth), np.inf, np.finfo(float).max), distance)
    return truth[distance.argmin(axis=0), np.arange(truth.shape[1])]


def evaluate_model(
    model_dir: Path, set_dir: Path, out_dir: Path, params: EvaluateParams, extract: ExtractParams
) -> dict[str, Any]:
    """Evaluate the model in `model_dir` on split `params.split` of the synthetic set `set_dir`.

    Curves are read from the class probabilities by the same path search inference uses (`extract`).

    Writes `metrics.json`, `per_log.csv` (one row per log and curve), `overlay.png` (the worst
    log) and `overlays/{worst,best}_<rank>_<id>.png` (the five worst and five best logs by mean
    MAE; R^2 misleads on nearly flat curves) into `out_dir`.

    Returns:
        `split`, `n_logs`, `curves` ({"A": {"median_r2", "p10_r2", "mean_r2", ...}, ...} over logs,
        for r2, mae, mse, coverage, pearson_abs, misread_share, swap_share and mae_physical),
        `classes` ({"0": {"iou", "f1", "precision", "recall"}, ...} from pixel counts pooled
        over logs), `median_r2` (lowest per-curve median R^2: the gate's figure), `median_mae`
        and `median_mse` (highest per-curve medians). NaN where undefined (null in the JSON).
    """
    logs = select_logs(Path(set_dir), params.split, params.max_logs)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = load_model(model_dir, map_location=device)
    records: list[dict[str, Any]] = []
    # Pixel counts pooled over every log; a one-logit binary model gives two classes.
    pooled = MaskScores(max(2, model.num_classes))
    # Only the current best and worst few logs' pictures are held, so memory stays flat over a big split.
    ranked: list[tuple[float, str, np.ndarray, np.ndarray, np.ndarray]] = []
    for row in progress(logs.itertuples(index=False), total=len(logs), desc="evaluate", unit="log"):
        image, truth_rows, pred_rows, log_records = _evaluate_log(model, Path(set_dir), row, params, extract, device,
                                                                  pooled)
        records.extend(log_records)
        score = _mean_or_nan([r["mae"] for r in log_records])
        ranked.append((math.inf if math.isnan(score) else score, str(row.id), image, truth_rows, pred_rows))
        ranked.sort(key=lambda item: item[0])
        if len(ranked) > 2 * OVERLAYS_PER_END:
            del ranked[OVERLAYS_PER_END]
    metrics = summarise(records, pooled, params.split, len(logs))
    out_dir = Path(out_dir)
    write_per_log_csv(out_dir / "per_log.csv", records)
    write_json_atomic(out_dir / "metrics.json", metrics)
    overlay_png(out_dir / "overlay.png", *ranked[-1][2:])
    best, worst = ranked[:OVERLAYS_PER_END], ranked[::-1][:OVERLAYS_PER_END]
    # The folder is replaced whole: a re-evaluation's pictures never mix with an earlier model's.
    with atomic_dir(out_dir / "overlays") as overlays:
        for name, chosen in (("best", best), ("worst", worst)):
            for rank, (_, log_id, image, truth_rows, pred_rows) in enumerate(chosen, start=1):
                overlay_png(overlays / f"{name}_{rank}_{log_id}.png", image, truth_rows, pred_rows)
    log.info("evaluated %d logs of %s: median R^2 %.4f, median MAE %.4f",
             len(logs), set_dir, metrics["median_r2"], metrics["median_mae"])
    return metrics


def _evaluate_log(
    model: nn.Module, set_dir: Path, row: Any, params: EvaluateParams, extract: ExtractParams, device: str,
    pooled: MaskScores,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[dict[str, Any]]]:
    """Image, truth rows, predicted rows (pixel rows, (K, W)) and per-curve records of one log.

    The log's predicted and true masks are added to `pooled`.
    """
    image = decode_scan(set_dir / row.image)
    mask = tifffile.imread(set_dir / row.mask)
    if mask.shape != image.shape:
        raise ValueError(f"{set_dir / row.mask}: mask shape {mask.shape} differs from image {row.image} "
                         f"shape {image.shape}; regenerate the set")
    height, width = image.shape
    calibration = Calibration.from_file(set_dir / row.calibration)
    probs = predict_probs(model, image, params.tile_width, params.tile_overlap, device, mirror=extract.mirror)
    rows, confidence = trace_curves(curve_probs(probs, [c.style for c in calibration.curves]), extract)
    n_truth = min(int(row.n_curves), len(calibration.curves))
    values = truth_values(set_dir / row.las, calibration, width, n_truth)
    truth = drawn_tracks(values, calibration, height)
    visible = truth.copy()  # NaN where the picture cannot show the curve; `truth` may be re-paired below
    pred = (rows + 0.5) / height
    if rows.shape[0] == 1 and n_truth > 1:
        truth = match_binary(pred[0], truth)[None]
    n = min(rows.shape[0], truth.shape[0])
    swaps = swap_share(pred[:n], truth[:n])
    records = []
    for k in range(n):
        scores = curve_metrics(pred[k], truth[k])
        scale = calibration.curves[k]
        # Physical values are read exactly as `veernet digitize` writes them (deskewed, wrapped
        # stretches on their backup scale). Only values pegged at a track edge beyond the last
        # backup scale are left out: the picture cannot show them.
        read_values, _ = rows_to_values(calibration, rows[k], height, k)
        drawn, wraps = scale.wrap(scale.value_to_fraction(values[k]))
        shown = (drawn >= 0.0) & (drawn <= 1.0) & np.isfinite(visible[k])
        physical = np.abs(read_values - values[k])[shown]
        known = np.isfinite(values[k])
        records.append({"id": row.id, "well": row.well, "curve": curve_name(k), "mnemonic": scale.mnemonic,
                        "unit": scale.unit, "width": width, "height": height, **scores, "swap_share": swaps,
                        "mae_physical": _finite_stat(np.mean, physical),
                        "mean_confidence": float(confidence[k].mean()), "n_curves": n_truth, "scale": scale.scale,
                        "wrapped_share": float((wraps[known] != 0).mean()) if known.any() else math.nan})
    # MaskScores scores a binary model as curve vs background whatever the set labels its curves.
    pooled.update(probs.argmax(axis=0), mask)
    return image, truth[:n] * height - 0.5, rows[:n], records


def select_logs(set_dir: Path, split: str, max_logs: int) -> pd.DataFrame:
    """The logs of `split` in a synthetic set's index, by id, at most `max_logs` (0 = all)."""
    logs = read_split(set_dir, split)
    if max_logs > 0:
        logs = logs.head(max_logs)
    if logs.empty:
        raise ValueError(f"{Path(set_dir) / INDEX_FILE}: no logs in split {split!r}; choose another split "
                         "(evaluate.split) or synthesize a larger set")
    return logs


def swap_share(pred: np.ndarray, truth: np.ndarray) -> float:
    """Share of columns, where both curves are read and both truths exist, in which the curves' identities are swapped.

    A column counts as swapped when pairing prediction A with truth B and B with A is closer than
    the pairing as labelled. NaN for a single-curve log or when no column has all four values.

    Shape:
        pred, truth: (K, W) in track units.
    """
    if pred.shape[0] < 2 or truth.shape[0] < 2:
        return float("nan")
    both = np.isfinite(pred[:2]).all(axis=0) & np.isfinite(truth[:2]).all(axis=0)
    if not both.any():
        return float("nan")
    p, t = pred[:2, both], truth[:2, both]
    as_labelled = np.abs(p[0] - t[0]) + np.abs(p[1] - t[1])
    crossed = np.abs(p[0] - t[1]) + np.abs(p[1] - t[0])
    return float(np.mean(crossed < as_labelled))


def summarise(records: Sequence[dict[str, Any]], pooled: MaskScores, split: str, n_logs: int) -> dict[str, Any]:
    """Per-log records -> `metrics.json`: per curve the median, 10th/90th percentile and mean of each metric
    over logs (NaN entries skipped), the pooled mask scores, and the gate's figures (worst curve).
    """
    frame = pd.DataFrame(list(records), columns=list(PER_LOG_COLUMNS))
    curves: dict[str, dict[str, float]] = {}
    for name, group in frame.groupby("curve", sort=True):
        curves[str(name)] = {}
        for metric in CURVE_METRICS:
            values = group[metric].to_numpy(dtype=np.float64)
            curves[str(name)][f"median_{metric}"] = _finite_stat(np.median, values)
            curves[str(name)][f"p10_{metric}"] = _finite_stat(lambda v: np.percentile(v, 10), values)
            curves[str(name)][f"p90_{metric}"] = _finite_stat(lambda v: np.percentile(v, 90), values)
            curves[str(name)][f"mean_{metric}"] = _finite_stat(np.mean, values)
    # Worst curve decides: np.min/np.max propagate NaN, so a curve never found fails the gate.
    keys = ("median_r2", "median_mae", "median_mse")
    worst = {key: [c[key] for c in curves.values()] or [float("nan")] for key in keys}
    return {
        "split": split,
        "n_logs": n_logs,
        # Share of compared columns where the two curves' identities are swapped, over all logs' columns.
        "swap_share": _finite_stat(np.mean, frame.drop_duplicates("id")["swap_share"].to_numpy(dtype=np.float64)),
        "curves": curves,
        "classes": {str(k): v for k, v in pooled.compute().items()},
        "median_r2": float(np.min(worst["median_r2"])),
        "median_mae": float(np.max(worst["median_mae"])),
        "median_mse": float(np.max(worst["median_mse"])),
    }


def _finite_stat(stat: Callable[[np.ndarray], Any], values: np.ndarray) -> float:
    finite = values[np.isfinite(values)]
    return float(stat(finite)) if finite.size else float("nan")


def _mean_or_nan(values: Sequence[float]) -> float:
    return _finite_stat(np.mean, np.asarray(values, dtype=np.float64))
