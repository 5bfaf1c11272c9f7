"""Shared fixtures: a throwaway project folder with its own params.yaml, data and MLflow store."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
import yaml

from veernet_pipeline.config import Settings, load_settings

if TYPE_CHECKING:
    from dagster import AssetChecksDefinition

REPO = Path(__file__).resolve().parents[1]
# The valid scans of the embedded sample archive, by its design (`synthetic.sample`); it quarantines two more.
SAMPLE_VALID = ["sample_00_zlib.tif", "sample_01_lzw_portrait.tif", "sample_02_packbits_1bit.tif",
                "sample_03_lzw_nocalib.tif"]


def make_project(folder: Path, profile: str = "test") -> Path:
    """Copy params.yaml (with `profile` set) and dvc.yaml into `folder`; return the params path."""
    folder.mkdir(parents=True, exist_ok=True)
    params = yaml.safe_load((REPO / "params.yaml").read_text())
    params["profile"] = profile
    (folder / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    shutil.copy(REPO / "dvc.yaml", folder / "dvc.yaml")
    return folder / "params.yaml"


def ingest_and_validate(settings: Settings) -> None:
    """Run the ingest and validate stages' library functions on a project's archive."""
    from veernet_pipeline.io.ingest import ingest_archive
    from veernet_pipeline.validation.validate import validate_manifest

    ingest_archive(settings.path("raw"), settings.path("ingested"), settings.ingest.extensions)
    validate_manifest(settings.path("ingested"), settings.path("validated"), settings.validate_)


def sample_scans_project(folder: Path) -> Settings:
    """A `test` project in `folder` whose archive holds the embedded sample (4 valid scans, 2 broken), validated."""
    from veernet_pipeline.synthetic.sample import build_sample_archive

    settings = load_settings(make_project(folder), profile="test")
    build_sample_archive(settings.path("raw"), settings)
    ingest_and_validate(settings)
    return settings


def copy_project(settings: Settings, folder: Path) -> Settings:
    """A copy of a project folder (params, archive, stage outputs) to change without touching the original."""
    shutil.copytree(settings.root, folder)
    return load_settings(folder / "params.yaml", profile=settings.profile)


def run_check(check: AssetChecksDefinition, settings: Settings) -> tuple[bool, str, str, dict[str, Any]]:
    """Invoke a Dagster asset check on a project: (passed, severity name, description, plain metadata)."""
    from assets.resources import PipelineResource

    resource = PipelineResource(params_path=str(settings.root / "params.yaml"), profile=settings.profile)
    result = check(pipeline=resource)
    metadata = {key: getattr(value, "value", value) for key, value in result.metadata.items()}
    return result.passed, result.severity.name, result.description, metadata


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
