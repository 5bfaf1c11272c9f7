"""Synthetic training logs: generated scans with exact masks, sidecars and ground-truth LAS."""

from __future__ import annotations

from collections.abc import Iterator

from dagster import AssetSpec, MaterializeResult, multi_asset

from assets.metadata import materialized, stage_spec
from assets.resources import PipelineResource


@multi_asset(
    specs=[
        AssetSpec("synthetic_binary", deps=["validated_scans"], group_name="synthetic", kinds={"numpy", "tiff"},
                  **stage_spec("synthesize"), description="Curve-vs-background set for the binary stage."),
        AssetSpec("synthetic_multiclass", deps=["validated_scans"], group_name="synthetic", kinds={"numpy", "tiff"},
                  **stage_spec("synthesize"), description="Two-curve set (classes 0, 1, 2), multiclass stage."),
    ],
)
def synthetic_sets(pipeline: PipelineResource) -> Iterator[MaterializeResult]:
    """Generate (or resume) both sets, deterministic from (seed, index).

    Metadata: kept/rejected/not-needed candidate counts, splits, the rejections table and a
    contact sheet (inline when small enough, else its path).
    """
    result = pipeline.run("synthesize")
    for name in ("binary", "multiclass"):
        yield materialized(result, (name,), asset_key=f"synthetic_{name}")
