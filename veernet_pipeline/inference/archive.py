"""Digitise a whole validated archive: idempotent, one bad scan never stops the batch.

Every validated scan gets `out_dir/<sha256[:16]>/<label>/<calibration key>/<stem>.las` and
`<stem>.qc.png`. The output path is the "already done" key: the scan's content hash, the output
label (model name and version, extraction parameters, reading code; see `stages.infer`) and the
calibration sidecar's content hash (`c<sha256[:12]>`, or `uncalibrated`). A re-run skips every
output already on disk; a new model, other extraction parameters or a corrected sidecar writes
a new LAS beside the old one (nothing is overwritten in place). The QC PNG is written before
the LAS and both atomically, so an existing LAS means the output is complete.

Each row also carries the scan's confidence figures (`reading.confidence`: `conf_median`,
`conf_p10`, `null_share`, `low_conf_share` at `infer.low_confidence`), computed when its LAS is
written and carried over (or read back from the LAS when the threshold changed) when skipped, and
`alike_curves`: how many of its curves are drawn alike with another (`digitize.alike_count`), and
`exchanged_curves`: how many took another line than the net named by dash length (`digitize.exchanged_count`);
each NaN for a LAS written before its header said.

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
from veernet_pipeline.inference.readers import counted, read_scans
from veernet_pipeline.io.atomic import write_parquet_atomic
from veernet_pipeline.io.las import read_curves_and_notes
from veernet_pipeline.model.veernet import load_model
from veernet_pipeline.progress import progress
from veernet_pipeline.reading.confidence import ALIKE, EXCHANGED, FIGURES, curves_figures

log = logging.getLogger(__name__)

INDEX_FILE = "index.parquet"
FAILURES_FILE = "failures.parquet"
# The confidence figures (`reading.confidence`), ALIKE and EXCHANGED are NaN for a failed scan; the review queue ranks
# on them.
COUNTED = (ALIKE, EXCHANGED)
DIGITIZED_COLUMNS = ("path", "sha256", "calibration_sha256", "las", "qc", "calibrated", "status", "reason",
                     "attempts", *FIGURES, *COUNTED, "low_conf_threshold")
GAVE_UP = "gave up"


def calibration_key(calibration_sha256: str) -> str:
    """The sidecar part of an output path: `c` + 12 hex digits of its content hash, or `uncalibrated`."""
    return f"c{calibration_sha256[:12]}" if calibration_sha256 else "uncalibrated"


def output_paths(out_dir: Path, sha256: str, calibration_sha256: str, label: str, scan_path: str) -> tuple[Path, Path]:
    """Where one scan's LAS and QC PNG go for one model version, extraction and sidecar content."""
    folder = Path(out_dir) / sha256[:16] / label / calibration_key(calibration_sha256)
    stem = Path(scan_path).stem
    return folder / f"{stem}.las", folder / f"{stem}.qc.png"


def previous_index(out_dir: Path) -> dict[str, dict[str, Any]]:
    """The last run's index rows by LAS path (empty before the first run)."""
    index = Path(out_dir) / INDEX_FILE
    if not index.is_file():
        return {}
    frame = pd.read_parquet(index)
    if "attempts" not in frame.columns:  # an index written before attempts were counted
        frame["attempts"] = (frame["status"] == "failed").astype(int)
    return {row["las"]: row for row in frame.to_dict("records")}


def _figures(previous: dict[str, Any] | None, las_path: Path, threshold: float) -> dict[str, float]:
    """A skipped output's confidence figures and COUNTED: the last run's when made with this threshold and holding
    them all, else read from its LAS."""
    if previous is not None and previous.get("low_conf_threshold") == threshold and all(c in previous for c in COUNTED):
        return {name: float(previous[name]) for name in (*FIGURES, *COUNTED)}
    _, curves, _, notes = read_curves_and_notes(las_path)
    return {**curves_figures(curves, threshold), **counted(notes)}


def digitize_validated(
    validated_dir: Path,
    ingested_dir: Path,
    raw_dir: Path,
    model_dir: Path,
    label: str,
    out_dir: Path,
    infer: InferParams,
    extract: ExtractParams,
    index_dir: Path | None = None,
    loaded: nn.Module | None = None,
    workers: int = 0,
) -> dict[str, int]:
    """Digitise every scan in `validated_dir/validated.parquet` that has no output yet.

    Args:
        validated_dir: holds `validated.parquet` (manifest columns: path, sha256, decoded, calibration,
            calibration_sha256).
        ingested_dir: root of the `decoded` landscape scans.
        raw_dir: root of the scans' `calibration` sidecar paths (a page's strip has its sidecar in `ingested_dir`).
        model_dir: `weights.pt` + `model.json`, loaded only if some scan needs work.
        label: names the output folder, e.g. "veernet-multiclass-v3-x1a2b3c4d".
        out_dir: output root of the LAS and QC files.
        infer: tiling, the tallest track read (`max_height`; a taller scan fails alone), `max_attempts` and
            `low_confidence` (params.yaml `infer:`).
        extract: the path search from class probabilities to curves (params.yaml `extract:`).
        index_dir: where `index.parquet` and `failures.parquet` go (default `out_dir`); a tranche's
            run keeps its own index there while its LAS files join everyone's in `out_dir`.
        loaded: the model already loaded, in eval mode, instead of loading `model_dir`; read in this process.
        workers: processes reading the scans on a CPU (`inference.readers`); 0 = one per torch thread.

    Returns:
        Counts: validated, written, skipped, failed.
    """
    manifest = Path(validated_dir) / "validated.parquet"
    if not manifest.is_file():
        raise FileNotFoundError(f"{manifest}: no validated manifest; run `veernet validate` first")
    scans = pd.read_parquet(manifest)
    index_dir = Path(index_dir or out_dir)
    before = previous_index(index_dir)
    threshold = infer.low_confidence
    records: list[dict[str, object]] = []
    jobs: list[tuple[str, tuple[dict[str, Any], Path, Path]]] = []  # the scans to read: `inference.readers` jobs
    for row in progress(scans.to_dict("records"), total=len(scans), desc="digitize", unit="scan"):
        las_path, qc_path = output_paths(out_dir, row["sha256"], row["calibration_sha256"], label, row["path"])
        rel_las = las_path.relative_to(out_dir).as_posix()
        previous = before.get(rel_las)
        failed_before = previous is not None and previous["status"] == "failed"
        attempts, last_reason = (int(previous["attempts"]), str(previous["reason"])) if failed_before else (0, "")
        record = {"path": row["path"], "sha256": row["sha256"], "calibration_sha256": row["calibration_sha256"],
                  "las": rel_las, "qc": qc_path.relative_to(out_dir).as_posix(),
                  "calibrated": bool(row["calibration"]), "status": "skipped", "reason": "", "attempts": attempts,
                  **dict.fromkeys((*FIGURES, *COUNTED), float("nan")), "low_conf_threshold": threshold}
        if las_path.is_file():
            record.update(_figures(previous, las_path, threshold))
        elif attempts >= infer.max_attempts:
            reason = last_reason if last_reason.startswith(GAVE_UP) else (
                f"{GAVE_UP} after {attempts} failed runs (infer.max_attempts); last: {last_reason}")
            record.update(status="failed", reason=reason)
        else:
            record["attempts"] = attempts + 1
            jobs.append((rel_las, (row, las_path, qc_path)))
        records.append(record)
    if jobs:
        device = "cuda" if torch.cuda.is_available() else "cpu"
        # Loaded here even when workers read: a model that will not load fails the whole run on purpose (no scan
        # could succeed), rather than every scan charged an attempt by workers that cannot start.
        model = loaded if loaded is not None else load_model(model_dir, map_location=device)
        outcomes = read_scans(jobs, model, model_dir, device, loaded is not None, ingested_dir, raw_dir, label,
                              infer, extract, workers)
        for record in records:
            if record["las"] in outcomes:
                record.update(outcomes[record["las"]])
                if record["status"] == "failed":
                    log.warning("%s: digitising failed (attempt %d of %d): %s", record["path"], record["attempts"],
                                infer.max_attempts, record["reason"])
    index = pd.DataFrame(records, columns=list(DIGITIZED_COLUMNS))
    counts = {"validated": len(scans)}
    counts.update({status: int((index["status"] == status).sum()) for status in ("written", "skipped", "failed")})
    if counts["validated"] != counts["written"] + counts["skipped"] + counts["failed"]:
        raise AssertionError(f"digitize_validated lost scans: {counts}")
    write_parquet_atomic(index_dir / INDEX_FILE, index)
    write_parquet_atomic(index_dir / FAILURES_FILE, index[index["status"] == "failed"])
    log.info("digitised %s into %s: %s", manifest, out_dir, counts)
    return counts
