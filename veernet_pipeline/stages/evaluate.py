"""The evaluate stage: the multiclass model on held-out logs; `champion` moves when the gate passes."""

from __future__ import annotations

from veernet_pipeline.config import Settings
from veernet_pipeline.errors import MissingModel
from veernet_pipeline.evaluation.evaluate import evaluate_model
from veernet_pipeline.stages.cache import StageResult, files_version, recorded, run_cached, upstream
from veernet_pipeline.tracking import store
from veernet_pipeline.tracking.gate import gate
from veernet_pipeline.tracking.store import MULTICLASS_MODEL

OUTPUT_FILES = ("metrics.json", "per_log.csv", "overlay.png")


def evaluate(settings: Settings) -> StageResult:
    """Measure the multiclass model on held-out logs; move `champion` when the gate passes."""
    model_dir = settings.path("models") / "multiclass"
    set_dir = settings.path("synthetic") / "multiclass"
    out = settings.path("evaluation")
    params = {"evaluate": settings.section("evaluate"), "extract": settings.section("extract")}
    if recorded(model_dir) is None:
        raise MissingModel(f"{model_dir}: no trained multiclass model to evaluate; train it first "
                           "(`veernet train_multiclass`)")

    def work(_: str) -> StageResult:
        version = recorded(model_dir)["result"]["paths"]["model_version"]
        with store.stage_run(settings.root, "evaluate", params, {"profile": settings.profile,
                                                                 "model_version": version}):
            metrics = evaluate_model(model_dir, set_dir, out, settings.evaluate, settings.extract)
            decision = gate(settings.root, MULTICLASS_MODEL, version, metrics["median_r2"],
                            settings.evaluate.gate.min_median_r2)
            store.log_epoch(0, {**metrics, "gate_passed": float(decision["promoted"])})
            for name in OUTPUT_FILES:
                store.log_artifact(out / name)
            for picture in sorted((out / "overlays").glob("*.png")):
                store.log_artifact(picture, "overlays")
        return StageResult("evaluate", counts={"logs": int(metrics["n_logs"])},
                           metrics={**store.numeric(metrics), "gate": decision},
                           paths={name: str(out / name) for name in (*OUTPUT_FILES, "overlays")})

    return run_cached("evaluate", settings, [out], {"model": upstream(model_dir), "set": upstream(set_dir)}, work,
                      lambda: files_version([out / "metrics.json", out / "per_log.csv"]))
