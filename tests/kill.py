"""SIGKILL a command at a chosen moment: what the crash tests share."""

from __future__ import annotations

import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path


def sigkill_when(command: list[str], cwd: Path, env: dict[str, str], log: Path, ready: Callable[[], bool],
                 what: str, deadline_s: float) -> None:
    """Start `command`, and SIGKILL it (no handler, no clean-up) as soon as `ready()` is true.

    Fails if the command ends before that or `ready()` stays false for `deadline_s`; its stderr goes to `log`.
    """
    with log.open("w") as err, subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.DEVNULL,
                                                stderr=err) as run:
        deadline = time.monotonic() + deadline_s
        while not ready():
            assert run.poll() is None, f"the run ended before its first {what}:\n{log.read_text()[-3000:]}"
            assert time.monotonic() < deadline, f"no {what} within {deadline_s:.0f} s"
            time.sleep(0.01)
        run.send_signal(signal.SIGKILL)
        run.wait(timeout=60)
    assert run.returncode == -signal.SIGKILL
