"""The training stages: binary VeerNet, then multiclass seeded from it, each registered in MLflow."""

from __future__ import annotations

import logging
import time
from pathlib import Path

from veernet_pipeline.config import Settings
from veernet_pipeline.io.atomic import write_text_atomic
from veernet_pipeline.model.veernet import WEIGHTS_FILE
from veernet_pipeline.stages.cache import StageResult, files_version, run_cached, upstream
from veernet_pipeline.tracking import store
from veernet_pipeline.tracking.store import BINARY_MODEL, MULTICLASS_MODEL
from veernet_pipeline.training.recipes import HISTORY_FILE, train_stage

log = logging.getLogger(__name__)


def _train(settings: Settings, stage: str, resume: bool) -> StageResult:
    binary = stage == "train_binary"
    set_dir = settings.path("synthetic") / ("binary" if binary else "multiclass")
    out = settings.path("models") / ("binary" if binary else "multiclass")
    init = None if binary else settings.path("models") / "binary" / WEIGHTS_FILE
    params = settings.section(stage)
    inputs = {"set": upstream(set_dir)}
    if init is not None:
        inputs["binary"] = upstream(init.parent)
    registered = BINARY_MODEL if binary else MULTICLASS_MODEL

    def work(key: str) -> StageResult:
        claim_checkpoints(out, key)
        tags = {"profile": settings.profile, "fingerprint": key}
        with store.stage_run(settings.root, stage, {"model": settings.section("model"), stage: params}, tags) as run:
            history = train_stage(settings, "binary" if binary else "multiclass", set_dir, out, init_weights=init,
                                  resume=resume, on_epoch_end=store.log_epoch)
            store.log_epoch(int(history["epochs"]), {"wall_clock_s": history["wall_clock_s"]})
            store.log_artifact(out / HISTORY_FILE)
            version = store.log_model(out, registered)
        final = {k: v for k, v in history["final"].items() if isinstance(v, int | float)}
        return StageResult(stage, counts={"epochs": int(history["epochs"])},
                           metrics={**final, "train_wall_clock_s": history["wall_clock_s"],
                                    "train_seconds": history["training_s"]},
                           paths={"weights": str(out / WEIGHTS_FILE), "mlflow_run": run.info.run_id,
                                  "model_version": version, "registered_model": registered})

    return run_cached(stage, settings, [out], inputs, work,
                      lambda: files_version([out / WEIGHTS_FILE]))


def claim_checkpoints(out: Path, run_key: str) -> None:
    """Make `out/checkpoints` this run's own, so `--resume` only ever continues the same inputs and params.

    Checkpoints of other inputs (params or code changed, a new binary model) are set aside under a
    new name, never deleted, and the run starts fresh.
    """
    folder = out / "checkpoints"
    owner = folder / "run_key.txt"
    if folder.exists() and (not owner.is_file() or owner.read_text().strip() != run_key):
        previous = owner.read_text().strip() if owner.is_file() else "unknown"
        aside = out / f"checkpoints.superseded-{previous}-{time.strftime('%Y%m%dT%H%M%S')}"
        folder.rename(aside)
        log.info("checkpoints in %s belong to other inputs; moved to %s", folder, aside)
    write_text_atomic(owner, run_key + "\n")


def train_binary(settings: Settings, resume: bool = False) -> StageResult:
    """Train the binary (curve vs background) VeerNet and register it as `veernet-binary`."""
    return _train(settings, "train_binary", resume)


def train_multiclass(settings: Settings, resume: bool = False) -> StageResult:
    """Train the line-style VeerNet (`io.classes`) from the binary weights; register it as `veernet-multiclass`."""
    return _train(settings, "train_multiclass", resume)
