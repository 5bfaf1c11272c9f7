"""Crash-isolated worker processes for ingest: one file per task, a time limit and a memory limit each.

Built on pebble's `ProcessPool` rather than `concurrent.futures.ProcessPoolExecutor` or a
hand-written supervisor: when a worker dies (a codec segfault, the memory cap, the OOM killer),
pebble fails only the task it was running (`ProcessExpired`) and starts a new worker, where the
standard pool marks the whole pool broken and fails every pending task; and pebble enforces a
per-task timeout by terminating the worker, which the standard pool cannot do at all. A supervisor
of our own would re-implement exactly that. Measured on this machine (2 cores, spawned workers,
`benchmarks/ingest.py`): pebble's overhead is about 0.1 ms per task, against a header step of
about 1 ms.

Workers are spawned, not forked: a fork would inherit whatever the parent has loaded (torch in
the Dagster process) and count it against the worker's memory cap. Each starts with
`scanfile.init_worker` (memory cap, quiet tifffile).

Every task's outcome is a dict of manifest fields; `run_each` turns what the worker could not
report itself into the error columns: ``decode_timeout`` (over the time limit; the worker is
killed), ``decode_crashed`` (the worker died) and ``ingest_error`` (anything else: a fault of
ingest, not of the file).
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import signal
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, as_completed
from contextlib import contextmanager
from typing import Any

from pebble import ProcessExpired, ProcessPool

from veernet_pipeline.io.scan_errors import DECODE_CRASHED, DECODE_TIMEOUT, INGEST_ERROR
from veernet_pipeline.io.scanfile import init_worker
from veernet_pipeline.progress import progress

logger = logging.getLogger(__name__)

Job = tuple[str, tuple[Any, ...]]  # (the file's relative path, the task's arguments)


def worker_count(workers: int, jobs: int) -> int:
    """`workers`, or one per CPU core this process may use when 0; never more than there are jobs (at least 1)."""
    wanted = workers or len(os.sched_getaffinity(0))
    return max(1, min(wanted, jobs))


@contextmanager
def worker_pool(workers: int, memory_mb: int) -> Iterator[ProcessPool]:
    """A pool of `workers` spawned processes, each capped at `memory_mb` of address space (0 = uncapped)."""
    pool = ProcessPool(max_workers=workers, initializer=init_worker, initargs=(memory_mb,),
                       context=multiprocessing.get_context("spawn"))
    try:
        yield pool
    finally:
        pool.stop()
        pool.join()


def _death(exc: ProcessExpired) -> str:
    code = exc.exitcode
    if code is not None and code < 0:
        try:
            return f"killed by signal {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit code {code}"


def _outcome(future: Future, rel: str, step: str, timeout_s: float) -> dict[str, Any]:
    """The task's fields, or the error columns for a worker that timed out, died or failed outside the task."""
    try:
        return future.result()
    except TimeoutError:
        code, message = DECODE_TIMEOUT, (f"{step} took longer than {timeout_s:g} s (ingest.timeout_s); the worker "
                                         "was stopped. Re-export the scan, or raise the limit if it is merely large")
    except ProcessExpired as exc:
        code, message = DECODE_CRASHED, (f"the worker process died during the {step} ({_death(exc)}): a codec crash "
                                         "on this file, or the memory limit or the OOM killer. Re-export the scan")
    except Exception as exc:  # noqa: BLE001 - a fault of ingest on one file still must not stop the batch
        logger.exception("%s: %s failed outside the file's own checks", rel, step)
        code, message = INGEST_ERROR, (f"ingest failed on it during the {step} ({type(exc).__name__}: {exc}); "
                                       "this is a fault of the pipeline, not of the file: report it")
    return {"error_code": code, "error_message": f"{rel}: {message}"}


def run_each(pool: ProcessPool, task: Callable[..., dict[str, Any]], jobs: Sequence[Job], timeout_s: float,
             step: str) -> dict[str, dict[str, Any]]:
    """Run `task(*args)` for every job in the pool, each under `timeout_s`; never raises for one job's failure.

    Args:
        pool: from `worker_pool`.
        task: a module-level function of `scanfile` returning manifest fields.
        jobs: (relative path, arguments) per file.
        timeout_s: per task, counted from when a worker starts it.
        step: names the step in messages and the progress bar (``header``, ``decode``).

    Returns:
        Relative path -> the task's fields, or the error columns (module docstring).
    """
    futures = {pool.schedule(task, args=args, timeout=timeout_s): rel for rel, args in jobs}
    results: dict[str, dict[str, Any]] = {}
    for future in progress(as_completed(futures), total=len(futures), desc=f"ingest {step}", unit="file"):
        rel = futures[future]
        results[rel] = _outcome(future, rel, step, timeout_s)
    if len(results) != len(jobs):
        raise AssertionError(f"ingest {step}: {len(jobs)} files in but {len(results)} results out")
    return results
