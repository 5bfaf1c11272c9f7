"""`veernet infer --tranche T` SIGKILLed mid-tranche, then run again: no partial LAS anywhere, only the rest redone."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import lasio
import pandas as pd

from tests.archive import register_champion
from tests.conftest import make_project
from tests.kill import sigkill_when
from veernet_pipeline import stages
from veernet_pipeline.config import load_settings
from veernet_pipeline.io.tranches import archive_dirs

TRANCHE = "box_07"
N_VALID = 10  # distinct scans; the sample adds 2 broken ones, which validate quarantines
DEADLINE_S = 300.0
# What io/atomic.py leaves when a writer dies between creating its temporary sibling and the rename:
# `.<target stem>.<8 random characters>.tmp<target suffix>`. Readers and the skip check never look at it.
ATOMIC_TEMP = re.compile(r"^\..+\.[a-z0-9_]{8}\.tmp\.(las|png|parquet)$")
OUTPUT = re.compile(r"^[^.].*\.(las|qc\.png)$")


def _infer(project: Path) -> tuple[list[str], dict[str, str]]:
    """The command and environment of `veernet infer --tranche TRANCHE` in `project`."""
    env = {k: v for k, v in os.environ.items() if k not in ("VEERNET_PROFILE", "MLFLOW_TRACKING_URI")}
    env.update(VEERNET_PARAMS=str(project / "params.yaml"), OMP_NUM_THREADS="1")
    return [sys.executable, "-m", "veernet_pipeline.cli", "infer", "--tranche", TRANCHE], env


def _las_files(root: Path) -> dict[Path, bytes]:
    return {p: p.read_bytes() for p in root.rglob("*.las") if not p.name.startswith(".")}


def test_sigkill_mid_tranche_leaves_no_partial_las_and_the_rerun_does_the_rest(tmp_path: Path) -> None:
    from veernet_pipeline.synthetic.sample import build_sample_archive

    project = tmp_path / "project"
    settings = load_settings(make_project(project), profile="test")
    build_sample_archive(settings.path("raw") / TRANCHE, settings, n_valid=N_VALID)
    stages.run("ingest", settings, tranche=TRANCHE)
    assert stages.run("validate", settings, tranche=TRANCHE).counts["validated"] == N_VALID
    register_champion(settings)
    digitized, index_file = settings.path("digitized"), archive_dirs(settings, TRANCHE).index / "index.parquet"

    command, env = _infer(project)
    sigkill_when(command, project, env, tmp_path / "killed.log", lambda: bool(_las_files(digitized)), "LAS",
                 DEADLINE_S)

    before = _las_files(digitized)
    assert 1 <= len(before) < N_VALID, f"the kill did not land mid-tranche ({len(before)} of {N_VALID} LAS)"
    assert not index_file.exists()  # the run's index is written at its end, which it never reached
    for path in (p for p in digitized.rglob("*") if p.is_file()):
        assert OUTPUT.match(path.name) or ATOMIC_TEMP.match(path.name), f"{path}: neither an output nor a temp file"
    for path in before:  # every LAS on disk is whole
        assert len(lasio.read(path).curves) >= 3, path
        assert path.with_name(path.name.replace(".las", ".qc.png")).is_file(), f"{path}: LAS without its QC"

    done = subprocess.run(command, cwd=project, env=env, capture_output=True, text=True, timeout=DEADLINE_S)
    assert done.returncode == 0, done.stderr[-3000:]
    index = pd.read_parquet(index_file)
    counts = index["status"].value_counts().to_dict()
    assert counts == {"skipped": len(before), "written": N_VALID - len(before)}
    after = _las_files(digitized)
    assert len(after) == N_VALID
    assert {p: after[p] for p in before} == before  # what the killed run finished was not redone
    for path in after:
        assert len(lasio.read(path).curves) >= 3, path
    assert set(index.loc[index["status"] == "skipped", "las"]) == {p.relative_to(digitized).as_posix() for p in before}
