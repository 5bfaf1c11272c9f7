"""Put the track strips of each whole-log page back together: one LAS per well and log section.

Ingest cuts every page a layout applies to into its track strips (`pages.strips`), one manifest
row each; validation holds each strip to the ordinary rules, and `inference.archive` reads each
validated strip like any scan, with the calibration sidecar ingest wrote beside it. This module
only assembles: for a page whose every strip was validated and read, the strips' LAS files of
each section are merged onto the section's depth index (`pages.assemble.merge_section`) into
`out_dir/pages/<key>/<label>/<page stem>[.<section>].las`. The key is a digest of the page's path
and of its strips' identities, sidecars and LAS files, so a new page, an edited layout or a new
model assembles again and an unchanged page is skipped. The folder is written whole
(`atomic_dir`), so an existing folder is a complete result.

A page is assembled whole or not at all: one quarantined strip (say a track taller than
`validate.height.max`) or one strip that failed to read fails the page, with the strip's reason
code and every such strip named, rather than writing a LAS without that track's curves.

Each page gets one row in `out_dir/pages.parquet` (`PAGE_COLUMNS`): written, skipped, or failed
with its reason code (`bad_layout` from ingest for a layout that cannot be used, naming the field;
a strip's quarantine code; `strip_failed` for a strip inference could not read). Pages in = rows
out, asserted; one bad page never stops the others.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pandas as pd

from veernet_pipeline.inference.archive import INDEX_FILE
from veernet_pipeline.io.atomic import atomic_dir, write_parquet_atomic
from veernet_pipeline.io.calibration import Calibration
from veernet_pipeline.io.las import LasCurve, read_curves
from veernet_pipeline.io.manifest import sidecar_path
from veernet_pipeline.io.scan_errors import BAD_LAYOUT
from veernet_pipeline.pages.assemble import TrackReading, merge_section, write_section_las
from veernet_pipeline.pages.layout import LayoutError, find_layout, load_layout
from veernet_pipeline.progress import progress
from veernet_pipeline.provenance import digest

logger = logging.getLogger(__name__)

PAGES_DIR, PAGES_INDEX = "pages", "pages.parquet"
PAGE_COLUMNS = ("path", "strips", "layout", "las", "status", "reason_code", "reason")
STRIP_FAILED = "strip_failed"


def _bounds(section: Any, track: Any) -> str:
    return f"rows {section.top_row}-{section.bottom_row}, columns {track.left}-{track.right}"


def _readings(page: str, strips: pd.DataFrame, dirs: dict[str, Path], las: dict[str, str]) -> list[Any]:
    """The page's sections as merged logs from its strips' LAS files; `LayoutError` if the layout moved since ingest."""
    layout = load_layout(dirs["raw"] / page)
    if layout is None:
        raise LayoutError(f"{page}: its layout is gone since ingest; run ingest again")
    by_place = {(r.section, r.track): r for r in strips.itertuples(index=False)}
    if len(by_place) != len(layout.sections) * len(layout.tracks):
        raise LayoutError(f"{page}: ingest cut {len(by_place)} strips but the layout now has "
                          f"{len(layout.sections)} sections x {len(layout.tracks)} tracks; run ingest again")
    logs = []
    for section in layout.sections:
        readings = []
        for track in layout.tracks:
            row = by_place.get((section.name, track.name))
            if row is None or row.page_bounds != _bounds(section, track):
                raise LayoutError(f"{page}: the layout changed since ingest cut the page (section {section.name}, "
                                  f"track {track.name}); run ingest again")
            calibration = Calibration.from_file(sidecar_path(row.calibration, row.page_file, dirs["raw"],
                                                             dirs["ingested"]))
            units = {c.mnemonic: c.unit for c in calibration.curves}
            depth, curves, _ = read_curves(dirs["out"] / las[row.path])
            readings.append(TrackReading(track.name, f"{row.path} ({row.page_bounds}; strip LAS {las[row.path]})",
                                         depth, [LasCurve(m, units.get(m, ""), v) for m, v in curves.items()]))
        logs.append(merge_section(section, readings, section.depth.unit, layout.well_items(), page))
    return logs


def _one(page: str, strips: pd.DataFrame, quarantined: pd.DataFrame, records: dict[str, dict[str, Any]],
         dirs: dict[str, Path], label: str) -> dict[str, Any]:
    row: dict[str, Any] = {"path": page, "strips": len(strips) + int((quarantined["page_strips"] > 0).sum()),
                           "layout": ";".join(p.name for p in find_layout(dirs["raw"] / page)), "las": "",
                           "status": "failed", "reason_code": "", "reason": ""}
    if len(quarantined):
        what = "" if (quarantined["page_strips"] == 0).all() else (
            f"{page}: {len(quarantined)} of {row['strips']} strips quarantined, the page is not assembled: ")
        return row | {"reason_code": str(quarantined["reason_code"].iloc[0]),
                      "reason": what + "; ".join(quarantined["reason"])}
    failed = [records[p] for p in strips["path"] if records.get(p, {}).get("status") not in ("written", "skipped")]
    if failed:
        return row | {"reason_code": STRIP_FAILED, "reason": f"{page}: strips not read, the page is not assembled: "
                      + "; ".join(f"{r['path']}: {r['reason']}" for r in failed)}
    las = {p: records[p]["las"] for p in strips["path"]}
    key = digest({"path": page, "strips": sorted(zip(strips["sha256"], strips["calibration_sha256"], las.values(),
                                                     strict=True))})
    target = dirs["out"] / PAGES_DIR / key[:16] / label
    if target.is_dir():
        return row | {"status": "skipped", "las": ";".join(sorted(p.relative_to(dirs["out"]).as_posix()
                                                                  for p in target.glob("*.las")))}
    try:
        logs = _readings(page, strips, dirs, las)
    except (LayoutError, ValueError, OSError) as exc:
        return row | {"reason_code": BAD_LAYOUT if isinstance(exc, LayoutError) else STRIP_FAILED,
                      "reason": f"{page}: {exc}" if not str(exc).startswith(page) else str(exc)}
    notes = [f"source page {Path(page).name}", f"model {label}"]
    with atomic_dir(target) as tmp:
        written = [write_section_las(tmp, Path(page).stem, log, notes) for log in logs]
    return row | {"status": "written", "las": ";".join(sorted((target / p.name).relative_to(dirs["out"]).as_posix()
                                                              for p in written))}


def assemble_pages(validated_dir: Path, ingested_dir: Path, raw_dir: Path, label: str, out_dir: Path,
                   index_dir: Path | None = None) -> dict[str, int]:
    """Assemble every page of the validated manifest (see the module docstring), after `digitize_validated`.

    Args:
        validated_dir: holds `validated.parquet` and `quarantine.parquet`; a page's rows carry ``page_file``.
        ingested_dir: root of the strips' sidecars.
        raw_dir: the archive, where the pages' layouts are.
        label: the output label the strips were read under (`stages.infer.output_label`).
        out_dir: the digitized folder: holds the strips' LAS files, gets `pages/...`.
        index_dir: holds the strips' `index.parquet` and gets `pages.parquet` (default `out_dir`).

    Returns:
        ``{"pages", "pages_written", "pages_skipped", "pages_failed", "pages_bad_layout"}``.
    """
    validated = pd.read_parquet(Path(validated_dir) / "validated.parquet")
    quarantine = pd.read_parquet(Path(validated_dir) / "quarantine.parquet")
    index_dir = Path(index_dir or out_dir)
    records = {r["path"]: r for r in pd.read_parquet(index_dir / INDEX_FILE).to_dict("records")}
    pages = sorted(p for p in {*validated["page_file"], *quarantine["page_file"]} if p)
    dirs = {"raw": Path(raw_dir), "ingested": Path(ingested_dir), "out": Path(out_dir)}
    rows = [_one(page, validated[validated["page_file"] == page], quarantine[quarantine["page_file"] == page],
                 records, dirs, label) for page in progress(pages, desc="assemble pages", unit="page")]
    if len(rows) != len(pages):
        raise AssertionError(f"{validated_dir}: {len(pages)} pages in but {len(rows)} rows out")
    frame = pd.DataFrame(rows, columns=list(PAGE_COLUMNS))
    index = index_dir / PAGES_INDEX
    if pages or index.exists():
        write_parquet_atomic(index, frame)
    for row in rows:
        if row["status"] == "failed":
            logger.warning("%s: %s", row["reason_code"], row["reason"])
    status = frame["status"]
    return {"pages": len(frame), "pages_written": int((status == "written").sum()),
            "pages_skipped": int((status == "skipped").sum()), "pages_failed": int((status == "failed").sum()),
            "pages_bad_layout": int((frame["reason_code"] == BAD_LAYOUT).sum())}
