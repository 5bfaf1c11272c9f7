"""The product: one LAS file and one QC picture per validated scan, one partition per tranche."""

from dagster import AssetExecutionContext, MaterializeResult, asset

from assets.failures import ARCHIVE_RETRY
from assets.metadata import stage_spec
from assets.partitions import ARCHIVE_PARTITIONING, run_keys, tranche_result
from assets.resources import PipelineResource


@asset(deps=["validated_scans", "model_evaluation"], group_name="digitized", kinds={"pytorch", "las"},
       retry_policy=ARCHIVE_RETRY, **ARCHIVE_PARTITIONING, **stage_spec("infer"))
def digitized_logs(context: AssetExecutionContext, pipeline: PipelineResource) -> MaterializeResult:
    """Each validated scan of a tranche digitised by `veernet-multiclass@champion`; already-done scans skip.

    Metadata: `validated` scans in; `written`, `skipped` and `failed` out, for the partition's `tranche`.
    """
    return tranche_result(run_keys(context), [pipeline.run("infer", tranche=key) for key in run_keys(context)])
