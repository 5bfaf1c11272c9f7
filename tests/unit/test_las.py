"""LAS 2.0 writing and reading with lasio, on real files in tmp_path."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from veernet_pipeline.io.las import LasCurve, read_curves, write_las


def _curves() -> tuple[np.ndarray, list[LasCurve]]:
    depth = 1000.0 + 0.5 * np.arange(8)
    gr = np.array([45.5, 60.25, np.nan, np.nan, 80.125, 90.0, 12.0, 33.3])
    conf = np.array([0.9, 0.8, np.nan, 0.1, 0.95, 1.0, 0.5, 0.25])
    return depth, [LasCurve("GR", "GAPI", gr, "Gamma ray"), LasCurve("GR_CONF", "", conf)]


def test_round_trip_keeps_values_nan_and_well(tmp_path: Path) -> None:
    depth, curves = _curves()
    path = tmp_path / "out" / "well.las"
    write_las(path, depth, "FT", curves, {"WELL": "D&K HEINEN 1-4", "UWI": "15-131-20215"},
              ["model veernet 3", "calibrated from scan.calib.json"])
    text = path.read_text()
    assert text.startswith("~Version")
    assert "VERS.   2.0" in text and "WRAP.    NO" in text
    assert "nan" not in text.lower()
    assert text.count("-999.25") == 1 + 3  # the NULL item plus three missing samples
    assert "model veernet 3" in text and "calibrated from scan.calib.json" in text
    assert sorted(p.name for p in path.parent.iterdir()) == ["well.las"]

    read_depth, read, well = read_curves(path)
    np.testing.assert_allclose(read_depth, depth)
    assert list(read) == ["GR", "GR_CONF"]
    for curve in curves:
        np.testing.assert_array_equal(np.isnan(read[curve.mnemonic]), np.isnan(curve.values))
        np.testing.assert_allclose(read[curve.mnemonic], curve.values, atol=1e-6, equal_nan=True)
    assert well["WELL"] == "D&K HEINEN 1-4" and well["UWI"] == "15-131-20215"
    assert float(well["STRT"]) == 1000.0 and float(well["STOP"]) == 1003.5 and float(well["NULL"]) == -999.25


def test_custom_null_value(tmp_path: Path) -> None:
    depth, curves = _curves()
    write_las(tmp_path / "n.las", depth, "M", curves, {}, [], null=-9999.0)
    data_lines = (tmp_path / "n.las").read_text().split("~ASCII")[1].splitlines()
    assert sum(line.split().count("-9999.0") for line in data_lines) == 3
    _, read, well = read_curves(tmp_path / "n.las")
    assert float(well["NULL"]) == -9999.0
    assert np.isnan(read["GR"]).sum() == 2


def test_track_units_depth_in_pixels(tmp_path: Path) -> None:
    depth = np.arange(5, dtype=np.float64)
    values = np.array([0.1, 0.2, np.nan, 0.4, 0.5])
    write_las(tmp_path / "px.las", depth, "PX", [LasCurve("CURVE_A", "TRACK", values)], {}, ["uncalibrated"])
    read_depth, read, _ = read_curves(tmp_path / "px.las")
    np.testing.assert_array_equal(read_depth, depth)
    np.testing.assert_allclose(read["CURVE_A"], values, equal_nan=True)


def test_curve_length_mismatch_names_file_and_curve(tmp_path: Path) -> None:
    depth, _ = _curves()
    with pytest.raises(ValueError, match=r"bad\.las: curve GR has shape \(3,\)"):
        write_las(tmp_path / "bad.las", depth, "FT", [LasCurve("GR", "GAPI", np.zeros(3))], {}, [])
    with pytest.raises(ValueError, match="depth holds NaN"):
        write_las(tmp_path / "bad.las", np.array([1.0, np.nan]), "FT", [], {}, [])
    assert not (tmp_path / "bad.las").exists()


def test_reads_a_hand_written_las_with_its_own_null(tmp_path: Path) -> None:
    path = tmp_path / "legacy.las"
    path.write_text(
        "~VERSION INFORMATION\n"
        " VERS.                  2.0 : CWLS LOG ASCII STANDARD - VERSION 2.0\n"
        " WRAP.                   NO : ONE LINE PER DEPTH STEP\n"
        "~WELL INFORMATION\n"
        " STRT.M              1500.0 :\n"
        " STOP.M              1500.3 :\n"
        " STEP.M                 0.1 :\n"
        " NULL.               -999.0 :\n"
        " WELL.            25/11-15  : WELL\n"
        "~CURVE INFORMATION\n"
        " DEPT.M                     : DEPTH\n"
        " GR  .GAPI                  : GAMMA RAY\n"
        " RHOB.G/C3                  : BULK DENSITY\n"
        "~A  DEPT     GR      RHOB\n"
        "1500.0   55.1   2.41\n"
        "1500.1   -999.0 2.43\n"
        "1500.2   61.7   -999.0\n"
        "1500.3   58.0   2.45\n"
    )
    depth, curves, well = read_curves(path)
    np.testing.assert_allclose(depth, [1500.0, 1500.1, 1500.2, 1500.3])
    np.testing.assert_allclose(curves["GR"], [55.1, np.nan, 61.7, 58.0], equal_nan=True)
    np.testing.assert_allclose(curves["RHOB"], [2.41, 2.43, np.nan, 2.45], equal_nan=True)
    assert well["WELL"] == "25/11-15"


def test_unreadable_las_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "scan.las"
    path.write_bytes(b"\x00\x01 this is not a LAS file")
    with pytest.raises(ValueError, match="scan.las: cannot read as LAS"):
        read_curves(path)
    # lasio would parse a missing path's text as LAS content; we refuse it by name instead.
    with pytest.raises(FileNotFoundError, match="missing.las"):
        read_curves(tmp_path / "missing.las")

