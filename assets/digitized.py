"""The product: one LAS file and one QC picture per validated scan, one partition per tranche."""

from dagster import AssetExecutionContext, MaterializeResult, asset

from assets.metadata import stage_spec
from assets.partitions import ARCHIVE_PARTITIONING, run_keys, tranche_result
from assets.resources import PipelineResource
from veernet_pipeline import stages


@asset(deps=["validated_scans", "model_evaluation"], group_name="digitized", kinds={"pytorch", "las"},
       **ARCHIVE_PARTITIONING, **stage_spec("infer"))
def digitized_logs(context: AssetExecutionContext, pipeline: PipelineResource) -> MaterializeResult:
    """Each validated scan of a tranche digitised by `veernet-multiclass@champion`; already-done pairs skip.

    Metadata: `validated` scans in; `written`, `skipped` and `failed` out, for the partition's `tranche`.
    """
    settings, keys = pipeline.settings(), run_keys(context)
    return tranche_result(keys, [stages.run("infer", settings, tranche=key) for key in keys])
