"""The ingest stage: walk the raw archive, write the manifest and the decoded landscape scans (pages cut to strips)."""

from __future__ import annotations

from veernet_pipeline.config import Settings
from veernet_pipeline.errors import EmptyArchive
from veernet_pipeline.io.ingest import MANIFEST_FILE, PageReader, ingest_archive
from veernet_pipeline.io.resolution import Resampling
from veernet_pipeline.io.tranches import ROOT_TRANCHE, archive_dirs, tranche_states
from veernet_pipeline.pages.layout import find_layout
from veernet_pipeline.pages.strips import page_step
from veernet_pipeline.provenance import folder_listing
from veernet_pipeline.stages.cache import StageResult, files_version, run_cached

# A scan with a layout beside it is a whole-log page: ingest cuts it into its track strips.
PAGES = PageReader(layouts=find_layout, step=page_step)


def ingest(settings: Settings, tranche: str | None = None) -> StageResult:
    """Walk the raw archive (or one tranche of it), write the manifest and the decoded landscape scans."""
    raw, out = settings.path("raw"), archive_dirs(settings, tranche).ingested

    def work(_: str) -> StageResult:
        counts = ingest_archive(raw, out, settings.ingest, settings.validate_, tranche, PAGES,
                                Resampling.from_params(settings.infer))
        if counts["files"] == 0:
            # Nothing downstream could do anything: say so where the operator looks, not as 0 LAS files.
            where = raw / tranche if tranche and tranche != ROOT_TRANCHE else raw
            raise EmptyArchive(f"{where}: archive folder holds no scan ({', '.join(settings.ingest.extensions)}); "
                               "put the scans there or set paths.raw in params.yaml")
        return StageResult("ingest", counts=counts, paths={"manifest": str(out / MANIFEST_FILE)})

    # A tranche is keyed on its own files only, so a scan added to another tranche leaves it cached.
    listing = folder_listing(raw) if tranche is None else tranche_states(raw, settings.ingest.extensions).get(tranche)
    # The manifest names every decoded scan by its content hash, so it stands for them all; files.parquet,
    # ingest's memory of file mtimes, is not part of the output's identity.
    return run_cached("ingest", settings, [out], {"raw": listing}, work,
                      lambda: files_version([out / MANIFEST_FILE]))
