"""Digitise a whole validated archive: idempotent, one bad scan never stops the batch.

Every validated scan gets `out_dir/<sha256[:16]>/<label>/<stem>.las` and `<stem>.qc.png`. The
output path is keyed by the scan's content hash and the output label (model name and version,
extraction parameters, reading code; see `stages.infer`), so a re-run skips every (scan, label)
pair already done and a new model writes beside the old one. The QC
PNG is written before the LAS and both atomically, so an existing LAS means the pair is
complete. A scan that fails is recorded with its reason in `index.parquet` and
`failures.parquet`; the invariant validated == written + skipped + failed is asserted.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pandas as pd
import torch
from torch import nn

from veernet_pipeline.config import ExtractParams
from veernet_pipeline.inference.digitize import digitize_scan, write_digitized
from veernet_pipeline.io.atomic import write_parquet_atomic
from veernet_pipeline.io.calibration import Calibration
from veernet_pipeline.io.tiff import decode_scan
from veernet_pipeline.model.veernet import load_model
from veernet_pipeline.progress import progress

log = logging.getLogger(__name__)

INDEX_FILE = "index.parquet"
FAILURES_FILE = "failures.parquet"
DIGITIZED_COLUMNS = ("path", "sha256", "las", "qc", "calibrated", "status", "reason")


def output_paths(out_dir: Path, sha256: str, label: str, scan_path: str) -> tuple[Path, Path]:
    """Where one scan's LAS and QC PNG go for one model version."""
    folder = Path(out_dir) / sha256[:16] / label
    stem = Path(scan_path).stem
    return folder / f"{stem}.las", folder / f"{stem}.qc.png"


def digitize_validated(
    validated_dir: Path,
    ingested_dir: Path,
    raw_dir: Path,
    model_dir: Path,
    label: str,
    out_dir: Path,
    tile_width: int,
    tile_overlap: int,
    extract: ExtractParams,
    index_dir: Path | None = None,
) -> dict[str, int]:
    """Digitise every scan in `validated_dir/validated.parquet` that has no output yet.

    Args:
        validated_dir: holds `validated.parquet` (manifest columns: path, sha256, decoded, calibration).
        ingested_dir: root of the `decoded` landscape scans.
        raw_dir: root of the scans' `calibration` sidecar paths.
        model_dir: `weights.pt` + `model.json`, loaded only if some scan needs work.
        label: names the output folder, e.g. "veernet-multiclass-v3-x1a2b3c4d".
        out_dir: output root of the LAS and QC files.
        tile_width: inference tile width (multiple of 32).
        tile_overlap: columns shared by neighbouring tiles.
        extract: the path search from class probabilities to curves (params.yaml `extract:`).
        index_dir: where `index.parquet` and `failures.parquet` go (default `out_dir`); a tranche's
            run keeps its own index there while its LAS files join everyone's in `out_dir`.

    Returns:
        Counts: validated, written, skipped, failed.
    """
    manifest = Path(validated_dir) / "validated.parquet"
    if not manifest.is_file():
        raise FileNotFoundError(f"{manifest}: no validated manifest; run `veernet validate` first")
    scans = pd.read_parquet(manifest)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model: nn.Module | None = None
    records: list[dict[str, object]] = []
    for row in progress(scans.itertuples(index=False), total=len(scans), desc="digitize", unit="scan"):
        las_path, qc_path = output_paths(out_dir, row.sha256, label, row.path)
        record = {"path": row.path, "sha256": row.sha256, "las": las_path.relative_to(out_dir).as_posix(),
                  "qc": qc_path.relative_to(out_dir).as_posix(), "calibrated": bool(row.calibration),
                  "status": "skipped", "reason": ""}
        if not las_path.is_file():
            if model is None:
                # A model that will not load fails the whole run on purpose: no scan could succeed.
                model = load_model(model_dir, map_location=device)
            try:
                _digitize_one(model, device, row, Path(ingested_dir), Path(raw_dir), label,
                              las_path, qc_path, tile_width, tile_overlap, extract)
                record["status"] = "written"
            except Exception as exc:  # noqa: BLE001 - one bad scan is recorded with its reason, the batch goes on
                record.update(status="failed", reason=f"{type(exc).__name__}: {exc}")
                log.warning("%s: digitising failed: %s", row.path, record["reason"], exc_info=True)
        records.append(record)
    index = pd.DataFrame(records, columns=list(DIGITIZED_COLUMNS))
    counts = {"validated": len(scans)}
    counts.update({status: int((index["status"] == status).sum()) for status in ("written", "skipped", "failed")})
    if counts["validated"] != counts["written"] + counts["skipped"] + counts["failed"]:
        raise AssertionError(f"digitize_validated lost scans: {counts}")
    index_dir = Path(index_dir or out_dir)
    write_parquet_atomic(index_dir / INDEX_FILE, index)
    write_parquet_atomic(index_dir / FAILURES_FILE, index[index["status"] == "failed"])
    log.info("digitised %s into %s: %s", manifest, out_dir, counts)
    return counts


def _digitize_one(
    model: nn.Module,
    device: str,
    row: Any,
    ingested_dir: Path,
    raw_dir: Path,
    label: str,
    las_path: Path,
    qc_path: Path,
    tile_width: int,
    tile_overlap: int,
    extract: ExtractParams,
) -> None:
    """Decode, digitise and write one scan's QC PNG and LAS."""
    if not row.decoded:
        raise ValueError(f"{row.path}: manifest row has no decoded scan; re-run `veernet ingest`")
    image = decode_scan(ingested_dir / row.decoded)
    calibration = Calibration.from_file(raw_dir / row.calibration) if row.calibration else None
    result = digitize_scan(model, image, calibration, tile_width, tile_overlap, extract, device)
    write_digitized(result, image, las_path, qc_path,
                    [f"source scan {row.path} sha256 {row.sha256}", f"output label {label}"])
