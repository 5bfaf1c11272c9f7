"""The model, gate and digitising asset checks pass on real outputs and fail on real faults.

Models are real VeerNets saved with `save_model`, the gate decision comes from `tracking.gate` on a
real MLflow store, and the digitised index from `digitize_validated` run on the sample archive.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import tifffile
import torch
from dagster import AssetChecksDefinition

from assets.checks import binary_model_sanity, champion_gate_passed, every_scan_digitized, multiclass_model_sanity
from tests.conftest import (
    SAMPLE_VALID,
    copy_project,
    ingest_and_validate,
    make_project,
    run_check,
    sample_scans_project,
)
from veernet_pipeline.config import Settings, load_settings
from veernet_pipeline.inference.archive import digitize_validated
from veernet_pipeline.io.classes import NUM_CLASSES
from veernet_pipeline.io.tiff import write_tiff
from veernet_pipeline.model.veernet import build_model, save_model
from veernet_pipeline.stages.cache import STAGE_FILE, StageResult
from veernet_pipeline.tracking import store
from veernet_pipeline.tracking.gate import gate
from veernet_pipeline.tracking.store import CHAMPION, MULTICLASS_MODEL

LABEL = "v1-test"


@pytest.fixture()
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Settings:
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    return load_settings(make_project(tmp_path / "project"), profile="test")


def _save_model(settings: Settings, folder: Path, num_classes: int, nan_head: bool = False) -> None:
    torch.manual_seed(settings.seed)
    model = build_model(settings.model, num_classes)
    if nan_head:
        with torch.no_grad():
            model.head.weight.fill_(float("nan"))
    save_model(folder, model, settings.model, num_classes)


@pytest.mark.parametrize(("check", "which", "num_classes", "outputs"),
                         [(binary_model_sanity, "binary", 1, "curve"),
                          (multiclass_model_sanity, "multiclass", 7,
                           "background, other_ink, solid, dashed, dotted, dash_dot, long_dash")])
def test_model_sanity_passes_on_saved_weights_and_fails_on_nan_weights(
        project: Settings, check: AssetChecksDefinition, which: str, num_classes: int, outputs: str) -> None:
    folder = project.path("models") / which
    _save_model(project, folder, num_classes)
    passed, _, description, metadata = run_check(check, project)
    assert passed and metadata["finite"] is True
    assert metadata["output_shape"] == [1, num_classes, 64, 96]
    assert description == f"output (1, {num_classes}, 64, 96) for input (1, 1, 64, 96), {num_classes} expected " \
                          f"({outputs})"

    _save_model(project, folder, num_classes, nan_head=True)
    passed, severity, _, metadata = run_check(check, project)
    assert not passed and severity == "ERROR" and metadata["finite"] is False


def test_multiclass_sanity_fails_on_a_binary_model_in_its_place(project: Settings) -> None:
    _save_model(project, project.path("models") / "multiclass", 1)
    passed, severity, description, metadata = run_check(multiclass_model_sanity, project)
    assert not passed and severity == "ERROR" and metadata["finite"] is True
    assert description.startswith("output (1, 1, 64, 96) for input (1, 1, 64, 96), 7 expected")


def _record_evaluation(settings: Settings, decision: dict, interval: tuple[float, float] | None = None) -> None:
    """Write the evaluate stage's record as `stages.cache.run_cached` does: the gate decision (and the gate
    figure's interval, when given) under result.metrics."""
    metrics: dict = {"gate": decision}
    if interval is not None:
        metrics["median_r2_low"], metrics["median_r2_high"] = interval
    result = StageResult("evaluate", "fingerprint", "data version", counts={"logs": 1}, metrics=metrics)
    folder = settings.path("evaluation")
    folder.mkdir(parents=True, exist_ok=True)
    (folder / STAGE_FILE).write_text(json.dumps({"fingerprint": "fingerprint", "data_version": "data version",
                                                 "result": asdict(result)}))


def test_champion_gate_passes_when_promoted_and_warns_when_not(project: Settings, tmp_path: Path) -> None:
    passed, severity, description, _ = run_check(champion_gate_passed, project)
    assert not passed and severity == "WARN" and description == "no evaluation recorded"

    strict = load_settings(project.root / "params.yaml", profile="test",
                           overrides=["evaluate.gate.min_median_r2=0.5"])
    _save_model(strict, tmp_path / "model", NUM_CLASSES)
    versions = []
    for _ in range(2):
        with store.stage_run(strict.root, "train_multiclass", {}, {}):
            versions.append(store.log_model(tmp_path / "model", MULTICLASS_MODEL))

    threshold = strict.evaluate.gate.min_median_r2
    _record_evaluation(strict, gate(strict.root, MULTICLASS_MODEL, versions[0], 0.8, threshold))
    assert store.alias_version(strict.root, MULTICLASS_MODEL, CHAMPION) == versions[0]
    passed, _, description, metadata = run_check(champion_gate_passed, strict)
    assert passed and description == "median R^2 0.8000 against gate 0.5"
    assert metadata["promoted"] is True and metadata["version"] == versions[0]

    _record_evaluation(strict, gate(strict.root, MULTICLASS_MODEL, versions[1], 0.4, threshold))
    assert store.alias_version(strict.root, MULTICLASS_MODEL, CHAMPION) == versions[0]
    passed, severity, description, metadata = run_check(champion_gate_passed, strict)
    assert not passed and severity == "WARN" and description == "median R^2 0.4000 against gate 0.5"
    assert metadata["promoted"] is False and metadata["previous_champion"] == versions[0]

    # An evaluation that recorded its bootstrap interval shows it, in the text and the metadata.
    _record_evaluation(strict, gate(strict.root, MULTICLASS_MODEL, versions[1], 0.4, threshold), (0.25, 0.55))
    _, _, description, metadata = run_check(champion_gate_passed, strict)
    assert description == "median R^2 0.4000 (90 % interval 0.2500 to 0.5500) against gate 0.5"
    assert metadata["median_r2_low"] == 0.25 and metadata["median_r2_high"] == 0.55


def _digitize(settings: Settings) -> dict[str, int]:
    return digitize_validated(settings.path("validated"), settings.path("ingested"), settings.path("raw"),
                            settings.path("models") / "multiclass", LABEL, settings.path("digitized"),
                            settings.infer, settings.extract)


@pytest.fixture(scope="module")
def digitized(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    settings = sample_scans_project(tmp_path_factory.mktemp("digitized") / "project")
    _save_model(settings, settings.path("models") / "multiclass", NUM_CLASSES)
    assert _digitize(settings) == {"validated": 4, "written": 4, "skipped": 0, "failed": 0}
    return settings


def _index(settings: Settings) -> pd.DataFrame:
    return pd.read_parquet(settings.path("digitized") / "index.parquet").set_index("path", drop=False)


def test_every_scan_digitized_passes_on_a_complete_run(digitized: Settings) -> None:
    passed, _, description, metadata = run_check(every_scan_digitized, digitized)
    assert passed and description == '4 validated -> {"written": 4}, every LAS on disk'
    assert metadata == {"validated": 4, "by_status": {"written": 4}}


def test_every_scan_digitized_fails_on_a_scan_validated_after_the_run(digitized: Settings, tmp_path: Path) -> None:
    project = copy_project(digitized, tmp_path / "project")
    first = project.path("raw") / SAMPLE_VALID[0]
    # The first scan mirrored along depth: other bytes, the same layout, so validation accepts it.
    write_tiff(project.path("raw") / "late.tif", np.ascontiguousarray(tifffile.imread(first)[:, ::-1]))
    ingest_and_validate(project)
    passed, severity, description, metadata = run_check(every_scan_digitized, project)
    assert not passed and severity == "ERROR"
    assert metadata["validated_scans_not_in_the_index"] == ["late.tif"]
    assert description.startswith("validated scans not in the index: 1; materialise digitized_logs again")


def test_every_scan_digitized_fails_on_a_failed_scan(digitized: Settings, tmp_path: Path) -> None:
    project = copy_project(digitized, tmp_path / "project")
    validated = pd.read_parquet(project.path("validated") / "validated.parquet").set_index("path")
    (project.path("ingested") / validated.at[SAMPLE_VALID[1], "decoded"]).unlink()
    index = _index(project)
    (project.path("digitized") / index.at[SAMPLE_VALID[1], "las"]).unlink()
    # Its LAS gone, the scan is tried again, and its decoded file is gone too.
    assert _digitize(project) == {"validated": 4, "written": 0, "skipped": 3, "failed": 1}
    passed, _, _, metadata = run_check(every_scan_digitized, project)
    assert not passed and metadata["by_status"] == {"skipped": 3, "failed": 1}
    [failure] = metadata["scans_failed"]
    assert failure.startswith(f"{SAMPLE_VALID[1]}: ScanReadError: ")


def test_every_scan_digitized_fails_on_a_las_removed_since(digitized: Settings, tmp_path: Path) -> None:
    project = copy_project(digitized, tmp_path / "project")
    las = _index(project).at[SAMPLE_VALID[2], "las"]
    (project.path("digitized") / las).unlink()
    passed, _, _, metadata = run_check(every_scan_digitized, project)
    assert not passed and metadata["las_files_missing"] == [f"{SAMPLE_VALID[2]}: {las}"]


def test_every_scan_digitized_fails_when_index_and_validated_disagree(digitized: Settings, tmp_path: Path) -> None:
    project = copy_project(digitized, tmp_path / "project")
    index_path = project.path("digitized") / "index.parquet"
    index = pd.read_parquet(index_path)
    pd.concat([index, index.iloc[:1]], ignore_index=True).to_parquet(index_path, index=False)
    validated_path = project.path("validated") / "validated.parquet"
    validated = pd.read_parquet(validated_path)
    validated[validated["path"] != SAMPLE_VALID[3]].to_parquet(validated_path, index=False)
    passed, _, _, metadata = run_check(every_scan_digitized, project)
    assert not passed
    assert metadata["scans_indexed_twice"] == [SAMPLE_VALID[0]]
    assert metadata["indexed_scans_not_validated"] == [SAMPLE_VALID[3]]
