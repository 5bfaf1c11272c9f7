"""The pipeline's stages: one function each, called alike by the CLI, Dagster and DVC.

Each stage reads its inputs from the folders named in params.yaml, writes its outputs there,
and returns a `StageResult` (counts, paths, metrics) that runners show as metadata. A stage
whose inputs and parameters have not changed since its last completed run returns the recorded
result instead of recomputing (`_stage.json` in each output folder holds the fingerprint), so
re-materialising the whole graph after no change costs seconds, not a retrain.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from veernet_pipeline import __version__
from veernet_pipeline.config import Settings
from veernet_pipeline.io.atomic import write_text_atomic

log = logging.getLogger(__name__)

STAGE_FILE = "_stage.json"
BINARY_MODEL = "veernet-binary"
MULTICLASS_MODEL = "veernet-multiclass"
CHAMPION = "champion"


@dataclass
class StageResult:
    """What one stage did: the numbers and paths runners surface as metadata."""

    stage: str
    fingerprint: str
    skipped: bool = False
    counts: dict[str, int] = field(default_factory=dict)
    metrics: dict[str, Any] = field(default_factory=dict)
    paths: dict[str, str] = field(default_factory=dict)


def _digest(payload: Any) -> str:
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()[:16]


def _listing(folder: Path) -> list[tuple[str, int, int]]:
    """Cheap identity of a raw folder: every file's relative path, size and mtime."""
    if not folder.exists():
        return []
    return sorted(
        (p.relative_to(folder).as_posix(), p.stat().st_size, p.stat().st_mtime_ns)
        for p in folder.rglob("*")
        if p.is_file()
    )


def recorded(folder: Path) -> dict[str, Any] | None:
    """The `_stage.json` record of a completed stage output, or None."""
    record = folder / STAGE_FILE
    return json.loads(record.read_text()) if record.is_file() else None


def _upstream(folder: Path) -> str:
    record = recorded(folder)
    if record is None:
        raise FileNotFoundError(f"{folder} holds no completed stage output ({STAGE_FILE}); run its stage first")
    return record["fingerprint"]


def _run(
    stage: str,
    settings: Settings,
    outputs: Iterable[Path],
    inputs: dict[str, Any],
    work: Callable[[], StageResult],
) -> StageResult:
    """Run `work` unless every output folder records the same fingerprint; record it after."""
    outputs = list(outputs)
    fingerprint = _digest({"stage": stage, "version": __version__, "seed": settings.seed, **inputs})
    records = [recorded(folder) for folder in outputs]
    if all(r is not None and r["fingerprint"] == fingerprint for r in records):
        log.info("%s: inputs and params unchanged (%s); reusing the recorded result", stage, fingerprint)
        result = StageResult(**records[0]["result"])
        result.skipped = True
        return result
    started = time.perf_counter()
    result = work()
    result.fingerprint = fingerprint
    result.metrics.setdefault("wall_clock_s", round(time.perf_counter() - started, 3))
    for folder in outputs:
        write_text_atomic(folder / STAGE_FILE, json.dumps({"fingerprint": fingerprint, "result": asdict(result)},
                                                          indent=2, default=str) + "\n")
    return result


def ingest(settings: Settings) -> StageResult:
    """Walk the raw archive, write the manifest and the decoded landscape scans."""
    from veernet_pipeline.io.ingest import ingest_archive

    raw, out = settings.path("raw"), settings.path("ingested")

    def work() -> StageResult:
        counts = ingest_archive(raw, out, settings.ingest.extensions)
        return StageResult("ingest", "", counts=counts, paths={"manifest": str(out / "manifest.parquet")})

    return _run("ingest", settings, [out], {"raw": _listing(raw), "params": settings.section("ingest")}, work)


def validate(settings: Settings) -> StageResult:
    """Split the manifest into validated and quarantined scans with reason codes."""
    from veernet_pipeline.validation.validate import validate_manifest

    src, out = settings.path("ingested"), settings.path("validated")

    def work() -> StageResult:
        counts = validate_manifest(src, out, settings.validate_)
        return StageResult("validate", "", counts=_flat_counts(counts), paths={
            "validated": str(out / "validated.parquet"),
            "quarantine": str(out / "quarantine.parquet"),
            "report": str(out / "report.json"),
        })

    return _run("validate", settings, [out], {"ingested": _upstream(src), "params": settings.section("validate")}, work)


def synthesize(settings: Settings) -> StageResult:
    """Generate (or complete an interrupted run of) the binary and multiclass synthetic sets.

    The multiclass candidates are checked against the `validate` bounds, so those are inputs too,
    as are the archive's scan sizes when `synthesize.size_source` is archive.
    """
    from veernet_pipeline.synthetic.dataset import REJECTIONS_FILE, preview_sheet, synthesize_sets
    from veernet_pipeline.synthetic.sizes import archive_sizes, sizes_digest

    root = settings.path("synthetic")
    outputs = [root / "binary", root / "multiclass"]
    source = settings.paths.las_source
    las_identity = _listing(Path(source) if Path(source).is_absolute() else settings.root / source) if source else ""
    archive = settings.synthesize.size_source == "archive"
    sizes = sizes_digest(archive_sizes(settings.path("validated"))) if archive else ""

    def work() -> StageResult:
        # Until this run completes, its folders must not look like a completed (earlier) output.
        for folder in outputs:
            (folder / STAGE_FILE).unlink(missing_ok=True)
        counts = synthesize_sets(settings)
        paths = {name: str(root / name) for name in ("binary", "multiclass")}
        for name in ("binary", "multiclass"):
            sheet = root / name / "preview.png"
            preview_sheet(root / name, sheet)
            paths[f"{name}_preview"] = str(sheet)
            # A two-instance, 600-column sheet small enough to show inline in the Dagster UI.
            glance = root / name / "preview_glance.png"
            preview_sheet(root / name, glance, n=2, columns=600)
            paths[f"{name}_preview_glance"] = str(glance)
            paths[f"{name}_rejections"] = str(root / name / REJECTIONS_FILE)
        return StageResult("synthesize", "", counts=_flat_counts(counts), paths=paths)

    inputs = {"params": settings.section("synthesize"), "las_source": las_identity,
              "validate": settings.section("validate"), "archive_sizes": sizes}
    return _run("synthesize", settings, outputs, inputs, work)


def _flat_counts(counts: dict[str, Any]) -> dict[str, int]:
    flat: dict[str, int] = {}
    for key, value in counts.items():
        if isinstance(value, dict):
            flat.update({f"{key}.{k}": int(v) for k, v in value.items()})
        else:
            flat[key] = int(value)
    return flat


def _train(settings: Settings, stage: str, resume: bool) -> StageResult:
    from veernet_pipeline.tracking import store
    from veernet_pipeline.training.recipes import train_stage

    binary = stage == "train_binary"
    set_dir = settings.path("synthetic") / ("binary" if binary else "multiclass")
    out = settings.path("models") / ("binary" if binary else "multiclass")
    init = None if binary else settings.path("models") / "binary" / "weights.pt"
    params = settings.section(stage)
    inputs = {"set": _upstream(set_dir), "model": settings.section("model"), "params": params}
    if not binary:
        inputs["binary"] = _upstream(init.parent)

    def work() -> StageResult:
        run_key = _digest(inputs)
        _claim_checkpoints(out, run_key)
        tags = {"profile": settings.profile, "fingerprint": run_key}
        with store.stage_run(settings.root, stage, {"model": settings.section("model"), stage: params}, tags) as run:
            history = train_stage(settings, "binary" if binary else "multiclass", set_dir, out, init_weights=init,
                                  resume=resume, on_epoch_end=store.log_epoch)
            store.log_epoch(int(history["epochs"]), {"wall_clock_s": history["wall_clock_s"]})
            store.log_artifact(out / "history.json")
            version = store.log_model(out, BINARY_MODEL if binary else MULTICLASS_MODEL)
        final = {k: v for k, v in history["final"].items() if isinstance(v, int | float)}
        return StageResult(stage, "", counts={"epochs": int(history["epochs"])},
                           metrics={**final, "train_wall_clock_s": history["wall_clock_s"]},
                           paths={"weights": str(out / "weights.pt"), "mlflow_run": run.info.run_id,
                                  "model_version": version,
                                  "registered_model": BINARY_MODEL if binary else MULTICLASS_MODEL})

    return _run(stage, settings, [out], inputs, work)


def _claim_checkpoints(out: Path, run_key: str) -> None:
    """Make `out/checkpoints` this run's own, so `--resume` only ever continues the same inputs and params.

    Checkpoints of other inputs (params changed, a new binary model) are set aside under a new
    name, never deleted, and the run starts fresh.
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
    """Train the 3-class VeerNet from the binary weights; register it as `veernet-multiclass`."""
    return _train(settings, "train_multiclass", resume)


def evaluate(settings: Settings) -> StageResult:
    """Measure the multiclass model on held-out logs; move `champion` when the gate passes."""
    from veernet_pipeline.evaluation.evaluate import evaluate_model
    from veernet_pipeline.tracking import store

    model_dir = settings.path("models") / "multiclass"
    set_dir = settings.path("synthetic") / "multiclass"
    out = settings.path("evaluation")
    inputs = {"model": _upstream(model_dir), "set": _upstream(set_dir), "params": settings.section("evaluate"),
              "extract": settings.section("extract")}

    def work() -> StageResult:
        version = recorded(model_dir)["result"]["paths"]["model_version"]
        with store.stage_run(settings.root, "evaluate", {"evaluate": settings.section("evaluate"),
                                                         "extract": settings.section("extract")},
                             {"profile": settings.profile, "model_version": version}):
            metrics = evaluate_model(model_dir, set_dir, out, settings.evaluate, settings.extract)
            decision = gate(settings, metrics, version)
            store.log_epoch(0, {k: v for k, v in _flatten_metrics(metrics).items()})
            store.log_epoch(0, {"gate_passed": float(decision["promoted"])})
            for name in ("metrics.json", "per_log.csv", "overlay.png"):
                store.log_artifact(out / name)
            for picture in sorted((out / "overlays").glob("*.png")):
                store.log_artifact(picture, "overlays")
        return StageResult("evaluate", "", counts={"logs": int(metrics["n_logs"])},
                           metrics={**_flatten_metrics(metrics), "gate": decision},
                           paths={name: str(out / name)
                                  for name in ("metrics.json", "per_log.csv", "overlay.png", "overlays")})

    return _run("evaluate", settings, [out], inputs, work)


def _flatten_metrics(metrics: dict[str, Any], prefix: str = "") -> dict[str, float]:
    flat: dict[str, float] = {}
    for key, value in metrics.items():
        if isinstance(value, dict):
            flat.update(_flatten_metrics(value, f"{prefix}{key}."))
        elif isinstance(value, int | float) and value == value:  # drop NaN: MLflow rejects it in some stores
            flat[f"{prefix}{key}"] = float(value)
    return flat


def gate(settings: Settings, metrics: dict[str, Any], version: str) -> dict[str, Any]:
    """Promote `version` to champion when median R^2 meets the gate and is no worse than the champion's.

    A NaN median (a curve never found) never passes a set gate; an open gate (`min_median_r2: null`)
    promotes the newest model whatever its figures, and says so in the decision.
    """
    from veernet_pipeline.tracking import store

    median_r2 = float(metrics["median_r2"])
    threshold = settings.evaluate.gate.min_median_r2
    current = store.alias_version(settings.root, MULTICLASS_MODEL, CHAMPION)
    current_r2 = store.version_metric(settings.root, MULTICLASS_MODEL, current, "median_r2") if current else None
    if threshold is None:
        promoted = True
    else:
        promoted = median_r2 >= threshold and (current_r2 is None or math.isnan(current_r2) or median_r2 >= current_r2)
    store.tag_version(settings.root, MULTICLASS_MODEL, version, "median_r2", f"{median_r2:.6f}")
    store.tag_version(settings.root, MULTICLASS_MODEL, version, "gate", "open" if threshold is None else
                      f"min_median_r2={threshold}")
    if promoted:
        store.set_alias(settings.root, MULTICLASS_MODEL, CHAMPION, version)
    decision = {"promoted": promoted, "version": version, "median_r2": median_r2, "threshold": threshold,
                "previous_champion": current, "previous_median_r2": current_r2}
    log.info("gate: %s", decision)
    return decision


def infer(settings: Settings, model_uri: str | None = None) -> StageResult:
    """Digitise every validated scan with the chosen model (default `veernet-multiclass@champion`).

    Not fingerprint-skipped: the archive itself skips every scan whose output for the same
    (scan sha256, model version, extraction params) exists, so a re-run only does new work.
    """
    from veernet_pipeline.inference.archive import digitize_archive
    from veernet_pipeline.tracking import store

    uri = model_uri or settings.infer.model_uri
    out = settings.path("digitized")
    model_dir, version = store.download_model(settings.root, uri, settings.path("models") / "registry")
    # Outputs are keyed by model version and extraction params: changing either makes new LAS files
    # beside the old ones instead of skipping scans whose existing output no longer matches.
    label = f"v{version}-x{_digest(settings.section('extract'))[:8]}"
    started = time.perf_counter()
    counts = digitize_archive(settings.path("validated"), settings.path("ingested"), settings.path("raw"), model_dir,
                              label, out, settings.infer.tile_width, settings.infer.tile_overlap, settings.extract)
    return StageResult("infer", _digest({"model": uri, "version": version, "label": label}), counts=counts,
                       metrics={"wall_clock_s": round(time.perf_counter() - started, 3)},
                       paths={"index": str(out / "index.parquet"), "model_uri": uri, "model_version": version,
                              "output_label": label})
