"""The suite's own scheduling: the files `make test` starts first exist under the names it gives, and a hang
fails one test instead of the run."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

from tests.conftest import REPO, SLOWEST_FIRST


def test_every_slowest_first_name_is_a_test_file() -> None:
    # A renamed file would silently drop back to its alphabetical place and could again start last.
    files = {path.name for path in (REPO / "tests").rglob("test_*.py")}
    assert [name for name in SLOWEST_FIRST if name not in files] == []


def test_a_hanging_test_fails_alone_and_the_run_goes_on(tmp_path: Path) -> None:
    # The suite's own configuration (pyproject's `timeout`), cut to 2 s: the test stuck on a lock fails with
    # the timeout named, and the test after it still runs and passes.
    (tmp_path / "test_stuck.py").write_text(
        "import threading\n\n\n"
        "def test_stuck():\n    lock = threading.Lock()\n    lock.acquire()\n    lock.acquire()\n\n\n"
        "def test_after():\n    pass\n")
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-c",
                           str(REPO / "pyproject.toml"), "--rootdir", str(tmp_path), "-o", "timeout=2",
                           str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stdout[-2000:]
    assert "Timeout (>2.0s) from pytest-timeout" in done.stdout
    assert "1 failed, 1 passed" in done.stdout


def test_the_suite_has_a_per_test_time_limit() -> None:
    # Without one, a single hang holds the whole run until CI gives up (stop 27).
    options = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
    assert 0 < options["timeout"] < 30 * 60
