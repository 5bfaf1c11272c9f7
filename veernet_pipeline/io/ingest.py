"""Ingest an archive of scans: one manifest row per file, decoded landscape copies of readable ones.

Every file under the raw folder whose extension matches gets exactly one row, whatever happens to
it: files in = rows out, checked on every run. The work on a file runs in worker processes
(`io.pool`) in two steps, each with a time limit, over every core (``ingest.workers``):

1. header (`scanfile.header_step`): hash, parse the tags, apply the pixel budget and the rules a
   header decides (size, depth, pages: ``validate:``), all before any pixel is decoded;
2. decode (`scanfile.decode_step`), only for files the header step passed: decode to an 8-bit
   landscape TIFF named by content (``scans/<sha256[:16]>.tif``) and record two statistics of its
   pixels, ``paper_level`` and ``ink_share`` (`scanfile.image_statistics`), which the Great
   Expectations check on validated scans reads.

Whole-log pages: with a `PageReader` (the ingest stage passes `stages.ingest.PAGES`), a file
a layout applies to goes to its page step instead (`pages.strips.page_step`, same workers and
limits), which cuts it into its track strips and gives one manifest row per strip, each with its
calibration sidecar written beside its decoded copy. A page keeps its rows from the last run
while its size and mtime, its layout files' paths, sizes and mtimes and the page step's code are
unchanged and every strip's decoded copy is still there (`_page_state`). Count in = count
out, for pages too: every file is either a scan, with exactly one row whose ``page_file`` is
empty, or a page, whose rows all carry ``page_file`` = its path: ``page_strips`` strip rows, or
one error row (``page_strips`` 0) when it could not be cut (``bad_layout``, or any scan error
code). Checked on every run.

A file that fails at any step (an exception, a worker that dies, a time limit) still gets its row,
with ``error_code``/``error_message`` filled; validation quarantines it. So one broken scan never
stops a backfill of thousands.

Incremental: a file whose relative path, size and mtime match ingest's last run (`manifest.read_state`),
read under the same rules and code, keeps its row without being hashed or decoded again; a
changed file is read again. A file with new bytes whose content was decoded before (a renamed
copy) is hashed but not decoded again.

The workers are spawned processes (`io.pool`), which import the calling program's main module: a
script of your own that calls `ingest_archive` needs the usual ``if __name__ == "__main__":``
guard (the `veernet` CLI, Dagster and pytest have it).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from veernet_pipeline.config import IngestParams, ValidateParams
from veernet_pipeline.errors import EmptyArchive
from veernet_pipeline.io.calibration import find_sidecar
from veernet_pipeline.io.manifest import (
    MANIFEST_COLUMNS,
    MANIFEST_DTYPES,
    MANIFEST_FILE,
    MTIME_COLUMN,
    SCANS_DIR,
    blank_row,
    manifest_frame,
    read_manifest,
    read_state,
    write_manifest,
    write_state,
)
from veernet_pipeline.io.pool import run_each, worker_count, worker_pool
from veernet_pipeline.io.resolution import AS_STORED, Resampling
from veernet_pipeline.io.scan_errors import DECODE_CRASHED, DECODE_TIMEOUT
from veernet_pipeline.io.scanfile import ReadRules, decode_step, failure_fields, header_step, image_statistics
from veernet_pipeline.io.tranches import in_tranche
from veernet_pipeline.provenance import code_digest, digest, file_sha256

logger = logging.getLogger(__name__)

__all__ = ["MANIFEST_COLUMNS", "MANIFEST_DTYPES", "MANIFEST_FILE", "image_statistics", "ingest_archive",
           "read_manifest", "read_rules", "scan_files"]
_HEADER_COLUMNS = [c for c in MANIFEST_COLUMNS if c not in ("path", "decoded", "paper_level", "ink_share",
                                                             "calibration", "calibration_sha256")]


@dataclass(frozen=True)
class PageReader:
    """How ingest recognises and reads whole-log pages (`pages.strips`; `io` may not import `pages`).

    Attributes:
        layouts: the layout files that apply to a scan (empty: not a page).
        step: the worker task ``(path, rel, out_dir, scans folder, rules) -> {"strips": [fields...]}`` or error
            fields.
    """

    layouts: Callable[[Path], list[Path]]
    step: Callable[[str, str, str, str, ReadRules], dict[str, Any]]


def scan_files(raw_dir: Path, extensions: list[str] | tuple[str, ...], tranche: str | None = None) -> list[Path]:
    """Every file under `raw_dir` whose extension is one of `extensions` (case-insensitive), sorted by relative path.

    A broken symbolic link counts (ingest records it as unreadable). Ingest takes exactly these
    files, so a check can compare the archive on disk with the manifest. With `tranche`, only
    that tranche's files (`io.tranches`).
    """
    wanted = {(e if e.startswith(".") else f".{e}").lower() for e in extensions}
    found = [p for p in raw_dir.rglob("*") if (p.is_file() or p.is_symlink()) and p.suffix.lower() in wanted
             and in_tranche(p.relative_to(raw_dir).as_posix(), tranche)]
    return sorted(found, key=lambda p: p.relative_to(raw_dir).as_posix())


def read_rules(ingest: IngestParams, bounds: ValidateParams, resampling: Resampling) -> ReadRules:
    """The header step's rules: the pixel budget and the `validate:` bounds on the net's grid."""
    return ReadRules(max_pixels=ingest.max_pixels, width_min=bounds.width.min, width_max=bounds.width.max,
                     height_min=bounds.height.min, height_max=bounds.height.max, bits=tuple(bounds.bits),
                     max_pages=bounds.max_pages, resampling=resampling)


def _keys(rules: ReadRules, params: IngestParams) -> dict[str, str]:
    """What a remembered row was read under: rules and code (``read_key``), and the worker limits (``limits_key``)."""
    return {"read_key": digest({"rules": rules, "code": code_digest(["veernet_pipeline.io.scanfile"])}),
            "limits_key": digest({"memory": params.worker_memory_mb, "timeout": params.timeout_s})}


def _remembered(known: dict[str, Any] | None, size: int, mtime: int, out_dir: Path, same_limits: bool) -> bool:
    """Whether a file's remembered row still holds: same size and mtime, its decoded copy still there.

    A row that failed by the worker limits (time, crash) is tried again when those limits changed.
    """
    if known is None or known["page_file"] or (int(known["bytes"]), int(known[MTIME_COLUMN])) != (size, mtime):
        return False
    if known["decoded"] and not (out_dir / known["decoded"]).is_file():
        return False
    return same_limits or known["error_code"] not in (DECODE_CRASHED, DECODE_TIMEOUT)


def _page_state(stat: os.stat_result, layouts: list[Path], step_code: str) -> int:
    """A page's state as one int64 (stored where a scan's mtime goes): its size and mtime, its layout files'
    paths, sizes and mtimes, and the code of the page step; any change reads the page again."""
    parts = [stat.st_size, stat.st_mtime_ns, step_code] + [
        [str(p), p.stat().st_size, p.stat().st_mtime_ns] for p in layouts]
    return int(digest(parts)[:15], 16)


def _remembered_page(known: dict[str, dict[str, Any]], rel: str, state: int, out_dir: Path,
                     same_limits: bool) -> list[dict[str, Any]] | None:
    """A page's rows from the last run, if they still hold (`_page_state` unchanged, decoded strips there)."""
    rows = [row for row in known.values() if row["page_file"] == rel]
    if not rows or any(int(row[MTIME_COLUMN]) != state for row in rows):
        return None
    if len(rows) != max(1, int(rows[0]["page_strips"])):
        return None
    if any(row["decoded"] and not (out_dir / row["decoded"]).is_file() for row in rows):
        return None
    if not same_limits and any(row["error_code"] in (DECODE_CRASHED, DECODE_TIMEOUT) for row in rows):
        return None
    return [{name: row[name] for name in MANIFEST_COLUMNS} for row in rows]


def _sidecar_fields(path: Path, raw_dir: Path) -> dict[str, str]:
    sidecar = find_sidecar(path)
    if sidecar is None:
        return {"calibration": "", "calibration_sha256": ""}
    return {"calibration": sidecar.relative_to(raw_dir).as_posix(), "calibration_sha256": file_sha256(sidecar)[0]}


def _read_files(jobs: dict[str, Path], out_dir: Path, params: IngestParams, rules: ReadRules,
                decoded_by_sha: dict[str, dict[str, Any]], pages: dict[str, Path],
                reader: PageReader | None) -> tuple[dict[str, dict[str, Any]], dict[str, dict[str, Any]]]:
    """Header then decode steps for `jobs`, the page step for `pages` (relative path -> file) in worker processes.

    Returns:
        Fields per scan path, and the page step's outcome per page path.
    """
    workers = worker_count(params.workers, len(jobs) + len(pages))
    with worker_pool(workers, params.worker_memory_mb) as pool:
        cut = run_each(pool, reader.step, [(rel, (str(p), rel, str(out_dir), SCANS_DIR, rules))
                                        for rel, p in pages.items()],
                       params.timeout_s, "page") if reader is not None and pages else {}
        found = run_each(pool, header_step, [(rel, (str(p), rel, rules)) for rel, p in jobs.items()],
                         params.timeout_s, "header")
        to_decode = []
        for rel, fields in found.items():
            if not fields.pop("decode", False):
                continue
            fields["decoded"] = f"{SCANS_DIR}/{fields['sha256'][:16]}.tif"
            earlier = decoded_by_sha.get(fields["sha256"])
            if earlier is not None and (out_dir / fields["decoded"]).is_file():
                fields.update(paper_level=earlier["paper_level"], ink_share=earlier["ink_share"])
            else:
                to_decode.append((rel, (str(jobs[rel]), rel, str(out_dir / fields["decoded"]), rules.max_pixels)))
        decoded = run_each(pool, decode_step, to_decode, params.timeout_s, "decode")
    for rel, fields in decoded.items():
        if fields.get("error_code"):
            fields["decoded"] = ""
        found[rel].update(fields)
    return found, cut


def _page_rows(rel: str, outcome: dict[str, Any]) -> list[dict[str, Any]]:
    """A page's manifest rows: one per strip, or one error row for the page (module docstring)."""
    if "strips" in outcome:
        return [{**blank_row(s["path"]), **s} for s in outcome["strips"]]
    row = blank_row(rel)
    row.update({k: v for k, v in outcome.items() if k in MANIFEST_COLUMNS}, page_file=rel, page_strips=0)
    return [row]


def _check_counts(raw_dir: Path, files: list[Path], pages: set[str], manifest: Any) -> None:
    """Files in = rows out: each scan one row without ``page_file``; each page its strips or one error row."""
    rels = [p.relative_to(raw_dir).as_posix() for p in files]
    scans = manifest[manifest["page_file"] == ""]["path"].tolist()
    by_page = manifest[manifest["page_file"] != ""].groupby("page_file", sort=False)["page_strips"]
    wrong = [page for page, strips in by_page if len(strips) != max(1, int(strips.iloc[0]))
             or (strips != strips.iloc[0]).any()]
    if scans != [r for r in rels if r not in pages] or set(by_page.groups) != pages or wrong:
        raise AssertionError(f"{raw_dir}: {len(files)} files in ({len(pages)} pages) but {len(manifest)} manifest "
                             f"rows out ({len(scans)} scans, pages {sorted(by_page.groups)}; strip counts wrong: "
                             f"{wrong})")


def ingest_archive(raw_dir: Path, out_dir: Path, params: IngestParams, bounds: ValidateParams,
                   tranche: str | None = None, pages: PageReader | None = None,
                   resampling: Resampling = AS_STORED) -> dict[str, int]:
    """Walk an archive, read its scans in worker processes and write ``out_dir/manifest.parquet``.

    Args:
        raw_dir: the operator's archive; searched recursively.
        out_dir: receives ``manifest.parquet``, ``files.parquet`` and ``scans/<sha256[:16]>.tif``.
        params: the ``ingest:`` section (extensions, workers, pixel budget, worker limits).
        bounds: the ``validate:`` section: a scan whose header misses a bound is not decoded.
        tranche: only this tranche's files (`io.tranches`); manifest paths stay relative to ``raw_dir``.
        pages: how to recognise and cut whole-log pages; None reads every file as one scan.
        resampling: ``infer.net_dpi`` and ``infer.untagged_dpi``: a scan at another resolution is held to
            `bounds` at its size on the net's grid (`io.resolution`); the default holds every scan at its
            own pixels.

    Returns:
        ``{"files", "pages", "strips", "rows", "decoded", "resampled", "errors", "read", "reused"}``:
        ``files`` in (pages among them), ``strips`` cut from the pages, ``rows`` in the manifest,
        ``resampled`` decoded rows whose size on the net's grid differs from their own (at another
        resolution, stated or `infer.untagged_dpi`'s), ``read`` files went through the workers,
        ``reused`` kept their row from the last run.

    Raises:
        EmptyArchive: ``raw_dir`` does not exist (a folder without scans gives an empty manifest).
    """
    raw_dir, out_dir = Path(raw_dir), Path(out_dir)
    if not raw_dir.is_dir():
        raise EmptyArchive(f"{raw_dir}: archive folder does not exist; set paths.raw in params.yaml")
    files = scan_files(raw_dir, params.extensions, tranche)
    rules = read_rules(params, bounds, resampling)
    keys = _keys(rules, params)
    known, known_keys = read_state(out_dir)
    if known_keys.get("read_key") != keys["read_key"]:
        known = {}
    same_limits = known_keys.get("limits_key") == keys["limits_key"]
    decoded_by_sha = {row["sha256"]: row for row in known.values() if row["decoded"]}
    rows: dict[str, dict[str, Any]] = {}
    mtimes: dict[str, int] = {}
    jobs: dict[str, Path] = {}
    page_jobs: dict[str, Path] = {}
    kept_pages: dict[str, list[dict[str, Any]]] = {}
    page_code = code_digest([pages.step.__module__]) if pages is not None else ""
    reused = 0
    for path in files:
        rel = path.relative_to(raw_dir).as_posix()
        rows[rel], mtimes[rel] = blank_row(rel), 0
        try:
            stat = path.stat()
            rows[rel].update(_sidecar_fields(path, raw_dir))
        except OSError as exc:
            rows[rel].update(failure_fields(rel, exc))
            continue
        mtimes[rel] = stat.st_mtime_ns
        layouts = pages.layouts(path) if pages is not None else []
        if layouts:
            mtimes[rel] = _page_state(stat, layouts, page_code)
            kept = _remembered_page(known, rel, mtimes[rel], out_dir, same_limits)
            if kept is None:
                page_jobs[rel] = path
            else:
                kept_pages[rel] = kept
                reused += 1
        elif _remembered(known.get(rel), stat.st_size, stat.st_mtime_ns, out_dir, same_limits):
            rows[rel].update({name: known[rel][name] for name in (*_HEADER_COLUMNS, "decoded", "paper_level",
                                                                 "ink_share")})
            reused += 1
        else:
            jobs[rel] = path
    cut: dict[str, dict[str, Any]] = {}
    if jobs or page_jobs:
        found, cut = _read_files(jobs, out_dir, params, rules, decoded_by_sha, page_jobs, pages)
        for rel, fields in found.items():
            rows[rel].update(fields)
    ordered: list[dict[str, Any]] = []
    row_mtimes: list[int] = []
    for path in files:
        rel = path.relative_to(raw_dir).as_posix()
        these = _page_rows(rel, cut[rel]) if rel in page_jobs else kept_pages.get(rel, [rows[rel]])
        ordered += these
        row_mtimes += [mtimes[rel]] * len(these)
    manifest = manifest_frame(ordered)
    _check_counts(raw_dir, files, set(page_jobs) | set(kept_pages), manifest)
    write_manifest(out_dir, manifest, raw_dir)
    write_state(out_dir, manifest, row_mtimes, keys)
    failed = manifest[manifest["error_code"] != ""]
    for message in failed["error_message"]:
        logger.warning("%s", message)
    strips = manifest[manifest["page_strips"] > 0]
    decoded = manifest[manifest["decoded"] != ""]
    # Decoded scans the net will read resampled: at another resolution than infer.net_dpi.
    resampled = (decoded["net_width"] != decoded["width"]) | (decoded["net_height"] != decoded["height"])
    counts = {"files": len(files), "pages": len(page_jobs) + len(kept_pages), "strips": len(strips),
              "rows": len(manifest), "decoded": len(decoded), "resampled": int(resampled.sum()), "errors": len(failed),
              "read": len(jobs) + len(page_jobs), "reused": reused}
    logger.info("ingested %s: %s", raw_dir, counts)
    return counts
