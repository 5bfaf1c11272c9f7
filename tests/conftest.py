"""Shared fixtures: a throwaway project folder with its own params.yaml, data and MLflow store."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from veernet_pipeline.config import Settings, load_settings

REPO = Path(__file__).resolve().parents[1]


def make_project(folder: Path, profile: str = "test") -> Path:
    """Copy params.yaml (with `profile` set) and dvc.yaml into `folder`; return the params path."""
    folder.mkdir(parents=True, exist_ok=True)
    params = yaml.safe_load((REPO / "params.yaml").read_text())
    params["profile"] = profile
    (folder / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    shutil.copy(REPO / "dvc.yaml", folder / "dvc.yaml")
    return folder / "params.yaml"


@pytest.fixture(scope="session")
def test_settings() -> Settings:
    """The repo's params.yaml on the `test` profile (read-only use: paths point into the repo)."""
    return load_settings(REPO / "params.yaml", profile="test")


@pytest.fixture(scope="session")
def sample_project(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Settings]:
    """A project folder on the `test` profile whose raw archive holds the embedded sample."""
    from veernet_pipeline.synthetic.sample import build_sample_archive

    params = make_project(tmp_path_factory.mktemp("project"))
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("VEERNET_PARAMS", str(params))
        mp.delenv("VEERNET_PROFILE", raising=False)
        mp.delenv("MLFLOW_TRACKING_URI", raising=False)
        settings = load_settings(params)
        build_sample_archive(settings.path("raw"), settings)
        yield settings
