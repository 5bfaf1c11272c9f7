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
from pathlib import Path
from typing import Any

from veernet_pipeline.config import IngestParams, ValidateParams
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
from veernet_pipeline.io.scan_errors import DECODE_CRASHED, DECODE_TIMEOUT
from veernet_pipeline.io.scanfile import ReadRules, decode_step, failure_fields, header_step, image_statistics
from veernet_pipeline.provenance import code_digest, digest, file_sha256

logger = logging.getLogger(__name__)

__all__ = ["MANIFEST_COLUMNS", "MANIFEST_DTYPES", "MANIFEST_FILE", "image_statistics", "ingest_archive",
           "read_manifest", "read_rules", "scan_files"]
_HEADER_COLUMNS = [c for c in MANIFEST_COLUMNS if c not in ("path", "decoded", "paper_level", "ink_share",
                                                             "calibration", "calibration_sha256")]


def scan_files(raw_dir: Path, extensions: list[str] | tuple[str, ...]) -> list[Path]:
    """Every file under `raw_dir` whose extension is one of `extensions` (case-insensitive), sorted by relative path.

    A broken symbolic link counts (ingest records it as unreadable). Ingest takes exactly these
    files, so a check can compare the archive on disk with the manifest.
    """
    wanted = {(e if e.startswith(".") else f".{e}").lower() for e in extensions}
    found = [p for p in raw_dir.rglob("*") if (p.is_file() or p.is_symlink()) and p.suffix.lower() in wanted]
    return sorted(found, key=lambda p: p.relative_to(raw_dir).as_posix())


def read_rules(ingest: IngestParams, bounds: ValidateParams) -> ReadRules:
    """The header step's rules: the pixel budget and the `validate:` bounds."""
    return ReadRules(max_pixels=ingest.max_pixels, width_min=bounds.width.min, width_max=bounds.width.max,
                     height_min=bounds.height.min, height_max=bounds.height.max, bits=tuple(bounds.bits),
                     max_pages=bounds.max_pages)


def _keys(rules: ReadRules, params: IngestParams) -> dict[str, str]:
    """What a remembered row was read under: rules and code (``read_key``), and the worker limits (``limits_key``)."""
    return {"read_key": digest({"rules": rules, "code": code_digest(["veernet_pipeline.io.scanfile"])}),
            "limits_key": digest({"memory": params.worker_memory_mb, "timeout": params.timeout_s})}


def _remembered(known: dict[str, Any] | None, size: int, mtime: int, out_dir: Path, same_limits: bool) -> bool:
    """Whether a file's remembered row still holds: same size and mtime, its decoded copy still there.

    A row that failed by the worker limits (time, crash) is tried again when those limits changed.
    """
    if known is None or (int(known["bytes"]), int(known[MTIME_COLUMN])) != (size, mtime):
        return False
    if known["decoded"] and not (out_dir / known["decoded"]).is_file():
        return False
    return same_limits or known["error_code"] not in (DECODE_CRASHED, DECODE_TIMEOUT)


def _sidecar_fields(path: Path, raw_dir: Path) -> dict[str, str]:
    sidecar = find_sidecar(path)
    if sidecar is None:
        return {"calibration": "", "calibration_sha256": ""}
    return {"calibration": sidecar.relative_to(raw_dir).as_posix(), "calibration_sha256": file_sha256(sidecar)[0]}


def _read_files(jobs: dict[str, Path], out_dir: Path, params: IngestParams, rules: ReadRules,
                decoded_by_sha: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Header then decode steps for `jobs` (relative path -> file) in worker processes; fields per path."""
    workers = worker_count(params.workers, len(jobs))
    with worker_pool(workers, params.worker_memory_mb) as pool:
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
    return found


def ingest_archive(raw_dir: Path, out_dir: Path, params: IngestParams, bounds: ValidateParams) -> dict[str, int]:
    """Walk an archive, read its scans in worker processes and write ``out_dir/manifest.parquet``.

    Args:
        raw_dir: the operator's archive; searched recursively.
        out_dir: receives ``manifest.parquet``, ``files.parquet`` and ``scans/<sha256[:16]>.tif``.
        params: the ``ingest:`` section (extensions, workers, pixel budget, worker limits).
        bounds: the ``validate:`` section: a scan whose header misses a bound is not decoded.

    Returns:
        ``{"files", "decoded", "errors", "read", "reused"}``: ``read`` files went through the
        workers, ``reused`` kept their row from the last run.

    Raises:
        FileNotFoundError: ``raw_dir`` does not exist.
    """
    raw_dir, out_dir = Path(raw_dir), Path(out_dir)
    if not raw_dir.is_dir():
        raise FileNotFoundError(f"{raw_dir}: archive folder does not exist; set paths.raw in params.yaml")
    files = scan_files(raw_dir, params.extensions)
    rules = read_rules(params, bounds)
    keys = _keys(rules, params)
    known, known_keys = read_state(out_dir)
    if known_keys.get("read_key") != keys["read_key"]:
        known = {}
    same_limits = known_keys.get("limits_key") == keys["limits_key"]
    decoded_by_sha = {row["sha256"]: row for row in known.values() if row["decoded"]}
    rows: dict[str, dict[str, Any]] = {}
    mtimes: dict[str, int] = {}
    jobs: dict[str, Path] = {}
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
        if _remembered(known.get(rel), stat.st_size, stat.st_mtime_ns, out_dir, same_limits):
            rows[rel].update({name: known[rel][name] for name in (*_HEADER_COLUMNS, "decoded", "paper_level",
                                                                 "ink_share")})
            reused += 1
        else:
            jobs[rel] = path
    if jobs:
        for rel, fields in _read_files(jobs, out_dir, params, rules, decoded_by_sha).items():
            rows[rel].update(fields)
    manifest = manifest_frame([rows[p.relative_to(raw_dir).as_posix()] for p in files])
    if manifest["path"].tolist() != [p.relative_to(raw_dir).as_posix() for p in files]:
        raise AssertionError(f"{raw_dir}: {len(files)} files in but {len(manifest)} manifest rows out")
    write_manifest(out_dir, manifest, raw_dir)
    write_state(out_dir, manifest, [mtimes[p] for p in manifest["path"]], keys)
    failed = manifest[manifest["error_code"] != ""]
    for message in failed["error_message"]:
        logger.warning("%s", message)
    counts = {"files": len(manifest), "decoded": int((manifest["decoded"] != "").sum()), "errors": len(failed),
              "read": len(jobs), "reused": reused}
    logger.info("ingested %s: %s", raw_dir, counts)
    return counts
