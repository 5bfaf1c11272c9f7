"""Scans from the operator's archive: ingested, then validated or quarantined, one partition per tranche."""

from collections.abc import Iterator

from dagster import AssetExecutionContext, AssetSpec, MaterializeResult, asset, multi_asset

from assets.metadata import stage_spec
from assets.partitions import ARCHIVE_PARTITIONING, run_keys, tranche_result
from assets.resources import PipelineResource


@asset(group_name="scans", kinds={"python", "tiff", "parquet"}, **ARCHIVE_PARTITIONING, **stage_spec("ingest"))
def raw_scans(context: AssetExecutionContext, pipeline: PipelineResource) -> MaterializeResult:
    """The TIFFs of one tranche of `paths.raw`: a Parquet manifest of headers and hashes, plus decoded landscape scans.

    Metadata: `files` in, `decoded` and `errors` out, for the partition's `tranche`.
    """
    return tranche_result(run_keys(context), [pipeline.run("ingest", tranche=key) for key in run_keys(context)])


@multi_asset(
    specs=[
        AssetSpec("validated_scans", deps=["raw_scans"], group_name="scans", kinds={"pandera", "parquet"},
                  **stage_spec("validate"), description="Scans within the size and format bounds of params."),
        AssetSpec("quarantined_scans", deps=["raw_scans"], group_name="scans", kinds={"pandera", "parquet"},
                  **stage_spec("validate"), description="Rejected scans, each with a reason code and message."),
    ],
    **ARCHIVE_PARTITIONING,
)
def validation(context: AssetExecutionContext, pipeline: PipelineResource) -> Iterator[MaterializeResult]:
    """Split each tranche's manifest by the pandera schema built from params' bounds (`files` in = validated +
    quarantined out)."""
    keys = run_keys(context)
    results = [pipeline.run("validate", tranche=key) for key in keys]
    # data_docs: the Great Expectations Data Docs (HTML) of this validation, as a path in the UI.
    yield tranche_result(keys, results, ("validated", "report", "data_docs"), asset_key="validated_scans")
    yield tranche_result(keys, results, ("quarantine",), asset_key="quarantined_scans")
