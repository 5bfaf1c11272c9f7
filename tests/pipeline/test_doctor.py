"""`veernet doctor` on a healthy and a broken project: real params, a real MLflow store, real folders."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from tests.conftest import make_project
from tests.cpu import has_bf16_instructions
from tests.nets import untrained_veernet
from veernet_pipeline.cli import main
from veernet_pipeline.commands.doctor import check_disk, check_memory
from veernet_pipeline.config import load_settings
from veernet_pipeline.io.classes import NUM_CLASSES
from veernet_pipeline.io.tiff import write_tiff
from veernet_pipeline.model.veernet import save_model
from veernet_pipeline.tracking import store
from veernet_pipeline.tracking.store import CHAMPION, MULTICLASS_MODEL


def _doctor(params: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, str]]:
    """Run `veernet doctor`; its exit code and each check's line (with its fix line) by check name."""
    try:
        code = main(["--params", str(params), "--profile", "test", "doctor"])
    except SystemExit as exc:
        code = int(exc.code)
    lines = capsys.readouterr().out.splitlines()
    checks: dict[str, str] = {}
    for line in lines:
        if line.startswith(("OK", "PROBLEM")):
            name = line.split()[1].rstrip(":")
            checks[name] = line
        elif line.strip().startswith("fix:"):
            checks[name] += "\n" + line.strip()
    return code, checks


@pytest.fixture()
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    monkeypatch.delenv("VEERNET_PROFILE", raising=False)
    return make_project(tmp_path / "project")


def test_a_healthy_setup_passes_every_check(project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    settings = load_settings(project, profile="test")
    write_tiff(settings.path("raw") / "a.tif", np.full((96, 320), 255, np.uint8))
    save_model(tmp_path / "model", untrained_veernet(settings, NUM_CLASSES), settings.model, NUM_CLASSES)
    with store.stage_run(settings.root, "train_multiclass", {}, {}):
        version = store.log_model(tmp_path / "model", MULTICLASS_MODEL)
    store.set_alias(settings.root, MULTICLASS_MODEL, CHAMPION, version)
    (tmp_path / "dagster_home").mkdir()
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "dagster_home"))

    threads = torch.get_num_threads()
    torch.set_num_threads(3)  # as OMP_NUM_THREADS=3 would start it
    try:
        code, checks = _doctor(project, capsys)
    finally:
        torch.set_num_threads(threads)
    assert code == 0
    assert set(checks) == {"python", "torch", "memory", "params", "mlflow", "DAGSTER_HOME", "archive", "resolution",
                           "disk"}
    assert all(line.startswith("OK") for line in checks.values()), checks
    assert "models:/veernet-multiclass@champion is version 1" in checks["mlflow"]
    assert "1 scans" in checks["archive"] and "embedded SQLite" in checks["DAGSTER_HOME"]
    precision = "bf16" if has_bf16_instructions() else "fp32"
    assert f"scans read in {precision}" in checks["torch"]
    assert "an archive run reads in 3 worker processes of one thread each" in checks["torch"]
    assert "of 1 scans sampled, resolution stated: 1 none; 0 read resampled" in checks["resolution"]


def test_an_archive_of_tagged_and_untagged_scans_asks_for_the_untagged_resolution(
        project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    raw = load_settings(project, profile="test").path("raw")
    blank = np.full((96, 320), 255, np.uint8)
    write_tiff(raw / "a.tif", blank, dpi=(300.0, 300.0))
    write_tiff(raw / "b.tif", blank, dpi=(300.0, 300.0))
    write_tiff(raw / "c.tif", blank)  # saved without its resolution
    write_tiff(raw / "d.tif", blank, dpi=(200.0, 200.0))  # the net's own
    _, checks = _doctor(project, capsys)
    assert checks["resolution"].startswith("PROBLEM"), checks["resolution"]
    assert "2 at 300 x 300 dpi, 1 at 200 x 200 dpi, 1 none; 2 read resampled" in checks["resolution"]
    assert "fix: scans stating no resolution are read as they are; if they were scanned like the others " \
           "(300 x 300 dpi), set infer.untagged_dpi" in checks["resolution"]
    project.write_text(project.read_text().replace("untagged_dpi: null", "untagged_dpi: 300.0"))
    _, checks = _doctor(project, capsys)
    assert checks["resolution"].startswith("OK") and "3 read resampled" in checks["resolution"]
    assert "those stating none taken as 300 dpi (infer.untagged_dpi)" in checks["resolution"]


def test_a_broken_setup_names_each_problem_and_its_fix(project: Path, monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    code, checks = _doctor(project, capsys)  # no scan, no model, no DAGSTER_HOME
    assert code == 1
    for name in ("mlflow", "DAGSTER_HOME", "archive"):
        assert checks[name].startswith("PROBLEM") and "\nfix: " in checks[name], checks[name]
    assert "alias 'champion' is not set" in checks["mlflow"] and "veernet promote" in checks["mlflow"]
    assert "export DAGSTER_HOME" in checks["DAGSTER_HOME"] and "does not exist" in checks["archive"]
    assert checks["python"].startswith("OK") and checks["params"].startswith("OK")


def test_bad_params_stop_the_checks_that_need_them(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    project.write_text(project.read_text().replace("max_attempts: 3", "max_attempts: 0"))
    code, checks = _doctor(project, capsys)
    assert code == 1 and checks["params"].startswith("PROBLEM") and "infer.max_attempts" in checks["params"]
    assert "mlflow" not in checks


@pytest.mark.parametrize(("given", "ok", "said"), [
    # By hand: 2 workers of 0.5 GB; a 640 x 12,800 strip needs 300 + 64 x 8.192 = 824.3 MB. 5,000 MB leaves 4,000:
    # 4 strips at once. 1,800 MB leaves 800: not one.
    ("5000", True, "4.9 GB for an archive run's reading (VEERNET_READ_MEMORY_MB): 2 worker(s) of 0.49 GB leave "
                   "3.9 GB for scans, 4 640 x 12,800 strip(s) at once (0.80 GB each)"),
    ("1800", False, "leave 0.8 GB for scans, 0 640 x 12,800 strip(s)"),
    ("lots", False, "VEERNET_READ_MEMORY_MB='lots' is not a number of MB"),
])
def test_the_memory_check_wants_room_for_a_strip_beside_the_workers(given: str, ok: bool, said: str,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VEERNET_READ_MEMORY_MB", given)
    threads = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        check = check_memory()
    finally:
        torch.set_num_threads(threads)
    assert check.ok == ok and said in check.detail, check.detail


def test_the_disk_check_wants_twice_the_archive(tmp_path: Path) -> None:
    assert check_disk(tmp_path / "not" / "yet", 1_000, free_bytes=2_000).ok
    short = check_disk(tmp_path, 1_000, free_bytes=1_999)
    assert not short.ok and "0.00 GB wanted" in short.detail and str(tmp_path) in short.detail
