"""Sidecars never crash anything: each broken one is `bad_calibration` naming its field, in validate and digitize."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tests.nets import untrained_veernet
from veernet_pipeline.cli import main
from veernet_pipeline.config import Settings, load_settings
from veernet_pipeline.io.calibration import Calibration, CalibrationError
from veernet_pipeline.io.ingest import ingest_archive
from veernet_pipeline.io.tiff import write_tiff
from veernet_pipeline.model.veernet import save_model
from veernet_pipeline.validation.validate import validate_manifest

REPO = Path(__file__).parents[2]
GOOD = {"depth": {"top": 1000.0, "bottom": 1250.0, "unit": "FT"},
        "curves": [{"mnemonic": "GR", "unit": "GAPI", "top_value": 0.0, "bottom_value": 150.0, "scale": "linear"},
                   {"mnemonic": "ILD", "unit": "OHMM", "top_value": 0.2, "bottom_value": 2000.0, "scale": "log"}],
        "well": {"WELL": "TEST 1"}}


def _with(path: str, value: object) -> bytes:
    """GOOD with the value at `path` (``curves.1.top_value``) replaced, or removed when `value` is `...`."""
    data = json.loads(json.dumps(GOOD))
    *parents, last = [int(p) if p.isdigit() else p for p in path.split(".")]
    node = data
    for part in parents:
        node = node[part]
    if value is ...:
        del node[last]
    else:
        node[last] = value
    return json.dumps(data).encode()


# case -> (sidecar bytes, what the message must say)
CASES = {
    "list_for_object": (_with("depth", [1000.0, 1250.0]), "depth: not an object ({...}), found list"),
    "object_for_list": (_with("curves", GOOD["curves"][0]), "curves: not a list ([...]), found dict"),
    "text_for_curve": (_with("curves", ["GR"]), "curves[0]: not an object ({...}), found str"),
    "top_level_list": (b"[1, 2, 3]", "the sidecar: not an object ({...}), found list"),
    "missing_key": (_with("curves.1.top_value", ...), "curves[1].top_value: missing"),
    "missing_depth": (_with("depth", ...), "depth: missing"),
    "not_a_number": (_with("curves.1.top_value", "abc"), "curves[1].top_value: not a number ('abc')"),
    "nan": (_with("curves.1.top_value", float("nan")), "curves[1].top_value: not a finite number (nan)"),
    "infinity": (json.dumps(GOOD).replace("1250.0", "1e999").encode(), "depth.bottom: not a finite number (inf)"),
    "non_utf8": (json.dumps(GOOD).replace("TEST 1", "TEST \u00e9").encode("latin-1"), "not UTF-8 text (byte 0xe9"),
    "depth_top_equals_bottom": (_with("depth.bottom", 1000.0), "depth: top and bottom are both 1000.0"),
    "curve_ends_equal": (_with("curves.0.bottom_value", 0.0), "curves[0]: top_value and bottom_value are both 0.0"),
    "unknown_scale": (_with("curves.0.scale", "logarithmic"), "curves[0].scale: logarithmic is not linear or log"),
    "negative_log_bound": (_with("curves.1.top_value", -0.2), "curves[1]: a log scale needs positive top_value"),
    "no_curves": (_with("curves", []), "curves: empty; list at least one curve"),
    "well_value_list": (_with("well.WELL", ["A", "B"]), "well.WELL: not text (['A', 'B'])"),
    "not_json": (b'{"depth": {"top": 1000.0,', "not valid JSON (Expecting property name"),
    "nested_too_deep": (b"[" * 100_000, "JSON nested too deeply"),
}


@pytest.fixture(scope="module")
def settings() -> Settings:
    return load_settings(REPO / "params.yaml", profile="test")


@pytest.fixture(scope="module")
def quarantine(tmp_path_factory: pytest.TempPathFactory, settings: Settings) -> pd.DataFrame:
    """One scan per case, each with its own broken sidecar, ingested and validated."""
    root = tmp_path_factory.mktemp("sidecars")
    raw = root / "raw"
    raw.mkdir()
    for i, (case, (content, _)) in enumerate([("good", (json.dumps(GOOD).encode(), "")), *CASES.items()]):
        image = np.full((100, 400), 250, np.uint8)
        image[(np.arange(400) + i) % 100, np.arange(400)] = 0  # distinct bytes: no duplicates
        write_tiff(raw / f"{case}.tif", image)
        (raw / f"{case}.tif.calib.json").write_bytes(content)
    ingest_archive(raw, root / "ingested", settings.ingest, settings.validate_)
    counts = validate_manifest(root / "ingested", root / "validated", settings.validate_)
    assert (counts["validated"], counts["by_reason"]["bad_calibration"]) == (1, len(CASES))
    return pd.read_parquet(root / "validated" / "quarantine.parquet").set_index("path")


@pytest.mark.parametrize("case", list(CASES))
def test_validate_quarantines_with_the_field_named(quarantine: pd.DataFrame, case: str) -> None:
    row = quarantine.loc[f"{case}.tif"]
    assert row["reason_code"] == "bad_calibration"
    assert row["reason"].startswith(f"{case}.tif: sidecar {case}.tif.calib.json is unusable (")
    assert CASES[case][1] in row["reason"], row["reason"]


@pytest.mark.parametrize("case", list(CASES))
def test_reading_the_sidecar_raises_only_calibration_error(tmp_path: Path, case: str) -> None:
    path = tmp_path / "scan.tif.calib.json"
    path.write_bytes(CASES[case][0])
    with pytest.raises(CalibrationError) as err:
        Calibration.from_file(path)
    assert str(err.value).startswith(f"{path}: ") and CASES[case][1] in str(err.value)


def test_every_problem_is_listed_and_a_good_sidecar_reads(tmp_path: Path) -> None:
    both = json.loads(_with("curves.1.top_value", "abc"))
    both["depth"]["top"] = None
    with pytest.raises(CalibrationError) as err:
        Calibration.from_dict(both, source="x.calib.json")
    assert str(err.value) == ("x.calib.json: depth.top: not a number (None); "
                              "curves[1].top_value: not a number ('abc')")
    calibration = Calibration.from_dict(GOOD)
    assert calibration.curves[1].scale == "log" and calibration.well == {"WELL": "TEST 1"}


def test_veernet_digitize_names_the_field(tmp_path: Path, settings: Settings) -> None:
    model_dir = tmp_path / "model"
    save_model(model_dir, untrained_veernet(settings, 3), settings.model, 3)
    write_tiff(tmp_path / "scan.tif", np.full((100, 400), 250, np.uint8))
    (tmp_path / "scan.tif.calib.json").write_bytes(CASES["nan"][0])
    with pytest.raises(CalibrationError, match=r"curves\[1\]\.top_value: not a finite number"):
        main(["--params", str(REPO / "params.yaml"), "--profile", "test", "digitize", str(tmp_path / "scan.tif"),
              "--out", str(tmp_path / "scan.las"), "--model", str(model_dir)])
    assert not (tmp_path / "scan.las").exists()
