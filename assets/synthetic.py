"""Synthetic training logs: generated scans with exact masks, sidecars and ground-truth LAS."""

from __future__ import annotations

from collections.abc import Iterator

from dagster import AssetSpec, MaterializeResult, multi_asset

from assets.metadata import result_metadata, stage_tags
from assets.resources import PipelineResource
from veernet_pipeline import stages


@multi_asset(
    specs=[
        AssetSpec("synthetic_binary", group_name="synthetic", kinds={"numpy", "tiff"}, tags=stage_tags("synthesize"),
                  description="Curve-vs-background set for the binary stage."),
        AssetSpec("synthetic_multiclass", group_name="synthetic", kinds={"numpy", "tiff"},
                  tags=stage_tags("synthesize"), description="Two-curve set (classes 0, 1, 2), multiclass stage."),
    ],
)
def synthetic_sets(pipeline: PipelineResource) -> Iterator[MaterializeResult]:
    """Generate both sets, deterministic from (seed, index)."""
    result = stages.synthesize(pipeline.settings())
    for name in ("binary", "multiclass"):
        yield MaterializeResult(asset_key=f"synthetic_{name}", metadata=result_metadata(result, (name,)))
