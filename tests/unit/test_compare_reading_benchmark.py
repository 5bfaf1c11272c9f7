"""benchmarks/compare_reading.py's own parts: which curves have a backup scale, a set read once is not read
again (expected values written by hand), and the other checkout's process imports that checkout's package."""

from __future__ import annotations

import importlib
import json
import subprocess
from pathlib import Path
from types import ModuleType

import pandas as pd
import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


@pytest.fixture
def reading(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    return importlib.import_module("compare_reading")


def test_backup_scales_come_from_each_logs_sidecar(reading: ModuleType, tmp_path: Path) -> None:
    curve = {"mnemonic": "GR", "unit": "GAPI", "top_value": 0.0, "bottom_value": 150.0}
    (tmp_path / "000001.calib.json").write_text(json.dumps(
        {"curves": [curve, {**curve, "backup": {"mode": "wrap", "max_wraps": 1}}]}))
    (tmp_path / "000002.calib.json").write_text(json.dumps({"curves": [{**curve, "backup": {"mode": "wrap"}}]}))
    frame = pd.DataFrame({"id": ["000001", "000001", "000002"], "curve": ["A", "B", "A"]})
    assert reading.with_backup(frame, tmp_path).tolist() == [False, True, True]


def test_a_set_already_read_is_not_read_again(reading: ModuleType, tmp_path: Path) -> None:
    (tmp_path / "per_log.csv").write_text("id,curve,mae\n000001,A,0.5\n")
    # No model, no set, no code: any reading would fail; the stored rows come back, ids kept as text.
    rows = reading.read(tmp_path / "no-code", tmp_path / "no-model", tmp_path / "no-set", "val", 1, None, tmp_path)
    assert rows["id"].tolist() == ["000001"] and rows["mae"].tolist() == [0.5]


def test_the_other_checkouts_process_imports_its_own_package(reading: ModuleType, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    # Run from this checkout's folder, where `python -c` would find this checkout's package first.
    monkeypatch.chdir(BENCHMARKS.parent)
    other = tmp_path / "other"
    (other / "veernet_pipeline").mkdir(parents=True)
    (other / "veernet_pipeline" / "__init__.py").write_text("")
    reading.run_with_code(other, "Path(sys.argv[1]).write_text(veernet_pipeline.__file__)", [str(tmp_path / "got")])
    assert (tmp_path / "got").read_text() == str(other / "veernet_pipeline" / "__init__.py")
    # A folder without the package: the process finds this checkout's and refuses to go on.
    (tmp_path / "empty").mkdir()
    with pytest.raises(subprocess.CalledProcessError):
        reading.run_with_code(tmp_path / "empty", "", [])
