"""The whole asset graph, materialised in-process on the `test` profile, checks included."""

from __future__ import annotations

import json
from pathlib import Path

import lasio
import pandas as pd
import pytest
from dagster import DagsterInstance, materialize

from assets.checks import CHECKS
from assets.definitions import ASSETS, defs
from assets.resources import PipelineResource
from veernet_pipeline.config import Settings


@pytest.fixture(scope="module")
def materialized(sample_project: Settings) -> tuple[Settings, object]:
    with DagsterInstance.ephemeral() as instance:
        result = materialize([*ASSETS, *CHECKS], resources={"pipeline": PipelineResource()}, instance=instance)
    return sample_project, result


def test_every_asset_materialises(materialized: tuple[Settings, object]) -> None:
    settings, result = materialized
    assert result.success
    keys = {m.asset_key.to_user_string() for m in result.get_asset_materialization_events()
            for m in [m.event_specific_data.materialization]}
    assert keys == {k.to_user_string() for k in defs.resolve_asset_graph().materializable_asset_keys}


def test_checks_report_counts(materialized: tuple[Settings, object]) -> None:
    settings, result = materialized
    checks = {e.asset_check_key.name: e for e in result.get_asset_check_evaluations()}
    assert set(checks) == {spec.name for check in CHECKS for spec in check.check_specs}
    # The sample holds broken scans by design: the accounting and schema checks pass, the quarantine warns.
    for name in ("scans_accounted_for", "validated_scans_schema", "validated_scans_expectations",
                 "binary_model_sanity", "multiclass_model_sanity", "every_scan_digitized"):
        assert checks[name].passed, name
    assert not checks["quarantine_is_empty"].passed
    assert checks["quarantine_is_empty"].metadata["quarantined"].value >= 2


def test_validated_scans_link_their_data_docs(materialized: tuple[Settings, object]) -> None:
    settings, result = materialized
    (event,) = [m for m in result.get_asset_materialization_events()
                if m.event_specific_data.materialization.asset_key.to_user_string() == "validated_scans"]
    docs = event.event_specific_data.materialization.metadata["data_docs"]
    assert docs.path == str(settings.path("validated") / "data_docs" / "index.html")
    assert "veernet_scan_layout" in Path(docs.path).read_text()


def test_one_las_per_valid_scan_and_a_record_per_bad_one(materialized: tuple[Settings, object]) -> None:
    settings, _ = materialized
    validated = pd.read_parquet(settings.path("validated") / "validated.parquet")
    quarantined = pd.read_parquet(settings.path("validated") / "quarantine.parquet")
    index = pd.read_parquet(settings.path("digitized") / "index.parquet")
    assert len(validated) >= 3
    assert set(quarantined["reason_code"]) >= {"truncated", "height_out_of_range"}
    assert (index["status"] == "written").sum() == len(validated)
    for las_path in index["las"]:
        las = lasio.read(settings.path("digitized") / las_path)
        assert las.curves[0].mnemonic == "DEPT" and len(las.curves) >= 3


def test_evaluation_and_registry(materialized: tuple[Settings, object]) -> None:
    from veernet_pipeline.tracking import store

    settings, _ = materialized
    metrics = json.loads((settings.path("evaluation") / "metrics.json").read_text())
    assert {"median_r2", "median_mae"} <= set(metrics)
    assert store.alias_version(settings.root, "veernet-multiclass", "champion") is not None
    assert store.alias_version(settings.root, "veernet-binary", "champion") is None


def test_rematerialising_reuses_every_stage(materialized: tuple[Settings, object]) -> None:
    settings, _ = materialized
    with DagsterInstance.ephemeral() as instance:
        again = materialize(ASSETS, resources={"pipeline": PipelineResource()}, instance=instance)
    assert again.success
    reused = {m.asset_key.to_user_string(): m.metadata.get("reused_previous_result")
              for m in [e.event_specific_data.materialization for e in again.get_asset_materialization_events()]}
    for key in ("raw_scans", "validated_scans", "synthetic_binary", "binary_model", "multiclass_model",
                "model_evaluation"):
        assert reused[key].value is True, key
    index = pd.read_parquet(settings.path("digitized") / "index.parquet")
    assert set(index["status"]) == {"skipped"}


def test_veernet_digitize_one_scan_with_and_without_sidecar(materialized: tuple[Settings, object],
                                                            tmp_path: Path) -> None:
    """`veernet digitize` on sample scans (rendered apart from the training sets) with the champion model."""
    from veernet_pipeline.cli import main

    settings, _ = materialized
    raw = settings.path("raw")
    calibrated = raw / "sample_00_zlib.tif"
    assert (raw / "sample_00_zlib.tif.calib.json").is_file()
    assert main(["digitize", str(calibrated), "--out", str(tmp_path / "a.las"), "--qc", str(tmp_path / "a.png")]) == 0
    las = lasio.read(tmp_path / "a.las")
    sidecar = json.loads((raw / "sample_00_zlib.tif.calib.json").read_text())
    mnemonics = [c["mnemonic"] for c in sidecar["curves"]]
    assert [c.mnemonic for c in las.curves] == ["DEPT", mnemonics[0], f"{mnemonics[0]}_CONF", mnemonics[1],
                                                f"{mnemonics[1]}_CONF"]
    assert las.index[0] > sidecar["depth"]["top"] and (tmp_path / "a.png").stat().st_size > 0

    bare = raw / "sample_03_lzw_nocalib.tif"
    assert not (raw / "sample_03_lzw_nocalib.tif.calib.json").exists()
    model_dir = settings.path("models") / "multiclass"
    assert main(["digitize", str(bare), "--out", str(tmp_path / "b.las"), "--model", str(model_dir)]) == 0
    las = lasio.read(tmp_path / "b.las")
    assert "UNCALIBRATED" in las.other and las.index[0] == 0.0


def test_synthetic_sets_show_a_contact_sheet_inline(materialized: tuple[Settings, object]) -> None:
    from dagster import MarkdownMetadataValue

    _, result = materialized
    events = {e.event_specific_data.materialization.asset_key.to_user_string(): e.event_specific_data.materialization
              for e in result.get_asset_materialization_events()}
    for name in ("binary", "multiclass"):
        glance = events[f"synthetic_{name}"].metadata[f"{name}_preview_glance"]
        assert isinstance(glance, MarkdownMetadataValue) and "data:image/png;base64," in glance.value
