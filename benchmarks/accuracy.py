"""VeerNet against the classical tracer on the same held-out synthetic logs, as one table.

    python benchmarks/accuracy.py [SET_DIR] [--model MODEL_DIR] [--profile NAME] [--max-logs N]

Both methods read each log of the held-out split (params.yaml `evaluate.split`) and are scored
exactly as `evaluate.py` scores a model: truth from the log's LAS and sidecar (`truth_tracks`),
predictions in track units ((row + 0.5) / H), `curve_metrics` per curve, a binary model matched
column by column to the nearer true curve (`match_binary`). Both read curves through the same
path search (`trace_curves`, params.yaml `extract:`).

Curve identity: VeerNet is scored with its identities as they are (class 1 = curve A). The
classical tracer cannot tell the curves apart by class, so each log is scored under whichever
assignment of its two traced curves to the true ones fits better (`best_assignment`): that
favours the classical tracer, never VeerNet.

Writes `accuracy.json` (summary, per-log rows, settings) and `accuracy.md` (one table) into
`--out` (default: `results/` beside this script) and prints the table. Over logs, per method and
curve: median and 10th percentile of R^2, |r| and coverage, and the median and 90th percentile
of MAE (for an error the bad tail is the high one). Defaults come from params.yaml via `load_settings`.
"""

from __future__ import annotations

import argparse
import logging
import math
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import torch

from veernet_pipeline.config import Settings, load_settings
from veernet_pipeline.evaluation.classical import best_assignment, trace_classical
from veernet_pipeline.evaluation.evaluate import match_binary, select_logs, truth_tracks
from veernet_pipeline.evaluation.metrics import curve_metrics
from veernet_pipeline.io.atomic import write_json_atomic, write_text_atomic
from veernet_pipeline.io.calibration import Calibration
from veernet_pipeline.io.tiff import decode_scan
from veernet_pipeline.model.veernet import load_model
from veernet_pipeline.progress import progress
from veernet_pipeline.reading.extract import trace_curves
from veernet_pipeline.reading.picture import curve_name
from veernet_pipeline.reading.predict import predict_probs

log = logging.getLogger(__name__)

METHODS = {"veernet": "VeerNet", "classical": "classical tracer"}
METRICS = ("r2", "mae", "pearson_abs", "coverage")
# Columns of the table: (metric, statistic, header). Percentiles are over logs.
COLUMNS = (
    ("r2", "median", "R² median"), ("r2", "p10", "R² p10"),
    ("mae", "median", "MAE median"), ("mae", "p90", "MAE p90"),
    ("pearson_abs", "median", "\\|r\\| median"), ("pearson_abs", "p10", "\\|r\\| p10"),
    ("coverage", "median", "coverage median"), ("coverage", "p10", "coverage p10"),
)


def score_log(model: torch.nn.Module, set_dir: Path, row: Any, settings: Settings, device: str) -> list[dict[str, Any]]:
    """Per-curve records of both methods on one log (one record per method and true curve)."""
    image = decode_scan(set_dir / row.image)
    height, width = image.shape
    calibration = Calibration.from_file(set_dir / row.calibration)
    truth = truth_tracks(set_dir / row.las, calibration, width, min(int(row.n_curves), len(calibration.curves)),
                         height)
    base = {"id": row.id, "well": row.well, "width": width, "height": height}
    records = []

    start = time.perf_counter()
    probs = predict_probs(model, image, settings.evaluate.tile_width, settings.evaluate.tile_overlap, device,
                          mirror=settings.extract.mirror)
    rows, _ = trace_curves(probs, settings.extract)
    seconds = time.perf_counter() - start
    pred = (rows + 0.5) / height
    net_truth = match_binary(pred[0], truth)[None] if rows.shape[0] == 1 and truth.shape[0] > 1 else truth
    for k in range(min(rows.shape[0], net_truth.shape[0])):
        records.append({**base, "method": "veernet", "curve": curve_name(k), "traced_curve": k, "seconds": seconds,
                        **curve_metrics(pred[k], net_truth[k])})

    start = time.perf_counter()
    rows, _ = trace_classical(image, settings.extract)
    seconds = time.perf_counter() - start
    metrics, assignment = best_assignment((rows + 0.5) / height, truth)
    for k, (scores, traced) in enumerate(zip(metrics, assignment, strict=True)):
        records.append({**base, "method": "classical", "curve": curve_name(k), "traced_curve": traced,
                        "seconds": seconds, **scores})
    return records


def summarise(frame: pd.DataFrame) -> dict[str, dict[str, dict[str, Any]]]:
    """{method: {curve: {metric: {median, p10, p90, n}}}} over logs, NaN left out (n says how many remain)."""
    summary: dict[str, dict[str, dict[str, Any]]] = {}
    for (method, curve), group in frame.groupby(["method", "curve"], sort=True):
        stats: dict[str, Any] = {"logs": len(group), "mean_seconds_per_log": float(group["seconds"].mean())}
        for metric in METRICS:
            values = group[metric].to_numpy(dtype=np.float64)
            values = values[np.isfinite(values)]
            stats[metric] = {
                "median": float(np.median(values)) if values.size else math.nan,
                "p10": float(np.percentile(values, 10)) if values.size else math.nan,
                "p90": float(np.percentile(values, 90)) if values.size else math.nan,
                "n": int(values.size),
            }
        summary.setdefault(str(method), {})[str(curve)] = stats
    return summary


def markdown_table(summary: dict[str, dict[str, dict[str, Any]]]) -> str:
    """One markdown table: a row per method and curve, VeerNet first."""
    header = ["Method", "Curve", "Logs", *(title for _, _, title in COLUMNS)]
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(["---"] * 3 + ["---:"] * len(COLUMNS)) + "|"]
    for method, label in METHODS.items():
        for curve, stats in summary.get(method, {}).items():
            cells = [label, curve, str(stats["logs"])]
            cells += [_fmt(stats[metric][stat]) for metric, stat, _ in COLUMNS]
            lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def _fmt(value: float) -> str:
    return "n/a" if math.isnan(value) else f"{value:.4f}"


def run(set_dir: Path, model_dir: Path, settings: Settings, split: str, max_logs: int, out_dir: Path) -> dict[str, Any]:
    """Score both methods on `split` of `set_dir`, write the results, return the JSON document."""
    logs = select_logs(set_dir, split, max_logs)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = load_model(model_dir, map_location=device)
    records: list[dict[str, Any]] = []
    for row in progress(logs.itertuples(index=False), total=len(logs), desc="accuracy", unit="log"):
        records.extend(score_log(model, set_dir, row, settings, device))
    frame = pd.DataFrame(records)
    summary = summarise(frame)
    table = markdown_table(summary)
    swapped = frame[(frame["method"] == "classical") & (frame["curve"] == "A") & (frame["traced_curve"] != 0)]
    document = {
        "set": str(set_dir), "model": str(model_dir), "profile": settings.profile, "split": split,
        "n_logs": len(logs), "device": device,
        "tile": {"width": settings.evaluate.tile_width, "overlap": settings.evaluate.tile_overlap},
        "extract": settings.section("extract"),
        "identity": {"veernet": "as predicted (class 1 = curve A)",
                     "classical": "better of the two assignments per log (lower mean MAE)",
                     "classical_logs_swapped": len(swapped)},
        "summary": summary,
        "per_log": frame.to_dict(orient="records"),
    }
    notes = (f"\n{len(logs)} logs of split `{split}` of `{set_dir.name}`, model `{model_dir.name}`, profile "
             f"`{settings.profile}`. MAE in track units. Percentiles over logs (p10 for R², |r|, coverage; p90 for "
             f"MAE: the bad tail). VeerNet identities as predicted; the classical tracer's scored under the "
             f"better of its two assignments per log (swapped on {len(swapped)} of {len(logs)}).\n")
    write_json_atomic(out_dir / "accuracy.json", document)
    write_text_atomic(out_dir / "accuracy.md", "# Accuracy: VeerNet vs the classical tracer\n\n" + table + notes)
    print(table + notes)
    return document


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """Parse arguments (defaults from params.yaml) and run the benchmark."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("set_dir", nargs="?", type=Path,
                        help="synthetic multiclass set (default: paths.synthetic/multiclass)")
    parser.add_argument("--model", type=Path,
                        help="folder with weights.pt and model.json (default: paths.models/multiclass)")
    parser.add_argument("--params", type=Path, help="params.yaml (default: $VEERNET_PARAMS or the nearest one)")
    parser.add_argument("--profile", help="params.yaml profile (default: $VEERNET_PROFILE or the file's own)")
    parser.add_argument("--split", help="split to score (default: evaluate.split)")
    parser.add_argument("--max-logs", type=int, help="first N logs of the split, 0 = all (default: evaluate.max_logs)")
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "results", help="results folder")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    settings = load_settings(args.params, args.profile)
    return run(
        set_dir=(args.set_dir or settings.path("synthetic") / "multiclass").resolve(),
        model_dir=(args.model or settings.path("models") / "multiclass").resolve(),
        settings=settings,
        split=args.split or settings.evaluate.split,
        max_logs=settings.evaluate.max_logs if args.max_logs is None else args.max_logs,
        out_dir=args.out,
    )


if __name__ == "__main__":
    main()
