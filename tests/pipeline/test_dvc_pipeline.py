"""`dvc repro` from a fresh clone, as a user runs it: every stage, then nothing, then push and pull;
then a code change re-runs exactly the stages it reaches.

The clone holds what the next commit would: the files git tracks or would add, with their
working-tree contents, so an uncommitted edit is tested too. It carries the repo's own `.dvc/`
config, whose default remote is a folder beside the checkout (here, inside the module's folder).
The first full run is the slowest step of the suite, so the module makes it once and each test
works on it (the code-change test on a copy of its own).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from tests.conftest import clone_env, clone_project, git
from tests.edits import DOWNSTREAM_OF_RENDERER, STAGES, edit_docs, edit_renderer
from veernet_pipeline.synthetic.sample import PAGE_NAME, TRUNCATED_NAME, VARIANTS

UP_TO_DATE = "Data and pipelines are up to date"


def _run(folder: Path, *args: str) -> str:
    """Run a command in `folder`; fail the test with its output unless it exits 0. Returns stdout + stderr."""
    done = subprocess.run(args, cwd=folder, env=clone_env(folder), capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, f"{' '.join(args)} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout + done.stderr


def _dvc(folder: Path, *args: str) -> str:
    return _run(folder, sys.executable, "-m", "dvc", *args)


def _status(folder: Path) -> set[str]:
    return set(filter(None, git(folder, "status", "--porcelain", "--untracked-files=all").splitlines()))


@pytest.fixture(scope="module")
def reproduced(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A fresh clone on the test profile after its first `dvc repro`, and that command's output."""
    # What a user does to get a quick result: pick the test profile in params.yaml and commit it.
    project = clone_project(tmp_path_factory.mktemp("dvc") / "clone", profile="test")
    assert (project / ".dvc" / "config").is_file() and not (project / "data" / "ingested").exists()

    # The archive, tracked by DVC so that a push carries it too.
    _run(project, "veernet", "sample")
    _dvc(project, "add", "data/raw")
    return project, _dvc(project, "repro")


def test_dvc_repro_from_a_fresh_clone_runs_every_stage_then_nothing_then_pushes(reproduced: tuple[Path, str]) -> None:
    project, first = reproduced
    for stage in STAGES:
        assert f"Running stage '{stage}'" in first
    assert (project / "dvc.lock").is_file()
    validated = pd.read_parquet(project / "data" / "validated" / "validated.parquet")
    index = pd.read_parquet(project / "data" / "digitized" / "index.parquet")
    written = index[index["status"] == "written"]
    assert len(validated) > 0 and sorted(written["sha256"]) == sorted(validated["sha256"])
    las = sorted(project.glob("data/digitized/**/*.las"))
    assert las == sorted(project / "data" / "digitized" / name for name in written["las"])
    # Independently of the validation: the sample's scans less its two broken ones by design.
    scans = [p for p in (project / "data" / "raw").iterdir() if p.suffix in (".tif", ".tiff")]
    sound = sorted(p.stem for p in scans if p.name not in (TRUNCATED_NAME, PAGE_NAME))
    assert sorted(p.stem for p in las) == sound and len(sound) == len(VARIANTS)

    second = _dvc(project, "repro")
    assert "Running stage" not in second and UP_TO_DATE in second

    # Only DVC's records of the result are new to git, staged by core.autostage: no output leaks
    # into `git status` and DVC wrote no .gitignore of its own.
    assert _status(project) == {"A  data/raw.dvc", "A  dvc.lock"}
    assert not list(project.glob("data/**/.gitignore"))

    _dvc(project, "push")
    remote = project.parent / "veernet-dvc-remote"
    assert remote.is_dir() and any(p.is_file() for p in remote.rglob("*"))
    assert "in sync" in _dvc(project, "status", "--cloud")

    # Another checkout of the committed result pulls it from the same remote (its relative URL
    # resolves beside that checkout too) and finds every stage up to date, the LAS files equal.
    git(project, "commit", "-q", "-m", "result")
    other = project.parent / "other"
    git(project.parent, "clone", "-q", str(project), str(other))
    _dvc(other, "pull")
    assert UP_TO_DATE in _dvc(other, "status")
    for path in las:
        assert (other / path.relative_to(project)).read_bytes() == path.read_bytes()


def test_dvc_reruns_exactly_the_stages_a_change_reaches(reproduced: tuple[Path, str], tmp_path: Path) -> None:
    # A copy of the reproduced clone, outputs and DVC cache included: the edits stay out of the other test's clone.
    project = Path(shutil.copytree(reproduced[0], tmp_path / "clone", symlinks=True))

    edit_docs(project)
    after_docs = _dvc(project, "repro")
    assert "Running stage" not in after_docs and UP_TO_DATE in after_docs

    edit_renderer(project)
    after_render = _dvc(project, "repro")
    ran = set(re.findall(r"Running stage '(\w+)'", after_render))
    assert ran == set(DOWNSTREAM_OF_RENDERER)
    # The command did the work instead of returning a cached result (the old failure): synthesize
    # rendered new candidates, and the models were retrained from them.
    assert "reusing the recorded result" not in after_render
