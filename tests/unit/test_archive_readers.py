"""The archive's reading workers (`inference.readers`): real spawned processes, a real net, real TIFF and LAS files."""

from __future__ import annotations

import hashlib
import logging
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
import torch

from tests.nets import untrained_veernet
from tests.worker_probe import DiesOnce, DiesWhenRead
from veernet_pipeline.config import Settings
from veernet_pipeline.errors import OperatorError
from veernet_pipeline.inference.archive import digitize_validated, output_paths
from veernet_pipeline.inference.readers import (
    MEMORY_ENV,
    READ_MB_PER_MPX,
    READ_SCAN_MB,
    WORKER_MB,
    read_scans,
    reading_budget,
    reading_memory_mb,
)
from veernet_pipeline.io.calibration import Calibration
from veernet_pipeline.io.classes import NUM_CLASSES
from veernet_pipeline.io.tiff import write_tiff
from veernet_pipeline.model.veernet import load_model, save_model


def _scans(root: Path, count: int) -> list[dict[str, Any]]:
    """`count` calibrated scans with a dark line each, decoded as ingest leaves them; their manifest rows."""
    rng = np.random.default_rng([7, count])
    rows = []
    for i in range(count):
        image = rng.integers(200, 256, size=(96, 320), dtype=np.uint8)
        image[30 + 7 * i, :] = 0
        sha = f"{i + 10:02d}" * 32
        write_tiff(root / "ingested" / "scans" / f"{sha[:16]}.tif", image)
        calibration = f"scan{i}.tif.calib.json"
        Calibration.from_dict({"depth": {"top": 0.0, "bottom": 32.0, "unit": "M"},
                               "curves": [{"mnemonic": "GR", "top_value": 0, "bottom_value": 150},
                                          {"mnemonic": "NPHI", "top_value": 0.45, "bottom_value": -0.15}],
                               "well": {"WELL": f"W{i}"}}).write(root / "raw" / calibration)
        rows.append({"path": f"scan{i}.tif", "sha256": sha, "decoded": f"scans/{sha[:16]}.tif", "width": 320,
                     "height": 96, "net_width": 320, "net_height": 96,
                     "calibration": calibration, "page_file": "",
                     "calibration_sha256": hashlib.sha256((root / "raw" / calibration).read_bytes()).hexdigest()})
    return rows


def test_workers_write_the_bytes_one_process_writes_and_the_callers_threads_come_back(
        tmp_path: Path, test_settings: Settings, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    rows = _scans(tmp_path, 3)
    (tmp_path / "validated").mkdir()
    pd.DataFrame(rows).to_parquet(tmp_path / "validated" / "validated.parquet")
    model_dir = tmp_path / "model"
    save_model(model_dir, untrained_veernet(test_settings, NUM_CLASSES), test_settings.model, NUM_CLASSES)
    threads = torch.get_num_threads()

    def run(out: str, **how: Any) -> dict[str, int]:
        return digitize_validated(tmp_path / "validated", tmp_path / "ingested", tmp_path / "raw", model_dir, "v1",
                                  tmp_path / out, test_settings.infer, test_settings.extract, **how)

    assert run("workers", workers=2) == {"validated": 3, "written": 3, "skipped": 0, "failed": 0}
    assert run("one", loaded=load_model(model_dir)) == {"validated": 3, "written": 3, "skipped": 0, "failed": 0}
    assert torch.get_num_threads() == threads
    monkeypatch.setenv(MEMORY_ENV, "1")  # no room beside the workers: every scan is read alone
    with caplog.at_level(logging.WARNING, logger="veernet_pipeline.inference.readers"):
        assert run("alone", workers=2) == {"validated": 3, "written": 3, "skipped": 0, "failed": 0}
    assert sorted(r.getMessage().split(":")[0] for r in caplog.records if "it is read alone" in r.getMessage()) == [
        "scan0.tif", "scan1.tif", "scan2.tif"]
    for row in rows:
        las = [output_paths(tmp_path / out, row["sha256"], row["calibration_sha256"], "v1", row["path"])[0]
               for out in ("workers", "one", "alone")]
        assert las[0].read_bytes() == las[1].read_bytes() == las[2].read_bytes()
    for out in ("one", "alone"):
        pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "workers" / "index.parquet"),
                                      pd.read_parquet(tmp_path / out / "index.parquet"))


def _read_in_workers(tmp_path: Path, rows: list[dict[str, Any]], settings: Settings, workers: int = 2
                     ) -> dict[str, Any]:
    """`read_scans` of `rows` by `workers` workers with an untrained net, into `tmp_path/out/<i>.las`."""
    model_dir = tmp_path / "model"
    model = untrained_veernet(settings, NUM_CLASSES)
    save_model(model_dir, model, settings.model, NUM_CLASSES)
    jobs = [(row["path"], (row, tmp_path / "out" / f"{i}.las", tmp_path / "out" / f"{i}.qc.png"))
            for i, row in enumerate(rows)]
    return read_scans(jobs, model, model_dir, "cpu", False, tmp_path / "ingested", tmp_path / "raw", "v1",
                      settings.infer, settings.extract, workers=workers)


@pytest.mark.parametrize("workers", [2, 1])
def test_a_worker_killed_while_reading_fails_only_its_scan(tmp_path: Path, test_settings: Settings,
                                                           workers: int) -> None:
    # One worker too (a run on one thread): read in the run's own process, this scan killed the test's process.
    rows = _scans(tmp_path, 3)
    rows[1]["decoded"] = DiesWhenRead()  # every worker that takes this scan is SIGKILLed in the middle of it

    outcomes = _read_in_workers(tmp_path, rows, test_settings, workers)

    assert [outcomes[row["path"]]["status"] for row in rows] == ["written", "failed", "written"]
    assert outcomes["scan1.tif"]["reason"].startswith(
        "scan1.tif: the worker process died during the read (killed by signal SIGKILL): the OOM killer on a large "
        "scan (it died with no other scan beside it)")
    assert (tmp_path / "out" / "0.las").is_file() and (tmp_path / "out" / "2.las").is_file()
    assert not (tmp_path / "out" / "1.las").exists()


def test_a_scan_whose_worker_died_beside_others_is_read_again_alone(tmp_path: Path, test_settings: Settings) -> None:
    rows = _scans(tmp_path, 3)
    rows[1]["decoded"] = DiesOnce(rows[1]["decoded"], str(tmp_path / "died"))  # kills its first worker only

    outcomes = _read_in_workers(tmp_path, rows, test_settings)

    assert (tmp_path / "died").is_file()  # its first worker did die
    assert [outcomes[row["path"]]["status"] for row in rows] == ["written", "written", "written"]
    assert all((tmp_path / "out" / f"{i}.las").is_file() for i in range(3))


def test_the_budget_is_what_the_run_may_use_less_the_workers_and_two_large_scans_do_not_share_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # By hand: 3,000 MB given, 2 workers of 500 MB leave 2,000 MB; a 1,000 x 10,000 scan needs 300 + 64 x 10 = 940
    # MB (the larger of its stored and net sizes), so two fit and three do not; a 2,000 x 16,000 one, 300 + 64 x
    # 32 = 2,348 MB, fits nowhere and is read alone.
    assert (READ_SCAN_MB, READ_MB_PER_MPX, WORKER_MB) == (300.0, 64.0, 500.0)
    monkeypatch.setenv(MEMORY_ENV, "3000")

    def job(name: str, rows: int, columns: int, net_rows: int, net_columns: int) -> tuple[str, tuple[Any, ...]]:
        size = {"path": f"{name}.tif", "width": columns, "height": rows, "net_width": net_columns,
                "net_height": net_rows}
        return name, (size, Path(f"{name}.las"), Path(f"{name}.png"))

    small = [job(f"s{i}", 1_000, 10_000, 500, 5_000) for i in range(3)]
    resampled = job("r", 500, 5_000, 1_000, 10_000)  # a 100-dpi scan read at 200: its net size counts
    huge = job("h", 2_000, 16_000, 2_000, 16_000)
    admission = reading_budget(2, [*small, resampled, huge])
    assert admission.budget == pytest.approx(2_000.0)
    assert [admission.need(j) for j in (small[0], resampled, huge)] == pytest.approx([940.0, 940.0, 2_348.0])
    assert admission.admits(small[1], [small[0]])
    assert not admission.admits(small[2], [small[0], resampled])
    assert not admission.admits(huge, [small[0]])
    assert admission.admits(huge, [])


def test_a_budget_that_is_not_a_number_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(MEMORY_ENV, "12 GB")
    with pytest.raises(OperatorError, match=f"{MEMORY_ENV}='12 GB' is not a number of MB"):
        reading_memory_mb()
    monkeypatch.setenv(MEMORY_ENV, "12000")
    assert reading_memory_mb() == (12_000.0, MEMORY_ENV)
