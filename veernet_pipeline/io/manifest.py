"""The ingest manifest: its columns, reading and writing it, and ingest's memory of the files it has read.

``manifest.parquet`` holds one row per archive file: hashes, header fields, the decoded copy and
its pixel statistics, or the error columns. Its bytes depend on the archive's content only.

``files.parquet`` (`STATE_FILE`) is ingest's own memory: the same rows plus each file's size and
modification time, and the key of the rules and code they were read with (`read_state`). A file
whose path, size and mtime are unchanged under the same key is not hashed or decoded again.
Mtimes stay out of the manifest on purpose: they belong to one copy of the archive, so a
``touch``, a copy or a fresh checkout changes this file but not the manifest that validation and
inference key on.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pandas as pd

from veernet_pipeline.io.atomic import atomic_path, write_parquet_atomic

MANIFEST_FILE = "manifest.parquet"
STATE_FILE = "files.parquet"
SCANS_DIR = "scans"
# Stored in the manifest's parquet metadata (DataFrame.attrs) so validation can find the sidecars,
# relative to the ingested folder so the manifest's bytes do not depend on where the repo lives.
RAW_DIR_ATTR = "raw_dir"
MTIME_COLUMN = "mtime_ns"
_STATE_KEYS = ("read_key", "limits_key")

# Column -> dtype. Sizes and statistics are 0 and strings "" where a failed file left them unknown.
MANIFEST_DTYPES: dict[str, str] = {
    "path": "object",
    "sha256": "object",
    "bytes": "int64",
    "width": "int64",
    "height": "int64",
    "stored_width": "int64",
    "stored_height": "int64",
    # The landscape size as the net reads it (`io.resolution`): width and height unless the TIFF states a
    # resolution unlike ``infer.net_dpi``. Validation holds these to the size bounds.
    "net_width": "int64",
    "net_height": "int64",
    "rotated": "bool",
    "bits": "int64",
    "samples": "int64",
    "photometric": "object",
    "compression": "object",
    # Full-resolution pages in the file, and the directory index of the one read as the scan
    # (the first full-resolution page; thumbnails and masks are not pages: `io.tiff`).
    "pages": "int64",
    "page": "int64",
    "decoded": "object",
    "paper_level": "float64",
    "ink_share": "float64",
    "calibration": "object",
    # The sidecar's content hash: a corrected sidecar changes the manifest, so validation and the
    # archive's outputs (keyed by it) follow the correction.
    "calibration_sha256": "object",
    # A whole-log page's track strip (`pages.strips`): the page's relative path, the strip's section
    # and track, its rows and columns on the stored page, and how many strips the page gave. A page
    # whose layout failed has one row with `page_file` set and `page_strips` 0; "" / 0 for a scan.
    "page_file": "object",
    "section": "object",
    "track": "object",
    "page_bounds": "object",
    "page_strips": "int64",
    "error_code": "object",
    "error_message": "object",
}
MANIFEST_COLUMNS: tuple[str, ...] = tuple(MANIFEST_DTYPES)


def sidecar_path(calibration: str, page_file: str, raw_dir: Path, ingested_dir: Path) -> Path:
    """Where a row's ``calibration`` sidecar is: beside the decoded strip for a page's strip, else in the archive."""
    return (Path(ingested_dir) if page_file else Path(raw_dir)) / calibration


def blank_row(rel: str) -> dict[str, Any]:
    """A manifest row for `rel` with every other field unknown (0, "" or False)."""
    row: dict[str, Any] = {name: ("" if dtype == "object" else 0) for name, dtype in MANIFEST_DTYPES.items()}
    row["path"] = rel
    row["rotated"] = False
    return row


def manifest_frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """Rows (with any extra keys) -> the manifest's columns and dtypes, in the given order."""
    return pd.DataFrame(rows, columns=list(MANIFEST_COLUMNS)).astype(MANIFEST_DTYPES)


def write_manifest(out_dir: Path, manifest: pd.DataFrame, raw_dir: Path) -> None:
    """Write ``manifest.parquet`` atomically, recording `raw_dir` relative to `out_dir`."""
    out_dir.mkdir(parents=True, exist_ok=True)
    manifest = manifest.copy(deep=False)
    manifest.attrs[RAW_DIR_ATTR] = Path(os.path.relpath(raw_dir.resolve(), out_dir.resolve())).as_posix()
    with atomic_path(out_dir / MANIFEST_FILE) as tmp:
        manifest.to_parquet(tmp, index=False)


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


def write_state(out_dir: Path, manifest: pd.DataFrame, mtimes: list[int], keys: dict[str, str]) -> None:
    """Write ``files.parquet``: the manifest's rows with each file's mtime, and the keys they were read under."""
    state = manifest.assign(**{MTIME_COLUMN: pd.Series(mtimes, dtype="int64", index=manifest.index)})
    # Parquet keeps a frame's attrs, but `write_parquet_atomic` drops them on purpose: keys go in a column.
    for name in _STATE_KEYS:
        state[name] = keys[name]
    write_parquet_atomic(out_dir / STATE_FILE, state)


def read_state(out_dir: Path) -> tuple[dict[str, dict[str, Any]], dict[str, str]]:
    """Ingest's memory of its last run: rows by relative path (with ``mtime_ns``), and the keys they were read under.

    A missing or unreadable state, or one written with other columns, is no memory: every file is read.
    """
    path = out_dir / STATE_FILE
    if not path.is_file():
        return {}, {}
    try:
        state = pd.read_parquet(path)
    except (OSError, ValueError):
        return {}, {}
    wanted = {*MANIFEST_COLUMNS, MTIME_COLUMN, *_STATE_KEYS}
    if set(state.columns) != wanted or state.empty:
        return {}, {}
    keys = {name: str(state[name].iloc[0]) for name in _STATE_KEYS}
    rows = state.drop(columns=list(_STATE_KEYS)).to_dict("records")
    return {str(row["path"]): row for row in rows}, keys
