"""`dvc repro` runs the same stages through the `veernet` CLI; a second repro does nothing."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd

from tests.conftest import REPO, make_project
from veernet_pipeline.config import load_settings


def _dvc(project: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if k not in ("VEERNET_PARAMS", "VEERNET_PROFILE", "MLFLOW_TRACKING_URI")}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    done = subprocess.run([sys.executable, "-m", "dvc", *args], cwd=project, env=env, capture_output=True, text=True,
                          timeout=900)
    assert done.returncode == 0, f"dvc {' '.join(args)} failed:\n{done.stdout}\n{done.stderr}"
    return done.stdout + done.stderr


def test_dvc_repro_runs_every_stage_then_nothing(tmp_path: Path) -> None:
    from veernet_pipeline.synthetic.sample import build_sample_archive

    project = tmp_path / "dvc-project"
    params = make_project(project)
    # Stages depend on the library's code folders, as in the repo.
    shutil.copytree(REPO / "veernet_pipeline", project / "veernet_pipeline",
                    ignore=shutil.ignore_patterns("__pycache__"))
    settings = load_settings(params)
    build_sample_archive(settings.path("raw"), settings)
    _dvc(project, "init", "--no-scm", "-q")

    first = _dvc(project, "repro")
    for stage in ("ingest", "validate", "synthesize", "train_binary", "train_multiclass", "evaluate", "infer"):
        assert f"Running stage '{stage}'" in first
    index = pd.read_parquet(settings.path("digitized") / "index.parquet")
    assert (index["status"] == "written").sum() == len(pd.read_parquet(settings.path("validated") /
                                                                       "validated.parquet"))
    assert (project / "dvc.lock").is_file()

    second = _dvc(project, "repro")
    assert "Running stage" not in second
    assert "Data and pipelines are up to date" in second
