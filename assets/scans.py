"""Scans from the operator's archive: ingested, then validated or quarantined."""

from __future__ import annotations

from collections.abc import Iterator

from dagster import AssetSpec, MaterializeResult, asset, multi_asset

from assets.metadata import materialized, stage_spec
from assets.resources import PipelineResource
from veernet_pipeline import stages


@asset(group_name="scans", kinds={"python", "tiff", "parquet"}, **stage_spec("ingest"))
def raw_scans(pipeline: PipelineResource) -> MaterializeResult:
    """Every TIFF under `paths.raw`: a Parquet manifest of headers and hashes, plus decoded landscape scans."""
    return materialized(stages.run("ingest", pipeline.settings()))


@multi_asset(
    specs=[
        AssetSpec("validated_scans", deps=["raw_scans"], group_name="scans", kinds={"pandera", "parquet"},
                  **stage_spec("validate"), description="Scans within the size and format bounds of params."),
        AssetSpec("quarantined_scans", deps=["raw_scans"], group_name="scans", kinds={"pandera", "parquet"},
                  **stage_spec("validate"), description="Rejected scans, each with a reason code and message."),
    ],
)
def validation(pipeline: PipelineResource) -> Iterator[MaterializeResult]:
    """Split the manifest by the pandera schema built from params' bounds."""
    result = stages.run("validate", pipeline.settings())
    # data_docs: the Great Expectations Data Docs (HTML) of this validation, as a path in the UI.
    yield materialized(result, ("validated", "report", "data_docs"), asset_key="validated_scans")
    yield materialized(result, ("quarantine",), asset_key="quarantined_scans")
