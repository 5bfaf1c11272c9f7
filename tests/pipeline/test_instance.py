"""The Dagster instance `make demo` and `make ui` use: runs queue, and at most a few execute at once."""

from __future__ import annotations

import logging
import subprocess
from pathlib import Path

import yaml
from dagster import DagsterInstance, asset, materialize
from dagster._core.run_coordinator import QueuedRunCoordinator

from tests.conftest import REPO


def test_make_installs_a_run_queue_with_a_concurrency_limit(tmp_path: Path) -> None:
    home = tmp_path / "dagster_home"
    # The Makefile's own rule puts the template in the home (as `make demo` / `make ui` do before starting).
    subprocess.run(["make", "-s", f"DAGSTER_HOME={home}", f"{home}/dagster.yaml"], cwd=REPO, check=True)
    template = yaml.safe_load((REPO / "deploy" / "dagster.yaml").read_text())
    limit = template["run_coordinator"]["config"]["max_concurrent_runs"]
    assert 1 <= limit <= 4, "a limit above a few runs defeats the point on a 2-4 core machine"
    with DagsterInstance.from_config(str(home)) as instance:
        assert isinstance(instance.run_coordinator, QueuedRunCoordinator)
        assert instance.get_concurrency_config().run_queue_config.max_concurrent_runs == limit
    # Without the file, Dagster's default instance has no such limit: the check above can fail.
    bare = tmp_path / "bare"
    bare.mkdir()
    with DagsterInstance.from_config(str(bare)) as instance:
        assert instance.get_concurrency_config().run_queue_config.max_concurrent_runs != limit


@asset
def logs_a_line() -> None:
    logging.getLogger("veernet_pipeline.inference.readers").info("reading 3 scans in 2 workers")


def _logged(home: Path) -> list[str]:
    """The messages of a run of `logs_a_line` on the instance in `home`."""
    with DagsterInstance.from_config(str(home)) as instance:
        result = materialize([logs_a_line], instance=instance)
        return [record.user_message for record in instance.all_logs(result.run_id)]


def test_the_librarys_log_lines_reach_the_run_page(tmp_path: Path) -> None:
    home = tmp_path / "dagster_home"
    subprocess.run(["make", "-s", f"DAGSTER_HOME={home}", f"{home}/dagster.yaml"], cwd=REPO, check=True)
    assert any(m.startswith("reading 3 scans in 2 workers") for m in _logged(home))
    for template in ("dagster.yaml", "dagster-postgres.yaml"):  # the shared deployment's the same
        assert yaml.safe_load((REPO / "deploy" / template).read_text())["python_logs"] == {
            "managed_python_loggers": ["veernet_pipeline"], "python_log_level": "INFO"}
    bare = tmp_path / "bare"  # Dagster's default instance drops them: the check above can fail
    bare.mkdir()
    assert not any(m.startswith("reading 3 scans in 2 workers") for m in _logged(bare))
