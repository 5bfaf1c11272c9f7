"""Functions a test runs inside ingest's worker processes; this module imports nothing heavy itself."""

from __future__ import annotations

import os
import resource
import signal
import sys
import time


def heavy_modules() -> list[str]:
    """The heavy packages loaded in this process (a worker should hold none)."""
    return sorted(name for name in ("torch", "pandas", "great_expectations", "dagster") if name in sys.modules)


def address_space_limit() -> int:
    """This process's soft RLIMIT_AS, bytes."""
    return resource.getrlimit(resource.RLIMIT_AS)[0]


def fields(n: int, sleep_s: float = 0.0) -> dict[str, int]:
    """A task's manifest fields, after `sleep_s` seconds of work."""
    time.sleep(sleep_s)
    return {"n": n}


def stamped(n: int, sleep_s: float) -> dict[str, float]:
    """Fields holding `n` and the wall times the task started and ended, after `sleep_s` seconds of work."""
    started = time.time()
    time.sleep(sleep_s)
    return {"n": n, "started": started, "ended": time.time()}


def waits(pid_file: str, sleep_s: float) -> dict[str, int]:
    """Write this worker's pid to `pid_file`, then work for `sleep_s` seconds."""
    with open(pid_file + ".tmp", "w") as handle:
        handle.write(str(os.getpid()))
    os.replace(pid_file + ".tmp", pid_file)
    time.sleep(sleep_s)
    return {"pid": os.getpid()}


def returns(n: int) -> dict[str, object]:
    """Fields holding `n`, or for a negative `n` an object the parent cannot unpickle."""
    return {"value": n if n >= 0 else FailsToArrive()}


def _kill_this_process() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def _refuse() -> None:
    raise TypeError("this object cannot be unpickled")


class DiesOnArrival:
    """An argument that SIGKILLs the worker unpickling it: a worker lost after taking its task, before pebble
    records the task as running (the window a codec crash or the OOM killer hits only under load)."""

    def __reduce__(self) -> tuple[object, tuple[()]]:
        return _kill_this_process, ()


class FailsToArrive:
    """A result that pickles in the worker and cannot be unpickled in the parent: pebble then breaks the pool."""

    def __reduce__(self) -> tuple[object, tuple[()]]:
        return _refuse, ()


class DiesWhenRead:
    """A manifest field that SIGKILLs the worker reading it: a worker lost in the middle of its task, on record as
    running (what the OOM killer does to a reading worker on a huge scan)."""

    def __bool__(self) -> bool:
        _kill_this_process()
        return True


class DiesOnce(str):
    """A manifest path that SIGKILLs the first worker reading it and is an ordinary path after: a worker lost to
    memory its neighbours shared, whose file reads alone. `marker` (a file) records the first death."""

    def __new__(cls, value: str, marker: str) -> DiesOnce:
        made = super().__new__(cls, value)
        made.marker = marker
        return made

    def __reduce__(self) -> tuple[object, tuple[str, str]]:
        return DiesOnce, (str(self), self.marker)

    def __bool__(self) -> bool:
        if not os.path.exists(self.marker):
            with open(self.marker, "w"):
                pass
            _kill_this_process()
        return True
