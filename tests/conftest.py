"""Shared fixtures: a throwaway project folder with its own params.yaml, data and MLflow store."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
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


# The files that run the whole pipeline, slowest first (pytest --durations). `make test` gives each
# file to one pytest-xdist worker, files in collection order (--no-loadscope-reorder): starting these
# first keeps the slowest from starting last and running alone at the end.
SLOWEST_FIRST = ("test_dvc_pipeline.py", "test_code_changes.py", "test_dask_executor.py", "test_resume_after_kill.py",
                 "test_dagster_pipeline.py", "test_archive_kill.py")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Collect the slowest files first; every other file keeps its place (the sort is stable)."""
    rank = {name: i for i, name in enumerate(SLOWEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))


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

    ingest_archive(settings.path("raw"), settings.path("ingested"), settings.ingest, settings.validate_)
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
    """Invoke a Dagster asset check on a project: (passed, severity name, description, plain metadata).

    Outside a partitioned run, the archive checks cover the whole archive (the DVC run's tables).
    """
    from dagster import build_asset_check_context

    from assets.resources import PipelineResource

    resource = PipelineResource(params_path=str(settings.root / "params.yaml"), profile=settings.profile)
    if check.op.compute_fn.has_context_arg():
        result = check(build_asset_check_context(), pipeline=resource)
    else:
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


GIT_IDENTITY = ("-c", "user.name=veernet tests", "-c", "user.email=tests@veernet.invalid")


def git(folder: Path, *args: str) -> str:
    """Run git in `folder` with an identity of its own (never the user's config); return stdout."""
    return subprocess.run(["git", *GIT_IDENTITY, *args], cwd=folder, capture_output=True, text=True,
                          check=True).stdout


def clone_project(dest: Path, profile: str | None = "test") -> Path:
    """A fresh clone of the project, as `git add -A` + commit would hold it, with `profile` chosen.

    The files git tracks plus the untracked ones it does not ignore, as they are in the working
    tree (so uncommitted edits count), committed in a new repo; then, as a user would, the profile
    is picked in params.yaml (comments kept) and committed.
    """
    listed = git(REPO, "ls-files", "-z", "--cached", "--others", "--exclude-standard").split("\0")
    for rel in filter(None, listed):
        source = REPO / rel
        if source.is_file():  # a tracked file deleted in the working tree is not part of the next commit
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dest / rel)
    git(dest, "init", "-q")
    git(dest, "add", "-A")
    git(dest, "commit", "-q", "-m", "fresh clone")
    if profile is not None:
        params = dest / "params.yaml"
        text, edits = re.subn(r"^profile: \w+", f"profile: {profile}", params.read_text(), count=1, flags=re.MULTILINE)
        if edits != 1:
            raise ValueError(f"{params}: no top-level `profile:` line to set")
        params.write_text(text)
        git(dest, "commit", "-q", "-am", f"{profile} profile")
    return dest


def clone_env(clone: Path) -> dict[str, str]:
    """Environment for commands run in a clone: its own code first, the venv's tools, no outside settings."""
    env = {k: v for k, v in os.environ.items() if k not in ("VEERNET_PARAMS", "VEERNET_PROFILE", "MLFLOW_TRACKING_URI",
                                                             "DAGSTER_HOME")}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["PYTHONPATH"] = str(clone)
    return env
