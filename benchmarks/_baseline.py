"""The net and the tiled inference as they were on main before issue 11, for the benchmarks' "before" rows.

They are read from git at `BASELINE` (`git show`), not copied, so the baseline is exactly the code
that ran then; the clone needs its history (`git fetch --unshallow` in a shallow one).
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import tempfile
from pathlib import Path
from types import ModuleType, SimpleNamespace

import yaml

ROOT = Path(__file__).resolve().parents[1]
# main when issue 11 was filed: the 3-class net with a full-resolution stem, tiles one at a time.
BASELINE = "82be667289fbf2d23ea8a1b1c96e65d025c5c33e"


def _show(path: str, commit: str = BASELINE) -> str:
    try:
        return subprocess.run(["git", "show", f"{commit}:{path}"], cwd=ROOT, check=True, capture_output=True,
                              text=True).stdout
    except subprocess.CalledProcessError as error:
        raise RuntimeError(f"git show {commit}:{path} failed ({error.stderr.strip()}); the benchmark's baseline "
                           "needs the repository's history: run it in a full clone") from error


def baseline_module(path: str, name: str, commit: str = BASELINE) -> ModuleType:
    """Import the file `path` (relative to the repository) as it was at `commit`, as module `name`."""
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as handle:
        handle.write(_show(path, commit))
    spec = importlib.util.spec_from_file_location(name, handle.name)
    if spec is None or spec.loader is None:
        raise RuntimeError(f"cannot import {path} at {commit}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    Path(handle.name).unlink()
    return module


def baseline_model_params(profile: str) -> SimpleNamespace:
    """The `model:` section of params.yaml at `BASELINE` under `profile` (base values, then the profile's)."""
    params = yaml.safe_load(_show("params.yaml"))
    section = {**params["model"], **(params["profiles"].get(profile) or {}).get("model", {})}
    return SimpleNamespace(**section)
