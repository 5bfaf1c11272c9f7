"""Ingest an archive of scans: one manifest row per file, decoded landscape copies of readable ones.

Every file under the raw folder whose extension matches is hashed, its header read and, when it
decodes, written as an 8-bit landscape TIFF named by content (``scans/<sha256[:16]>.tif``). A file
that fails at any step still gets its row, with ``error_code``/``error_message`` filled, so one
broken scan never stops a backfill of thousands; validation quarantines it later.

Each decoded scan's row also records two statistics of its pixels (`image_statistics`), computed
once from the array ingest decodes: ``paper_level`` (the median gray, sampled) and ``ink_share``
(the share of pixels darker than mid-gray). Validation never filters on them; the Great Expectations check on
validated scans reads them to catch negative, blank or black pages.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from veernet_pipeline.io.atomic import atomic_path
from veernet_pipeline.io.calibration import find_sidecar
from veernet_pipeline.io.tiff import UNREADABLE, ScanReadError, decode_scan, read_header, write_tiff
from veernet_pipeline.progress import progress
from veernet_pipeline.provenance import file_sha256

logger = logging.getLogger(__name__)

MANIFEST_FILE = "manifest.parquet"
SCANS_DIR = "scans"
# Stored in the manifest's parquet metadata (DataFrame.attrs) so validation can find the sidecars,
# relative to the ingested folder so the manifest's bytes do not depend on where the repo lives.
RAW_DIR_ATTR = "raw_dir"

# Column -> dtype. Sizes and statistics are 0 and strings "" where a failed file left them unknown.
MANIFEST_DTYPES: dict[str, str] = {
    "path": "object",
    "sha256": "object",
    "bytes": "int64",
    "width": "int64",
    "height": "int64",
    "stored_width": "int64",
    "stored_height": "int64",
    "rotated": "bool",
    "bits": "int64",
    "samples": "int64",
    "photometric": "object",
    "compression": "object",
    "pages": "int64",
    "decoded": "object",
    "paper_level": "float64",
    "ink_share": "float64",
    "calibration": "object",
    # The sidecar's content hash: a corrected sidecar changes the manifest, so validation and the
    # archive's outputs (keyed by it) follow the correction.
    "calibration_sha256": "object",
    "error_code": "object",
    "error_message": "object",
}
MANIFEST_COLUMNS: tuple[str, ...] = tuple(MANIFEST_DTYPES)
STATISTIC_COLUMNS = ("paper_level", "ink_share")
# Gray levels below this count as ink for `ink_share`: the middle of the 8-bit range.
INK_BELOW = 128


def _blank_row(rel: str) -> dict[str, Any]:
    row: dict[str, Any] = {name: ("" if dtype == "object" else 0) for name, dtype in MANIFEST_DTYPES.items()}
    row["path"] = rel
    row["rotated"] = False
    return row


def image_statistics(image: np.ndarray) -> dict[str, float]:
    """``paper_level`` and ``ink_share`` of a decoded scan.

    ``paper_level`` is the median gray of every 4th row and column: paper fills most of a strip, so
    a sixteenth of the pixels (the sample the synthetic label rule takes too) gives it at a
    sixteenth of the cost, a few ms on a full-size scan; the generator computes it for every
    candidate. ``ink_share``, the share of pixels darker than `INK_BELOW`, counts every pixel: thin
    lines on a regular grid could fall between or onto a regular sample's rows and columns.

    Shape:
        image: (H, W) uint8, ink dark on light paper (`tiff.decode_scan`'s convention).
    """
    if image.dtype != np.uint8 or image.size == 0:
        raise ValueError(f"image statistics need a non-empty uint8 image, got {image.dtype} of shape {image.shape}")
    ink = np.count_nonzero(image < INK_BELOW)
    return {"paper_level": float(np.median(image[::4, ::4])), "ink_share": float(ink / image.size)}


def scan_files(raw_dir: Path, extensions: list[str] | tuple[str, ...]) -> list[Path]:
    """Every file under `raw_dir` whose extension is one of `extensions` (case-insensitive), sorted by relative path.

    Ingest takes exactly these files, so a check can compare the archive on disk with the manifest.
    """
    wanted = {(e if e.startswith(".") else f".{e}").lower() for e in extensions}
    found = [p for p in raw_dir.rglob("*") if p.is_file() and p.suffix.lower() in wanted]
    return sorted(found, key=lambda p: p.relative_to(raw_dir).as_posix())


def _known_statistics(out_dir: Path) -> dict[str, dict[str, float]]:
    """Statistics of the scans an earlier run decoded, by sha256, so that a re-run need not decode them again."""
    path = out_dir / MANIFEST_FILE
    if not path.is_file():
        return {}
    previous = pd.read_parquet(path)
    if not set(STATISTIC_COLUMNS) <= set(previous.columns):
        return {}  # written before ingest recorded statistics: every scan is decoded once more
    done = previous[previous["decoded"] != ""]
    return {row["sha256"]: {name: float(row[name]) for name in STATISTIC_COLUMNS} for _, row in done.iterrows()}


def _ingest_one(path: Path, raw_dir: Path, out_dir: Path, known: dict[str, dict[str, float]]) -> dict[str, Any]:
    """Build one manifest row; a failure of the input fills the error columns instead of raising.

    `known` maps sha256 to the statistics of scans already decoded; this row's are added to it.
    """
    rel = path.relative_to(raw_dir).as_posix()
    row = _blank_row(rel)
    sidecar = find_sidecar(path)
    row["calibration"] = sidecar.relative_to(raw_dir).as_posix() if sidecar else ""
    try:
        row["calibration_sha256"] = file_sha256(sidecar)[0] if sidecar else ""
        row["sha256"], row["bytes"] = file_sha256(path)
    except OSError as exc:
        row["error_code"] = UNREADABLE
        what = Path(exc.filename).name if exc.filename else "the file"
        row["error_message"] = f"{rel}: cannot read {what} ({exc.strerror or exc}); check its permissions"
        return row
    try:
        header = read_header(path)
        row.update(
            width=header.landscape_width,
            height=header.landscape_height,
            stored_width=header.width,
            stored_height=header.height,
            rotated=header.rotated,
            bits=header.bits,
            samples=header.samples,
            photometric=header.photometric,
            compression=header.compression,
            pages=header.pages,
        )
        target = out_dir / SCANS_DIR / f"{row['sha256'][:16]}.tif"
        # Content-addressed: the same bytes always decode to the same image, so reuse it and its statistics.
        statistics = known.get(row["sha256"]) if target.is_file() else None
        if statistics is None:
            image = decode_scan(path)
            if not target.is_file():
                write_tiff(target, image)
            statistics = known[row["sha256"]] = image_statistics(image)
        row.update(statistics)
        row["decoded"] = target.relative_to(out_dir).as_posix()
    except ScanReadError as exc:
        row["error_code"] = exc.code
        row["error_message"] = f"{rel}: {exc.message}"
    return row


def ingest_archive(raw_dir: Path, out_dir: Path, extensions: list[str] | tuple[str, ...]) -> dict[str, int]:
    """Walk an archive, decode its scans and write ``out_dir/manifest.parquet``.

    Args:
        raw_dir: the operator's archive; searched recursively.
        out_dir: receives ``manifest.parquet`` and ``scans/<sha256[:16]>.tif``.
        extensions: file extensions to take (``.tif``, ``.tiff``), matched case-insensitively.

    Returns:
        ``{"files": ..., "decoded": ..., "errors": ...}``.

    Raises:
        FileNotFoundError: ``raw_dir`` does not exist.
    """
    raw_dir = Path(raw_dir)
    out_dir = Path(out_dir)
    if not raw_dir.is_dir():
        raise FileNotFoundError(f"{raw_dir}: archive folder does not exist; set paths.raw in params.yaml")
    files = scan_files(raw_dir, extensions)
    known = _known_statistics(out_dir)
    rows = [_ingest_one(p, raw_dir, out_dir, known) for p in progress(files, desc="ingest", unit="scan")]
    manifest = pd.DataFrame(rows, columns=list(MANIFEST_COLUMNS)).astype(MANIFEST_DTYPES)
    out_dir.mkdir(parents=True, exist_ok=True)
    manifest.attrs[RAW_DIR_ATTR] = Path(os.path.relpath(raw_dir.resolve(), out_dir.resolve())).as_posix()
    with atomic_path(out_dir / MANIFEST_FILE) as tmp:
        manifest.to_parquet(tmp, index=False)
    failed = manifest[manifest["error_code"] != ""]
    for _, row in failed.iterrows():
        logger.warning("%s", row["error_message"])
    counts = {"files": len(manifest), "decoded": int((manifest["decoded"] != "").sum()), "errors": len(failed)}
    logger.info("ingested %s: %d files, %d decoded, %d errors", raw_dir, *counts.values())
    return counts


def read_manifest(ingested_dir: Path) -> tuple[pd.DataFrame, Path | None]:
    """Load ``manifest.parquet`` and the archive folder it was made from.

    Returns:
        The manifest, and the raw folder resolved from the path stored at ingest time (None for a
        manifest written without it).

    Raises:
        FileNotFoundError: no manifest in ``ingested_dir``; run ingest first.
    """
    path = Path(ingested_dir) / MANIFEST_FILE
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no manifest; run the ingest stage first")
    manifest = pd.read_parquet(path)
    stored = manifest.attrs.get(RAW_DIR_ATTR)
    return manifest, (Path(ingested_dir) / stored).resolve() if stored else None
