"""Loss ablation: the multiclass stage trained once per loss under one budget, chosen on the recovered curves.

    python benchmarks/losses.py [--budget-steps N] [--set-dir SET] [--binary MODEL_DIR] [--profile cpu] [--set k=v ...]
    python benchmarks/losses.py --budget-steps N --estimate 20 [...]   # time 20 steps per loss, project the cost
    python benchmarks/losses.py --budget-steps N --rows-dir DIR --only dice [...]   # one loss now, the rest later
    python benchmarks/losses.py --losses dice tversky --trained tversky=MODEL_DIR [...]   # two, one already trained

Every loss of `training/losses` (dice, focal, lovasz, soft_ce, tversky) trains the multiclass
stage with `train_stage`, starting from the same binary weights, on the same synthetic set, with
the same seed, epochs, crops, optimiser and warmup-cosine schedule: the profile's
`train_multiclass` params with only `train_multiclass.loss.name` changed. `--budget-steps N` sets
the budget every loss gets: `train_multiclass.epochs` becomes the fewest whole epochs of at least
N optimiser steps (whole epochs, so every loss sees every training log equally often); without it,
the profile's epochs. At 240 and at 945 steps the losses did not separate; docs/loss-ablation.md gives
the budget to run at (the `cpu` profile's own 9 epochs: leave `--budget-steps` out). Each model is then
scored by `evaluate_model` on the same held-out logs (params.yaml `evaluate:`), reading curves
with the same `extract:` params. Models and evaluation outputs live in a temporary folder that is
removed afterwards, or in `--work-dir` to be continued (`run`).

The choice is made on the curves read from each model, never on the mask (rule fixed before the run):

Figures are per line style (`metrics.json` "styles": the gate's grouping), medians over logs.

1. eligible: median coverage >= `MIN_COVERAGE` on every style (a loss that leaves a curve unread
   could otherwise win on MAE, which counts only the columns read), and swap share (mean over
   logs) <= `MAX_SWAP_SHARE` (a loss that mixes curves up is out whatever its MAE);
2. winner: the eligible loss with the lowest mean, over styles, of the median MAE over logs
   (track units);
3. decisive: (a) the winner's per-log MAE (mean over the log's curves) is lower than that of every
   other eligible loss by a one-sided Wilcoxon signed-rank test over the same logs at
   p < `ALPHA` / (losses compared), the Bonferroni bound, and (b) R² agrees: the winner's lowest
   per-style median R² (the gate's figure) is within `R2_TOLERANCE` of, or above, every other
   eligible loss's. Otherwise the run says that the losses did not separate at this budget and
   the default stays.

Writes `results/losses.json` (settings, per-loss metrics and tests, training histories) beside this
script and `docs/loss-ablation.md` (the table and the verdict) in the repository, and prints the table.
`--estimate N` trains only N optimiser steps per loss, writes nothing, and prints seconds per step
and the projected cost of the full run. `--losses` compares only those losses (the others sat out by
an earlier run's verdict); `--trained LOSS=DIR` scores a model trained beforehand with these params
and the same training code, where the stage fingerprint no longer says so because code elsewhere in
the package changed: the row names that folder and its recorded fingerprint, and the caller vouches
for the training (docs/loss-ablation.md says how it was checked).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import math
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import wilcoxon

from veernet_pipeline.config import Settings, load_settings
from veernet_pipeline.evaluation.evaluate import evaluate_model
from veernet_pipeline.io.atomic import write_json_atomic, write_text_atomic
from veernet_pipeline.io.classes import CLASSES
from veernet_pipeline.io.sets import INDEX_FILE
from veernet_pipeline.model.veernet import WEIGHTS_FILE
from veernet_pipeline.stages.cache import files_version, fingerprint, recorded
from veernet_pipeline.stages.train import claim_checkpoints
from veernet_pipeline.training.losses import LOSSES
from veernet_pipeline.training.recipes import HISTORY_FILE, train_stage

log = logging.getLogger(__name__)

HERE = Path(__file__).resolve().parent
MIN_COVERAGE = 0.9  # a loss must read this share of every style (median over logs) to win on MAE
MAX_SWAP_SHARE = 0.05  # five times issue 11's 1 % target: more and the loss confuses curves, whatever its MAE
R2_TOLERANCE = 0.005  # a winner on MAE whose gate figure (lowest per-style median R²) trails by more is not decisive
ALPHA = 0.05
# Metrics of the table, one column each, "value / value" per style: (metrics.json key, header).
CURVE_COLUMNS = (("median_mae", "MAE median"), ("median_r2", "R² median"), ("median_coverage", "coverage median"))


def row_of(loss: str, metrics: dict[str, Any], per_log: pd.DataFrame, train: dict[str, Any],
           eval_seconds: float) -> dict[str, Any]:
    """The figures of one loss: per-style medians, swap share, mask IoU per class name, per-log MAE, seconds."""
    curves = metrics["styles"]
    # The epochs' own seconds: a training resumed after a stop reports only its last call's wall clock.
    train_seconds = sum(epoch["seconds"] for epoch in train["history"])
    row: dict[str, Any] = {"loss": loss, "train_seconds": train_seconds, "eval_seconds": eval_seconds,
                           "final_val_loss": train["final"].get("val_loss"), "swap_share": metrics["swap_share"],
                           "curves": {name: {key: stats.get(key, math.nan) for key, _ in CURVE_COLUMNS}
                                      for name, stats in curves.items()},
                           "iou": {CLASSES[int(k)] if int(k) < len(CLASSES) else k: v.get("iou", math.nan)
                                   for k, v in metrics["classes"].items()}}
    maes = [stats["median_mae"] for stats in row["curves"].values()]
    r2s = [stats["median_r2"] for stats in row["curves"].values()]
    row["min_median_r2"] = float(min(r2s)) if r2s and all(_finite(v) for v in r2s) else -math.inf
    # A curve never read (NaN MAE) must lose, not drop out of the mean.
    row["mean_median_mae"] = float(np.mean(maes)) if maes and all(_finite(v) for v in maes) else math.inf
    row["eligible"] = (bool(row["curves"]) and all(_finite(s["median_coverage"]) and s["median_coverage"] >=
                                                    MIN_COVERAGE for s in row["curves"].values())
                       and _finite(row["swap_share"]) and row["swap_share"] <= MAX_SWAP_SHARE)
    # Per log: the mean MAE over its curves; a curve not read anywhere in the log counts as the worst, 1 track unit.
    # Keys as text: a row read back from JSON must pair its logs with a fresh row's.
    log_mae = per_log.assign(mae=per_log["mae"].fillna(1.0)).groupby("id")["mae"].mean()
    row["log_mae"] = {str(key): float(value) for key, value in log_mae.items()}
    return row


def restored(row: dict[str, Any]) -> dict[str, Any]:
    """A row read back from strict JSON, where the never-read curves' infinite figures were written as null."""
    return {**row, "mean_median_mae": _or(row["mean_median_mae"], math.inf),
            "min_median_r2": _or(row["min_median_r2"], -math.inf)}


def _or(value: float | None, default: float) -> float:
    return default if value is None else value


def pick_winner(rows: list[dict[str, Any]]) -> tuple[str, bool, dict[str, float]]:
    """The winner (rule 2 among the eligible, or among all when none is), whether it is decisive (rule 3), p-values.

    Ties go to the loss listed first.
    """
    pool = [row for row in rows if row["eligible"]] or rows
    winner = min(pool, key=lambda row: row["mean_median_mae"])
    others = [row for row in pool if row is not winner]
    p_values = {row["loss"]: paired_p(winner["log_mae"], row["log_mae"]) for row in others}
    r2_agrees = all(winner["min_median_r2"] >= row["min_median_r2"] - R2_TOLERANCE for row in others)
    decisive = bool(others) and all(p < ALPHA / len(others) for p in p_values.values()) and r2_agrees
    return winner["loss"], decisive, p_values


def paired_p(better: dict[str, float], other: dict[str, float]) -> float:
    """One-sided Wilcoxon signed-rank p-value that `better`'s per-log MAE is lower than `other`'s on shared logs."""
    logs = sorted(set(better) & set(other))
    differences = np.array([better[k] - other[k] for k in logs])
    if len(logs) < 6 or not np.any(differences):  # below 6 pairs no ordering reaches p < 0.05
        return 1.0
    return float(wilcoxon(differences, alternative="less").pvalue)


def markdown_table(rows: list[dict[str, Any]], winner: str, p_values: dict[str, float]) -> str:
    """One markdown table: a row per loss, the winner in bold."""
    curves = sorted({name for row in rows for name in row["curves"]})
    header = ["Loss", *(f"{title} ({', '.join(curves)})" for _, title in CURVE_COLUMNS), "mean MAE",
              "lowest R²", "swap share", "eligible", "p vs winner", "IoU per class", "train s"]
    lines = ["| " + " | ".join(header) + " |", "|---|" + "---:|" * (len(header) - 1)]
    for row in rows:
        name = f"**{row['loss']}**" if row["loss"] == winner else row["loss"]
        cells = [name]
        cells += [" / ".join(_fmt(row["curves"].get(c, {}).get(key)) for c in curves) for key, _ in CURVE_COLUMNS]
        cells += [_fmt(row["mean_median_mae"]), _fmt(row["min_median_r2"]), _fmt(row["swap_share"]),
                  "yes" if row["eligible"] else "no",
                  _fmt(p_values.get(row["loss"])), ", ".join(f"{k} {_fmt(v, 2)}" for k, v in row["iou"].items()),
                  f"{row['train_seconds']:.0f}"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def _shown(path: Path) -> str:
    """`path` as the docs name it: relative to the repository when inside it."""
    return str(path.resolve().relative_to(HERE.parent)) if path.resolve().is_relative_to(HERE.parent) else str(path)


def _finite(value: Any) -> bool:
    return value is not None and math.isfinite(value)


def _fmt(value: float | None, digits: int = 4) -> str:
    return f"{value:.{digits}f}" if _finite(value) else "n/a"


def _check_inputs(set_dir: Path, binary: Path) -> None:
    if not (set_dir / "index.parquet").is_file():
        raise FileNotFoundError(f"{set_dir / 'index.parquet'}: no index; --set-dir must be a synthetic multiclass set "
                                "folder (veernet synthesize)")
    if not (binary / WEIGHTS_FILE).is_file():
        raise FileNotFoundError(f"{binary / WEIGHTS_FILE}: no weights; --binary must be a trained binary model folder "
                                "(veernet train_binary)")


class _Enough(Exception):
    """Raised from the step hook once the estimate has timed its steps."""


def steps_per_epoch(set_dir: Path, settings: Settings) -> tuple[int, int]:
    """(optimiser steps per multiclass epoch, training logs) for `settings` on the set in `set_dir`."""
    params = settings.train_multiclass
    index = pd.read_parquet(set_dir / "index.parquet")
    logs = int((index["split"] == "train").sum())
    logs = min(logs, params.max_train) if params.max_train > 0 else logs
    return math.ceil(math.ceil(logs * params.crops_per_log / params.batch_size) / params.accumulation), logs


def budget_epochs(set_dir: Path, settings: Settings, budget_steps: int) -> int:
    """The fewest whole multiclass epochs holding at least `budget_steps` optimiser steps."""
    if budget_steps < 1:
        raise ValueError(f"--budget-steps {budget_steps}: give a positive number of optimiser steps per loss")
    per_epoch, _ = steps_per_epoch(set_dir, settings)
    return max(1, math.ceil(budget_steps / per_epoch))


def estimate(per_loss: dict[str, Settings], set_dir: Path, binary: Path, steps: int) -> dict[str, Any]:
    """Seconds per optimiser step of each loss over `steps` steps, and the full run's projected training hours."""
    first = next(iter(per_loss.values()))
    full = first.train_multiclass
    per_epoch, logs = steps_per_epoch(set_dir, first)
    steps_per_run = full.epochs * per_epoch
    seconds: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="veernet-losses-") as work:
        for loss, settings in per_loss.items():
            marks: list[float] = []
            short = settings.model_copy(update={"train_multiclass": full.model_copy(update={"epochs": 1})})
            started = time.perf_counter()

            def stop_after(info: dict[str, Any], marks: list[float] = marks) -> None:
                marks.append(time.perf_counter())
                if len(marks) > steps:
                    raise _Enough

            with contextlib.suppress(_Enough):
                train_stage(short, "multiclass", set_dir, Path(work) / loss, init_weights=binary, on_step=stop_after)
            # The first step carries the set-up (reading logs, building the net); time the steps after it.
            seconds[loss] = (marks[-1] - marks[0]) / (len(marks) - 1) if len(marks) > 1 else math.nan
            log.info("loss %s: %.3f s per step (%.0f s with set-up)", loss, seconds[loss],
                     time.perf_counter() - started)
    hours = sum(seconds.values()) * steps_per_run / 3600
    return {"seconds_per_step": seconds, "steps_per_run": steps_per_run, "train_logs": logs,
            "projected_training_hours": hours}


def run(set_dir: Path, binary: Path, params: Path | None, profile: str, overrides: list[str], json_out: Path,
        doc_out: Path, work_dir: Path | None = None, rows_dir: Path | None = None,
        only: list[str] | None = None, losses: list[str] | None = None,
        trained: dict[str, Path] | None = None) -> dict[str, Any]:
    """Train and evaluate one multiclass model per loss, write the JSON and the doc, return the JSON document.

    With `work_dir`, each loss's model, evaluation and row stay in `work_dir/<loss>/`: a later run with the
    same code, params and inputs reuses finished losses and resumes an interrupted training from its last
    checkpoint, so a comparison longer than one working session can be run in parts. With `rows_dir`, the
    rows live there instead (`<loss>.json`, small enough to commit), so the parts can run on different
    machines. With `only`, just those losses are trained and scored; the others' rows must already be
    current, else the comparison is not written and the document lists the losses still `pending`.
    `losses` (default: all) are the losses compared; `trained` maps a loss to a model folder scored as its run.
    """
    per_loss = settings_per_loss(params, profile, overrides, losses)
    settings = next(iter(per_loss.values()))
    recipe = load_settings(params, profile).train_multiclass
    default_loss = recipe.loss.name
    rows, histories, n_logs, pending = [], {}, 0, []
    with contextlib.ExitStack() as stack:
        work = work_dir or Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="veernet-losses-")))
        for loss, loss_settings in per_loss.items():
            saved = rows_dir / f"{loss}.json" if rows_dir else work / loss / ROW_FILE
            given = (trained or {}).get(loss)
            if only and loss not in only:
                keys = run_keys(loss_settings, set_dir, binary, given)
                result = kept_result(loss, keys, saved_record(saved), saved)
                if result is None:
                    pending.append(loss)
                    continue
            else:
                result = loss_result(loss, loss_settings, set_dir, binary, work / loss, saved,
                                     recipe.checkpoint_every_steps, given)
            row, history, logs = result
            rows.append(row)
            histories[loss], n_logs = history, logs
    if pending:
        log.warning("no current row for %s in %s: run them (--only) before the comparison is written", pending,
                    rows_dir or work_dir)
        return {"pending": pending, "losses": rows}
    winner, decisive, p_values = pick_winner(rows)
    budget = settings.section("train_multiclass")
    budget.pop("loss")
    verdict = (f"**{winner}** wins decisively: lower per-log MAE than every other eligible loss (one-sided Wilcoxon, "
               f"p < {ALPHA} / {len(p_values)} each) and a lowest per-style R² within {R2_TOLERANCE} of the best"
               if decisive else
               f"{winner} has the lowest mean median MAE, but not decisively (some p >= {ALPHA} / "
               f"{max(1, len(p_values))}, or its lowest per-style R² trails another eligible loss's by more than "
               f"{R2_TOLERANCE}): the losses did not separate at this budget")
    action = ("it is the current default" if winner == default_loss else
              f"the current default is `{default_loss}`" + ("; switch `train_multiclass.loss.name`" if decisive else
                                                            "; it stays"))
    table = markdown_table(rows, winner, p_values)
    command = f"python benchmarks/losses.py --profile {profile}" + "".join(f" --set {o}" for o in overrides)
    notes = (f"Budget, identical for every loss: profile `{settings.profile}`, seed {settings.seed}, "
             f"{', '.join(f'{k} {v}' for k, v in budget.items())}; every run starts from the binary weights "
             f"`{binary}`. Scored by `evaluate_model` on the first {n_logs} logs of split "
             f"`{settings.evaluate.split}` of `{set_dir}`, curves read with the `extract:` path search. Curve figures "
             f"are medians over logs in track units; swap share as `evaluate_model` reports it; IoU from pixel counts "
             f"pooled over logs (not used for the choice).\n")
    document = {"set": str(set_dir), "binary": str(binary), "profile": settings.profile, "seed": settings.seed,
                "overrides": overrides, "train_multiclass": budget, "evaluate": settings.section("evaluate"),
                "extract": settings.section("extract"), "n_logs": n_logs, "default_loss": default_loss,
                "winner": winner, "decisive": decisive, "p_values_vs_winner": p_values,
                "rule": {"min_coverage": MIN_COVERAGE, "max_swap_share": MAX_SWAP_SHARE, "r2_tolerance": R2_TOLERANCE,
                         "alpha": ALPHA}, "losses": rows, "histories": histories}
    write_json_atomic(json_out, document)
    result = (f"`{command}` ({time.strftime('%Y-%m-%d')}; raw figures in `{_shown(json_out)}`):\n\n"
              f"{table}\n{verdict}; {action}.\n\n{notes}")
    write_text_atomic(doc_out, with_result(doc_out, result))
    print(f"{table}\n{verdict}; {action}.\n\n{notes}")
    return document


ROW_FILE = "row.json"
# One loss's (row, training history, logs scored).
LossResult = tuple[dict[str, Any], list[dict[str, Any]], int]


def run_keys(settings: Settings, set_dir: Path, binary: Path, given: Path | None = None) -> dict[str, str]:
    """Digests of what one loss's training and its evaluation depend on: code, params and inputs.

    The stages' own fingerprints (`stages.cache.fingerprint`), so a row is reused exactly when the
    pipeline would reuse the stage output. For a model `given` (trained beforehand), its training key is
    that folder's recorded fingerprint and weights' version: the row holds while those weights do.
    """
    inputs = {"set": _identity(set_dir, INDEX_FILE), "binary": _identity(binary, WEIGHTS_FILE)}
    train = (f"given:{_given_record(given)['fingerprint']}:{files_version([given / WEIGHTS_FILE])}" if given
             else fingerprint("train_multiclass", settings, inputs))
    return {"train": train, "evaluate": fingerprint("evaluate", settings, {"model": train, "set": inputs["set"]})}


def _identity(folder: Path, main_file: str) -> str:
    """A folder's data version when a stage wrote it, else the digest of its main file (a set's index, weights)."""
    record = recorded(folder)
    return record["data_version"] if record else files_version([folder / main_file])


def saved_record(saved: Path) -> dict[str, Any] | None:
    """One loss's row file (keys, row, train, n_logs), or None if it was never written."""
    return json.loads(saved.read_text()) if saved.is_file() else None


def kept_result(loss: str, keys: dict[str, str], record: dict[str, Any] | None, saved: Path) -> LossResult | None:
    """(row, training history, logs scored) of one loss from its row file's `record`, if that holds these keys."""
    if record is None or record["keys"] != keys:
        return None
    log.info("loss %s: reusing %s (same code, params and inputs)", loss, saved)
    return restored(record["row"]), record["train"]["history"], record["n_logs"]


def _trained_under(model: Path, train_key: str) -> bool:
    """Whether `model` holds finished weights of the training `train_key` names (not only its row, elsewhere)."""
    owner = model / "checkpoints" / "run_key.txt"
    return (model / WEIGHTS_FILE).is_file() and owner.is_file() and owner.read_text().strip() == train_key


def loss_result(loss: str, settings: Settings, set_dir: Path, binary: Path, folder: Path, saved: Path,
                cadence: int, given: Path | None = None) -> LossResult:
    """(row, training history, logs scored) of one loss: reused from `saved` when its keys match, else computed.

    A model in `folder/model` whose training key still matches is evaluated again without training. Training
    resumes from `folder/model/checkpoints/last.pt` when that belongs to the same keys; checkpoints of other
    code or params are set aside, never deleted (`claim_checkpoints`). A `given` model is scored, never trained.
    """
    keys, model = run_keys(settings, set_dir, binary, given), folder / "model"
    record = saved_record(saved)
    kept = kept_result(loss, keys, record, saved)
    if kept is not None:
        return kept
    if given is not None:
        model, train = given, _training_of(given)
        log.info("loss %s: scoring the model given in %s (trained under fingerprint %s), not training", loss, given,
                 train["fingerprint"])
    elif record is not None and record["keys"]["train"] == keys["train"] and _trained_under(model, keys["train"]):
        log.info("loss %s: the model in %s is current; evaluating it again", loss, model)
        train = record["train"]
    elif (recipe := recipe_model(settings, set_dir, binary, cadence)) is not None:
        model, train = recipe
        log.info("loss %s: the pipeline's model %s was trained exactly so (checkpoint cadence aside); scoring it, "
                 "not training again", loss, model)
    else:
        log.info("loss %s: training the multiclass stage from %s", loss, binary)
        claim_checkpoints(model, keys["train"])
        result = train_stage(settings, "multiclass", set_dir, model, init_weights=binary, resume=True)
        train = {key: result[key] for key in ("wall_clock_s", "final", "history")}
    started = time.perf_counter()
    metrics = evaluate_model(model, set_dir, folder / "eval", settings.evaluate, settings.extract,
                             seed=settings.seed, low_confidence=settings.infer.low_confidence)
    per_log = pd.read_csv(folder / "eval" / "per_log.csv")
    row = row_of(loss, metrics, per_log, train, time.perf_counter() - started)
    log.info("loss %s: mean median MAE %.4f, %.0f s training", loss, row["mean_median_mae"], row["train_seconds"])
    write_json_atomic(saved, {"keys": keys, "row": row, "train": train, "n_logs": int(metrics["n_logs"])})
    return row, train["history"], int(metrics["n_logs"])


def recipe_model(settings: Settings, set_dir: Path, binary: Path, cadence: int) -> tuple[Path, dict[str, Any]] | None:
    """(folder, training record) of the pipeline's own multiclass model, if it is what this loss would train.

    The `train_multiclass` stage records its fingerprint (`_stage.json`); when that equals this loss's
    training key with `checkpoint_every_steps` set to `cadence` (the profile's own), the stage trained the
    same weights from the same set and binary model: how often a run saves its state changes when it can be
    resumed, not the weights (bit-identical on CPU: `tests/unit/test_loss_parts.py`). So the profile's own
    loss, which the cpu recipe has already trained for 1 h 35 min, is scored from that folder instead of
    trained a second time.
    """
    folder = settings.path("models") / "multiclass"
    record = recorded(folder)
    if record is None or not (folder / WEIGHTS_FILE).is_file() or not (folder / HISTORY_FILE).is_file():
        return None
    as_recipe = settings.model_copy(update={"train_multiclass": settings.train_multiclass.model_copy(
        update={"checkpoint_every_steps": cadence})})
    if record["fingerprint"] != run_keys(as_recipe, set_dir, binary)["train"]:
        return None
    if record["data_version"] != files_version([folder / WEIGHTS_FILE]):  # weights changed since the stage wrote them
        return None
    return folder, _training_of(folder)


def _given_record(folder: Path) -> dict[str, Any]:
    """The `_stage.json` of a model folder given with --trained, checked to hold the weights it recorded."""
    record = recorded(folder)
    if record is None or not (folder / HISTORY_FILE).is_file():
        raise FileNotFoundError(f"{folder}: no _stage.json or {HISTORY_FILE}; --trained takes a model folder the "
                                "train_multiclass stage wrote")
    if record["data_version"] != files_version([folder / WEIGHTS_FILE]):
        raise ValueError(f"{folder}: {WEIGHTS_FILE} changed since the stage recorded it; --trained takes the "
                         "stage's own weights")
    return record


def _training_of(folder: Path) -> dict[str, Any]:
    """The training record (seconds, final epoch, history, folder, fingerprint) of a stage-written model folder."""
    record = _given_record(folder)
    history = json.loads((folder / HISTORY_FILE).read_text())
    return {"wall_clock_s": record["result"]["metrics"]["train_wall_clock_s"],
            "final": history[-1] if history else {}, "history": history, "trained_by": str(folder),
            "fingerprint": record["fingerprint"]}


RESULT_MARK = "<!-- results: benchmarks/losses.py rewrites everything below this line -->"


def with_result(doc: Path, result: str) -> str:
    """The loss-ablation page with `result` below `RESULT_MARK`; the hand-written method above it is kept."""
    text = doc.read_text() if doc.is_file() else "# Loss ablation\n\n"
    head = text.split(RESULT_MARK)[0].rstrip("\n")
    return f"{head}\n\n{RESULT_MARK}\n\n{result}"


def settings_per_loss(params: Path | None, profile: str, overrides: list[str],
                      losses: list[str] | None = None) -> dict[str, Settings]:
    """The same settings for every loss compared (default: all, in `LOSSES` order) but `train_multiclass.loss.name`."""
    return {loss: load_settings(params, profile, [*overrides, f"train_multiclass.loss.name={loss}"])
            for loss in LOSSES if losses is None or loss in losses}


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """Parse arguments and run the ablation (or its estimate)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set-dir", type=Path,
                        help="synthetic multiclass set (default: paths.synthetic/multiclass of params.yaml)")
    parser.add_argument("--binary", type=Path,
                        help="binary model folder every run starts from (default: paths.models/binary)")
    parser.add_argument("--params", type=Path, help="params.yaml (default: $VEERNET_PARAMS or the nearest one)")
    parser.add_argument("--profile", default="cpu", help="params.yaml profile (default: cpu)")
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE",
                        help="params override, e.g. evaluate.split=val (repeatable)")
    parser.add_argument("--budget-steps", type=int, default=0, metavar="N",
                        help="optimiser steps every loss trains for, rounded up to whole epochs (default: the "
                             "profile's train_multiclass.epochs)")
    parser.add_argument("--estimate", type=int, default=0, metavar="STEPS",
                        help="only time this many optimiser steps per loss and project the full run's cost")
    parser.add_argument("--work-dir", type=Path,
                        help="keep each loss's model, evaluation and row here and reuse them on the next run with "
                             "the same code, params and inputs (default: a temporary folder, removed)")
    parser.add_argument("--rows-dir", type=Path,
                        help="keep each loss's row (figures, keys, history) as <loss>.json here instead of in "
                             "--work-dir: small files to commit, so a comparison can go on on another machine")
    parser.add_argument("--only", nargs="+", choices=LOSSES, metavar="LOSS",
                        help=f"train and score only these losses ({', '.join(LOSSES)}); the comparison is written "
                             "once every loss has a current row")
    parser.add_argument("--losses", nargs="+", choices=LOSSES, metavar="LOSS",
                        help="compare only these losses (default: all five)")
    parser.add_argument("--trained", action="append", default=[], metavar="LOSS=DIR",
                        help="score the model folder DIR (written by train_multiclass with these params) as LOSS's "
                             "run instead of training it (repeatable)")
    parser.add_argument("--json", type=Path, default=HERE / "results" / "losses.json", help="JSON output")
    parser.add_argument("--doc", type=Path, default=HERE.parent / "docs" / "loss-ablation.md", help="markdown output")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    settings = load_settings(args.params, args.profile, args.overrides)
    set_dir = (args.set_dir or settings.path("synthetic") / "multiclass").resolve()
    binary = (args.binary or settings.path("models") / "binary").resolve()
    _check_inputs(set_dir, binary)
    if args.only and not (args.rows_dir or args.work_dir):
        parser.error("--only keeps its rows for a later run: give --rows-dir (or --work-dir) to keep them in")
    trained = {}
    for item in args.trained:
        loss, _, folder = item.partition("=")
        if loss not in (args.losses or LOSSES) or not folder:
            parser.error(f"--trained {item}: give LOSS=DIR with LOSS one of the losses compared")
        trained[loss] = Path(folder).resolve()
    if args.budget_steps:
        epochs = budget_epochs(set_dir, settings, args.budget_steps)
        args.overrides = [*args.overrides, f"train_multiclass.epochs={epochs}"]
        log.info("budget %d steps: %d epochs of %d steps per loss", args.budget_steps, epochs,
                 steps_per_epoch(set_dir, settings)[0])
    if args.estimate:
        per_loss = settings_per_loss(args.params, args.profile, args.overrides, args.losses)
        result = estimate(per_loss, set_dir, binary, args.estimate)
        print(result)
        return result
    return run(set_dir, binary, args.params, args.profile, args.overrides, args.json, args.doc, args.work_dir,
               args.rows_dir, args.only, args.losses, trained)


if __name__ == "__main__":
    main()
