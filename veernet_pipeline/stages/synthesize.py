"""The synthesize stage: the binary and multiclass training sets (an interrupted run resumes) and the
foreign evaluation set (`foreign/`: drawn by the foreign test renderer from test wells, evaluation only).

The two parts are cached apart (two `run_cached` calls, one data version each): the training sets'
folders record the training sets' version, which is what the training stages key on, and the foreign
folder records its own, which the evaluate stage can key on. So a change to the foreign set never
makes a model look stale, and a change to the training sets never changes the foreign scans' version.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from veernet_pipeline.config import Settings
from veernet_pipeline.foreign.dataset import FOREIGN_DIR, write_foreign_set
from veernet_pipeline.io.sets import INDEX_FILE
from veernet_pipeline.provenance import folder_listing
from veernet_pipeline.stages.cache import StageResult, files_version, flat_counts, run_cached
from veernet_pipeline.synthetic.dataset import GENERATION_FILE, REJECTIONS_FILE, preview_sheet, synthesize_sets
from veernet_pipeline.synthetic.sizes import archive_sizes, sizes_digest

SETS = ("binary", "multiclass")
FILE_COLUMNS = ("image", "mask", "calibration", "las")
FOREIGN_SHEET = 4


def _sheets(folder: Path, name: str) -> dict[str, str]:
    sheet, glance = folder / "preview.png", folder / "preview_glance.png"
    preview_sheet(folder, sheet, binary=name == "binary")
    # A two-instance, 600-column sheet small enough to show inline in the Dagster UI.
    preview_sheet(folder, glance, n=2, columns=600, binary=name == "binary")
    return {f"{name}_preview": str(sheet), f"{name}_preview_glance": str(glance)}


def _foreign_files(folder: Path) -> list[Path]:
    # The foreign scans' content is their files: no generation key names it, so every file counts.
    index = folder / INDEX_FILE
    if not index.is_file():
        return [index]
    frame = pd.read_parquet(index)
    return [index, *(folder / str(name) for column in FILE_COLUMNS for name in frame[column])]


def synthesize(settings: Settings, preview: Path | None = None) -> StageResult:
    """Generate (or complete an interrupted run of) the binary and multiclass sets, then the foreign set.

    The multiclass candidates are checked against the `validate` bounds, so those are parameters
    too, as are the archive's scan sizes when `synthesize.size_source` is archive. The foreign set
    (`foreign.count` scans; none at 0) takes its test wells from the same split by well.

    Args:
        settings: the run's settings.
        preview: also write contact sheets here (`veernet synthesize --preview`): the multiclass set's
            at this path, the foreign set's (its first `FOREIGN_SHEET` scans) beside it with `-foreign`
            added to the name.
    """
    root = settings.path("synthetic")
    source = settings.paths.las_source
    las_identity = folder_listing(settings.path("las_source")) if source else ""
    archive = settings.synthesize.size_source == "archive"
    sizes = sizes_digest(archive_sizes(settings.path("validated"))) if archive else ""

    def make_sets(_: str) -> StageResult:
        paths: dict[str, str] = {}
        counts = synthesize_sets(settings)
        for name in SETS:
            paths |= {name: str(root / name), **_sheets(root / name, name),
                      f"{name}_rejections": str(root / name / REJECTIONS_FILE)}
        return StageResult("synthesize", counts=flat_counts(counts), paths=paths)

    def make_foreign(_: str) -> StageResult:
        counts = write_foreign_set(settings)
        paths = {FOREIGN_DIR: str(root / FOREIGN_DIR)}
        if counts["scans"]:
            paths |= _sheets(root / FOREIGN_DIR, FOREIGN_DIR)
        return StageResult("synthesize", counts=flat_counts({FOREIGN_DIR: counts}), paths=paths)

    # A set's instances are a function of their generation key; the key and the index name them all.
    sets = run_cached("synthesize", settings, [root / name for name in SETS],
                      {"las_source": las_identity, "archive_sizes": sizes}, make_sets,
                      lambda: files_version([root / name / file for name in SETS
                                             for file in (INDEX_FILE, GENERATION_FILE)]))
    foreign = run_cached("synthesize", settings, [root / FOREIGN_DIR],
                         {"las_source": las_identity, "part": FOREIGN_DIR}, make_foreign,
                         lambda: files_version(_foreign_files(root / FOREIGN_DIR)))
    result = StageResult("synthesize", fingerprint=sets.fingerprint, data_version=sets.data_version,
                         skipped=sets.skipped and foreign.skipped, counts={**sets.counts, **foreign.counts},
                         metrics={**foreign.metrics, **sets.metrics}, paths={**sets.paths, **foreign.paths})
    if preview is not None:
        preview_sheet(root / "multiclass", Path(preview))
        result.paths["preview"] = str(Path(preview).resolve())
        if settings.foreign.count:
            # Four scans: the foreign set's 8-bit scans carry incompressible noise (about 1.3 MB each).
            sheet = Path(preview).with_name(f"{Path(preview).stem}-foreign{Path(preview).suffix}")
            preview_sheet(root / FOREIGN_DIR, sheet, n=FOREIGN_SHEET)
            result.paths["preview_foreign"] = str(sheet.resolve())
    return result
