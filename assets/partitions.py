"""The archive's partitions: one dynamic partition per tranche folder of `paths.raw`.

Why tranches (and not batches of N scans) is in `veernet_pipeline.io.tranches` and
docs/runbooks/nightly-archive.md. Partitions are added by `raw_scans_sensor` (assets/sensors.py),
or for a shell session by `python -m assets.partitions` (what `make demo` does).

A run may hold several partitions (a backfill under `ARCHIVE_BACKFILL`): each asset then runs its
stage once per tranche and its metadata sums the counts and lists each tranche's own.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import Any

from dagster import BackfillPolicy, DagsterInstance, DynamicPartitionsDefinition, MaterializeResult, MetadataValue

from assets.metadata import materialized
from veernet_pipeline.config import Settings, load_settings
from veernet_pipeline.io.tranches import tranche_states
from veernet_pipeline.stages import StageResult

TRANCHES = DynamicPartitionsDefinition(name="tranches")
# A run of a backfill takes up to this many tranches: one process start-up, one model load per
# asset and stage instead of one per tranche, while a failure still costs only that run's tranches.
MAX_TRANCHES_PER_RUN = 8
ARCHIVE_BACKFILL = BackfillPolicy.multi_run(max_partitions_per_run=MAX_TRANCHES_PER_RUN)
ARCHIVE_PARTITIONING: dict[str, Any] = {"partitions_def": TRANCHES, "backfill_policy": ARCHIVE_BACKFILL}


def run_keys(context: Any) -> list[str | None]:
    """The tranches this run or check covers; `[None]` (the whole archive) outside a partitioned run."""
    return list(context.partition_keys) if context.has_partition_key or context.has_partition_key_range else [None]


def tranche_result(keys: Sequence[str | None], results: Sequence[StageResult], fields: tuple[str, ...] | None = None,
                   **kwargs: Any) -> MaterializeResult:
    """One materialisation of the run's tranches: the single tranche's metadata, or summed counts and each one's.

    `tranche` names what the partition holds; `counts_by_tranche` (for several) keeps each tranche's
    in/out counts apart.
    """
    if len(results) == 1:
        return materialized(results[0], fields, {"tranche": MetadataValue.text(keys[0] or "(whole archive)")},
                            **kwargs)
    total = StageResult(results[0].stage, skipped=all(r.skipped for r in results))
    for result in results:
        for name, value in result.counts.items():
            total.counts[name] = total.counts.get(name, 0) + value
    by_tranche = {str(k): r.counts for k, r in zip(keys, results, strict=True)}
    return materialized(total, fields, {"tranche": MetadataValue.text(", ".join(str(k) for k in keys)),
                                        "counts_by_tranche": MetadataValue.json(by_tranche)}, **kwargs)


def register_tranches(instance: DagsterInstance, settings: Settings) -> list[str]:
    """Add every tranche now in `paths.raw` as a partition (those already known stay); return them all."""
    found = sorted(tranche_states(settings.path("raw"), settings.ingest.extensions))
    known = set(instance.get_dynamic_partitions(TRANCHES.name))
    instance.add_dynamic_partitions(TRANCHES.name, [t for t in found if t not in known])
    return found


def main() -> int:
    """`python -m assets.partitions`: register the tranches in $DAGSTER_HOME's instance, print one a line."""
    if not os.environ.get("DAGSTER_HOME"):
        print("set DAGSTER_HOME to the instance folder (make demo uses .dagster/)", file=sys.stderr)
        return 2
    with DagsterInstance.get() as instance:
        for tranche in register_tranches(instance, load_settings()):
            print(tranche)
    return 0


if __name__ == "__main__":
    sys.exit(main())
