"""The tranche sensor, the champion sensor, the nightly schedule and a multi-tranche run, on a real instance."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

import pytest
from dagster import DagsterInstance, build_schedule_context, build_sensor_context, materialize

from assets.jobs import nightly_archive
from assets.partitions import MAX_TRANCHES_PER_RUN, TRANCHES, register_tranches
from assets.resources import PipelineResource
from assets.scans import raw_scans, validation
from assets.sensors import champion_sensor, raw_scans_sensor
from tests.archive import register_champion, tranche_project
from veernet_pipeline.config import Settings
from veernet_pipeline.io.tranches import ROOT_TRANCHE

NIGHT = datetime(2026, 11, 24, 2, tzinfo=UTC)


@pytest.fixture
def project(tmp_path: Path) -> Settings:
    return tranche_project(tmp_path / "project")


def _resource(settings: Settings) -> PipelineResource:
    return PipelineResource(params_path=str(settings.root / "params.yaml"), profile=settings.profile)


def _tick(sensor, instance: DagsterInstance, settings: Settings, cursor: str | None):  # noqa: ANN001, ANN202
    context = build_sensor_context(instance=instance, cursor=cursor, resources={"pipeline": _resource(settings)})
    result = sensor(context)
    for request in getattr(result, "dynamic_partitions_requests", None) or []:
        instance.add_dynamic_partitions(request.partitions_def_name, list(request.partition_keys))
    return result


def test_raw_scans_sensor_requests_new_and_changed_tranches_only(project: Settings) -> None:
    with DagsterInstance.ephemeral() as instance:
        first = _tick(raw_scans_sensor, instance, project, None)
        assert sorted(r.partition_key for r in first.run_requests) == sorted(["north", "south", ROOT_TRANCHE])
        assert set(first.dynamic_partitions_requests[0].partition_keys) == {"north", "south", ROOT_TRANCHE}
        assert set(instance.get_dynamic_partitions(TRANCHES.name)) == {"north", "south", ROOT_TRANCHE}

        unchanged = _tick(raw_scans_sensor, instance, project, first.cursor)
        assert unchanged.run_requests == [] and not unchanged.dynamic_partitions_requests

        scan = project.path("raw") / "south" / "sample_02_packbits_1bit.tif"
        stat = scan.stat()
        os.utime(scan, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
        (project.path("raw") / "west").mkdir()
        (project.path("raw") / "west" / "new.tif").write_bytes(scan.read_bytes())
        changed = _tick(raw_scans_sensor, instance, project, unchanged.cursor)
        assert sorted(r.partition_key for r in changed.run_requests) == ["south", "west"]
        assert list(changed.dynamic_partitions_requests[0].partition_keys) == ["west"]
        # The same change seen again (a repeated tick) has the same run keys: Dagster launches it once.
        again = _tick(raw_scans_sensor, instance, project, unchanged.cursor)
        assert {r.run_key for r in again.run_requests} == {r.run_key for r in changed.run_requests}


def test_champion_sensor_backfills_every_tranche_when_the_alias_moves(project: Settings) -> None:
    with DagsterInstance.ephemeral() as instance:
        assert "names no alias" in _tick(champion_sensor, instance, project, None).skip_message
        register_tranches(instance, project)
        version = register_champion(project)
        moved = _tick(champion_sensor, instance, project, None)
        assert sorted(r.partition_key for r in moved.run_requests) == sorted(["north", "south", ROOT_TRANCHE])
        assert moved.cursor == version
        assert "still version" in _tick(champion_sensor, instance, project, moved.cursor).skip_message
        newer = register_champion(project)
        assert newer != version
        assert len(_tick(champion_sensor, instance, project, moved.cursor).run_requests) == 3


def test_nightly_schedule_launches_the_tranches_not_done(project: Settings, tmp_path: Path) -> None:
    # A schedule context needs an instance it can reference: a real one in a temporary DAGSTER_HOME.
    (tmp_path / "dagster_home").mkdir()
    with DagsterInstance.local_temp(str(tmp_path / "dagster_home")) as instance:
        register_tranches(instance, project)
        requests = list(nightly_archive.evaluate_tick(_night(instance)).run_requests)
        assert sorted(r.partition_key for r in requests) == sorted(["north", "south", ROOT_TRANCHE])
        instance.report_runless_asset_event(_materialization("digitized_logs", "south"))
        requests = list(nightly_archive.evaluate_tick(_night(instance)).run_requests)
        assert sorted(r.partition_key for r in requests) == sorted(["north", ROOT_TRANCHE])


def _night(instance: DagsterInstance):  # noqa: ANN202
    from assets.definitions import defs

    return build_schedule_context(instance=instance, scheduled_execution_time=NIGHT,
                                  repository_def=defs.get_repository_def())


def _materialization(key: str, partition: str):  # noqa: ANN202
    from dagster import AssetMaterialization

    return AssetMaterialization(asset_key=key, partition=partition)


def test_one_run_takes_a_range_of_tranches_as_a_backfill_does(project: Settings) -> None:
    assert raw_scans.backfill_policy.max_partitions_per_run == MAX_TRANCHES_PER_RUN
    with DagsterInstance.ephemeral() as instance:
        keys = register_tranches(instance, project)
        assert keys == [ROOT_TRANCHE, "north", "south"]
        result = materialize([raw_scans, validation], instance=instance, resources={"pipeline": _resource(project)},
                             tags={"dagster/asset_partition_range_start": ROOT_TRANCHE,
                                   "dagster/asset_partition_range_end": "south"})
        assert result.success
        events = [e for e in result.get_asset_materialization_events() if e.asset_key.to_user_string() == "raw_scans"]
        assert sorted(e.partition for e in events) == sorted(keys)
        metadata = events[0].materialization.metadata
        by_tranche = metadata["counts_by_tranche"].value
        assert {t: c["files"] for t, c in by_tranche.items()} == {ROOT_TRANCHE: 1, "north": 4, "south": 1}
        assert metadata["files"].value == 6
        assert instance.get_materialized_partitions(raw_scans.key) == set(keys)
