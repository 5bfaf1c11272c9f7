"""The ingest worker pool settles every file alone when pebble loses the pool (a worker dead before its task is
on record, a result the parent cannot read): real spawned workers, real SIGKILLs."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.worker_probe import DiesOnArrival, fields, returns, stamped
from veernet_pipeline.io.pool import Admission, Job, run_each, worker_pool


@pytest.mark.parametrize("workers", [1, 2])
def test_a_worker_lost_before_its_task_is_on_record_costs_only_that_file(workers: int) -> None:
    # One worker: pebble sees a death with no task running and fails every task it holds ("All workers
    # expired"). Two: the other worker's task is on record, so pebble drops the dead one's task and, the dead
    # worker holding the channel lock, settles nothing more: only the grace ends the wait.
    jobs = [(f"ok_{n}.tif", (n, 0.5)) for n in range(4)]
    jobs.insert(1, ("poison.tif", (DiesOnArrival(),)))
    with worker_pool(workers, 0) as pool:
        results = run_each(pool, fields, jobs, timeout_s=5.0, step="decode", grace_s=2.0)
        assert pool.renewals >= 2  # lost once with everything in it, once more with the poison alone
    assert {rel: results[rel] for rel, _ in jobs if rel != "poison.tif"} == {f"ok_{n}.tif": {"n": n} for n in range(4)}
    assert results["poison.tif"]["error_code"] == "decode_crashed"
    assert results["poison.tif"]["error_message"].startswith("poison.tif: the worker process died during the decode "
                                                            "before it could report, with only this file in the pool")


def test_a_result_the_parent_cannot_read_is_an_ingest_error_of_that_file_alone() -> None:
    jobs = [(f"ok_{n}.tif", (n,)) for n in range(3)] + [("odd.tif", (-1,))]
    with worker_pool(1, 0) as pool:
        results = run_each(pool, returns, jobs, timeout_s=5.0, step="header", grace_s=2.0)
    assert [results[f"ok_{n}.tif"] for n in range(3)] == [{"value": n} for n in range(3)]
    assert results["odd.tif"]["error_code"] == "ingest_error"
    assert "Unpicklable object from worker" in results["odd.tif"]["error_message"]
    assert "fault of the pipeline, not of the file" in results["odd.tif"]["error_message"]


def _overlaps(results: dict[str, dict[str, float]], names: list[str]) -> list[tuple[str, str]]:
    """Pairs of `names` whose tasks ran at the same time."""
    return [(a, b) for a in names for b in names if a < b and results[a]["started"] < results[b]["ended"]
            and results[b]["started"] < results[a]["ended"]]


@pytest.mark.parametrize("budget", [2.0, 1.5])
def test_an_admission_holds_the_tasks_in_the_pool_to_its_budget(budget: float) -> None:
    # Two workers, four tasks of need 1 and one of need 3. Within a budget of 2 the small ones run two at a time;
    # within 1.5, one at a time; the large one, over either budget, runs alone all the same (never waits forever).
    needs = {"a": 1.0, "b": 1.0, "big": 3.0, "c": 1.0, "d": 1.0}
    jobs: list[Job] = [(name, (n, 1.0)) for n, name in enumerate(needs)]  # long beside a worker's spawn under load
    with worker_pool(2, 0) as pool:
        results = run_each(pool, stamped, jobs, timeout_s=30.0, step="read",
                           admission=Admission(lambda job: needs[job[0]], budget))
    assert [results[name]["n"] for name in needs] == list(range(5))
    assert not [pair for pair in _overlaps(results, list(needs)) if "big" in pair]
    small = _overlaps(results, ["a", "b", "c", "d"])
    assert (small == []) == (budget < 2.0), small  # two at a time within 2 (the workers' count), one within 1.5


RUN_WITH_A_WORKER = """
import sys
from tests.worker_probe import waits
from veernet_pipeline.io.pool import run_each, worker_pool
with worker_pool(1, 0) as pool:
    run_each(pool, waits, [("a.tif", (sys.argv[1], 60.0))], timeout_s=120.0, step="read")
"""


def _alive(pid: int) -> bool:
    """Whether `pid` is a live process (a zombie waiting to be reaped counts as gone)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="prctl(PR_SET_PDEATHSIG) is Linux's")
def test_a_worker_dies_with_the_run_that_started_it(tmp_path: Path) -> None:
    # A run SIGKILLed (the OOM killer, an operator) cannot stop its pool; its worker must not go on with the file.
    pid_file = tmp_path / "worker.pid"
    with subprocess.Popen([sys.executable, "-c", RUN_WITH_A_WORKER, str(pid_file)], cwd=Path(__file__).parents[2],
                          env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])}) as run:
        deadline = time.monotonic() + 60
        while not pid_file.exists():
            assert run.poll() is None and time.monotonic() < deadline, "the worker never started its task"
            time.sleep(0.05)
        worker = int(pid_file.read_text())
        run.send_signal(signal.SIGKILL)
        run.wait(timeout=30)
    deadline = time.monotonic() + 10
    while _alive(worker) and time.monotonic() < deadline:
        time.sleep(0.05)
    alive = _alive(worker)
    if alive:
        os.kill(worker, signal.SIGKILL)  # leave no orphan behind a failing test
    assert not alive, "the worker outlived its run by 10 s"
