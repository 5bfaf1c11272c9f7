"""Failures in real in-process Dagster runs: an operator's error tops the run page with what to do, and is
not retried; transient failures are retried with backoff; `veernet promote` gets a CPU-trained model used."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from dagster import Backoff, DagsterEventType, DagsterInstance, materialize
from mlflow import MlflowClient

from assets.definitions import defs
from assets.digitized import digitized_logs
from assets.resources import PipelineResource
from assets.scans import raw_scans
from tests.conftest import make_project, sample_scans_project
from tests.nets import untrained_veernet
from veernet_pipeline.cli import main
from veernet_pipeline.config import Settings
from veernet_pipeline.errors import EmptyArchive, MissingModel, NoChampion
from veernet_pipeline.model.veernet import save_model
from veernet_pipeline.tracking import store
from veernet_pipeline.tracking.store import CHAMPION, MULTICLASS_MODEL


def test_the_archive_step_retries_with_exponential_backoff() -> None:
    policy = defs.resolve_assets_def("digitized_logs").op.retry_policy
    assert policy is not None and policy.max_retries == 3
    assert policy.delay == 30 and policy.backoff == Backoff.EXPONENTIAL


def test_the_schedule_shows_as_nightly_archive() -> None:
    assert [s.name for s in defs.schedules] == ["nightly_archive"]
    assert defs.get_schedule_def("nightly_archive").job_name == "digitize_archive"


def _failed_run(assets: list, params: Path, **resource: object) -> tuple[str, list[DagsterEventType]]:
    """Materialise `assets` on a project; the run failure's top message and the step events' types."""
    pipeline = PipelineResource(params_path=str(params), profile="test", **resource)
    with DagsterInstance.ephemeral() as instance:
        result = materialize(assets, resources={"pipeline": pipeline}, instance=instance, raise_on_error=False)
    assert not result.success
    (failure,) = [e for e in result.all_events if e.event_type == DagsterEventType.RUN_FAILURE]
    types = [e.event_type for e in result.all_events if e.is_step_event]
    return failure.event_specific_data.error.message, types


@pytest.fixture()
def no_champion(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Settings:
    """The sample archive validated; `veernet-multiclass` version 1 registered, never promoted."""
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    settings = sample_scans_project(tmp_path / "project")
    save_model(tmp_path / "model", untrained_veernet(settings, 3), settings.model, 3)
    with store.stage_run(settings.root, "train_multiclass", {}, {}):
        store.log_model(tmp_path / "model", MULTICLASS_MODEL)
    return settings


def test_no_champion_fails_with_what_to_do_then_promote_makes_the_archive_work(no_champion: Settings) -> None:
    message, steps = _failed_run([digitized_logs], no_champion.root / "params.yaml")
    # The run's own failure message (the run page's top line) is the advice, not DagsterExecutionStepExecutionError.
    assert message.startswith(f"dagster._core.definitions.events.Failure: {NoChampion.advice}")
    assert "Cause: models:/veernet-multiclass@champion: alias 'champion' is not set" in message
    assert "DagsterExecutionStepExecutionError" not in message
    assert steps.count(DagsterEventType.STEP_FAILURE) == 1 and DagsterEventType.STEP_UP_FOR_RETRY not in steps

    params = str(no_champion.root / "params.yaml")
    assert main(["--params", params, "--profile", "test", "promote", "--version", "1", "--by", "ops-tester",
                 "--reason", "cpu recipe: curve A meets the bar, B misses it by 0.05; approved for tranche 7"]) == 0
    held = MlflowClient(store.tracking_uri(no_champion.root)).get_model_version_by_alias(MULTICLASS_MODEL, CHAMPION)
    assert str(held.version) == "1" and held.tags["promoted_by"] == "ops-tester" and held.tags["gate"] == "manual"
    assert held.tags["promotion_reason"].startswith("cpu recipe") and held.tags["promoted_at"]

    pipeline = PipelineResource(params_path=params, profile="test")
    with DagsterInstance.ephemeral() as instance:
        assert materialize([digitized_logs], resources={"pipeline": pipeline}, instance=instance).success
    index = pd.read_parquet(no_champion.path("digitized") / "index.parquet")
    assert (index["status"] == "written").all() and len(index) >= 3


def test_promote_refuses_an_unregistered_version_and_an_empty_reason(no_champion: Settings) -> None:
    params = str(no_champion.root / "params.yaml")
    with pytest.raises(MissingModel, match="models:/veernet-multiclass/7 is not registered"):
        main(["--params", params, "promote", "--version", "7", "--reason", "typo"])
    with pytest.raises(ValueError, match="needs a reason"):
        main(["--params", params, "promote", "--version", "1", "--reason", " "])
    assert store.alias_version(no_champion.root, MULTICLASS_MODEL, CHAMPION) is None


def test_an_empty_archive_fails_with_what_to_do(tmp_path: Path) -> None:
    params = make_project(tmp_path / "project")
    (params.parent / "data" / "raw").mkdir(parents=True)
    message, steps = _failed_run([raw_scans], params)
    assert message.startswith(f"dagster._core.definitions.events.Failure: {EmptyArchive.advice}")
    assert "archive folder holds no scan" in message and DagsterEventType.STEP_UP_FOR_RETRY not in steps


def test_bad_params_fail_with_what_to_do(no_champion: Settings) -> None:
    message, _ = _failed_run([digitized_logs], no_champion.root / "params.yaml", overrides=["infer.max_attempts=0"])
    assert "The parameters do not validate" in message.splitlines()[0]
    assert "infer.max_attempts" in message and "greater than or equal to 1" in message
