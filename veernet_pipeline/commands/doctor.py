"""`veernet doctor`: is this machine ready to run the pipeline? Each check says OK or PROBLEM and what to fix.

Exits 1 when any check finds a problem (after printing them all), 0 otherwise; runbooks start here.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from veernet_pipeline.config import Settings, load_settings
from veernet_pipeline.errors import EmptyArchive, OperatorError
from veernet_pipeline.io.ingest import scan_files
from veernet_pipeline.io.resolution import Resampling, scanner_dpi
from veernet_pipeline.io.scan_errors import ScanReadError
from veernet_pipeline.io.tiff import read_header

HELP = ("check Python, torch/CUDA, params, the MLflow store and champion, DAGSTER_HOME, the archive, its scans' "
        "resolutions and free disk")

PYTHON_RANGE = ((3, 11), (3, 13))  # pyproject's requires-python: >=3.11,<3.13
# Archive files whose resolution tags the doctor reads, evenly spaced: a header parse each, no pixels.
RESOLUTION_SAMPLE = 200
# Ingest keeps every scan decoded to 8 bits beside LAS files and QC pictures: ask for twice the archive's size free.
DISK_FACTOR = 2.0


@dataclass
class Check:
    name: str
    ok: bool
    detail: str
    fix: str = ""

    def line(self) -> str:
        detail = " ".join(self.detail.split())  # one line per check, whatever the error message's layout
        text = f"{'OK     ' if self.ok else 'PROBLEM'}  {self.name}: {detail}"
        return text if self.ok else f"{text}\n         fix: {self.fix}"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """No options of its own: it checks the params, profile and environment `veernet` would use."""


def check_python() -> Check:
    found = sys.version_info[:2]
    ok = PYTHON_RANGE[0] <= found < PYTHON_RANGE[1]
    return Check("python", ok, f"{sys.version.split()[0]} at {sys.executable}",
                 "use CPython 3.11 or 3.12 (make venv with PYTHON=python3.11)")


def check_torch() -> Check:
    try:
        import torch
    except ImportError as exc:
        return Check("torch", False, f"does not import ({exc})", "run `make venv` to install requirements.lock")
    from veernet_pipeline.reading.predict import inference_dtype

    # Said here because the precision decides the last bits of every reading: two machines that read in
    # different precisions write slightly different LAS values from the same model.
    if torch.cuda.is_available():
        device = torch.cuda.get_device_name(0)
        return Check("torch", True, f"{torch.__version__}, CUDA {torch.version.cuda} on {device}; scans read in "
                                    f"{_precision(inference_dtype('cuda'))}")
    # An archive run reads in one worker process per torch thread of its process (inference.readers): memory grows
    # with the count, and operators set it with OMP_NUM_THREADS (docs/runbooks/scale-out.md).
    workers = torch.get_num_threads()
    return Check("torch", True, f"{torch.__version__}, no CUDA: CPU only (use the `cpu` profile to train); scans "
                                f"read in {_precision(inference_dtype('cpu'))}; an archive run reads in {workers} "
                                f"worker process{'es' if workers > 1 else ''} of one thread each (one per torch "
                                "thread: OMP_NUM_THREADS sets it)")


def check_memory() -> Check:
    """Whether an archive run's reading workers leave room for a scan: the figure the run itself takes (an
    unreadable `VEERNET_READ_MEMORY_MB` fails here first)."""
    try:
        import torch

        from veernet_pipeline.inference.readers import MEMORY_ENV, WORKER_MB, reading_mb, reading_memory_mb
    except ImportError as exc:  # said on the torch line too; the other checks still run
        return Check("memory", False, f"not checked: the reading does not import ({exc})",
                     "run `make venv` to install requirements.lock")
    try:
        total, source = reading_memory_mb()
    except OperatorError as exc:
        return Check("memory", False, str(exc), exc.advice)
    workers = torch.get_num_threads()
    strip = reading_mb(640 * 12_800)  # the generator's largest strip: about 14 minutes of a log at 200 dpi
    left = total - workers * WORKER_MB
    detail = (f"{total / 1024:.1f} GB for an archive run's reading ({source}): {workers} worker(s) of "
              f"{WORKER_MB / 1024:.2f} GB leave {max(left, 0) / 1024:.1f} GB for scans, {int(max(left, 0) // strip)} "
              f"640 x 12,800 strip(s) at once ({strip / 1024:.2f} GB each)")
    return Check("memory", left >= strip, detail, f"free memory, set {MEMORY_ENV} (MB) higher, or OMP_NUM_THREADS "
                 "lower for fewer reading workers (docs/runbooks/digitise-an-archive.md, Memory)")


def _precision(dtype: Any) -> str:
    """`reading.predict.inference_dtype`'s answer (a torch dtype or None) in words."""
    return "fp32" if dtype is None else "bf16 (the hardware computes it; fp32 elsewhere)"


def check_mlflow(settings: Settings) -> Check:
    from veernet_pipeline.tracking import store

    uri = store.tracking_uri(settings.root)
    model_uri = settings.infer.model_uri
    try:
        name, version = store.resolve_model(settings.root, model_uri)
        store.registered_version(settings.root, name, version)
    except OperatorError as exc:
        name = model_uri.removeprefix("models:/").split("@")[0].split("/")[0]
        versions = [v.version for v in store.configure(settings.root).search_model_versions(f"name='{name}'")]
        listed = f"registered versions of {name}: {', '.join(map(str, sorted(versions, key=int))) or 'none'}"
        return Check("mlflow", False, f"{uri}: {exc} ({listed})", exc.advice)
    except Exception as exc:  # noqa: BLE001 - any store error is reported as this check's problem
        return Check("mlflow", False, f"{uri}: the store does not answer ({type(exc).__name__}: {exc})",
                     "check MLFLOW_TRACKING_URI, or unset it to use mlruns.db in the project")
    return Check("mlflow", True, f"{uri}: {model_uri} is version {version}")


def check_dagster_home() -> Check:
    home = os.environ.get("DAGSTER_HOME", "")
    if not home:
        return Check("DAGSTER_HOME", False, "not set: runs started from this shell keep no history",
                     "export DAGSTER_HOME=$PWD/.dagster (what `make ui` and `make demo` use)")
    folder = Path(home)
    if not folder.is_dir() or not os.access(folder, os.W_OK):
        return Check("DAGSTER_HOME", False, f"{folder} is not a writable folder", f"mkdir -p {folder}")
    config = folder / "dagster.yaml"
    storage = "dagster.yaml present" if config.is_file() else "no dagster.yaml: embedded SQLite storage"
    if config.is_file() and "postgres" in config.read_text():
        storage = "dagster.yaml: PostgreSQL storage"
    return Check("DAGSTER_HOME", True, f"{folder} ({storage})")


def check_archive(settings: Settings) -> tuple[Check, list[Path], int]:
    """The archive's scans (and their bytes), or a problem when there are none."""
    raw = settings.path("raw")
    scans = scan_files(raw, settings.ingest.extensions) if raw.is_dir() else []
    size = sum(p.stat().st_size for p in scans if p.is_file())
    if not scans:
        what = "does not exist" if not raw.is_dir() else "holds no scan"
        return Check("archive", False, f"{raw} {what}", EmptyArchive.advice), scans, 0
    return Check("archive", True, f"{raw}: {len(scans):,} scans, {size / 1e9:.2f} GB"), scans, size


def check_resolution(settings: Settings, scans: list[Path]) -> Check:
    """The resolutions a sample of the archive's scans state, and how many the net will read resampled.

    A problem only when some scans state no resolution beside others stating one unlike the net's and
    `infer.untagged_dpi` is not set: scans of one archive saved with and without their resolution, whose
    untagged ones would be read at the wrong scale (docs/runbooks/digitise-an-archive.md).
    """
    sample = scans[::max(1, -(-len(scans) // RESOLUTION_SAMPLE))]
    resampling = Resampling.from_params(settings.infer)
    stated: Counter[tuple[float, float]] = Counter()
    unstated = unreadable = resampled = 0
    for path in sample:
        try:
            dpi = read_header(path).landscape_dpi
        except ScanReadError:
            unreadable += 1  # ingest quarantines it, naming why
            continue
        found = scanner_dpi(dpi)
        if found is None:
            unstated += 1
        else:
            stated[found] += 1
        resampled += resampling.scale(dpi) != (1.0, 1.0)

    def name(dpi: tuple[float, float]) -> str:
        return " x ".join(f"{d:g}" for d in dpi) + " dpi"

    parts = [f"{n} at {name(dpi)}" for dpi, n in stated.most_common()] + ([f"{unstated} none"] if unstated else [])
    detail = (f"of {len(sample):,} scans sampled, resolution stated: {', '.join(parts) or 'none readable'}"
              f"{f' ({unreadable} unreadable)' if unreadable else ''}; "
              + (f"{resampled} read resampled to {settings.infer.net_dpi:g} dpi (infer.net_dpi)"
                 if settings.infer.net_dpi is not None else "none read resampled (infer.net_dpi is null)"))
    if unstated and settings.infer.untagged_dpi is not None:
        detail += f"; those stating none taken as {settings.infer.untagged_dpi:g} dpi (infer.untagged_dpi)"
    other = [dpi for dpi, _ in stated.most_common() if resampling.scale(dpi) != (1.0, 1.0)]
    mixed = bool(unstated and other and settings.infer.untagged_dpi is None)
    return Check("resolution", not mixed, detail,
                 "scans stating no resolution are read as they are; if they were scanned like the others "
                 f"({name(other[0]) if other else ''}), set infer.untagged_dpi in params.yaml")


def check_disk(folder: Path, archive_bytes: int, free_bytes: int | None = None) -> Check:
    """Free space where outputs go against `DISK_FACTOR` x the archive's size (`free_bytes` overrides the measure)."""
    existing = next(p for p in (folder, *folder.parents) if p.exists())
    free = shutil.disk_usage(existing).free if free_bytes is None else free_bytes
    need = int(archive_bytes * DISK_FACTOR)
    detail = f"{free / 1e9:.2f} GB free at {existing}, {need / 1e9:.2f} GB wanted ({DISK_FACTOR:g} x the archive)"
    return Check("disk", free >= need, detail, "free space there, or point paths.ingested / paths.digitized at a "
                 "larger disk in params.yaml")


def diagnose(settings_of: Callable[[], Settings]) -> list[Check]:
    """Every check, in the order an operator fixes them; later checks need the params to load."""
    checks = [check_python(), check_torch(), check_memory()]
    try:
        settings = settings_of()
    except OperatorError as exc:
        return [*checks, Check("params", False, str(exc), exc.advice)]
    checks.append(Check("params", True, f"{settings.root / 'params.yaml'}, profile {settings.profile}"))
    archive, scans, size = check_archive(settings)
    checks += [check_mlflow(settings), check_dagster_home(), archive]
    if scans:
        checks.append(check_resolution(settings, scans))
    checks.append(check_disk(settings.path("digitized"), size))
    return checks


def run(args: argparse.Namespace) -> dict[str, Any]:
    checks = diagnose(lambda: load_settings(args.params, args.profile, args.set))
    problems = [c.name for c in checks if not c.ok]
    text = "\n".join([*(c.line() for c in checks),
                      f"{len(problems)} problem(s): {', '.join(problems)}" if problems else "all checks OK"])
    if problems:
        # The CLI returns 0 for whatever a command returns; a doctor that finds a problem must not.
        print(text)
        raise SystemExit(1)
    return {"text": text, "problems": problems}

