"""Stage results -> Dagster metadata: counts and figures as numbers, files as paths, PNGs shown inline."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

from dagster import DataVersion, MaterializeResult, MetadataValue

from veernet_pipeline.stages import StageResult
from veernet_pipeline.stages.cache import stage_code_version

STAGE_TAG = "veernet/stage"

# Inline pictures beyond this size would bloat the event log; they stay a path.
MAX_INLINE_PNG = 600_000


def stage_spec(stage: str) -> dict[str, Any]:
    """Asset arguments tying an asset to its stage: the stage tag and the stage's code version.

    The tag names the DVC stage that produces the asset (the graph-equality test reads it); the
    code version is the digest of every source file the stage runs, the same code the stage's
    fingerprint and its DVC deps cover, so the UI marks the asset stale when that code changes.
    """
    return {"tags": {STAGE_TAG: stage}, "code_version": stage_code_version(stage)}


def materialized(result: StageResult, keys: tuple[str, ...] | None = None, extra: dict[str, Any] | None = None,
                 **kwargs: Any) -> MaterializeResult:
    """A stage result as a materialisation: its metadata (and `extra`), and its output digest as the data version."""
    version = DataVersion(result.data_version) if result.data_version else None
    return MaterializeResult(metadata={**result_metadata(result, keys), **(extra or {})}, data_version=version,
                             **kwargs)


def png(path: str | Path) -> MetadataValue:
    path = Path(path)
    if path.stat().st_size > MAX_INLINE_PNG:
        return MetadataValue.path(str(path))
    encoded = base64.b64encode(path.read_bytes()).decode()
    return MetadataValue.md(f"![{path.name}](data:image/png;base64,{encoded})")


def result_metadata(result: StageResult, keys: tuple[str, ...] | None = None) -> dict[str, Any]:
    """Metadata for one asset: the stage's counts, numeric metrics and paths (optionally a subset)."""
    meta: dict[str, Any] = {"fingerprint": result.fingerprint, "data_version": result.data_version,
                            "reused_previous_result": result.skipped}
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
