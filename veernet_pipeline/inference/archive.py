"""Digitise a whole validated archive: idempotent, one bad scan never stops the batch.

Every validated scan gets `out_dir/<sha256[:16]>/<label>/<calibration key>/<stem>.las` and
`<stem>.qc.png`. The output path is the "already done" key: the scan's content hash, the output
label (model name and version, extraction parameters, reading code; see `stages.infer`) and the
calibration sidecar's content hash (`c<sha256[:12]>`, or `uncalibrated`). A re-run skips every
output already on disk; a new model, other extraction parameters or a corrected sidecar writes
a new LAS beside the old one (nothing is overwritten in place). The QC PNG is written before
the LAS and both atomically, so an existing LAS means the output is complete.

A scan that fails is recorded with its reason and its attempt count in `index.parquet` and
`failures.parquet`, and tried again on the next run, up to `infer.max_attempts` runs: after
that it stays `failed` (reason prefixed `gave up`) without being read, until its key changes (a
new scan file, sidecar or model) or the limit is raised. The invariant validated == written +
skipped + failed is asserted.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pandas as pd
import torch
from torch import nn

from veernet_pipeline.config import ExtractParams, InferParams
from veernet_pipeline.inference.digitize import digitize_scan, write_digitized
from veernet_pipeline.io.atomic import write_parquet_atomic
from veernet_pipeline.io.calibration import Calibration
from veernet_pipeline.io.tiff import decode_scan
from veernet_pipeline.model.veernet import load_model
from veernet_pipeline.progress import progress

log = logging.getLogger(__name__)

INDEX_FILE = "index.parquet"
FAILURES_FILE = "failures.parquet"
DIGITIZED_COLUMNS = ("path", "sha256", "calibration_sha256", "las", "qc", "calibrated", "status", "reason",
                     "attempts")
GAVE_UP = "gave up"


def calibration_key(calibration_sha256: str) -> str:
    """The sidecar part of an output path: `c` + 12 hex digits of its content hash, or `uncalibrated`."""
    return f"c{calibration_sha256[:12]}" if calibration_sha256 else "uncalibrated"


def output_paths(out_dir: Path, sha256: str, calibration_sha256: str, label: str, scan_path: str) -> tuple[Path, Path]:
    """Where one scan's LAS and QC PNG go for one model version, extraction and sidecar content."""
    folder = Path(out_dir) / sha256[:16] / label / calibration_key(calibration_sha256)
    stem = Path(scan_path).stem
    return folder / f"{stem}.las", folder / f"{stem}.qc.png"


def previous_failures(out_dir: Path) -> dict[str, tuple[int, str]]:
    """Failed outputs of the last run by LAS path: (attempts so far, reason)."""
    index = Path(out_dir) / INDEX_FILE
    if not index.is_file():
        return {}
    frame = pd.read_parquet(index)
    if "attempts" not in frame.columns:  # an index written before attempts were counted
        frame["attempts"] = 1
    failed = frame[frame["status"] == "failed"]
    return {row.las: (int(row.attempts), str(row.reason)) for row in failed.itertuples(index=False)}


def digitize_validated(
    validated_dir: Path,
    ingested_dir: Path,
    raw_dir: Path,
    model_dir: Path,
    label: str,
    out_dir: Path,
    infer: InferParams,
    extract: ExtractParams,
) -> dict[str, int]:
    """Digitise every scan in `validated_dir/validated.parquet` that has no output yet.

    Args:
        validated_dir: holds `validated.parquet` (manifest columns: path, sha256, decoded, calibration,
            calibration_sha256).
        ingested_dir: root of the `decoded` landscape scans.
        raw_dir: root of the scans' `calibration` sidecar paths.
        model_dir: `weights.pt` + `model.json`, loaded only if some scan needs work.
        label: names the output folder, e.g. "veernet-multiclass-v3-x1a2b3c4d".
        out_dir: output root; gets `index.parquet` and `failures.parquet`.
        infer: tiling and `max_attempts` (params.yaml `infer:`).
        extract: the path search from class probabilities to curves (params.yaml `extract:`).

    Returns:
        Counts: validated, written, skipped, failed.
    """
    manifest = Path(validated_dir) / "validated.parquet"
    if not manifest.is_file():
        raise FileNotFoundError(f"{manifest}: no validated manifest; run `veernet validate` first")
    scans = pd.read_parquet(manifest)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model: nn.Module | None = None
    failures = previous_failures(out_dir)
    records: list[dict[str, object]] = []
    for row in progress(scans.itertuples(index=False), total=len(scans), desc="digitize", unit="scan"):
        las_path, qc_path = output_paths(out_dir, row.sha256, row.calibration_sha256, label, row.path)
        rel_las = las_path.relative_to(out_dir).as_posix()
        attempts, last_reason = failures.get(rel_las, (0, ""))
        record = {"path": row.path, "sha256": row.sha256, "calibration_sha256": row.calibration_sha256,
                  "las": rel_las, "qc": qc_path.relative_to(out_dir).as_posix(),
                  "calibrated": bool(row.calibration), "status": "skipped", "reason": "", "attempts": attempts}
        if not las_path.is_file() and attempts >= infer.max_attempts:
            reason = last_reason if last_reason.startswith(GAVE_UP) else (
                f"{GAVE_UP} after {attempts} failed runs (infer.max_attempts); last: {last_reason}")
            record.update(status="failed", reason=reason)
        elif not las_path.is_file():
            if model is None:
                # A model that will not load fails the whole run on purpose: no scan could succeed.
                model = load_model(model_dir, map_location=device)
            record["attempts"] = attempts + 1
            try:
                _digitize_one(model, device, row, Path(ingested_dir), Path(raw_dir), label,
                              las_path, qc_path, infer, extract)
                record["status"] = "written"
            except Exception as exc:  # noqa: BLE001 - one bad scan is recorded with its reason, the batch goes on
                record.update(status="failed", reason=f"{type(exc).__name__}: {exc}")
                log.warning("%s: digitising failed (attempt %d of %d): %s", row.path, attempts + 1,
                            infer.max_attempts, record["reason"], exc_info=True)
        records.append(record)
    index = pd.DataFrame(records, columns=list(DIGITIZED_COLUMNS))
    counts = {"validated": len(scans)}
    counts.update({status: int((index["status"] == status).sum()) for status in ("written", "skipped", "failed")})
    if counts["validated"] != counts["written"] + counts["skipped"] + counts["failed"]:
        raise AssertionError(f"digitize_validated lost scans: {counts}")
    write_parquet_atomic(Path(out_dir) / INDEX_FILE, index)
    write_parquet_atomic(Path(out_dir) / FAILURES_FILE, index[index["status"] == "failed"])
    log.info("digitised archive into %s: %s", out_dir, counts)
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
    infer: InferParams,
    extract: ExtractParams,
) -> None:
    """Decode, digitise and write one scan's QC PNG and LAS."""
    if not row.decoded:
        raise ValueError(f"{row.path}: manifest row has no decoded scan; re-run `veernet ingest`")
    image = decode_scan(ingested_dir / row.decoded)
    calibration = Calibration.from_file(raw_dir / row.calibration) if row.calibration else None
    result = digitize_scan(model, image, calibration, infer.tile_width, infer.tile_overlap, extract, device)
    write_digitized(result, image, las_path, qc_path,
                    [f"source scan {row.path} sha256 {row.sha256}", f"output label {label}"])
