"""Measure a model on held-out logs against their native LAS curves: every curve each sidecar names.

For each log of the chosen split: class probabilities (tiled, native resolution; read again
enlarged where a named curve barely shows if `extract.enlarge` says so), one subpixel row per
column for every curve the sidecar names, read on its style's evidence exactly as inference reads
it, and the truth from the log's LAS (`truth`). Curves are compared in track units (0 top edge, 1
bottom edge of the track): prediction = (row + 0.5) / H, truth = where the sidecar draws the LAS
value (backup wrap, edge pegging, skew), scored against the band the curve sweeps over each
column (`truth.truth_band`). Where the skew moves a drawn row off the image, the picture does not
show the curve, so that column is left out rather than counted against the model. Physical units
compare the values `veernet digitize` would write (deskewed, unwrapped onto backup scales) with
the LAS itself.

Curves drawn alike (identical classes) are scored under the assignment that fits them best over
the log, since nothing in the picture says which is which (`identity`). A one-logit binary model
cannot tell curves apart; its single curve is compared, column by column, with whichever true
curve lies nearer.

On a CPU the logs are read in spawned worker processes, one per core, each on one torch thread
(`READ_THREADS`), so the path search runs on every core too. A log's bytes do not depend on the
thread count either way: a convolution splits its sums by the thread count, and a reading decision
on a margin goes either way between one thread and two (docs/accuracy.md, "The same reading on one
thread and on two": 27 of 525 own test curves moved by more than 0.001 of MAE), so
`reading.predict` reads each tile on one thread, side by side when there are more. The figures
the docs report (read one process to a log, one thread) are what `veernet evaluate` writes.
On CUDA the logs are read in this process: the GPU's sums do not depend on the CPU's threads.
"""

from __future__ import annotations

import logging
import math
import multiprocessing
import os
from collections.abc import Hashable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from types import SimpleNamespace
from typing import Any, NamedTuple

import numpy as np
import pandas as pd
import tifffile
import torch
from torch import nn

from veernet_pipeline.config import EvaluateParams, ExtractParams
from veernet_pipeline.evaluation.identity import best_assignment, nearest_turn, swap_share
from veernet_pipeline.evaluation.interval import r2_intervals
from veernet_pipeline.evaluation.metrics import MaskScores, curve_metrics
from veernet_pipeline.evaluation.report import PER_LOG_COLUMNS, overlay_png, write_per_log_csv
from veernet_pipeline.evaluation.summary import finite_stat, summarise
from veernet_pipeline.evaluation.truth import drawn_tracks, nearest_truth, truth_band, truth_values
from veernet_pipeline.io.atomic import atomic_dir, write_json_atomic
from veernet_pipeline.io.calibration import Calibration
from veernet_pipeline.io.sets import INDEX_FILE, read_split
from veernet_pipeline.io.tiff import decode_colour
from veernet_pipeline.model.veernet import load_model
from veernet_pipeline.progress import progress
from veernet_pipeline.reading.alike_order import alike_groups
from veernet_pipeline.reading.confidence import confidence_figures
from veernet_pipeline.reading.enlarge import read_scan
from veernet_pipeline.reading.picture import curve_name
from veernet_pipeline.reading.values import rows_to_values

log = logging.getLogger(__name__)

OVERLAYS_PER_END = 5  # overlays of the best and of the worst logs
READ_THREADS = 1  # torch threads of a reading worker: the workers share the cores out (module docstring)


class LogReading(NamedTuple):
    """One log read and scored (`read_log`).

    Shape:
        image, predicted, mask: (H, W) uint8; truth_rows, pred_rows: (K, W) pixel rows; cyclic: (K,) bool.
    """

    image: np.ndarray
    truth_rows: np.ndarray
    pred_rows: np.ndarray
    cyclic: np.ndarray
    records: list[dict[str, Any]]
    predicted: np.ndarray  # the class the model gives each pixel, for the pooled mask scores
    mask: np.ndarray  # the true class of each pixel
    num_classes: int  # the maps of class probabilities read (1 for a one-logit binary net)


def evaluate_model(
    model_dir: Path, set_dir: Path, out_dir: Path, params: EvaluateParams, extract: ExtractParams,
    split: str | None = None, *, seed: int, low_confidence: float, workers: int = 0,
) -> dict[str, Any]:
    """Evaluate the model in `model_dir` on split `split` (default `params.split`) of the set `set_dir`.

    Curves are read from the class probabilities by the same path search inference uses (`extract`).

    Writes `metrics.json`, `per_log.csv` (one row per log and curve), `overlay.png` (the worst
    log) and `overlays/{worst,best}_<rank>_<id>.png` (the five worst and five best logs by mean
    MAE; R^2 misleads on nearly flat curves) into `out_dir`.

    `seed` (the params' global seed) seeds the bootstrap of `interval`. `low_confidence`
    (`infer.low_confidence`) is the threshold of each log's `low_conf_share`: per_log.csv carries
    the four figures the review queue ranks a digitised scan by (`reading.confidence`). `workers`:
    processes reading logs on a CPU, 0 = one per core this process may use (never more than the
    logs); the figures do not depend on it. The workers are spawned, so a script that calls this
    needs Python's `if __name__ == "__main__":` guard (each worker imports the script first).

    Returns:
        The `summary.summarise` figures: per curve, style, curve count, height and track feature,
        the pooled mask scores, and the gate's figure `median_r2` (lowest per-style median R^2);
        `interval`: bootstrap intervals of each style's median R^2 and of the gate's figure
        (`interval.r2_intervals`). NaN where undefined (null in the JSON).
    """
    split = split or params.split
    logs = select_logs(Path(set_dir), split, params.max_logs)
    records: list[dict[str, Any]] = []
    pooled: MaskScores | None = None  # pixel counts pooled over every log, sized by the first log's classes
    # Only the current best and worst few logs' pictures are held, so memory stays flat over a big split.
    ranked: list[tuple[float, str, np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = []
    readings = read_logs(Path(model_dir), Path(set_dir), logs, params, extract, low_confidence, workers)
    for row, reading in zip(logs.itertuples(index=False),
                            progress(readings, total=len(logs), desc="evaluate", unit="log"), strict=True):
        image, truth_rows, pred_rows, cyclic, log_records = reading[:5]
        records.extend(log_records)
        # A one-logit binary model gives two classes: curve and background.
        pooled = pooled or MaskScores(max(2, reading.num_classes))
        pooled.update(reading.predicted, reading.mask)
        score = finite_stat(np.mean, np.asarray([r["mae"] for r in log_records], dtype=np.float64))
        ranked.append((math.inf if math.isnan(score) else score, str(row.id), image, truth_rows, pred_rows, cyclic))
        ranked.sort(key=lambda item: item[0])
        if len(ranked) > 2 * OVERLAYS_PER_END:
            del ranked[OVERLAYS_PER_END]
    metrics = summarise(records, pooled, split, len(logs))
    metrics["interval"] = r2_intervals(pd.DataFrame(records, columns=list(PER_LOG_COLUMNS)), params.interval, seed)
    out_dir = Path(out_dir)
    write_per_log_csv(out_dir / "per_log.csv", records)
    write_json_atomic(out_dir / "metrics.json", metrics)
    overlay_png(out_dir / "overlay.png", *ranked[-1][2:])
    best, worst = ranked[:OVERLAYS_PER_END], ranked[::-1][:OVERLAYS_PER_END]
    # The folder is replaced whole: a re-evaluation's pictures never mix with an earlier model's.
    with atomic_dir(out_dir / "overlays") as overlays:
        for name, chosen in (("best", best), ("worst", worst)):
            for rank, (_, log_id, image, truth_rows, pred_rows, cyclic) in enumerate(chosen, start=1):
                overlay_png(overlays / f"{name}_{rank}_{log_id}.png", image, truth_rows, pred_rows, cyclic)
    low, high = metrics["interval"]["median_r2"]
    log.info("evaluated %d logs of %s: %s %.4f (%.0f %% interval %.4f to %.4f), median MAE %.4f", len(logs), set_dir,
             metrics["gate_figure"], metrics["median_r2"], 100 * params.interval.level, low, high,
             metrics["median_mae"])
    return metrics


def read_logs(
    model_dir: Path, set_dir: Path, logs: pd.DataFrame, params: EvaluateParams, extract: ExtractParams,
    low_confidence: float, workers: int = 0,
) -> Iterator[LogReading]:
    """Each log of `logs` (a set index's rows) read and scored (`read_log`), in the index's order.

    On a CPU the logs are read in `workers` spawned processes (0 = one per core) on `READ_THREADS` torch
    threads each, each loading the model once, or in this process when one worker is all there is to use;
    on CUDA in this process. Either way a log gives the same bytes.
    """
    rows = [SimpleNamespace(**row) for row in logs.to_dict("records")]
    device = "cuda" if torch.cuda.is_available() else "cpu"
    # One per core this process may use, never more than the logs (as io.pool.worker_count counts; not imported,
    # so that the ingest pool's code stays out of this stage's code fingerprint).
    count = 1 if device == "cuda" else max(1, min(workers or len(os.sched_getaffinity(0)), len(rows)))
    if count > 1:
        # Spawned, not forked, as io.pool's workers: a fork would copy whatever the caller has loaded.
        pool = ProcessPoolExecutor(count, mp_context=multiprocessing.get_context("spawn"), initializer=_start_reader,
                                   initargs=(model_dir, set_dir, params, extract, low_confidence))
        try:
            yield from pool.map(_read_in_reader, rows)
        finally:
            # A failed or abandoned evaluation does not wait for the logs still queued (the pool's own exit would).
            pool.shutdown(cancel_futures=True)
        return
    model = load_model(model_dir, map_location=device)
    for row in rows:
        yield read_log(model, set_dir, row, params, extract, device, low_confidence)


_reader: dict[str, Any] = {}  # a reading worker's model and settings, set once by `_start_reader`


def _start_reader(model_dir: Path, set_dir: Path, params: EvaluateParams, extract: ExtractParams,
                  low_confidence: float) -> None:
    torch.set_num_threads(READ_THREADS)
    _reader.update(model=load_model(model_dir), set_dir=set_dir, params=params, extract=extract,
                   low_confidence=low_confidence)


def _read_in_reader(row: SimpleNamespace) -> LogReading:
    return read_log(_reader["model"], _reader["set_dir"], row, _reader["params"], _reader["extract"], "cpu",
                    _reader["low_confidence"])


def evaluate_log(
    model: nn.Module, set_dir: Path, row: Any, params: EvaluateParams, extract: ExtractParams, device: str,
    pooled: MaskScores, low_confidence: float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, list[dict[str, Any]]]:
    """`read_log`'s image, truth rows, predicted rows, which curves are scored round the edge and records of one log,
    its predicted and true masks added to `pooled`; read on the caller's torch threads."""
    reading = read_log(model, set_dir, row, params, extract, device, low_confidence)
    pooled.update(reading.predicted, reading.mask)
    return reading[:5]


def read_log(
    model: nn.Module, set_dir: Path, row: Any, params: EvaluateParams, extract: ExtractParams, device: str,
    low_confidence: float,
) -> LogReading:
    """Image, truth rows, predicted rows (pixel rows, (K, W)), which curves are scored round the track's edge
    ((K,) bool), per-curve records, and the predicted and true class of each pixel, of one log.

    Each record carries the log's confidence figures as the review queue would rank it (`reading.confidence`,
    every curve read, `low_confidence` the threshold).
    """
    image, rgb = decode_colour(set_dir / row.image)
    mask = tifffile.imread(set_dir / row.mask)
    if mask.shape != image.shape:
        raise ValueError(f"{set_dir / row.mask}: mask shape {mask.shape} differs from image {row.image} "
                         f"shape {image.shape}; regenerate the set")
    height, width = image.shape
    calibration = Calibration.from_file(set_dir / row.calibration)
    scan = read_scan(model, image, calibration, params.tile_width, params.tile_overlap, extract, device, rgb=rgb)
    plan, rows, confidence = scan.reading.plan, scan.reading.rows, scan.reading.confidence
    n_truth = min(int(row.n_curves), len(calibration.curves))
    values = truth_values(set_dir / row.las, calibration, width, n_truth)
    truth = drawn_tracks(values, calibration, height)
    visible = truth.copy()  # NaN where the picture cannot show the curve; `truth` may be re-paired below
    labels = plan.labels[:n_truth]
    if rows.shape[0] == 1 and n_truth > 1:
        nearest = nearest_truth((rows[0] + 0.5) / height, truth)
        truth = truth[nearest, np.arange(width)][None]
        labels = ["any"]
    n = min(rows.shape[0], truth.shape[0])
    # A curve with a backup scale is scored the short way round its track; one line against the nearest of several
    # true curves is not any one curve's.
    cyclic = None if labels == ["any"] else [c.backup_wraps > 0 for c in calibration.curves[:n]]
    curve_scores, swaps, order = score_curves(rows[:n], truth[:n], plan.kinds[:n], height, cyclic)
    # The scan's figures as digitize writes them into the index: every curve read, NULL where its row is.
    figures = confidence_figures(rows, confidence, low_confidence)
    drawn_alike = {k: len(group) for group in alike_groups(plan.kinds[:n]) for k in group}
    rows, confidence = rows[order], confidence[order]
    records = []
    for k, scores in enumerate(curve_scores):
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
                        "unit": scale.unit, "style": labels[k], "width": width, "height": height,
                        "n_curves": n_truth, "drawn_alike": drawn_alike[k], **scores, "swap_share": swaps,
                        **figures,
                        "mae_physical": finite_stat(np.mean, physical),
                        "mean_confidence": float(confidence[k].mean()), "scale": scale.scale,
                        "wrapped_share": float((wraps[known] != 0).mean()) if known.any() else math.nan,
                        "features": _features(row)})
    # MaskScores scores a binary model as curve vs background whatever the set labels its curves.
    return LogReading(image, truth[:n] * height - 0.5, rows[:n], np.asarray(cyclic or [False] * n, dtype=bool),
                      records, scan.raw.argmax(axis=0).astype(np.uint8), mask, int(scan.raw.shape[0]))


def _features(row: Any) -> str:
    """The track features a set's index names for this log (its optional `features` column), else ""."""
    features = getattr(row, "features", "")
    return features if isinstance(features, str) else ""


def score_curves(rows: np.ndarray, truth: np.ndarray, classes: Sequence[Sequence[Hashable]], height: int,
                 cyclic: Sequence[bool] | None = None) -> tuple[list[dict[str, float]], float, np.ndarray]:
    """Score curves read off one log against its truth, as the evaluate stage and the benchmarks do.

    Curves drawn alike (identical `classes`) are first given the assignment to true curves that
    fits them best (`identity.best_assignment`); then each curve is scored against the band its
    truth sweeps (`curve_metrics`), and the log's identity swaps are counted (`identity.swap_share`).
    A curve with a backup scale (`cyclic`) is scored the short way round its track, whose edges meet
    (`identity.nearest_turn`): a row read at the top edge where the curve has just wrapped to the
    bottom one is off by the gap between them, not by the track. `r2_flat` keeps its R^2 taken the
    long way (the figure before 2026-12-07, and what a benchmark that passes no `cyclic` scores).

    Returns:
        Per true curve its `curve_metrics` plus `r2_flat`, `curve_swap_share` and `own_line` (1.0 when the curve is
        scored against the line read for it, 0.0 when its group's best assignment gave it another); the log's swap
        share; the order in which the read curves were scored (true curve k against read curve order[k]).

    Shape:
        rows: (K, W) pixel rows; truth: (K, W) track units; cyclic: (K,) per true curve, None = none has a backup scale.
    """
    pred = (rows + 0.5) / height
    lo, hi = truth_band(truth)
    wraps = np.zeros(pred.shape[0], dtype=bool) if cyclic is None else np.asarray(cyclic, dtype=bool)
    order = best_assignment(pred, lo, hi, alike_groups(classes), wraps)
    pred = pred[order]
    swaps, per_curve = swap_share(pred, lo, hi, wraps)
    seen = np.where(wraps[:, None], nearest_turn(pred, lo, hi), pred)
    # own_line: 1 where the line written under curve k is the one scored against it, 0 where the best assignment took
    # another of its group's lines (the LAS carries that curve under the wrong mnemonic for the whole log).
    scores = []
    for k in range(pred.shape[0]):
        metrics = curve_metrics(seen[k], truth[k], (lo[k], hi[k]))
        # Straight across differs only for a curve with a backup scale; for the others it is the same figure.
        flat = curve_metrics(pred[k], truth[k], (lo[k], hi[k]))["r2"] if wraps[k] else metrics["r2"]
        scores.append({**metrics, "r2_flat": flat, "curve_swap_share": float(per_curve[k]),
                       "own_line": float(order[k] == k)})
    return scores, swaps, order


def select_logs(set_dir: Path, split: str, max_logs: int) -> pd.DataFrame:
    """The logs of `split` in a synthetic set's index, by id, at most `max_logs` (0 = all)."""
    logs = read_split(set_dir, split)
    if max_logs > 0:
        logs = logs.head(max_logs)
    if logs.empty:
        raise ValueError(f"{Path(set_dir) / INDEX_FILE}: no logs in split {split!r}; choose another split "
                         "(evaluate.split) or synthesize a larger set")
    return logs
