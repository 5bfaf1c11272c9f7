"""VeerNet against the classical tracer on the same held-out synthetic logs, every curve of each track.

    python benchmarks/accuracy.py [SET_DIR] [--model MODEL_DIR] [--profile NAME] [--max-logs N]

Both methods read each log of the held-out split (params.yaml `evaluate.split`) and are scored
exactly as the evaluate stage scores a model: VeerNet through `evaluate.evaluate_log` itself (every
curve the sidecar names, on its style's evidence), the classical tracer through the same
`evaluate.score_curves` (truth from the log's LAS and sidecar, the band each curve sweeps over a
column, the K-curve swap share). Both read curves through the same path search (`trace_curves`,
params.yaml `extract:`).

Curve identity: VeerNet's curves keep the identities their styles give them (curves drawn alike
get the assignment that fits best, as in evaluation). The classical tracer cannot tell curves
apart by style, so all of a track's curves form one group drawn alike and each log is scored
under whichever assignment of its traced curves to the true ones fits best: that favours the
classical tracer, never VeerNet.

Writes `accuracy.json` (summary, per-log rows, settings) and `accuracy.md` (tables per curve and
per style) into `--out` (default: `results/` beside this script) and prints them. Over curves, per
method and group: median and 10th percentile of R^2, |r| and coverage, the median and 90th
percentile of MAE (for an error the bad tail is the high one), and the mean swap share. Defaults
come from params.yaml via `load_settings`.
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
from veernet_pipeline.evaluation.classical import trace_classical
from veernet_pipeline.evaluation.evaluate import evaluate_log, score_curves, select_logs
from veernet_pipeline.evaluation.metrics import MaskScores
from veernet_pipeline.evaluation.truth import truth_tracks
from veernet_pipeline.io.atomic import write_json_atomic, write_text_atomic
from veernet_pipeline.io.calibration import Calibration
from veernet_pipeline.io.tiff import decode_scan
from veernet_pipeline.model.veernet import load_model
from veernet_pipeline.progress import progress
from veernet_pipeline.reading.picture import curve_name
from veernet_pipeline.reading.styles import style_labels

log = logging.getLogger(__name__)

METHODS = {"veernet": "VeerNet", "classical": "classical tracer"}
METRICS = ("r2", "mae", "pearson_abs", "coverage", "curve_swap_share")
# Columns of the table: (metric, statistic, header). Percentiles are over curves.
COLUMNS = (
    ("r2", "median", "R² median"), ("r2", "p10", "R² p10"),
    ("mae", "median", "MAE median"), ("mae", "p90", "MAE p90"),
    ("pearson_abs", "median", "\\|r\\| median"), ("pearson_abs", "p10", "\\|r\\| p10"),
    ("coverage", "median", "coverage median"), ("coverage", "p10", "coverage p10"),
    ("curve_swap_share", "mean", "swaps mean"),
)
GROUPS = ("curve", "style")


def score_log(model: torch.nn.Module, set_dir: Path, row: Any, settings: Settings, device: str,
              pooled: MaskScores) -> list[dict[str, Any]]:
    """Per-curve records of both methods on one log (one record per method and true curve)."""
    start = time.perf_counter()
    _, _, _, _, veernet = evaluate_log(model, set_dir, row, settings.evaluate, settings.extract, device, pooled,
                                    settings.infer.low_confidence)
    seconds = time.perf_counter() - start
    records = [{**r, "method": "veernet", "seconds": seconds} for r in veernet]

    image = decode_scan(set_dir / row.image)
    height, width = image.shape
    calibration = Calibration.from_file(set_dir / row.calibration)
    n_truth = min(int(row.n_curves), len(calibration.curves))
    truth = truth_tracks(set_dir / row.las, calibration, width, n_truth, height)
    start = time.perf_counter()
    rows, _ = trace_classical(image, settings.extract, n_truth)
    seconds = time.perf_counter() - start
    scores, swaps, order = score_curves(rows, truth, [(1,)] * n_truth, height)
    styles = style_labels([c.style for c in calibration.curves])
    for k, curve_scores in enumerate(scores):
        records.append({"id": row.id, "well": row.well, "width": width, "height": height, "n_curves": n_truth,
                        "method": "classical", "curve": curve_name(k), "style": styles[k],
                        "traced_curve": int(order[k]), "seconds": seconds, "swap_share": swaps, **curve_scores})
    return records


def summarise(frame: pd.DataFrame) -> dict[str, dict[str, dict[str, dict[str, Any]]]]:
    """{grouping: {method: {group: {metric: {median, p10, p90, mean, n}}}}} over curves, NaN left out."""
    summary: dict[str, dict[str, dict[str, dict[str, Any]]]] = {}
    for grouping in GROUPS:
        for (method, group), rows in frame.groupby(["method", grouping], sort=True):
            stats: dict[str, Any] = {"curves": len(rows), "mean_seconds_per_log": float(rows["seconds"].mean())}
            for metric in METRICS:
                values = rows[metric].to_numpy(dtype=np.float64)
                values = values[np.isfinite(values)]
                stats[metric] = {
                    "median": float(np.median(values)) if values.size else math.nan,
                    "p10": float(np.percentile(values, 10)) if values.size else math.nan,
                    "p90": float(np.percentile(values, 90)) if values.size else math.nan,
                    "mean": float(np.mean(values)) if values.size else math.nan,
                    "n": int(values.size),
                }
            summary.setdefault(grouping, {}).setdefault(str(method), {})[str(group)] = stats
    return summary


def markdown_table(summary: dict[str, dict[str, dict[str, Any]]], grouping: str) -> str:
    """One markdown table for one grouping (per curve or per style): a row per method and group, VeerNet first."""
    header = ["Method", grouping.capitalize(), "Curves", *(title for _, _, title in COLUMNS)]
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(["---"] * 3 + ["---:"] * len(COLUMNS)) + "|"]
    for method, label in METHODS.items():
        for group, stats in summary.get(grouping, {}).get(method, {}).items():
            cells = [label, group, str(stats["curves"])]
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
    pooled = MaskScores(max(2, model.num_classes))
    records: list[dict[str, Any]] = []
    for row in progress(logs.itertuples(index=False), total=len(logs), desc="accuracy", unit="log"):
        records.extend(score_log(model, set_dir, row, settings, device, pooled))
    frame = pd.DataFrame(records)
    summary = summarise(frame)
    tables = "".join(f"\n## Per {grouping}\n\n" + markdown_table(summary, grouping) for grouping in GROUPS)
    classical = frame[frame["method"] == "classical"]
    reordered = classical.groupby("id")["traced_curve"].apply(lambda t: list(t) != sorted(t)).sum()
    document = {
        "set": str(set_dir), "model": str(model_dir), "profile": settings.profile, "split": split,
        "n_logs": len(logs), "device": device,
        "tile": {"width": settings.evaluate.tile_width, "overlap": settings.evaluate.tile_overlap},
        "extract": settings.section("extract"),
        "identity": {"veernet": "by style; curves drawn alike under their best assignment",
                     "classical": "all curves drawn alike: the best assignment per log (lowest mean MAE)",
                     "classical_logs_reordered": int(reordered)},
        "summary": summary,
        "per_log": frame.to_dict(orient="records"),
    }
    notes = (f"\n{len(logs)} logs of split `{split}` of `{set_dir.name}` ({len(frame) // 2} curves), model "
             f"`{model_dir.name}`, profile `{settings.profile}`. MAE in track units. Percentiles over curves (p10 for "
             f"R², |r|, coverage; p90 for MAE: the bad tail). VeerNet's identities by style; the classical tracer's "
             f"under the best assignment per log (reordered on {int(reordered)} of {len(logs)}).\n")
    write_json_atomic(out_dir / "accuracy.json", document)
    write_text_atomic(out_dir / "accuracy.md", "# Accuracy: VeerNet vs the classical tracer\n" + tables + notes)
    print(tables + notes)
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
