"""A code change re-runs the stages whose code it touches, and everything downstream, under Dagster as under DVC.

The test works in a fresh clone on the `test` profile, with the clone's own code on PYTHONPATH:
one full run, then a docs edit (nothing re-runs), then an edit to the renderer that alters its
output (synthesize and everything after it re-run; ingest and validate do not). The same edits
under `dvc repro` continue the fresh-clone run of test_dvc_pipeline.py, which makes the full run once.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from dagster import AssetKey, DagsterInstance

from tests.conftest import clone_env, clone_project
from tests.edits import DOWNSTREAM_OF_RENDERER, edit_docs, edit_renderer


def _completed(clone: Path, *command: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(list(command), cwd=clone, env=env or clone_env(clone), capture_output=True, text=True,
                          timeout=900)
    assert done.returncode == 0, f"{' '.join(command)} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done


def _run(clone: Path, *command: str, env: dict[str, str] | None = None) -> str:
    """Run a command to success; its stdout and stderr together (DVC and Dagster log to either)."""
    done = _completed(clone, *command, env=env)
    return done.stdout + done.stderr


@pytest.fixture
def clone(tmp_path: Path) -> Path:
    project = clone_project(tmp_path / "clone")
    _run(project, "veernet", "sample")
    return project


def _latest(instance: DagsterInstance, key: str) -> dict[str, object]:
    event = instance.get_latest_materialization_event(AssetKey(key))
    assert event is not None, f"{key} never materialised"
    materialization = event.asset_materialization
    return {"metadata": {k: v.value for k, v in materialization.metadata.items()},
            "tags": dict(materialization.tags or {}), "run": event.run_id}


STAGE_ASSETS = {"ingest": "raw_scans", "validate": "validated_scans", "synthesize": "synthetic_multiclass",
                "train_binary": "binary_model", "train_multiclass": "multiclass_model", "evaluate": "model_evaluation",
                "infer": "digitized_logs", "review_queue": "review_queue"}
# The sample archive is flat: in Dagster it is the root tranche's partition (`io.tranches`).
STAGE_OUTPUTS = {"ingest": "data/tranches/_root/ingested", "validate": "data/tranches/_root/validated",
                 "synthesize": "data/synthetic/multiclass",
                 "train_binary": "data/models/binary", "train_multiclass": "data/models/multiclass",
                 "evaluate": "data/evaluation", "review_queue": "data/review"}


def test_dagster_reruns_exactly_the_stages_a_change_reaches(clone: Path, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "dagster_home"
    home.mkdir()
    env = {**clone_env(clone), "DAGSTER_HOME": str(home)}
    # One process for all steps: the default starts one per step, each importing torch and Dagster again.
    config = tmp_path / "in_process.yaml"
    config.write_text("execution:\n  config:\n    in_process: {}\n")
    materialize = ["dagster", "asset", "materialize", "-m", "assets.definitions", "--select", "*", "-c", str(config),
                   "--partition", "_root"]
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    # stdout alone, as `make demo` reads it: Dagster warns on stderr about the home's missing dagster.yaml.
    assert _completed(clone, sys.executable, "-m", "assets.partitions", env=env).stdout.split() == ["_root"]

    def reran() -> set[str]:
        _run(clone, *materialize, env=env)
        with DagsterInstance.get() as instance:
            latest = {stage: _latest(instance, key) for stage, key in STAGE_ASSETS.items()}
        for stage, event in latest.items():
            if stage != "infer":  # the archive is not cached as a whole; its record is per scan
                record = json.loads((clone / STAGE_OUTPUTS[stage] / "_stage.json").read_text())
                # Dagster's data version is the stage cache's: the two caches name one output alike.
                assert event["tags"]["dagster/data_version"] == record["data_version"] == event["metadata"][
                    "data_version"], stage
        return {stage for stage, event in latest.items() if not event["metadata"]["reused_previous_result"]}

    assert reran() == set(STAGE_ASSETS)
    edit_docs(clone)
    assert reran() == set()
    edit_renderer(clone)
    assert reran() == set(DOWNSTREAM_OF_RENDERER)
