"""Jobs and schedules: the whole graph on demand, the archive nightly."""

from __future__ import annotations

from collections.abc import Iterator

from dagster import (
    AssetKey,
    AssetSelection,
    DefaultScheduleStatus,
    RunRequest,
    ScheduleDefinition,
    ScheduleEvaluationContext,
    define_asset_job,
)

from assets.engine import tranche_dask_executor
from assets.partitions import TRANCHES

# A string selection: it needs the antlr4 4.13 pin in pyproject.toml (dagster issue #27487).
full_pipeline = define_asset_job("full_pipeline", selection="*", description="Every asset, ingest to LAS.")

archive_selection = AssetSelection.assets("raw_scans", "validated_scans", "quarantined_scans", "digitized_logs")
digitize_archive = define_asset_job(
    "digitize_archive",
    selection=archive_selection,
    description="Ingest, validate and digitise one tranche (a partition) with the current champion; no training.",
)

# The same assets, each step a task on a Dask cluster (docs/runbooks/scale-out.md). The launchpad's
# `execution.config.cluster.existing.address` names the scheduler; left empty, Dask starts a local
# cluster of its own for the run.
digitize_archive_dask = define_asset_job(
    "digitize_archive_dask",
    selection=archive_selection,
    executor_def=tranche_dask_executor,
    description="digitize_archive on a Dask cluster: set execution.config.cluster.existing.address in the "
                "launchpad (docs/runbooks/scale-out.md).",
)


def tranches_not_done(context: ScheduleEvaluationContext) -> Iterator[RunRequest]:
    """One run per known tranche whose `digitized_logs` partition was never materialised (or failed)."""
    done = context.instance.get_materialized_partitions(AssetKey("digitized_logs"))
    for tranche in context.instance.get_dynamic_partitions(TRANCHES.name):
        if tranche not in done:
            yield RunRequest(partition_key=tranche, run_key=f"{context.scheduled_execution_time}:{tranche}")

nightly_archive = ScheduleDefinition(
    name="nightly_archive",  # the name the UI and the runbooks show (default: <job>_schedule)
    job=digitize_archive,
    cron_schedule="0 2 * * *",
    execution_fn=tranches_not_done,
    default_status=DefaultScheduleStatus.STOPPED,
    description="Digitise every tranche not digitised yet (turn on in the UI; raw_scans_sensor adds new tranches).",
)
