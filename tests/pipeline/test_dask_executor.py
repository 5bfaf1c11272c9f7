"""One tranche of the archive job run through a real local Dask cluster (a scheduler and 2 worker processes).

The run is launched as an operator would from the shell (`dagster job execute` of
`digitize_archive_dask` with the scheduler's address in the run config) against a persistent
instance; the cluster's task stream shows which worker ran which step.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import dask
import lasio
import pandas as pd
import pytest
import yaml
from dagster import AssetKey, DagsterInstance
from distributed import Client, LocalCluster, get_task_stream

from assets.partitions import register_tranches
from tests.archive import BROKEN_TRANCHE, TRANCHE_OF, register_champion, tranche_project
from tests.conftest import REPO
from veernet_pipeline.io.tranches import archive_dirs

ARCHIVE_ASSETS = ["raw_scans", "validated_scans", "quarantined_scans", "digitized_logs"]
# Steps of the job: the multi-asset `validation` is one step for two assets, and each asset check is a step.
ARCHIVE_STEPS = {"raw_scans", "validation", "digitized_logs", "validated_scans_scans_accounted_for",
                 "validated_scans_validated_scans_schema", "validated_scans_validated_scans_expectations",
                 "quarantined_scans_quarantine_is_empty", "digitized_logs_every_scan_digitized"}
TRANCHE = BROKEN_TRANCHE  # two valid scans and two broken ones: both outcomes go through the workers


@pytest.fixture
def cluster(monkeypatch: pytest.MonkeyPatch) -> LocalCluster:
    # Worker processes import the code location from the repo, one torch thread each (2 cores for 2 workers).
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])))
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    # Ingest reads files in worker processes of its own: a Dask worker must not be a daemon to start them
    # (the runbook's `DASK_DISTRIBUTED__WORKER__DAEMON=False dask worker ...`).
    monkeypatch.setitem(dask.config.config["distributed"]["worker"], "daemon", False)
    for name in ("VEERNET_PARAMS", "VEERNET_PROFILE", "MLFLOW_TRACKING_URI"):  # the run config names the project
        monkeypatch.delenv(name, raising=False)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address=None) as local:
        yield local


def test_a_tranche_runs_on_a_local_dask_cluster(cluster: LocalCluster, tmp_path: Path) -> None:
    settings = tranche_project(tmp_path / "project")
    version = register_champion(settings)
    home = tmp_path / "dagster_home"
    home.mkdir()
    with DagsterInstance.from_config(str(home)) as instance:
        register_tranches(instance, settings)
    config = tmp_path / "dask.yaml"
    config.write_text(yaml.safe_dump({
        "execution": {"config": {"cluster": {"existing": {"address": cluster.scheduler_address}}}},
        "resources": {"pipeline": {"config": {"params_path": str(settings.root / "params.yaml")}}},
    }))
    env = {**os.environ, "DAGSTER_HOME": str(home), "PATH": f"{Path(sys.executable).parent}{os.pathsep}"
           f"{os.environ['PATH']}"}
    with Client(cluster) as client, get_task_stream(client) as stream:
        done = subprocess.run(["dagster", "job", "execute", "-m", "assets.definitions", "-j", "digitize_archive_dask",
                               "-c", str(config), "--tags", json.dumps({"dagster/partition": TRANCHE})],
                              cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
        tasks = stream.data

    # Every step ran as a task of this cluster (named `<job>.<step>`), and on its worker processes.
    ran = {task["key"].split(".", 1)[1] for task in tasks if task["key"].startswith("digitize_archive_dask.")}
    assert ran == ARCHIVE_STEPS
    assert {task["worker"] for task in tasks} <= set(cluster.scheduler_info["workers"])

    with DagsterInstance.from_config(str(home)) as instance:
        for key in ARCHIVE_ASSETS:
            assert instance.get_materialized_partitions(AssetKey(key)) == {TRANCHE}, key
        event = instance.get_latest_materialization_event(AssetKey("digitized_logs"))
        metadata = {k: v.value for k, v in event.asset_materialization.metadata.items()}
    valid = sorted(name for name, tranche in TRANCHE_OF.items() if tranche == TRANCHE)
    assert metadata["tranche"] == TRANCHE and metadata["written"] == len(valid) and metadata["failed"] == 0

    # The tranche's own scans, and only they, were digitised with the registered champion.
    index = pd.read_parquet(archive_dirs(settings, TRANCHE).index / "index.parquet")
    assert sorted(Path(p).name for p in index["path"]) == valid
    assert set(index["status"]) == {"written"}
    for las in index["las"]:
        assert f"-v{version}-" in las
        assert lasio.read(settings.path("digitized") / las).curves[0].mnemonic == "DEPT"
    assert not (settings.path("tranches") / "south").exists()
