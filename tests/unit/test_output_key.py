"""The archive's "already done" key: scan hash + sidecar hash + model name + version + extraction params.

A real project (the embedded sample archive, ingested and validated), a real MLflow store with two
registered models that share a version number, and the infer stage as every runner calls it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from tests.conftest import ingest_and_validate, sample_scans_project
from tests.nets import untrained_veernet
from veernet_pipeline import stages
from veernet_pipeline.config import Settings, load_settings
from veernet_pipeline.io.las import read_curves
from veernet_pipeline.model.veernet import save_model
from veernet_pipeline.tracking import store
from veernet_pipeline.tracking.store import BINARY_MODEL, MULTICLASS_MODEL


@pytest.fixture()
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Settings:
    """The sample archive validated, and `veernet-binary` / `veernet-multiclass` each registered as version 1."""
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    settings = sample_scans_project(tmp_path / "project")
    for name, classes in ((BINARY_MODEL, 2), (MULTICLASS_MODEL, 3)):
        folder = tmp_path / name
        save_model(folder, untrained_veernet(settings, classes), settings.model, classes)
        with store.stage_run(settings.root, "train", {}, {}):
            assert store.log_model(folder, name) == "1"
    return settings


def _index(settings: Settings) -> pd.DataFrame:
    return pd.read_parquet(settings.path("digitized") / "index.parquet").set_index("path")


def test_two_models_with_the_same_version_number_do_not_collide(project: Settings) -> None:
    binary = stages.run("infer", project, model_uri=f"models:/{BINARY_MODEL}/1")
    binary_index = _index(project)
    assert binary.counts["written"] == binary.counts["validated"] >= 3
    multiclass = stages.run("infer", project, model_uri=f"models:/{MULTICLASS_MODEL}/1")
    # Keyed on the version number alone, every scan would be `skipped` with the binary model's LAS.
    assert multiclass.counts["written"] == multiclass.counts["validated"]
    multiclass_index = _index(project)
    assert set(binary_index["las"]).isdisjoint(multiclass_index["las"])
    assert all(f"/{BINARY_MODEL}-v1-" in p for p in binary_index["las"])
    assert all(f"/{MULTICLASS_MODEL}-v1-" in p for p in multiclass_index["las"])
    for rel in (*binary_index["las"], *multiclass_index["las"]):
        assert (project.path("digitized") / rel).is_file()


def test_a_corrected_sidecar_is_applied_beside_the_stale_output(project: Settings) -> None:
    uri = f"models:/{MULTICLASS_MODEL}/1"
    stages.run("infer", project, model_uri=uri)
    before = _index(project)
    calibrated = before[before["calibrated"]].index[0]
    sidecar = project.path("raw") / f"{calibrated}.calib.json"
    stale_las = project.path("digitized") / before.loc[calibrated, "las"]
    stale_text = stale_las.read_text()
    # The operator corrects the depth range of one scan's sidecar; ingest and validate see the new file.
    document = json.loads(sidecar.read_text())
    document["depth"] = {**document["depth"], "top": 5000.0, "bottom": 5100.0}
    sidecar.write_text(json.dumps(document))
    ingest_and_validate(load_settings(project.root / "params.yaml", profile="test"))

    result = stages.run("infer", project, model_uri=uri)
    after = _index(project)
    assert result.counts["written"] == 1 and result.counts["skipped"] == result.counts["validated"] - 1
    assert after.loc[calibrated, "status"] == "written"
    fresh_las = project.path("digitized") / after.loc[calibrated, "las"]
    assert fresh_las != stale_las and fresh_las.parent.parent == stale_las.parent.parent
    depth, _, _ = read_curves(fresh_las)
    assert 5000.0 < depth[0] < depth[-1] < 5100.0
    # The stale output stays as it was (nothing overwritten in place); every other scan is skipped.
    assert stale_las.read_text() == stale_text
    others = after.drop(index=calibrated)
    assert (others["status"] == "skipped").all() and (others["las"] == before.drop(index=calibrated)["las"]).all()
