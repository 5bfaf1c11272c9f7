"""Digitise the whole-log pages of an archive: every scan with a layout becomes one LAS per well and section.

A scan is a whole-log page when a layout applies to it (`pages.layout.find_layout`: a
`tranche.layout.json` in its folder or its own `<scan>.layout.json`). Each page is cut into its
track strips losslessly, each strip read, and the tracks of a section merged onto one depth index
(`inference.page.digitize_page_file`), into `out_dir/pages/<key>/<label>/`, where the key is a
digest of the page's path, bytes and layout files: a new page or an edited layout reads again, an
unchanged one is skipped. The folder is written whole (`atomic_dir`), so an existing folder is a
complete result.

Each page gets one row in `out_dir/pages.parquet` (`PAGE_COLUMNS`): written, skipped, or a
failure with its reason code (`bad_layout` for a layout that is missing a field, malformed or does
not fit the page, naming the field; the scan's own read error code otherwise). Pages in = rows out,
asserted; one bad page never stops the others.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pandas as pd
from torch import nn

from veernet_pipeline.config import ExtractParams
from veernet_pipeline.inference.page import digitize_page_file
from veernet_pipeline.io.atomic import atomic_dir, write_parquet_atomic
from veernet_pipeline.io.calibration import CalibrationError
from veernet_pipeline.io.scan_errors import ScanReadError
from veernet_pipeline.pages.layout import BAD_LAYOUT, LayoutError, find_layout
from veernet_pipeline.progress import progress
from veernet_pipeline.provenance import digest, file_sha256

logger = logging.getLogger(__name__)

PAGES_DIR, PAGES_INDEX = "pages", "pages.parquet"
PAGE_COLUMNS = ("path", "sha256", "layout", "las", "status", "reason_code", "reason")


def page_scans(scans: list[Path]) -> list[Path]:
    """The scans a layout applies to, in the given order."""
    return [s for s in scans if find_layout(s)]


def _page_key(scan: Path, rel: str, layouts: list[Path]) -> tuple[str, str]:
    """(page sha256, key of its path, bytes and layout files): the LAS files are named after the scan, so a copy
    under another name is another well, and an edited layout is a new result."""
    sha = file_sha256(scan)[0]
    return sha, digest({"path": rel, "page": sha, "layouts": [file_sha256(p)[0] for p in layouts]})


def _one(scan: Path, rel: str, out_dir: Path, model: nn.Module, label: str, reading: dict[str, Any]) -> dict[str, Any]:
    layouts = find_layout(scan)
    row: dict[str, Any] = {"path": rel, "sha256": "", "layout": ";".join(p.name for p in layouts), "las": "",
                           "status": "failed", "reason_code": "", "reason": ""}
    try:
        row["sha256"], key = _page_key(scan, rel, layouts)
        target = out_dir / PAGES_DIR / key[:16] / label
        if target.is_dir():
            row.update(status="skipped", las=";".join(sorted(p.relative_to(out_dir).as_posix()
                                                             for p in target.glob("*.las"))))
            return row
        with atomic_dir(target) as tmp:
            written = digitize_page_file(scan, tmp, model, label, **reading)
        row.update(status="written", las=";".join(sorted((target / p.name).relative_to(out_dir).as_posix()
                                                         for p in written)))
    except (LayoutError, CalibrationError) as exc:
        # A strip's sidecar comes from the layout, so its calibration error is the layout's too.
        row.update(reason_code=BAD_LAYOUT, reason=str(exc))
    except ScanReadError as exc:
        row.update(reason_code=exc.code, reason=str(exc))
    except (OSError, ValueError, MemoryError) as exc:
        row.update(reason_code="page_failed", reason=f"{scan}: {type(exc).__name__}: {exc}")
    return row


def digitize_pages(raw_dir: Path, scans: list[Path], model: nn.Module, label: str, out_dir: Path, tile_width: int,
                   tile_overlap: int, extract: ExtractParams, index_dir: Path | None = None) -> dict[str, int]:
    """Digitise every page in `scans` that a layout applies to (see the module docstring).

    Args:
        raw_dir: the archive; `scans` are under it and the index names them relative to it.
        scans: the archive's scan files (`io.ingest.scan_files`).
        model: VeerNet in eval mode, on the CPU.
        label: the output label (`stages.infer.output_label`).
        out_dir: the digitized folder; gets `pages/...` (and `pages.parquet` unless `index_dir` is given).
        tile_width, tile_overlap, extract: the reading (params.yaml `infer:` and `extract:`).
        index_dir: where `pages.parquet` goes (default `out_dir`): a tranche's run keeps its own.

    Returns:
        ``{"pages", "pages_written", "pages_skipped", "pages_failed", "pages_bad_layout"}``.
    """
    pages = page_scans(scans)
    reading = {"tile_width": tile_width, "tile_overlap": tile_overlap, "extract": extract}
    rows = [_one(scan, scan.relative_to(raw_dir).as_posix(), Path(out_dir), model, label, reading)
            for scan in progress(pages, desc="digitize pages", unit="page")]
    if len(rows) != len(pages):
        raise AssertionError(f"{raw_dir}: {len(pages)} pages in but {len(rows)} rows out")
    frame = pd.DataFrame(rows, columns=list(PAGE_COLUMNS))
    index = Path(index_dir or out_dir) / PAGES_INDEX
    if pages or index.exists():
        write_parquet_atomic(index, frame)
    for row in rows:
        if row["status"] == "failed":
            logger.warning("%s: %s", row["reason_code"], row["reason"])
    status = frame["status"]
    return {"pages": len(frame), "pages_written": int((status == "written").sum()),
            "pages_skipped": int((status == "skipped").sum()), "pages_failed": int((status == "failed").sum()),
            "pages_bad_layout": int((frame["reason_code"] == BAD_LAYOUT).sum())}
