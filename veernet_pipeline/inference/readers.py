"""The archive's scans read in spawned worker processes, one per torch thread of the run, each on one torch thread.

Why workers: one process reads a scan's tiles on every core (`reading.predict`) but its path search,
decoding and writing on one; a worker per core keeps every core busy through all of it (16 own test
logs in 38.4 s against 49.6 s in one process, benchmarks/results/archive_workers.md). A scan's bytes
do not depend on how it is read: `reading.predict` reads each tile on one torch thread, so a worker
on one thread and a process on several write the same LAS, on any core count, as the evaluate stage
scores it.

As many workers as torch has threads in the calling process (one per core, or `OMP_NUM_THREADS`: a
tranche run given one thread beside others reads in one worker), from `io.pool`: spawned, each loading
the model once. One that dies (the OOM killer on a huge strip, a crash in a native library) is
replaced; its scan is read again alone in a fresh pool (the OOM killer picks the largest process, whose
scan may fit once its neighbours are gone), and if it dies again only that scan fails, recorded and
retried on the next run like any failed scan. So a run always reads in workers on a CPU, even one
scan in one worker (a spawn and a model load, about 3 s): read in the run's own process, a scan that
kills its reader would kill the run, and every retry of it, so the tranche would never finish. A model
handed in (`loaded`, which no worker can load) or CUDA (a GPU's out-of-memory is an exception, caught
per scan): read in the calling process.

Memory: a scan's reading grows with its pixels (`reading_mb`, measured in benchmarks/results/reading_memory.md:
about 56 MB a million pixels, a 563 x 12,800 strip 0.6 GB, a 563 x 102,400 one 3.4 GB), so a worker per core
could hold more than the machine has. The run takes what it may use when it starts (`inference.memory.available_mb`,
a container's limit included; `MEMORY_SHARE` of it, or `VEERNET_READ_MEMORY_MB` when set), leaves each worker's
own `WORKER_MB`, and starts a scan only while the scans being read fit the rest (`io.pool.Admission`); a scan
that alone needs more is read alone, with a warning naming it.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch
from torch import nn

from veernet_pipeline.config import ExtractParams, InferParams
from veernet_pipeline.errors import OperatorError
from veernet_pipeline.inference.digitize import (
    DigitizedLog,
    alike_count,
    digitize_scan,
    exchanged_count,
    write_digitized,
)
from veernet_pipeline.inference.memory import available_mb
from veernet_pipeline.io.calibration import Calibration
from veernet_pipeline.io.manifest import sidecar_path
from veernet_pipeline.io.pool import Admission, Failures, Job, Outcomes, run_each, worker_count, worker_pool
from veernet_pipeline.io.resolution import Resampling
from veernet_pipeline.io.tiff import decode_colour, read_header
from veernet_pipeline.model.veernet import load_model
from veernet_pipeline.progress import progress
from veernet_pipeline.reading.confidence import ALIKE, EXCHANGED, curves_figures

log = logging.getLogger(__name__)

READ_THREADS = 1  # torch threads of a reading worker: the workers share the cores out
# A scan's reading, once a worker starts it, is stopped past this and the scan fails (retried on the next run). Far
# past any scan ingest lets through: own test logs of 4.5 Mpx take about 4 s each on one thread, decoding, path
# search and writing included (benchmarks/results/archive_workers.md). Only a hung worker reaches it.
READ_TIMEOUT_S = 1800.0
# The fields of a scan its worker could not report (`io.pool.Failures`): failed with the reason, retried next run.
FAILURES = Failures("digitize", "inference.readers.READ_TIMEOUT_S",
                    "Look for a scan far larger than the rest in the manifest",
                    "the OOM killer on a large scan (it died with no other scan beside it), or a crash in a "
                    "native library", lambda _kind, message: {"status": "failed", "reason": message},  # every kind
                    retry_alone=True)


# One scan's reading on one thread, the `cpu` profile's (mirrored), as a line in its pixels, from the larger of its
# stored and its net size (benchmarks/results/reading_memory.md, 14 reads of 3.6-57.7 Mpx, tracks of 3 and 5
# curves: least squares about 56 MB per Mpx + 180-240 MB in three runs, the same read up to 30 % apart between
# runs; these lie above every read of the three, the closest by 7 %; mirroring off reads less).
READ_MB_PER_MPX = 64.0
READ_SCAN_MB = 300.0
WORKER_MB = 500.0  # a reading worker with torch and the model loaded, before its first scan (same page)
MEMORY_SHARE = 0.8  # of the memory available when the run starts: the rest for the run's own process and page cache
MEMORY_ENV = "VEERNET_READ_MEMORY_MB"  # the memory a run's reading workers may hold together, MB, instead


def reading_mb(pixels: int) -> float:
    """Memory one scan of `pixels` (rows x columns) takes to read in a worker on one thread, MB (an upper bound)."""
    return READ_SCAN_MB + READ_MB_PER_MPX * pixels / 1e6


def scan_pixels(row: dict[str, Any]) -> int:
    """A manifest row's pixels: the larger of the stored landscape size and the size the net reads."""
    return max(int(row["width"]) * int(row["height"]), int(row["net_width"]) * int(row["net_height"]))


def reading_memory_mb() -> tuple[float, str]:
    """The memory a run's reading workers may hold together, MB, and where that figure comes from (for the log)."""
    given = os.environ.get(MEMORY_ENV, "").strip()
    if not given:
        return MEMORY_SHARE * available_mb(), f"{MEMORY_SHARE:.0%} of the memory available"
    try:
        total = float(given)
    except ValueError:
        raise OperatorError(f"{MEMORY_ENV}={given!r} is not a number of MB",
                            f"set it to the memory the reading may use, in MB (e.g. {MEMORY_ENV}=12000), or unset "
                            f"it to use {MEMORY_SHARE:.0%} of the memory available") from None
    return total, MEMORY_ENV


def reading_budget(workers: int, jobs: Sequence[Job]) -> Admission:
    """How much of the scans' reading `workers` workers may hold at once: what the run may use, less the workers.

    The run may use `reading_memory_mb`; a scan needing more than is left after the workers' own is read alone
    (a warning names each).
    """
    total, source = reading_memory_mb()
    budget = max(0.0, total - workers * WORKER_MB)
    admission = Admission(lambda job: reading_mb(scan_pixels(job[1][0])), budget)
    log.info("reading %d scans in %d workers: %.0f MB for their scans (%s, %.0f MB, less %.0f MB a worker), the "
             "largest needing about %.0f MB", len(jobs), workers, budget, source, total, WORKER_MB,
             max(map(admission.need, jobs)))
    for job in jobs:
        if admission.need(job) > budget:
            log.warning("%s: needs about %.0f MB to read, more than the %.0f MB the scans may hold together: it is "
                        "read alone (if its worker dies even so, read it on a larger machine)", job[1][0]["path"],
                        admission.need(job), budget)
    return admission


def counted(notes: str) -> dict[str, float]:
    """`ALIKE` and `EXCHANGED` of a digitised scan, from its LAS header's notes."""
    return {ALIKE: alike_count(notes), EXCHANGED: exchanged_count(notes)}


def read_scans(
    jobs: Sequence[Job], model: nn.Module, model_dir: Path, device: str, in_process: bool, ingested_dir: Path,
    raw_dir: Path, label: str, infer: InferParams, extract: ExtractParams, workers: int = 0,
) -> Outcomes:
    """Digitise each job's scan (`digitize_job`), in worker processes on a CPU unless `in_process`.

    Args:
        jobs: (LAS path relative to the output root, (manifest row as a dict, LAS path, QC PNG path)) per scan.
        model: the model, loaded and in eval mode; used when reading in this process (workers load `model_dir`).
        model_dir: `weights.pt` + `model.json` of `model`.
        device: "cpu" or "cuda"; on CUDA every scan is read in this process.
        in_process: read in this process even on a CPU (a model handed in rather than loaded from `model_dir`).
        ingested_dir, raw_dir, label, infer, extract: as `inference.archive.digitize_validated`.
        workers: reading processes on a CPU; 0 = as many as torch's thread count in this process (one per core
            unless `OMP_NUM_THREADS` says otherwise: a run told to use one thread reads in one worker), never
            more than the jobs. They read as many scans at once as `reading_budget` lets them.

    Returns:
        Relative LAS path -> ``status`` "written" with the scan's figures, or "failed" with its ``reason``.
    """
    settings = (Path(ingested_dir), Path(raw_dir), label, infer, extract)
    if jobs and not in_process and device != "cuda":
        workers = worker_count(workers or torch.get_num_threads(), len(jobs))
        admission = reading_budget(workers, jobs)
        with worker_pool(workers, 0, _start_reader, (Path(model_dir), *settings)) as pool:
            return run_each(pool, _read_in_reader, jobs, READ_TIMEOUT_S, "read", failures=FAILURES,
                            admission=admission)
    return {rel: digitize_job(model, device, *settings, *args)
            for rel, args in progress(jobs, total=len(jobs), desc="digitize read", unit="scan")}


_reader: dict[str, Any] = {}  # a reading worker's model and settings, set once by `_start_reader`


def _start_reader(model_dir: Path, *settings: Any) -> None:
    torch.set_num_threads(READ_THREADS)
    _reader.update(model=load_model(model_dir), settings=settings)


def _read_in_reader(row: dict[str, Any], las_path: Path, qc_path: Path) -> dict[str, Any]:
    return digitize_job(_reader["model"], "cpu", *_reader["settings"], row, las_path, qc_path)


def digitize_job(
    model: nn.Module, device: str, ingested_dir: Path, raw_dir: Path, label: str, infer: InferParams,
    extract: ExtractParams, row: dict[str, Any], las_path: Path, qc_path: Path,
) -> dict[str, Any]:
    """Decode, digitise and write one scan's QC PNG and LAS; its outcome fields, never raising for the scan's fault.

    Returns:
        ``status`` "written" with the confidence figures at `infer.low_confidence` and `counted`, or
        "failed" with ``reason`` (the exception's type and message, which name the scan).
    """
    try:
        result = _digitize_one(model, device, row, ingested_dir, raw_dir, label, las_path, qc_path, infer, extract)
    except Exception as exc:  # noqa: BLE001 - one bad scan is recorded with its reason, the batch goes on
        log.warning("%s: digitising failed", row["path"], exc_info=True)
        return {"status": "failed", "reason": f"{type(exc).__name__}: {exc}"}
    figures = curves_figures({c.mnemonic: c.values for c in result.curves}, infer.low_confidence)
    return {"status": "written", **figures, **counted("\n".join(result.notes))}


def _digitize_one(
    model: nn.Module, device: str, row: dict[str, Any], ingested_dir: Path, raw_dir: Path, label: str,
    las_path: Path, qc_path: Path, infer: InferParams, extract: ExtractParams,
) -> DigitizedLog:
    """Decode, digitise and write one scan's QC PNG and LAS; return what was written."""
    if not row["decoded"]:
        raise ValueError(f"{row['path']}: manifest row has no decoded scan; re-run `veernet ingest`")
    image, rgb = decode_colour(ingested_dir / row["decoded"])  # a colour print is kept in colour by ingest
    resampling, dpi = Resampling.from_params(infer), read_header(ingested_dir / row["decoded"]).landscape_dpi
    scale = resampling.scale(dpi)
    sidecar = sidecar_path(row["calibration"], row["page_file"], raw_dir, ingested_dir)  # a page's strip: beside it
    calibration = Calibration.from_file(sidecar) if row["calibration"] else None
    result = digitize_scan(model, image, calibration, infer.tile_width, infer.tile_overlap, extract, device,
                           max_height=infer.max_height, source=row["path"], scale=scale, rgb=rgb)
    write_digitized(result, image, las_path, qc_path,
                    [f"source scan {row['path']} sha256 {row['sha256']}", f"output label {label}",
                     *resampling.notes(dpi)], infer.low_confidence)
    return result
