"""Evaluation: curve extraction, metrics, native-pixel overlays, truth from LAS, the evaluate stage."""

from __future__ import annotations

import json
import math
from pathlib import Path

import matplotlib.image as mpimg
import numpy as np
import pandas as pd
import pytest
import tifffile
import torch

from veernet_pipeline.config import Settings
from veernet_pipeline.evaluation.evaluate import evaluate_model, match_binary, summarise, swap_share, truth_tracks
from veernet_pipeline.evaluation.metrics import MaskScores, curve_metrics
from veernet_pipeline.evaluation.report import PER_LOG_COLUMNS, overlay_png, write_per_log_csv
from veernet_pipeline.io.calibration import Calibration
from veernet_pipeline.io.las import LasCurve, write_las
from veernet_pipeline.io.tiff import write_tiff
from veernet_pipeline.model.veernet import build_model, save_model
from veernet_pipeline.reading.extract import trace_curves
from veernet_pipeline.reading.picture import choose_window

CALIB = {
    "depth": {"top": 1010.0, "bottom": 1060.0, "unit": "M"},
    "curves": [
        {"mnemonic": "GR", "unit": "GAPI", "top_value": 150.0, "bottom_value": 0.0, "scale": "linear"},
        {"mnemonic": "RDEP", "unit": "OHMM", "top_value": 0.2, "bottom_value": 2000.0, "scale": "log"},
    ],
    "well": {"WELL": "TEST 1"},
}


# --- metrics -------------------------------------------------------------------------------

def test_curve_metrics_known_values_and_coverage() -> None:
    truth = np.array([0.1, 0.2, 0.3, 0.4, np.nan])
    pred = np.array([0.1, 0.3, 0.3, np.nan, 0.9])
    m = curve_metrics(pred, truth)
    # Compared columns 0..2: errors 0, 0.1, 0; truth mean 0.2, SS_tot 0.02, SS_res 0.01.
    assert m["n"] == 3
    assert m["coverage"] == pytest.approx(0.75)
    assert m["mae"] == pytest.approx(0.1 / 3)
    assert m["mse"] == pytest.approx(0.01 / 3)
    assert m["r2"] == pytest.approx(0.5)
    assert m["misread_share"] == pytest.approx(1 / 3)  # the 0.1 error is beyond MISREAD_TRACK, the others are not
    assert curve_metrics(truth, truth)["r2"] == pytest.approx(1.0)
    assert curve_metrics(truth, truth)["misread_share"] == 0.0


def test_curve_metrics_without_predictions_is_nan_with_zero_coverage() -> None:
    m = curve_metrics(np.full(4, np.nan), np.linspace(0, 1, 4))
    assert m["coverage"] == 0.0 and m["n"] == 0 and math.isnan(m["r2"]) and math.isnan(m["mae"])
    assert math.isnan(m["misread_share"])


# --- report --------------------------------------------------------------------------------

def test_choose_window_picks_the_worst_stretch() -> None:
    badness = np.zeros(5000)
    badness[3000:3100] = 1.0
    start, stop = choose_window(5000, 1500, badness)
    assert stop - start == 1500 and start <= 3000 and stop >= 3100
    assert choose_window(800, 1500, badness[:800]) == (0, 800)


def test_overlay_keeps_native_pixels_and_crops_wide_logs(tmp_path: Path) -> None:
    rng = np.random.default_rng([7, 1])
    image = rng.integers(0, 256, size=(100, 2000), dtype=np.uint8)
    truth = np.full((1, 2000), 10.0)
    pred = truth.copy()
    pred[0, 1800:] = np.nan  # the misses draw the window to the right end
    start, stop = overlay_png(tmp_path / "o.png", image, truth, pred, max_columns=300)
    assert (start, stop) == (1700, 2000)
    png = mpimg.imread(tmp_path / "o.png")
    assert png.shape[:2] == (100, 300)
    # Below the drawn lines and away from the label and legend the PNG is the scan, pixel for pixel.
    np.testing.assert_array_equal(np.round(png[60:, 100:250, 0] * 255).astype(np.uint8), image[60:, 1800:1950])


def test_per_log_csv_has_the_contract_columns(tmp_path: Path) -> None:
    write_per_log_csv(tmp_path / "p.csv", [{"id": "a", "curve": "A", "r2": 0.5}])
    frame = pd.read_csv(tmp_path / "p.csv")
    assert tuple(frame.columns) == PER_LOG_COLUMNS and frame.loc[0, "r2"] == 0.5


# --- truth from LAS ------------------------------------------------------------------------

def _las(path: Path, depth: np.ndarray, gr: np.ndarray, rdep: np.ndarray) -> None:
    write_las(path, depth, "M", [LasCurve("GR", "GAPI", gr), LasCurve("RDEP", "OHMM", rdep)], {"WELL": "TEST 1"}, [])


def test_truth_tracks_interpolates_at_column_depths(tmp_path: Path) -> None:
    depth = np.arange(1000.0, 1050.0, 0.5)  # ends before the image's right edge (1060)
    gr = 150.0 - depth % 100          # linear in depth, 50..150 GAPI
    rdep = np.full_like(depth, 20.0)  # one decade above 2 -> 2/4 of the way across 0.2..2000
    rdep[depth > 1040] = 5000.0       # off the track, no backup scale: drawn pegged at the bottom edge
    _las(tmp_path / "t.las", depth, gr, rdep)
    calib = Calibration.from_dict(CALIB)
    tracks = truth_tracks(tmp_path / "t.las", calib, 100, 2, 200)
    x = calib.column_depths(100)
    inside = x <= depth[-1]
    np.testing.assert_allclose(tracks[0, inside], (150.0 - np.interp(x[inside], depth, gr)) / 150.0, atol=1e-9)
    assert np.isnan(tracks[0, ~inside]).all()
    np.testing.assert_allclose(tracks[1, x <= 1040], 0.5)
    np.testing.assert_allclose(tracks[1, (x > 1040.5) & inside], 199.5 / 200)


def test_truth_tracks_follow_wrap_and_skew(tmp_path: Path) -> None:
    depth = np.arange(1000.0, 1060.5, 0.5)
    gr = np.full_like(depth, 200.0)   # 200 GAPI on a reversed 150-0 track: f = -1/3, on the backup at 2/3
    _las(tmp_path / "t.las", depth, gr, np.full_like(depth, 20.0))
    sidecar = {**CALIB, "skew": {"angle_deg": 0.5, "pivot_column": 50.0}}
    sidecar["curves"] = [{**CALIB["curves"][0], "backup": {"mode": "wrap", "max_wraps": 1}}, CALIB["curves"][1]]
    calib = Calibration.from_dict(sidecar)
    tracks = truth_tracks(tmp_path / "t.las", calib, 100, 2, 200)
    shift = np.tan(np.radians(0.5)) * (np.arange(100) - 50.0) / 200
    np.testing.assert_allclose(tracks[0], 2.0 / 3.0 + shift, atol=1e-9)
    np.testing.assert_allclose(tracks[1], 0.5 + shift, atol=1e-9)


def test_truth_tracks_leave_out_rows_the_skew_moves_off_the_image(tmp_path: Path) -> None:
    """A curve pegged at the bottom edge of a skewed track is drawn below the image on one side: no truth there."""
    depth = np.arange(1000.0, 1060.5, 0.5)
    _las(tmp_path / "t.las", depth, np.full_like(depth, -10.0), np.full_like(depth, 20.0))  # GR below 0: bottom edge
    sidecar = {**CALIB, "skew": {"angle_deg": 1.0, "pivot_column": 50.0}}
    calib = Calibration.from_dict(sidecar)
    tracks = truth_tracks(tmp_path / "t.las", calib, 100, 2, 200)
    image_rows = 199.0 + calib.skew_offset(np.arange(100))
    off = np.floor(image_rows + 0.5) > 199
    assert off.any() and (~off).any()
    assert np.isnan(tracks[0, off]).all()
    np.testing.assert_allclose(tracks[0, ~off], (image_rows[~off] + 0.5) / 200, atol=1e-9)
    assert np.isfinite(tracks[1]).all()  # mid-track, on the image in every column


def test_truth_tracks_names_a_missing_curve(tmp_path: Path) -> None:
    depth = np.arange(1000.0, 1100.0)
    write_las(tmp_path / "t.las", depth, "M", [LasCurve("GR", "GAPI", depth * 0)], {}, [])
    with pytest.raises(ValueError, match="RDEP"):
        truth_tracks(tmp_path / "t.las", Calibration.from_dict(CALIB), 50, 2, 100)


def test_match_binary_takes_the_nearer_truth() -> None:
    truth = np.array([[0.1, 0.1, np.nan, 0.1], [0.8, 0.8, 0.8, np.nan]])
    pred = np.array([0.2, 0.7, np.nan, 0.9])
    np.testing.assert_allclose(match_binary(pred, truth), [0.1, 0.8, 0.8, 0.1])


# --- the evaluate stage --------------------------------------------------------------------

def _write_log(set_dir: Path, log_id: str, split: str, width: int, height: int) -> dict[str, object]:
    """One synthetic log drawn from its own LAS through the calibration, like the renderer does."""
    calib = Calibration.from_dict(CALIB)
    depth = np.arange(1000.0, 1070.0, 0.25)
    gr = 75.0 + 50.0 * np.sin(depth / 3.0)
    rdep = 10.0 ** (1.0 + np.cos(depth / 5.0))
    _las(set_dir / f"{log_id}.las", depth, gr, rdep)
    image = np.full((height, width), 255, dtype=np.uint8)
    mask = np.zeros((height, width), dtype=np.uint8)
    cols = np.arange(width)
    # By hand from CALIB: column x sits at depth 1010 + (x + 0.5) * 50 / W; GR runs 150 (top) -> 0 (bottom)
    # linearly and RDEP 0.2 -> 2000 over 4 decades; the fraction f of the track is drawn at row f * H - 0.5.
    column_depth = 1010.0 + (cols + 0.5) * 50.0 / width
    fractions = ((150.0 - np.interp(column_depth, depth, gr)) / 150.0,
                 (np.log10(np.interp(column_depth, depth, rdep)) - np.log10(0.2)) / 4.0)
    for k, fraction in enumerate(fractions):
        rows = np.clip(np.round(fraction * height - 0.5), 0, height - 1).astype(int)
        image[rows, cols] = 0
        mask[rows, cols] = k + 1
    write_tiff(set_dir / f"{log_id}.tif", image)
    write_tiff(set_dir / f"{log_id}.mask.tif", mask)
    calib.write(set_dir / f"{log_id}.calib.json")
    return {"id": log_id, "image": f"{log_id}.tif", "mask": f"{log_id}.mask.tif", "calibration": f"{log_id}.calib.json",
            "las": f"{log_id}.las", "width": width, "height": height, "well": "TEST 1", "split": split, "n_curves": 2}


def test_oracle_probabilities_recover_the_las_curves(tmp_path: Path, test_settings: Settings) -> None:
    """The mask itself as probabilities must score near-perfectly: truth and prediction agree on rows."""
    meta = _write_log(tmp_path, "a", "test", 400, 100)
    mask = tifffile.imread(tmp_path / "a.mask.tif")
    probs = np.stack([(mask == k).astype(np.float32) for k in range(3)])
    rows, _ = trace_curves(probs, test_settings.extract)
    truth = truth_tracks(tmp_path / "a.las", Calibration.from_file(tmp_path / "a.calib.json"), 400, 2,
                         meta["height"])
    for k in range(2):
        scores = curve_metrics((rows[k] + 0.5) / meta["height"], truth[k])
        assert scores["r2"] > 0.99 and scores["mae"] <= 0.5 / meta["height"] and scores["coverage"] > 0.95


@pytest.mark.parametrize(("num_classes", "curves"), [(3, {"A", "B"}), (1, {"A"})])
def test_evaluate_model_writes_metrics_csv_and_overlay(
    tmp_path: Path, test_settings: Settings, num_classes: int, curves: set[str]
) -> None:
    set_dir = tmp_path / "multiclass"
    set_dir.mkdir()
    rows = [_write_log(set_dir, "a", "test", 320, 96), _write_log(set_dir, "b", "test", 352, 112),
            _write_log(set_dir, "c", "train", 320, 96)]
    pd.DataFrame(rows).to_parquet(set_dir / "index.parquet")
    torch.manual_seed(test_settings.seed)
    model = build_model(test_settings.model, num_classes)
    save_model(tmp_path / "model", model, test_settings.model, num_classes)

    stale = tmp_path / "eval" / "overlays" / "worst_1_earlier-model.png"
    stale.parent.mkdir(parents=True)
    stale.write_bytes(b"an earlier evaluation's picture")
    metrics = evaluate_model(tmp_path / "model", set_dir, tmp_path / "eval", test_settings.evaluate,
                             test_settings.extract)

    assert metrics["n_logs"] == 2 and metrics["split"] == "test"
    assert not stale.exists()
    assert set(metrics["curves"]) == curves
    assert set(metrics["classes"]) == {str(k) for k in range(max(num_classes, 2))}
    assert set(metrics["classes"]["1"]) == {"iou", "f1", "precision", "recall"}
    on_disk = json.loads((tmp_path / "eval" / "metrics.json").read_text())
    assert set(on_disk) == set(metrics)
    per_log = pd.read_csv(tmp_path / "eval" / "per_log.csv", dtype={"id": str})
    assert len(per_log) == 2 * len(curves) and set(per_log["curve"]) == curves and set(per_log["id"]) == {"a", "b"}
    # What a log is like, so failures can be grouped: scale kind, curves in the track, share drawn wrapped.
    assert set(per_log["scale"]) <= {"linear", "log"} and set(per_log["n_curves"]) <= {1, 2}
    assert per_log["wrapped_share"].between(0.0, 1.0).all()
    # The gate's figure from the CSV by a second route: pandas' median skips NaN, and a curve with no
    # R^2 at all (an untrained net may read nothing) leaves the figure NaN.
    by_curve = per_log.groupby("curve")["r2"].median()
    expected = math.nan if by_curve.isna().any() else by_curve.min()
    assert metrics["median_r2"] == pytest.approx(expected, nan_ok=True)
    assert mpimg.imread(tmp_path / "eval" / "overlay.png").shape[0] in (96, 112)
    # Two logs: each is among both the best five and the worst five.
    assert sorted(p.name.split("_")[0] for p in (tmp_path / "eval" / "overlays").iterdir()) == ["best"] * 2 + [
        "worst"] * 2
    assert {"median_pearson_abs", "p10_r2", "median_mae_physical", "median_swap_share",
            "median_misread_share"} <= set(metrics["curves"]["A"])


def test_summary_takes_medians_over_logs_and_the_worst_curve() -> None:
    def record(log: str, curve: str, r2: float, mae: float) -> dict[str, object]:
        return {"id": log, "curve": curve, "r2": r2, "mae": mae, "swap_share": 0.25}

    records = [record("a", "A", 0.9, 0.01), record("b", "A", 0.5, 0.02), record("c", "A", 0.7, 0.03),
               record("a", "B", 0.2, 0.10), record("b", "B", math.nan, 0.05), record("c", "B", 0.4, math.nan)]
    pooled = MaskScores(3)
    # Class 1: five pixels right, one false alarm, one miss; class 2: one pixel right.
    pooled.update(np.array([1, 1, 1, 1, 1, 1, 0, 2, 0, 0]), np.array([1, 1, 1, 1, 1, 0, 1, 2, 0, 0]))
    metrics = summarise(records, pooled, "test", 3)
    # By hand: A's R^2 sorted 0.5, 0.7, 0.9 -> median 0.7, 10th percentile 0.5 + 0.2 * (0.7 - 0.5) = 0.54;
    # B's R^2 without the NaN: 0.2, 0.4 -> median 0.3. MAE medians: A 0.02, B (0.10, 0.05) -> 0.075.
    assert metrics["curves"]["A"]["median_r2"] == pytest.approx(0.7)
    assert metrics["curves"]["A"]["p10_r2"] == pytest.approx(0.54)
    assert metrics["curves"]["B"]["median_r2"] == pytest.approx(0.3)
    assert metrics["median_r2"] == pytest.approx(0.3) and metrics["median_mae"] == pytest.approx(0.075)
    assert metrics["swap_share"] == pytest.approx(0.25)
    # Class 1: tp 5, fp 1, fn 1 -> IoU = 5 / (5 + 1 + 1).
    assert metrics["classes"]["1"]["iou"] == pytest.approx(5 / 7)
    never_read = summarise([record("a", "A", 0.9, 0.01), record("a", "B", math.nan, math.nan)], pooled, "test", 1)
    assert math.isnan(never_read["median_r2"])  # a curve never read fails the gate


def test_swap_share_counts_crossed_columns() -> None:
    truth = np.array([[0.2, 0.2, 0.2, 0.2], [0.8, 0.8, 0.8, np.nan]])
    pred = np.array([[0.21, 0.79, 0.2, 0.2], [0.79, 0.21, 0.8, 0.8]])
    assert swap_share(pred, truth) == pytest.approx(1 / 3)  # column 1 of the 3 with all four values
    assert math.isnan(swap_share(pred[:1], truth[:1]))


def test_evaluate_model_names_an_empty_split(tmp_path: Path, test_settings: Settings) -> None:
    set_dir = tmp_path / "s"
    set_dir.mkdir()
    pd.DataFrame([_write_log(set_dir, "a", "train", 320, 96)]).to_parquet(set_dir / "index.parquet")
    with pytest.raises(ValueError, match="no logs in split 'test'"):
        evaluate_model(tmp_path / "model", set_dir, tmp_path / "eval", test_settings.evaluate, test_settings.extract)
