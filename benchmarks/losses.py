"""Loss ablation: the multiclass stage trained once per loss under one budget, scored on mask and curve metrics.

    python benchmarks/losses.py [--set-dir SET] [--binary MODEL_DIR] [--profile demo] [--set key=value ...]

Every loss of `training/losses` (dice, focal, lovasz, soft_ce, tversky) trains the multiclass
stage with `train_stage`, starting from the same binary weights, on the same synthetic set, with
the same seed, epochs, crops, optimiser and warmup-cosine schedule: the profile's
`train_multiclass` params with only `train_multiclass.loss.name` changed. Each model is then
scored by `evaluate_model` on the same held-out logs (params.yaml `evaluate:`), reading curves
with the same `extract:` params. Models and evaluation outputs live in a temporary folder that is
removed afterwards.

Winner rule: the lowest mean, over curves A and B, of the per-curve median MAE over logs (track
units), among the losses that read at least 90 % of both curves (median coverage); ties go to the
loss named first. The script says whether the winner is the profile's
current default (`train_multiclass.loss.name` before any --set).

Writes `results/losses.json` (settings, per-loss metrics, training histories) beside this script
and `docs/loss-ablation.md` (one table) in the repository, and prints the table.
"""

from __future__ import annotations

import argparse
import logging
import math
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from veernet_pipeline.config import Settings, load_settings
from veernet_pipeline.evaluation.evaluate import evaluate_model
from veernet_pipeline.io.atomic import write_json_atomic, write_text_atomic
from veernet_pipeline.model.veernet import WEIGHTS_FILE
from veernet_pipeline.training.losses import LOSSES
from veernet_pipeline.training.recipes import train_stage

log = logging.getLogger(__name__)

HERE = Path(__file__).resolve().parent
CURVES = ("A", "B")
# Curve metrics of the table, each shown as "A / B": (metrics.json key, header).
CURVE_COLUMNS = (("median_mae", "MAE median"), ("median_r2", "R² median"),
                 ("median_pearson_abs", "\\|r\\| median"), ("median_coverage", "coverage median"))


def row_of(loss: str, metrics: dict[str, Any], train: dict[str, Any], eval_seconds: float) -> dict[str, Any]:
    """The figures of one loss: mask scores of classes 1 and 2, per-curve medians, swap share, seconds."""
    classes, curves = metrics["classes"], metrics["curves"]
    row: dict[str, Any] = {"loss": loss, "train_seconds": train["wall_clock_s"], "eval_seconds": eval_seconds,
                           "final_val_loss": train["final"].get("val_loss"), "swap_share": metrics["swap_share"]}
    for cls in ("1", "2"):
        row[f"iou_{cls}"] = classes.get(cls, {}).get("iou", math.nan)
        row[f"f1_{cls}"] = classes.get(cls, {}).get("f1", math.nan)
    for curve in CURVES:
        for key, _ in CURVE_COLUMNS:
            row[f"{key}_{curve}"] = curves.get(curve, {}).get(key, math.nan)
    maes = [row[f"median_mae_{curve}"] for curve in CURVES]
    # A curve never read (NaN MAE) must lose, not drop out of the mean.
    row["mean_median_mae"] = float(np.mean(maes)) if all(_finite(v) for v in maes) else math.inf
    return row


MIN_COVERAGE = 0.9  # a loss must read this share of both curves (median over logs) to win on MAE


def pick_winner(rows: list[dict[str, Any]]) -> str:
    """The loss with the lowest mean over curves of median MAE among those that read both curves.

    MAE counts only the columns a curve is read in, so a loss that leaves most of curve B unread
    could win on MAE alone: only losses whose median coverage reaches `MIN_COVERAGE` on both
    curves compete (all of them when none does). Ties go to the loss listed first.
    """
    reading = [row for row in rows if all(_finite(row[f"median_coverage_{c}"]) and
                                          row[f"median_coverage_{c}"] >= MIN_COVERAGE for c in CURVES)]
    return min(reading or rows, key=lambda row: row["mean_median_mae"])["loss"]


def markdown_table(rows: list[dict[str, Any]], winner: str) -> str:
    """One markdown table: a row per loss, the winner in bold."""
    header = ["Loss", "IoU 1", "F1 1", "IoU 2", "F1 2", *(f"{title} A / B" for _, title in CURVE_COLUMNS),
              "mean MAE", "swap share", "train s"]
    lines = ["| " + " | ".join(header) + " |", "|---|" + "---:|" * (len(header) - 1)]
    for row in rows:
        name = f"**{row['loss']}**" if row["loss"] == winner else row["loss"]
        cells = [name, *(_fmt(row[key]) for key in ("iou_1", "f1_1", "iou_2", "f1_2"))]
        cells += [f"{_fmt(row[f'{key}_A'])} / {_fmt(row[f'{key}_B'])}" for key, _ in CURVE_COLUMNS]
        cells += [_fmt(row["mean_median_mae"]), _fmt(row["swap_share"]), f"{row['train_seconds']:.0f}"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def _finite(value: Any) -> bool:
    return value is not None and math.isfinite(value)


def _fmt(value: float | None) -> str:
    return f"{value:.4f}" if _finite(value) else "n/a"


def _check_inputs(set_dir: Path, binary: Path) -> None:
    if not (set_dir / "index.parquet").is_file():
        raise FileNotFoundError(f"{set_dir / 'index.parquet'}: no index; --set-dir must be a synthetic multiclass set "
                                "folder (veernet synthesize)")
    if not (binary / WEIGHTS_FILE).is_file():
        raise FileNotFoundError(f"{binary / WEIGHTS_FILE}: no weights; --binary must be a trained binary model folder "
                                "(veernet train-binary)")


def run(set_dir: Path, binary: Path, params: Path | None, profile: str, overrides: list[str], json_out: Path,
        doc_out: Path) -> dict[str, Any]:
    """Train and evaluate one multiclass model per loss, write the JSON and the doc, return the JSON document."""
    _check_inputs(set_dir, binary)
    default_loss = load_settings(params, profile).train_multiclass.loss.name
    per_loss: dict[str, Settings] = {
        loss: load_settings(params, profile, [*overrides, f"train_multiclass.loss.name={loss}"]) for loss in LOSSES
    }
    settings = per_loss[LOSSES[0]]
    index = pd.read_parquet(set_dir / "index.parquet")
    rows, histories = [], {}
    with tempfile.TemporaryDirectory(prefix="veernet-losses-") as work:
        for loss, loss_settings in per_loss.items():
            log.info("loss %s: training the multiclass stage from %s", loss, binary)
            train = train_stage(loss_settings, "multiclass", set_dir, Path(work) / loss / "model", init_weights=binary)
            started = time.perf_counter()
            metrics = evaluate_model(Path(work) / loss / "model", set_dir, Path(work) / loss / "eval",
                                     loss_settings.evaluate, loss_settings.extract)
            rows.append(row_of(loss, metrics, train, time.perf_counter() - started))
            histories[loss] = train["history"]
            log.info("loss %s: mean median MAE %.4f, %.0f s training", loss, rows[-1]["mean_median_mae"],
                     train["wall_clock_s"])
    winner = pick_winner(rows)
    best = next(row for row in rows if row["loss"] == winner)
    n_logs = int(metrics["n_logs"])
    budget = settings.section("train_multiclass")
    budget.pop("loss")
    available = int((index["split"] == "train").sum())
    train_items = min(available, budget["max_train"]) if budget["max_train"] > 0 else available
    verdict = ("it is the current default" if winner == default_loss
               else f"the current default is `{default_loss}`; weigh the winner's coverage before switching")
    winner_line = (f"Winner on curves: **{winner}** (rule: lowest mean over curves A and B of the median MAE over "
                   f"logs among the losses with median coverage >= {MIN_COVERAGE} on both; "
                   f"{_fmt(best['mean_median_mae'])} track units); {verdict} "
                   f"(`train_multiclass.loss.name` of profile `{settings.profile}`).")
    table = markdown_table(rows, winner)
    notes = (f"Budget, identical for every loss: profile `{settings.profile}`, seed {settings.seed}, "
             f"epochs {budget['epochs']}, lr {budget['lr']}, batch {budget['batch_size']} x {budget['accumulation']} "
             f"accumulated, {budget['warmup_steps']} warmup steps then cosine decay, crop width "
             f"{budget['crop_width']} px, {train_items} train instances; every run starts "
             f"from the binary weights `{binary}`. Overrides: {', '.join(f'`{o}`' for o in overrides) or 'none'}.\n\n"
             f"Scored by `evaluate_model` on the first {n_logs} logs of split `{settings.evaluate.split}` of "
             f"`{set_dir}`, curves read with the params.yaml `extract:` path search. IoU / F1 of mask classes 1 "
             f"(curve A) and 2 (curve B) from pixel counts pooled over logs. Curve figures are medians over logs in "
             f"track units (0..1 of the track height), shown as curve A / curve B; swap share is the share of "
             f"columns with both curves read in which the identities are swapped (mean over logs). Train s is "
             f"wall-clock training time on this machine (CPU). MAE counts only the columns where a curve is read, "
             f"so read it next to coverage: a loss that reads fewer columns can win on MAE alone.\n")
    document = {
        "set": str(set_dir), "binary": str(binary), "profile": settings.profile, "seed": settings.seed,
        "overrides": overrides, "train_multiclass": budget, "evaluate": settings.section("evaluate"),
        "extract": settings.section("extract"), "n_logs": n_logs, "default_loss": default_loss,
        "winner": winner, "winner_rule": f"lowest mean over curves A and B of median MAE over logs (track units) "
                                          f"among losses with median coverage >= {MIN_COVERAGE} on both",
        "winner_is_default": winner == default_loss, "losses": rows, "histories": histories,
    }
    write_json_atomic(json_out, document)
    command = "python benchmarks/losses.py" + "".join(f" --set {o}" for o in overrides)
    write_text_atomic(doc_out, f"# Loss ablation\n\nThe multiclass stage trained once per loss under one budget and "
                      f"scored on the same held-out logs (`{command}`; raw figures in "
                      f"`benchmarks/results/losses.json`).\n\n{table}\n{winner_line}\n\n{notes}")
    print(f"{table}\n{winner_line}\n\n{notes}")
    return document


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """Parse arguments and run the ablation."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set-dir", type=Path,
                        help="synthetic multiclass set (default: paths.synthetic/multiclass of params.yaml)")
    parser.add_argument("--binary", type=Path,
                        help="binary model folder every run starts from (default: paths.models/binary)")
    parser.add_argument("--params", type=Path, help="params.yaml (default: $VEERNET_PARAMS or the nearest one)")
    parser.add_argument("--profile", default="demo", help="params.yaml profile (default: demo)")
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                        help="params override, e.g. train_multiclass.epochs=3 (repeatable)")
    parser.add_argument("--json", type=Path, default=HERE / "results" / "losses.json", help="JSON output")
    parser.add_argument("--doc", type=Path, default=HERE.parent / "docs" / "loss-ablation.md", help="markdown output")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    settings = load_settings(args.params, args.profile, args.overrides)
    set_dir = args.set_dir or settings.path("synthetic") / "multiclass"
    binary = args.binary or settings.path("models") / "binary"
    return run(set_dir.resolve(), binary.resolve(), args.params, args.profile, args.overrides, args.json, args.doc)


if __name__ == "__main__":
    main()
