"""Synthetic logs: generated training scans with exact masks, sidecars and ground-truth LAS, and the
foreign evaluation scans (another renderer, test wells only; never trained or tuned on)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

from dagster import AssetSpec, MaterializeResult, multi_asset

from assets.metadata import materialized, stage_spec
from assets.resources import PipelineResource
from veernet_pipeline import stages
from veernet_pipeline.foreign.dataset import FOREIGN_DIR


@multi_asset(
    specs=[
        AssetSpec("synthetic_binary", deps=["validated_scans"], group_name="synthetic", kinds={"numpy", "tiff"},
                  **stage_spec("synthesize"), description="Curve-vs-background set for the binary stage."),
        AssetSpec("synthetic_multiclass", deps=["validated_scans"], group_name="synthetic", kinds={"numpy", "tiff"},
                  **stage_spec("synthesize"),
                  description="1-5 curves per track, classes by line style (io/classes.py), multiclass stage."),
        AssetSpec("foreign_scans", group_name="synthetic", kinds={"matplotlib", "tiff"},
                  **stage_spec("synthesize"),
                  description="Evaluation-only scans by the foreign renderer, from test wells (8-bit and 1-bit G4)."),
    ],
)
def synthetic_sets(pipeline: PipelineResource) -> Iterator[MaterializeResult]:
    """Generate (or resume) both training sets and render the foreign set, deterministic from (seed, index).

    Metadata: kept/rejected/not-needed candidate counts, splits, the rejections table and a
    contact sheet (inline when small enough, else its path); the foreign set's counts and sheet.
    """
    settings = pipeline.settings()
    result = pipeline.run("synthesize")
    for name in ("binary", "multiclass"):
        yield materialized(result, (name,), asset_key=f"synthetic_{name}")
    # The foreign scans carry their own data version: the evaluate stage keys on it, training never does.
    record = stages.recorded(settings.path("synthetic") / FOREIGN_DIR)
    foreign = replace(result, data_version=record["data_version"] if record else "")
    yield materialized(foreign, (FOREIGN_DIR,), asset_key="foreign_scans")
