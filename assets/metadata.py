"""Stage results -> Dagster metadata: counts and figures as numbers, files as paths, PNGs shown inline."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

from dagster import MetadataValue

from veernet_pipeline.stages import StageResult

STAGE_TAG = "veernet/stage"

# Inline pictures beyond this size would bloat the event log; they stay a path.
MAX_INLINE_PNG = 600_000


def stage_tags(stage: str) -> dict[str, str]:
    """Tags naming the DVC stage that produces an asset (the graph-equality test reads them)."""
    return {STAGE_TAG: stage}


def png(path: str | Path) -> MetadataValue:
    path = Path(path)
    if path.stat().st_size > MAX_INLINE_PNG:
        return MetadataValue.path(str(path))
    encoded = base64.b64encode(path.read_bytes()).decode()
    return MetadataValue.md(f"![{path.name}](data:image/png;base64,{encoded})")


def result_metadata(result: StageResult, keys: tuple[str, ...] | None = None) -> dict[str, Any]:
    """Metadata for one asset: the stage's counts, numeric metrics and paths (optionally a subset)."""
    meta: dict[str, Any] = {"fingerprint": result.fingerprint, "reused_previous_result": result.skipped}
    for name, value in result.counts.items():
        meta[name] = MetadataValue.int(int(value))
    for name, value in result.metrics.items():
        if isinstance(value, bool):
            meta[name] = MetadataValue.bool(value)
        elif isinstance(value, int | float):
            meta[name] = MetadataValue.float(float(value))
        elif isinstance(value, dict):
            meta[name] = MetadataValue.json(value)
    for name, value in result.paths.items():
        if keys is not None and not any(name.startswith(k) for k in keys):
            continue
        if value.endswith(".png") and Path(value).is_file():
            meta[name] = png(value)
        elif "/" in value:
            meta[name] = MetadataValue.path(value)
        else:
            meta[name] = MetadataValue.text(value)
    return meta
