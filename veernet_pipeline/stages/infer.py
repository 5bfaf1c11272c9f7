"""The infer stage: every validated scan digitised with the chosen model.

Not skipped as a whole: the archive skips each scan whose output already exists under the same
key, so a re-run only does new work. The key is the scan's content hash, its sidecar's content
hash (`inference.archive.output_paths`) and this output label: the model's registered name and
version and a digest of the extraction parameters and of this stage's code. So a new model
(another name or version), other parameters, a code change that alters the reading or a
corrected sidecar writes new LAS files beside the old ones.
"""

from __future__ import annotations

import time

from veernet_pipeline.config import Settings
from veernet_pipeline.inference.archive import INDEX_FILE, digitize_validated
from veernet_pipeline.inference.pages_archive import PAGES_INDEX, assemble_pages
from veernet_pipeline.io.tranches import archive_dirs
from veernet_pipeline.provenance import digest
from veernet_pipeline.stages.cache import StageResult, files_version, stage_code_version
from veernet_pipeline.tracking import store


def output_label(name: str, version: str, settings: Settings) -> str:
    """Folder name of one model's outputs, e.g. ``veernet-multiclass-v3-x1a2b3c4d``."""
    return f"{name}-v{version}-x{digest([settings.section('extract'), stage_code_version('infer')])[:8]}"


def infer(settings: Settings, model_uri: str | None = None, tranche: str | None = None) -> StageResult:
    """Digitise every validated scan (a whole-log page's track strips too) of the archive or of one tranche, and
    assemble each page's strips into one LAS per well and section.

    The model defaults to `veernet-multiclass@champion`. A tranche's indexes go to its own folder
    (`io.tranches.archive_dirs`); its LAS files go where everyone's do, keyed by content.
    """
    uri = model_uri or settings.infer.model_uri
    out = settings.path("digitized")
    dirs = archive_dirs(settings, tranche)
    name, _ = store.resolve_model(settings.root, uri)
    model_dir, version = store.download_model(settings.root, uri, settings.path("models") / "registry")
    label = output_label(name, version, settings)
    started = time.perf_counter()
    counts = digitize_validated(dirs.validated, dirs.ingested, settings.path("raw"),
                                model_dir, label, out, settings.infer, settings.extract, dirs.index)
    # Whole-log pages: ingest cut them into track strips, read above like any scan; put back together here.
    counts |= assemble_pages(dirs.validated, dirs.ingested, settings.path("raw"), label, out, dirs.index)
    return StageResult("infer", fingerprint=digest({"model": uri, "version": version, "label": label}),
                       data_version=files_version([dirs.index / INDEX_FILE, dirs.index / PAGES_INDEX]),
                       skipped=counts["written"] + counts["failed"] + counts["pages_written"] + counts["pages_failed"]
                       == 0, counts=counts,
                       metrics={"wall_clock_s": round(time.perf_counter() - started, 3)},
                       paths={"index": str(dirs.index / INDEX_FILE), "model_uri": uri, "model_version": version,
                              "output_label": label})
