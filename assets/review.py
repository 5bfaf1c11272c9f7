"""The review queue: the least-confident digitised scans first, with their QC thumbnails and marks."""

from __future__ import annotations

import base64

import pandas as pd
from dagster import MaterializeResult, MetadataValue, asset

from assets.metadata import materialized, stage_spec
from assets.resources import PipelineResource
from veernet_pipeline.inference.review import queue_markdown, thumbnail_png


@asset(deps=["digitized_logs"], group_name="digitized", kinds={"pandas"}, **stage_spec("review_queue"))
def review_queue(pipeline: PipelineResource) -> MaterializeResult:
    """Every digitised scan (all tranches) ranked for review; mark one with `veernet review SCAN --accept|--reject`.

    Metadata: `queued`, `unreviewed`, `accepted`, `rejected`, `drawn_alike` (scans with curves of one style and
    pen) and `dash_exchanged` (scans with curves given their lines by dash length), both ranked first, and `queue`:
    the first `review.top_n`
    as a table with each scan's figures, latest mark and QC thumbnail (docs/runbooks/review-queue.md).
    """
    result = pipeline.run("review_queue")
    settings = pipeline.settings()
    digitized = settings.path("digitized")

    def thumbnail(qc: str) -> str:
        # A data URI: the UI shows markdown images inline but serves no file of the project.
        if not (digitized / qc).is_file():
            return f"(QC picture missing: {qc})"
        encoded = base64.b64encode(thumbnail_png(digitized / qc)).decode()
        return f"![QC](data:image/png;base64,{encoded})"

    table = queue_markdown(pd.read_parquet(result.paths["queue"]), settings.review.top_n, thumbnail)
    return materialized(result, extra={"queue": MetadataValue.md(table)})
