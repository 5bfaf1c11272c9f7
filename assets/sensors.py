"""Sensors: new or changed tranches in `paths.raw`, and a new `champion` model.

`raw_scans_sensor` keeps, as its cursor, one digest per tranche of its files' (path, size, mtime):
nothing is read, so a tick over 100,000 files costs a directory walk. A tranche that is new gets a
dynamic partition; a tranche new or changed gets a run of `digitize_archive` for that partition,
keyed on its digest so a tick that repeats itself launches nothing twice.

`champion_sensor` re-digitises the archive when `champion` moves. A sensor rather than a job an
operator launches, because the alias moves outside Dagster (`veernet evaluate` when the gate passes,
or a promotion by hand) and a forgotten backfill leaves the archive read by an old model without
anyone noticing; it is off by default, so a site that wants to look at a new model first keeps it
off and launches the backfill from the UI (docs/runbooks/backfill-after-new-champion.md).
"""

import json

from dagster import (
    DefaultSensorStatus,
    RunRequest,
    SensorEvaluationContext,
    SensorResult,
    SkipReason,
    sensor,
)

from assets.jobs import digitize_archive
from assets.partitions import TRANCHES
from assets.resources import PipelineResource
from veernet_pipeline.io.tranches import tranche_states


@sensor(job=digitize_archive, minimum_interval_seconds=60, default_status=DefaultSensorStatus.STOPPED,
        description="Adds a partition per new tranche folder of paths.raw and digitises new or changed tranches.")
def raw_scans_sensor(context: SensorEvaluationContext, pipeline: PipelineResource) -> SensorResult:
    settings = pipeline.settings()
    states = tranche_states(settings.path("raw"), settings.ingest.extensions)
    seen = json.loads(context.cursor) if context.cursor else {}
    changed = [tranche for tranche, state in states.items() if seen.get(tranche) != state]
    known = set(context.instance.get_dynamic_partitions(TRANCHES.name))
    new = [tranche for tranche in changed if tranche not in known]
    context.log.info("tranches: %d, new: %d, changed: %d", len(states), len(new), len(changed) - len(new))
    return SensorResult(
        run_requests=[RunRequest(partition_key=t, run_key=f"{t}:{states[t]}", tags={"veernet/trigger": "raw_scans"})
                      for t in changed],
        dynamic_partitions_requests=[TRANCHES.build_add_request(new)] if new else [],
        cursor=json.dumps(states, sort_keys=True),
    )


@sensor(job=digitize_archive, minimum_interval_seconds=300, default_status=DefaultSensorStatus.STOPPED,
        description="When veernet-multiclass@champion moves, digitises every tranche with the new version.")
def champion_sensor(context: SensorEvaluationContext, pipeline: PipelineResource) -> SensorResult | SkipReason:
    from veernet_pipeline.tracking import store

    settings = pipeline.settings()
    name, _, alias = settings.infer.model_uri.removeprefix("models:/").partition("@")
    version = store.alias_version(settings.root, name, alias) if alias else None
    if version is None:
        return SkipReason(f"{settings.infer.model_uri} names no alias that is set; nothing to follow")
    if context.cursor == version:
        return SkipReason(f"{name}@{alias} is still version {version}")
    tranches = context.instance.get_dynamic_partitions(TRANCHES.name)
    return SensorResult(
        run_requests=[RunRequest(partition_key=t, run_key=f"{t}:{name}/{version}",
                                 tags={"veernet/trigger": f"{name}@{alias}={version}"}) for t in tranches],
        cursor=version,
    )
