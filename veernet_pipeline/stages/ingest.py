"""The ingest stage: walk the raw archive, write the manifest and the decoded landscape scans."""

from __future__ import annotations

from veernet_pipeline.config import Settings
from veernet_pipeline.io.ingest import MANIFEST_FILE, ingest_archive
from veernet_pipeline.provenance import folder_listing
from veernet_pipeline.stages.cache import StageResult, files_version, run_cached


def ingest(settings: Settings) -> StageResult:
    """Walk the raw archive, write the manifest and the decoded landscape scans."""
    raw, out = settings.path("raw"), settings.path("ingested")

    def work(_: str) -> StageResult:
        counts = ingest_archive(raw, out, settings.ingest, settings.validate_)
        return StageResult("ingest", counts=counts, paths={"manifest": str(out / MANIFEST_FILE)})

    # The manifest names every decoded scan by its content hash, so it stands for them all; files.parquet,
    # ingest's memory of file mtimes, is not part of the output's identity.
    return run_cached("ingest", settings, [out], {"raw": folder_listing(raw)}, work,
                      lambda: files_version([out / MANIFEST_FILE]))
