"""Crash-isolated worker processes for ingest and the archive's reading: one file per task, time and memory limits.

Built on pebble's `ProcessPool` rather than `concurrent.futures.ProcessPoolExecutor` or a
hand-written supervisor: when a worker dies (a codec segfault, the memory cap, the OOM killer),
pebble fails only the task it was running (`ProcessExpired`) and starts a new worker, where the
standard pool marks the whole pool broken and fails every pending task; and pebble enforces a
per-task timeout by terminating the worker, which the standard pool cannot do at all. Measured on
this machine (2 cores, spawned workers, `benchmarks/ingest.py`): pebble's overhead is about 0.1 ms
per task, against a header step of about 1 ms.

pebble has two holes, both when a worker dies between taking a task and pebble's record of it
starting (seen under load: a worker killed in that window). With no other task on record as
running, pebble declares the whole pool broken ("All workers expired") and fails every task it
holds; with another one running, the dead worker's task is never settled at all. `run_each`
closes both: it keeps at most `WINDOW_PER_WORKER` tasks per worker in the pool, treats a broken
pool or a pool that settles nothing for `timeout_s + grace_s` as lost, starts a fresh pool, and
runs the tasks that were in the lost one again one at a time, so a file that kills its worker
again is the only one charged with it and the rest of the batch goes on.

Workers are spawned, not forked: a fork would inherit whatever the parent has loaded (torch in
the Dagster process) and count it against the worker's memory cap. Each starts with
`scanfile.init_worker` (memory cap, quiet tifffile), then the pool's own initializer if it has one.
On Linux each also dies with the process that started it (`_die_with_parent`): a run killed outright
(the OOM killer, a SIGKILL from an operator or a scheduler) leaves no worker behind to finish its file
and write an output after the run is gone.

A run may hold its tasks to a budget (`Admission`): the archive's reading admits a scan only while the memory the
scans in the pool need, its own included, stays within what the run may use, so a worker per core does not mean a
huge strip per core; a task needing more than the whole budget runs alone.

Every task's outcome is a dict of fields; `run_each` turns what the worker could not report
itself into its phase's `Failures` fields. Ingest's (`INGEST_FAILURES`, the default) are the
error columns: ``decode_timeout`` (over the time limit; the worker is killed), ``decode_crashed``
(the worker died) and ``ingest_error`` (anything else: a fault of ingest, not of the file). The
archive's reading workers (`inference.readers`) report a failed scan the same way.
"""

from __future__ import annotations

import ctypes
import logging
import multiprocessing
import os
import signal
import sys
from collections import deque
from collections.abc import Callable, Collection, Iterator, Sequence
from concurrent.futures import Future
from concurrent.futures.process import BrokenProcessPool
from contextlib import contextmanager
from dataclasses import dataclass
from queue import Empty, SimpleQueue
from typing import Any

from pebble import ProcessExpired, ProcessPool
from tqdm import tqdm

from veernet_pipeline.io.scan_errors import DECODE_CRASHED, DECODE_TIMEOUT, INGEST_ERROR
from veernet_pipeline.io.scanfile import init_worker
from veernet_pipeline.progress import progress

logger = logging.getLogger(__name__)

Job = tuple[str, tuple[Any, ...]]  # (the file's relative path, the task's arguments)
Outcomes = dict[str, dict[str, Any]]  # relative path -> manifest fields

# Tasks in the pool per worker: enough that a worker never waits for its next task, few enough that a lost
# pool costs at most a few hundred single reruns. Measured (benchmarks/ingest.py, 2 workers, header step):
# 4 a worker cut the rate from 5,614 to 3,836-4,014 files/s; 64 gives 5,236-5,453.
WINDOW_PER_WORKER = 64
# How long past `timeout_s` a pool may settle nothing before it counts as lost: pebble's own timeout
# fires at `timeout_s`, and a replacement worker must spawn and import its codecs (seconds under load).
GRACE_S = 60.0
# pebble's message when a worker dies with no task on record as running.
_ALL_EXPIRED = "All workers expired"
# Our own reason when a pool settles nothing for `timeout_s + grace_s`: a worker died holding the channel lock.
_STALLED = "no task settled in"
PR_SET_PDEATHSIG = 1  # prctl(2): the signal a process gets when its parent dies (linux/prctl.h)
# Our own reason for a task run again alone because its worker died beside others (`Failures.retry_alone`).
_DIED_BESIDE = "its worker died beside others"


def worker_count(workers: int, jobs: int) -> int:
    """`workers`, or one per CPU core this process may use when 0; never more than there are jobs (at least 1)."""
    wanted = workers or len(os.sched_getaffinity(0))
    return max(1, min(wanted, jobs))


@dataclass(frozen=True)
class Failures:
    """How `run_each` reports a task its worker could not report: the phase's words and its outcome fields.

    Attributes:
        phase: names the pool in log lines and progress bars (``ingest``, ``digitize``).
        limit: the setting that holds the time limit, named when a task runs over it.
        slow: what to do about a file that ran over the limit.
        crash: what a worker's death most likely means, and what to do about the file.
        fields: (kind, message) -> the task's outcome; kind is ``timeout``, ``crashed`` or ``error``
            (a fault of the pipeline, not of the file), the message starts with the file's path.
        retry_alone: a task whose worker died beside others is run once more alone in a fresh pool before it
            counts as crashed: for workers that die of memory their neighbours share (the OOM killer), not of
            the file alone (a codec crash, which ingest's capped workers meet).
    """

    phase: str
    limit: str
    slow: str
    crash: str
    fields: Callable[[str, str], dict[str, Any]]
    retry_alone: bool = False


@dataclass(frozen=True)
class Admission:
    """At most `budget` of `need(job)` summed over the tasks in the pool; a task runs alone when nothing else is.

    Attributes:
        need: a job's share of the budget (MB of memory, for the archive's reading).
        budget: the whole budget, in the same unit.
    """

    need: Callable[[Job], float]
    budget: float

    def admits(self, job: Job, running: Collection[Job]) -> bool:
        """Whether `job` may join the `running` jobs: always when it would run alone."""
        return not running or sum(map(self.need, running)) + self.need(job) <= self.budget


def _ingest_fields(kind: str, message: str) -> dict[str, Any]:
    return {"error_code": {"timeout": DECODE_TIMEOUT, "crashed": DECODE_CRASHED}.get(kind, INGEST_ERROR),
            "error_message": message}


INGEST_FAILURES = Failures("ingest", "ingest.timeout_s", "Re-export the scan, or raise the limit if it is merely large",
                           "a codec crash on this file, or the memory limit or the OOM killer. Re-export the scan",
                           _ingest_fields)


def _die_with_parent(parent: int) -> None:
    """Have Linux SIGKILL this process when the one that started it dies (prctl PR_SET_PDEATHSIG); elsewhere nothing.

    Without it a worker outlives a run killed by SIGKILL, which has no chance to stop its pool: it finishes the
    file in hand and writes its output after the run is gone (tests/pipeline/test_archive_kill.py saw one LAS
    more than the killed run had written).
    """
    if not sys.platform.startswith("linux"):
        return
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG) failed")
    if os.getppid() != parent:  # the parent died before the request took hold
        os._exit(1)


def _start_worker(parent: int, memory_mb: int, initializer: Callable[..., None] | None,
                  initargs: tuple[Any, ...]) -> None:
    _die_with_parent(parent)
    init_worker(memory_mb)
    if initializer is not None:
        initializer(*initargs)


class WorkerPool:
    """A pebble `ProcessPool` of spawned, memory-capped workers that can be replaced by a fresh one when lost."""

    def __init__(self, workers: int, memory_mb: int, initializer: Callable[..., None] | None = None,
                 initargs: tuple[Any, ...] = ()) -> None:
        self.workers, self.memory_mb = workers, memory_mb
        self.initializer, self.initargs = initializer, initargs
        self.renewals = 0
        self._pool = self._start()

    def _start(self) -> ProcessPool:
        return ProcessPool(max_workers=self.workers, initializer=_start_worker,
                           initargs=(os.getpid(), self.memory_mb, self.initializer, self.initargs),
                           context=multiprocessing.get_context("spawn"))

    def schedule(self, task: Callable[..., Any], args: tuple[Any, ...] = (), timeout: float | None = None) -> Future:
        """`task(*args)` in a worker, stopped after `timeout` seconds of running."""
        return self._pool.schedule(task, args=args, timeout=timeout)

    def renew(self) -> None:
        """Stop this pool (its threads joined, so every future it will ever settle is settled) and start a fresh one."""
        self.close()
        self._pool = self._start()
        self.renewals += 1

    def close(self) -> None:
        self._pool.stop()
        self._pool.join()


@contextmanager
def worker_pool(workers: int, memory_mb: int, initializer: Callable[..., None] | None = None,
                initargs: tuple[Any, ...] = ()) -> Iterator[WorkerPool]:
    """A pool of `workers` spawned processes, each capped at `memory_mb` of address space (0 = uncapped) and
    started with `initializer(*initargs)` (a module-level function) if given."""
    pool = WorkerPool(workers, memory_mb, initializer, initargs)
    try:
        yield pool
    finally:
        pool.close()


def _death(exc: ProcessExpired) -> str:
    code = exc.exitcode
    if code is not None and code < 0:
        try:
            return f"killed by signal {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit code {code}"


def _outcome(future: Future, rel: str, step: str, timeout_s: float, failures: Failures) -> dict[str, Any]:
    """The task's fields, or the failure fields for a worker that timed out, died or failed outside the task."""
    try:
        return future.result()
    except TimeoutError:
        return failures.fields("timeout", f"{rel}: {step} took longer than {timeout_s:g} s ({failures.limit}); the "
                               f"worker was stopped. {failures.slow}")
    except ProcessExpired as exc:
        return failures.fields("crashed", f"{rel}: the worker process died during the {step} ({_death(exc)}): "
                               f"{failures.crash}")
    except Exception as exc:  # noqa: BLE001 - a fault of the pipeline on one file still must not stop the batch
        logger.exception("%s: %s failed outside the file's own checks", rel, step)
        return failures.fields("error", f"{rel}: {failures.phase} failed on it during the {step} "
                               f"({type(exc).__name__}: {exc}); this is a fault of the pipeline, not of the file: "
                               "report it")


def _lost_alone(rel: str, step: str, reason: str, failures: Failures) -> dict[str, Any]:
    """The failure fields of a file that, run alone in a fresh pool, lost that pool too."""
    if reason == _ALL_EXPIRED or reason.startswith(_STALLED):
        return failures.fields("crashed", f"{rel}: the worker process died during the {step} before it could report, "
                               f"with only this file in the pool ({reason}): {failures.crash}")
    return failures.fields("error", f"{rel}: the worker pool broke during the {step} with only this file in it "
                           f"({reason}); this is a fault of the pipeline, not of the file: report it")


def _run_window(pool: WorkerPool, task: Callable[..., dict[str, Any]], jobs: Sequence[Job], timeout_s: float,
                step: str, window: int, grace_s: float, results: Outcomes, bar: tqdm,
                failures: Failures, admission: Admission | None = None) -> list[tuple[Job, str]]:
    """Run `jobs` with at most `window` in the pool (and within `admission`), settling each into `results`; a lost
    pool is replaced.

    Returns:
        The jobs that were in a lost pool and have no outcome, each with why the pool was lost, and with
        `failures.retry_alone` those whose worker died while other tasks were in the pool (`_DIED_BESIDE`).
    """
    queue, running = deque(jobs), {}
    settled: SimpleQueue[Future] = SimpleQueue()  # fed by the futures' callbacks: O(1) a task; `wait` is O(window)
    unsettled: list[tuple[Job, str]] = []
    while queue or running:
        while queue and len(running) < window and (admission is None or admission.admits(queue[0], running.values())):
            rel, args = queue.popleft()
            future = pool.schedule(task, args, timeout_s)
            running[future] = (rel, args)
            future.add_done_callback(settled.put)
        try:
            done = [settled.get(timeout=timeout_s + grace_s)]
        except Empty:
            done = []
        while not settled.empty():
            done.append(settled.get())
        lost = "" if done else f"{_STALLED} {timeout_s + grace_s:g} s"
        for future in done:
            if isinstance(future.exception(), BrokenProcessPool):
                lost = str(future.exception()) or "BrokenProcessPool"
        if lost:
            logger.warning("%s %s: the worker pool was lost (%s) with %d files in it; starting a fresh one",
                           failures.phase, step, lost, len(running))
            pool.renew()
            settled = SimpleQueue()  # the lost pool's futures are all handled below
            done = list(running)
        for future in done:
            job = running.pop(future)
            if future.done() and not future.cancelled() and not isinstance(future.exception(), BrokenProcessPool):
                if failures.retry_alone and window > 1 and isinstance(future.exception(), ProcessExpired):
                    logger.warning("%s %s: %s: %s (%s); it is read again alone", failures.phase, step, job[0],
                                   _DIED_BESIDE, _death(future.exception()))
                    unsettled.append((job, _DIED_BESIDE))
                    continue
                results[job[0]] = _outcome(future, job[0], step, timeout_s, failures)
                bar.update()
            else:
                unsettled.append((job, lost))
    return unsettled


def run_each(pool: WorkerPool, task: Callable[..., dict[str, Any]], jobs: Sequence[Job], timeout_s: float,
             step: str, grace_s: float = GRACE_S, failures: Failures = INGEST_FAILURES,
             admission: Admission | None = None) -> Outcomes:
    """Run `task(*args)` for every job in the pool, each under `timeout_s`; never raises for one job's failure.

    Args:
        pool: from `worker_pool`.
        task: a module-level function returning the job's fields (`scanfile`'s steps for ingest).
        jobs: (relative path, arguments) per file.
        timeout_s: per task, counted from when a worker starts it.
        step: names the step in messages and the progress bar (``header``, ``decode``).
        grace_s: how long past `timeout_s` the pool may settle nothing before it counts as lost.
        failures: how a task its worker could not report is reported (ingest's error columns by default).
        admission: a budget the tasks in the pool share (`Admission`); with one, the pool holds no more tasks than
            it has workers, so a task waiting for a worker holds none of it.

    Returns:
        Relative path -> the task's fields, or the failure fields (module docstring).
    """
    results: Outcomes = {}
    with progress(None, total=len(jobs), desc=f"{failures.phase} {step}", unit="file") as bar:
        window = pool.workers if admission else WINDOW_PER_WORKER * pool.workers
        unsettled = _run_window(pool, task, jobs, timeout_s, step, window, grace_s, results, bar, failures, admission)
        if any(reason == _DIED_BESIDE for _, reason in unsettled):
            pool.renew()  # fresh workers: the others' kept heaps are not beside the file when it runs alone
        for job, _ in unsettled:  # again, one at a time: a file that loses this pool too is the cause
            for (rel, _args), reason in _run_window(pool, task, [job], timeout_s, step, 1, grace_s, results, bar,
                                                    failures):
                results[rel] = _lost_alone(rel, step, reason, failures)
                bar.update()
    if len(results) != len(jobs):
        raise AssertionError(f"{failures.phase} {step}: {len(jobs)} files in but {len(results)} results out")
    return results
