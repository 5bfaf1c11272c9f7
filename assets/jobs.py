"""Jobs and schedules: the whole graph on demand, the archive nightly."""

from __future__ import annotations

from dagster import AssetSelection, DefaultScheduleStatus, ScheduleDefinition, define_asset_job

# A string selection: it needs the antlr4 4.13 pin in pyproject.toml (dagster issue #27487).
full_pipeline = define_asset_job("full_pipeline", selection="*", description="Every asset, ingest to LAS.")

archive_selection = AssetSelection.assets("raw_scans", "validated_scans", "quarantined_scans", "digitized_logs")
digitize_archive = define_asset_job(
    "digitize_archive",
    selection=archive_selection,
    description="Ingest, validate and digitise new scans with the current champion; no training.",
)

nightly_archive = ScheduleDefinition(
    name="nightly_archive",  # the name the UI and the runbooks show (default: <job>_schedule)
    job=digitize_archive,
    cron_schedule="0 2 * * *",
    default_status=DefaultScheduleStatus.STOPPED,
    description="Digitise what arrived in the archive during the day (turn on in the UI).",
)
