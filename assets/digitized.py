"""The product: one LAS file and one QC picture per validated scan."""

from __future__ import annotations

from dagster import MaterializeResult, asset

from assets.failures import ARCHIVE_RETRY
from assets.metadata import materialized, stage_spec
from assets.resources import PipelineResource


@asset(deps=["validated_scans", "model_evaluation"], group_name="digitized", kinds={"pytorch", "las"},
       retry_policy=ARCHIVE_RETRY, **stage_spec("infer"))
def digitized_logs(pipeline: PipelineResource) -> MaterializeResult:
    """Every validated scan digitised by `veernet-multiclass@champion`; already-done (scan, model) pairs skip."""
    return materialized(pipeline.run("infer"))
