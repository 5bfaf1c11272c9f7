"""The synthesize stage: the binary and multiclass synthetic sets (an interrupted run resumes)."""

from __future__ import annotations

from pathlib import Path

from veernet_pipeline.config import Settings
from veernet_pipeline.io.sets import INDEX_FILE
from veernet_pipeline.provenance import folder_listing
from veernet_pipeline.stages.cache import StageResult, files_version, flat_counts, run_cached
from veernet_pipeline.synthetic.dataset import GENERATION_FILE, REJECTIONS_FILE, preview_sheet, synthesize_sets
from veernet_pipeline.synthetic.sizes import archive_sizes, sizes_digest

SETS = ("binary", "multiclass")


def synthesize(settings: Settings, preview: Path | None = None) -> StageResult:
    """Generate (or complete an interrupted run of) the binary and multiclass synthetic sets.

    The multiclass candidates are checked against the `validate` bounds, so those are parameters
    too, as are the archive's scan sizes when `synthesize.size_source` is archive.

    Args:
        settings: the run's settings.
        preview: also write a contact sheet of the multiclass set here (`veernet synthesize --preview`).
    """
    root = settings.path("synthetic")
    outputs = [root / name for name in SETS]
    source = settings.paths.las_source
    las_identity = folder_listing(settings.path("las_source")) if source else ""
    archive = settings.synthesize.size_source == "archive"
    sizes = sizes_digest(archive_sizes(settings.path("validated"))) if archive else ""

    def work(_: str) -> StageResult:
        counts = synthesize_sets(settings)
        paths: dict[str, str] = {}
        for name in SETS:
            paths[name] = str(root / name)
            sheet = root / name / "preview.png"
            preview_sheet(root / name, sheet)
            paths[f"{name}_preview"] = str(sheet)
            # A two-instance, 600-column sheet small enough to show inline in the Dagster UI.
            glance = root / name / "preview_glance.png"
            preview_sheet(root / name, glance, n=2, columns=600)
            paths[f"{name}_preview_glance"] = str(glance)
            paths[f"{name}_rejections"] = str(root / name / REJECTIONS_FILE)
        return StageResult("synthesize", counts=flat_counts(counts), paths=paths)

    # A set's instances are a function of their generation key; the key and the index name them all.
    result = run_cached("synthesize", settings, outputs, {"las_source": las_identity, "archive_sizes": sizes}, work,
                      lambda: files_version([folder / name for folder in outputs
                                             for name in (INDEX_FILE, GENERATION_FILE)]))
    if preview is not None:
        preview_sheet(root / "multiclass", Path(preview))
        result.paths["preview"] = str(Path(preview).resolve())
    return result
