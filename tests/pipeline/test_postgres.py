"""deploy/dagster-postgres.yaml against a real PostgreSQL server: a project asset's run and events land in its tables.

The server comes from pgserver's wheel (tests/postgres.py), so `make test` needs no system package.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from dagster import DagsterEventType, DagsterInstance, materialize

from assets.resources import PipelineResource
from assets.scans import raw_scans
from tests.conftest import REPO, make_project
from tests.postgres import Postgres, running_postgres
from veernet_pipeline.config import Settings, load_settings


@pytest.fixture(scope="module")
def postgres() -> Iterator[Postgres]:
    with running_postgres() as server:
        yield server


@pytest.fixture
def dagster_home(tmp_path: Path, postgres: Postgres, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A DAGSTER_HOME holding the template as an operator would copy it, its variables pointing at the server."""
    home = tmp_path / "dagster_home"
    home.mkdir()
    shutil.copy(REPO / "deploy" / "dagster-postgres.yaml", home / "dagster.yaml")
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    for name, value in postgres.env().items():
        monkeypatch.setenv(name, value)
    return home


@pytest.fixture(scope="module")
def tiny_archive(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    """A `test` project whose archive holds the embedded sample (6 scans): enough for `raw_scans`."""
    from veernet_pipeline.synthetic.sample import build_sample_archive

    settings = load_settings(make_project(tmp_path_factory.mktemp("project")), profile="test")
    build_sample_archive(settings.path("raw"), settings)
    return settings


def test_a_run_and_its_events_are_rows_in_postgres(dagster_home: Path, postgres: Postgres,
                                                   tiny_archive: Settings) -> None:
    from dagster._core.run_coordinator import QueuedRunCoordinator
    from dagster_postgres import PostgresEventLogStorage, PostgresRunStorage

    pipeline = PipelineResource(params_path=str(tiny_archive.root / "params.yaml"), profile="test")
    with DagsterInstance.get() as instance:
        assert isinstance(instance.run_storage, PostgresRunStorage)
        assert isinstance(instance.event_log_storage, PostgresEventLogStorage)
        assert isinstance(instance.run_coordinator, QueuedRunCoordinator)
        assert instance.run_coordinator.get_run_queue_config().max_concurrent_runs == 2
        result = materialize([raw_scans], resources={"pipeline": pipeline}, instance=instance)
    assert result.success

    with postgres.connect() as conn, conn.cursor() as cursor:
        cursor.execute("SELECT status FROM runs WHERE run_id = %s", (result.run_id,))
        assert cursor.fetchall() == [("SUCCESS",)]
        cursor.execute("SELECT dagster_event_type, asset_key FROM event_logs WHERE run_id = %s", (result.run_id,))
        events = cursor.fetchall()
    conn.close()
    types = {event_type for event_type, _ in events}
    # Dagster stores run-level events under their old names (PIPELINE_START for RUN_START).
    expected = (DagsterEventType.RUN_START, DagsterEventType.STEP_START, DagsterEventType.ASSET_MATERIALIZATION,
                DagsterEventType.STEP_SUCCESS, DagsterEventType.RUN_SUCCESS)
    assert {event_type.value for event_type in expected} <= types
    assert [key for event_type, key in events if event_type == "ASSET_MATERIALIZATION"] == ['["raw_scans"]']
    # Nothing went to the embedded SQLite storage a DAGSTER_HOME without dagster.yaml would use.
    assert not list(dagster_home.rglob("*.db"))

    # A second instance (the webserver, another machine) reads the run and the asset back from the same database.
    with DagsterInstance.get() as other:
        assert other.get_run_by_id(result.run_id).is_success
        assert other.get_latest_materialization_event(raw_scans.key).run_id == result.run_id


def test_a_wrong_password_is_refused(dagster_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Dagster retries 5 times (about 12 s, logging the server's reason each time), then gives up."""
    from dagster_postgres.utils import DagsterPostgresException

    monkeypatch.setenv("DAGSTER_PG_PASSWORD", "not-the-password")
    with pytest.raises(DagsterPostgresException, match="too many retries for DB connection") as caught:
        DagsterInstance.get()
    assert 'password authentication failed for user "dagster"' in str(caught.value.__cause__)


def test_an_unset_variable_is_named(dagster_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DAGSTER_PG_PASSWORD")
    with pytest.raises(Exception, match="DAGSTER_PG_PASSWORD"):
        DagsterInstance.get()
