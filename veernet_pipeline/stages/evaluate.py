"""The evaluate stage: the multiclass model on held-out logs and the foreign set; the gate moves `champion`.

The own test split decides the gate. The foreign renderer's evaluation-only set (`evaluate.foreign`
under `paths.synthetic`), when it exists, is read and scored the same way into `foreign/`, with
`foreign/comparison.{md,json}` setting the two side by side: the generalisation gap. It is never
gated on, trained or tuned on.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from veernet_pipeline.config import Settings
from veernet_pipeline.errors import MissingModel
from veernet_pipeline.evaluation.evaluate import evaluate_model
from veernet_pipeline.evaluation.summary import write_comparison
from veernet_pipeline.io.sets import INDEX_FILE
from veernet_pipeline.stages.cache import StageResult, files_version, recorded, run_cached, stage_params, upstream
from veernet_pipeline.tracking import store
from veernet_pipeline.tracking.gate import gate
from veernet_pipeline.tracking.store import MULTICLASS_MODEL

log = logging.getLogger(__name__)

OUTPUT_FILES = ("metrics.json", "per_log.csv", "overlay.png")
FOREIGN_DIR = "foreign"  # beside the own figures in paths.evaluation
FOREIGN_FILES = ("metrics.json", "per_log.csv", "comparison.md", "comparison.json")
FOREIGN_SPLIT = "test"  # an evaluation-only set holds only its test split


def foreign_set(settings: Settings) -> Path | None:
    """The foreign renderer's set to score, or None when `evaluate.foreign` is empty or the set is not there."""
    if not settings.evaluate.foreign:
        return None
    folder = settings.path("synthetic") / settings.evaluate.foreign
    if not (folder / INDEX_FILE).is_file():
        log.warning("evaluate.foreign: %s holds no %s; only the own test split is evaluated", folder, INDEX_FILE)
        return None
    return folder


def headline(metrics: dict[str, Any]) -> dict[str, float]:
    """The figures a run's metadata shows: the gate's with its bootstrap interval, the medians per style and curve,
    and for the curves drawn alike with another of their track and the others (`drawn_alike.alike` / `.own`)."""
    figures = {key: metrics[key] for key in ("median_r2", "median_mae", "swap_share")}
    figures["median_r2_low"], figures["median_r2_high"] = metrics["interval"]["median_r2"]
    for section in ("styles", "curves", "drawn_alike"):
        for group, stats in metrics[section].items():
            figures.update({f"{section}.{group}.{k}": stats[k] for k in ("median_r2", "median_mae")})
    return figures


def evaluate(settings: Settings) -> StageResult:
    """Measure the multiclass model on held-out logs (and the foreign set); move `champion` when the gate passes."""
    model_dir = settings.path("models") / "multiclass"
    set_dir = settings.path("synthetic") / "multiclass"
    foreign = foreign_set(settings)
    out = settings.path("evaluation")
    params = stage_params("evaluate", settings)  # what the run reads, logged on its MLflow run
    if recorded(model_dir) is None:
        raise MissingModel(f"{model_dir}: no trained multiclass model to evaluate; train it first "
                           "(`veernet train_multiclass`)")

    def work(_: str) -> StageResult:
        version = recorded(model_dir)["result"]["paths"]["model_version"]
        with store.stage_run(settings.root, "evaluate", params, {"profile": settings.profile,
                                                                 "model_version": version}):
            metrics = evaluate_model(model_dir, set_dir, out, settings.evaluate, settings.extract,
                                     seed=settings.seed, low_confidence=settings.infer.low_confidence)
            decision = gate(settings.root, MULTICLASS_MODEL, version, metrics["median_r2"],
                            settings.evaluate.gate.min_median_r2)
            logged = {**metrics, "gate_passed": float(decision["promoted"])}
            shown = {**store.numeric(headline(metrics)), "gate": decision}
            paths = {name: str(out / name) for name in (*OUTPUT_FILES, "overlays")}
            for name in OUTPUT_FILES:
                store.log_artifact(out / name)
            for picture in sorted((out / "overlays").glob("*.png")):
                store.log_artifact(picture, "overlays")
            if foreign is not None:
                foreign_out = out / FOREIGN_DIR
                foreign_metrics = evaluate_model(model_dir, foreign, foreign_out, settings.evaluate, settings.extract,
                                                 split=FOREIGN_SPLIT, seed=settings.seed,
                                                 low_confidence=settings.infer.low_confidence)
                write_comparison(foreign_out, metrics, foreign_metrics)
                logged["foreign"] = foreign_metrics
                shown.update(store.numeric({"foreign": headline(foreign_metrics)}))
                paths.update({f"foreign_{name}": str(foreign_out / name) for name in FOREIGN_FILES})
                for name in FOREIGN_FILES:
                    store.log_artifact(foreign_out / name, FOREIGN_DIR)
                for picture in sorted((foreign_out / "overlays").glob("*.png")):
                    store.log_artifact(picture, f"{FOREIGN_DIR}/overlays")
            store.log_epoch(0, logged)
        counts = {"logs": int(metrics["n_logs"]), "curves": int(metrics["n_curves"])}
        if foreign is not None:
            counts.update(foreign_logs=int(foreign_metrics["n_logs"]), foreign_curves=int(foreign_metrics["n_curves"]))
        return StageResult("evaluate", counts=counts, metrics=shown, paths=paths)

    inputs = {"model": upstream(model_dir), "set": upstream(set_dir),
              "foreign": None if foreign is None else _set_version(foreign)}
    return run_cached("evaluate", settings, [out], inputs, work,
                      lambda: files_version([out / "metrics.json", out / "per_log.csv",
                                             *(out / FOREIGN_DIR / name for name in FOREIGN_FILES if foreign)]))


def _set_version(folder: Path) -> str:
    """A set's identity: its recorded data version when a stage wrote it, else a digest of its index."""
    record = recorded(folder)
    return record["data_version"] if record else files_version([folder / INDEX_FILE])
