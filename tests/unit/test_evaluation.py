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

from tests.nets import InkIsStyle
from veernet_pipeline.config import Settings
from veernet_pipeline.evaluation.evaluate import evaluate_log, evaluate_model, score_curves
from veernet_pipeline.evaluation.metrics import MaskScores, curve_metrics
from veernet_pipeline.evaluation.report import PER_LOG_COLUMNS, overlay_png, write_per_log_csv
from veernet_pipeline.evaluation.summary import summarise, write_comparison
from veernet_pipeline.evaluation.truth import nearest_truth, truth_band, truth_tracks
from veernet_pipeline.io.calibration import Calibration
from veernet_pipeline.io.classes import style_class
from veernet_pipeline.io.las import LasCurve, write_las
from veernet_pipeline.io.tiff import write_tiff
from veernet_pipeline.model.veernet import build_model, save_model
from veernet_pipeline.reading.enlarge import read_scan
from veernet_pipeline.reading.extract import trace_curves
from veernet_pipeline.reading.picture import choose_window
from veernet_pipeline.reading.styles import curve_classes
from veernet_pipeline.stages.evaluate import headline

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


def test_a_read_row_inside_the_band_the_curve_sweeps_is_exact() -> None:
    truth = np.array([0.2, 0.5, 0.8])
    lo, hi = np.array([0.2, 0.35, 0.65]), np.array([0.35, 0.65, 0.8])
    pred = np.array([0.3, 0.4, 0.6])  # inside, inside, 0.05 above the band of the third column
    banded = curve_metrics(pred, truth, (lo, hi))
    # By hand: compared against 0.3, 0.4, 0.65 -> errors 0, 0, 0.05.
    assert banded["mae"] == pytest.approx(0.05 / 3)
    assert curve_metrics(pred, truth)["mae"] == pytest.approx((0.1 + 0.1 + 0.2) / 3)


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


def test_own_line_says_whether_a_curve_drawn_alike_was_written_with_its_own_line() -> None:
    """Three curves on a 100-row track: two solid ones read the wrong way round, a dashed one read right. The
    best assignment scores each solid truth against the other's line, so the LAS's two solid curves carry each
    other's values: own_line 0 for both (by hand), 1 for the dashed curve; read the right way round, 1 for all."""
    truth = np.stack([np.linspace(0.2, 0.3, 40), np.linspace(0.7, 0.6, 40), np.full(40, 0.5)])
    classes = [(style_class("solid"),), (style_class("solid"),), (style_class("dashed"),)]
    swapped = truth[[1, 0, 2]] * 100 - 0.5
    scores, _, order = score_curves(swapped, truth, classes, 100)
    assert order.tolist() == [1, 0, 2]
    assert [s["own_line"] for s in scores] == [0.0, 0.0, 1.0]
    assert min(s["r2"] for s in scores) > 0.99  # the R² figures forgive it
    scores, _, _ = score_curves(truth * 100 - 0.5, truth, classes, 100)
    assert [s["own_line"] for s in scores] == [1.0, 1.0, 1.0]


def test_score_curves_scores_a_backup_scale_round_its_edge() -> None:
    """A curve rising 0.02 a column runs off the bottom edge (1.0) after column 4 and is drawn on from the top: 0.91
    ... 0.99, 0.01 ... 0.09. Its reading lags the wrap by a column: 0.995 in column 5 (truth 0.01). Column 5's band
    is 0.01-0.02 (halfway to 0.03; the neighbour across the edge adds nothing). By hand: round the edge the row is
    -0.005, 0.015 from the band: MAE 0.015 / 10, no column misread (> 0.02); straight across, 0.975 from it: MAE
    0.0975, one column in ten misread. A curve without a backup scale is scored straight across."""
    truth = np.array([[0.91, 0.93, 0.95, 0.97, 0.99, 0.01, 0.03, 0.05, 0.07, 0.09]])
    read = truth.copy()
    read[0, 5] = 0.995
    classes = [(style_class("solid"),)]
    (round_edge,), _, _ = score_curves(read * 100 - 0.5, truth, classes, 100, [True])
    assert round_edge["mae"] == pytest.approx(0.0015)
    assert round_edge["misread_share"] == 0.0
    (straight,), _, _ = score_curves(read * 100 - 0.5, truth, classes, 100, [False])
    assert straight["mae"] == pytest.approx(0.0975)
    assert straight["misread_share"] == pytest.approx(0.1)
    assert round_edge["r2_flat"] == straight["r2"] == straight["r2_flat"] < round_edge["r2"]


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


def test_nearest_truth_takes_the_nearer_curve() -> None:
    truth = np.array([[0.1, 0.1, np.nan, 0.1], [0.8, 0.8, 0.8, np.nan]])
    pred = np.array([0.2, 0.7, np.nan, 0.9])
    np.testing.assert_array_equal(nearest_truth(pred, truth), [0, 1, 1, 0])


def test_truth_band_is_halfway_to_each_neighbour() -> None:
    tracks = np.array([[0.1, 0.1, 0.5, 0.2, np.nan, 0.7, 0.95, 0.05]])
    lo, hi = truth_band(tracks)
    # By hand: column 1 sweeps 0.1 .. halfway to 0.5 = 0.3; column 2 from 0.3 (halfway left) to 0.5, its right
    # halfway 0.35 inside; column 3 from 0.2 to 0.35 (no right neighbour); column 5 from 0.7 to 0.825; columns
    # 6 and 7 lie 0.9 apart, the two sides of a wrap, so neither widens the other's band.
    np.testing.assert_allclose(lo[0], [0.1, 0.1, 0.3, 0.2, np.nan, 0.7, 0.825, 0.05])
    np.testing.assert_allclose(hi[0], [0.1, 0.3, 0.5, 0.35, np.nan, 0.825, 0.95, 0.05])


# --- the evaluate stage --------------------------------------------------------------------

THIRD = {"mnemonic": "NPHI", "unit": "V/V", "top_value": 0.45, "bottom_value": -0.15, "scale": "linear"}


def _write_log(set_dir: Path, log_id: str, split: str, width: int, height: int, styles: list[str] | None = None,
               n_curves: int = 2) -> dict[str, object]:
    """One synthetic log drawn from its own LAS through the calibration, like the renderer does.

    Curves GR and RDEP (and NPHI as a third), each inked on the pixel nearest its drawn row and
    labelled in the mask with the class of its style (the sidecar's, else the seeds' convention).
    """
    sidecar = {**CALIB, "curves": [*CALIB["curves"], THIRD][:n_curves]}
    if styles is not None:
        sidecar["curves"] = [{**c, "style": s} for c, s in zip(sidecar["curves"], styles, strict=True)]
    calib = Calibration.from_dict(sidecar)
    depth = np.arange(1000.0, 1070.0, 0.25)
    las = [LasCurve("GR", "GAPI", 75.0 + 50.0 * np.sin(depth / 3.0)),
           LasCurve("RDEP", "OHMM", 10.0 ** (1.0 + np.cos(depth / 5.0))),
           LasCurve("NPHI", "V/V", 0.15 + 0.2 * np.sin(depth / 7.0 + 1.0))][:n_curves]
    write_las(set_dir / f"{log_id}.las", depth, "M", las, {"WELL": "TEST 1"}, [])
    image = np.full((height, width), 255, dtype=np.uint8)
    mask = np.zeros((height, width), dtype=np.uint8)
    cols = np.arange(width)
    # By hand from CALIB: column x sits at depth 1010 + (x + 0.5) * 50 / W; GR runs 150 (top) -> 0 (bottom)
    # linearly, RDEP 0.2 -> 2000 over 4 decades, NPHI 0.45 -> -0.15; fraction f of the track is row f * H - 0.5.
    column_depth = 1010.0 + (cols + 0.5) * 50.0 / width
    to_fraction = [lambda v: (150.0 - v) / 150.0, lambda v: (np.log10(v) - np.log10(0.2)) / 4.0,
                   lambda v: (0.45 - v) / 0.6]
    fractions = [f(np.interp(column_depth, depth, curve.values)) for f, curve in zip(to_fraction, las, strict=False)]
    for fraction, classes in zip(fractions, curve_classes([c.style for c in calib.curves]), strict=True):
        rows = np.clip(np.round(fraction * height - 0.5), 0, height - 1).astype(int)
        image[rows, cols] = 0
        mask[rows, cols] = classes[0]
    write_tiff(set_dir / f"{log_id}.tif", image)
    write_tiff(set_dir / f"{log_id}.mask.tif", mask)
    calib.write(set_dir / f"{log_id}.calib.json")
    return {"id": log_id, "image": f"{log_id}.tif", "mask": f"{log_id}.mask.tif", "calibration": f"{log_id}.calib.json",
            "las": f"{log_id}.las", "width": width, "height": height, "well": "TEST 1", "split": split,
            "n_curves": n_curves}


def test_oracle_probabilities_recover_the_las_curves(tmp_path: Path, test_settings: Settings) -> None:
    """The mask itself as probabilities must score near-perfectly: truth and prediction agree on rows."""
    meta = _write_log(tmp_path, "a", "test", 400, 100)
    mask = tifffile.imread(tmp_path / "a.mask.tif")
    probs = np.stack([(mask == k).astype(np.float32) for k in range(7)])
    calib = Calibration.from_file(tmp_path / "a.calib.json")
    rows, _ = trace_curves(probs, test_settings.extract, curve_classes([c.style for c in calib.curves]))
    truth = truth_tracks(tmp_path / "a.las", calib, 400, 2, meta["height"])
    for k in range(2):
        scores = curve_metrics((rows[k] + 0.5) / meta["height"], truth[k])
        assert scores["r2"] > 0.99 and scores["mae"] <= 0.5 / meta["height"] and scores["coverage"] > 0.95


@pytest.mark.parametrize(("num_classes", "curves"), [(7, {"A", "B"}), (1, {"A"})])
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
                             test_settings.extract, seed=test_settings.seed,
                             low_confidence=test_settings.infer.low_confidence)

    assert metrics["n_logs"] == 2 and metrics["split"] == "test"
    assert not stale.exists()
    assert set(metrics["curves"]) == curves
    assert set(metrics["classes"]) == {str(k) for k in range(max(num_classes, 2))}
    assert set(metrics["classes"]["1"]) == {"iou", "f1", "precision", "recall"}
    on_disk = json.loads((tmp_path / "eval" / "metrics.json").read_text())
    assert set(on_disk) == set(metrics)
    per_log = pd.read_csv(tmp_path / "eval" / "per_log.csv", dtype={"id": str})
    assert len(per_log) == 2 * len(curves) and set(per_log["curve"]) == curves and set(per_log["id"]) == {"a", "b"}
    # What a log is like, so failures can be grouped: style, scale kind, curves in the track, height, wraps.
    assert set(per_log["style"]) <= {"solid", "broken", "any"} and set(per_log["scale"]) <= {"linear", "log"}
    assert set(per_log["n_curves"]) == {2} and set(per_log["height"]) == {96, 112}
    # A solid and a broken curve: neither is drawn alike with the other.
    assert set(per_log["drawn_alike"]) == {1} and set(metrics["drawn_alike"]) == {"own"}
    assert per_log["wrapped_share"].between(0.0, 1.0).all()
    # The gate's figure from the CSV by a second route: the lowest per-style median (pandas' median skips NaN;
    # a style with no R^2 at all, which an untrained net may read nothing of, leaves the figure NaN).
    by_style = per_log.groupby("style")["r2"].median()
    expected = math.nan if by_style.isna().any() else by_style.min()
    assert metrics["median_r2"] == pytest.approx(expected, nan_ok=True)
    assert set(metrics["interval"]) == {"level", "resamples", "median_r2", "styles"}
    assert set(metrics["interval"]["styles"]) == set(per_log["style"])
    assert mpimg.imread(tmp_path / "eval" / "overlay.png").shape[0] in (96, 112)
    # Two logs: each is among both the best five and the worst five.
    assert sorted(p.name.split("_")[0] for p in (tmp_path / "eval" / "overlays").iterdir()) == ["best"] * 2 + [
        "worst"] * 2
    assert {"median_pearson_abs", "p10_r2", "median_mae_physical", "median_swap_share",
            "median_misread_share"} <= set(metrics["curves"]["A"])
    assert set(metrics["curve_counts"]) == {"2"} and set(metrics["heights"]) == {"standard"}


def test_evaluate_model_reads_the_same_in_worker_processes_as_in_this_one(tmp_path: Path,
                                                                         test_settings: Settings) -> None:
    """Three logs read in two spawned workers and one after another in this process: the same bytes written."""
    set_dir = tmp_path / "multiclass"
    set_dir.mkdir()
    rows = [_write_log(set_dir, name, "test", 320, 96 + 16 * k) for k, name in enumerate("abc")]
    pd.DataFrame(rows).to_parquet(set_dir / "index.parquet")
    torch.manual_seed(test_settings.seed)
    save_model(tmp_path / "model", build_model(test_settings.model, 7), test_settings.model, 7)
    threads = torch.get_num_threads()

    for workers in (1, 2):
        evaluate_model(tmp_path / "model", set_dir, tmp_path / f"eval-{workers}", test_settings.evaluate,
                       test_settings.extract, seed=test_settings.seed,
                       low_confidence=test_settings.infer.low_confidence, workers=workers)

    # Read here, the logs took one thread; the caller's own count comes back.
    assert torch.get_num_threads() == threads
    for name in ("per_log.csv", "metrics.json"):
        assert (tmp_path / "eval-1" / name).read_bytes() == (tmp_path / "eval-2" / name).read_bytes()
    per_log = pd.read_csv(tmp_path / "eval-2" / "per_log.csv", dtype={"id": str})
    assert per_log["id"].tolist() == ["a", "a", "b", "b", "c", "c"]


def test_evaluate_model_names_the_log_a_worker_could_not_read(tmp_path: Path, test_settings: Settings) -> None:
    """A log whose mask does not fit its scan fails the evaluation in its worker, and the caller hears which file."""
    set_dir = tmp_path / "multiclass"
    set_dir.mkdir()
    rows = [_write_log(set_dir, name, "test", 320, 96) for name in "abc"]
    pd.DataFrame(rows).to_parquet(set_dir / "index.parquet")
    write_tiff(set_dir / "b.mask.tif", np.zeros((64, 320), dtype=np.uint8))
    torch.manual_seed(test_settings.seed)
    save_model(tmp_path / "model", build_model(test_settings.model, 7), test_settings.model, 7)

    with pytest.raises(ValueError, match=r"b\.mask\.tif: mask shape \(64, 320\) differs"):
        evaluate_model(tmp_path / "model", set_dir, tmp_path / "eval", test_settings.evaluate, test_settings.extract,
                       seed=test_settings.seed, low_confidence=test_settings.infer.low_confidence, workers=2)
    assert not (tmp_path / "eval" / "metrics.json").exists()


def test_overlay_window_measures_a_backup_scale_curve_round_the_edge(tmp_path: Path) -> None:
    # The curve wraps from row 2 to row 97 at column 500 and is read wrapping a column late: 95 px off straight
    # across, 100 - 95 = 5 round the edge. At columns 1500-1509 it is read 5 px off: 50 in all.
    image = np.full((100, 2000), 255, dtype=np.uint8)
    truth = np.where(np.arange(2000) < 500, 2.0, 97.0)[None]
    pred = np.where(np.arange(2000) < 501, 2.0, 97.0)[None]
    pred[0, 1500:1510] += 5.0
    # By hand: the first 300-column window holding the worst stretch: column 500 (start 201) straight across,
    # columns 1500-1509 (start 1210) round the edge.
    assert overlay_png(tmp_path / "flat.png", image, truth, pred, max_columns=300) == (201, 501)
    assert overlay_png(tmp_path / "round.png", image, truth, pred, np.array([True]), max_columns=300) == (1210, 1510)


def test_evaluate_log_reads_every_curve_of_a_tall_track(tmp_path: Path, test_settings: Settings) -> None:
    """Three solid curves crossing on a 704-px track, read by a net that knows exactly where solid ink is."""
    meta = _write_log(tmp_path, "t", "test", 1280, 704, styles=["solid"] * 3, n_curves=3)
    pooled = MaskScores(7)
    row = next(pd.DataFrame([meta]).itertuples(index=False))  # as evaluate_model iterates the index
    image, truth_rows, pred_rows, cyclic, records = evaluate_log(
        InkIsStyle(style_class("solid")).eval(), tmp_path, row, test_settings.evaluate, test_settings.extract, "cpu",
        pooled, test_settings.infer.low_confidence)
    assert image.shape == (704, 1280) and truth_rows.shape == pred_rows.shape == (3, 1280)
    backup = [c.backup_wraps > 0 for c in Calibration.from_file(tmp_path / meta["calibration"]).curves]
    assert cyclic.tolist() == backup
    assert [r["curve"] for r in records] == ["A", "B", "C"] and {r["style"] for r in records} == {"solid"}
    assert {r["n_curves"] for r in records} == {3} and {r["height"] for r in records} == {704}
    assert {r["drawn_alike"] for r in records} == {3}  # three solid curves: one group drawn alike
    # The log's confidence figures (what the review queue ranks by) are one set on each of its rows; recomputed
    # from the read rows and confidence with numpy: the 10th percentile of every column of every curve read.
    assert len({(r["conf_p10"], r["low_conf_share"]) for r in records}) == 1
    scan = read_scan(InkIsStyle(style_class("solid")).eval(), image,
                     Calibration.from_file(tmp_path / meta["calibration"]), test_settings.evaluate.tile_width,
                     test_settings.evaluate.tile_overlap, test_settings.extract, "cpu").reading
    read = np.isfinite(scan.rows)
    assert records[0]["conf_p10"] == pytest.approx(np.percentile(scan.confidence, 10))
    assert records[0]["null_share"] == pytest.approx(1 - read.mean())
    low = (read & (scan.confidence < test_settings.infer.low_confidence)).mean()
    assert records[0]["low_conf_share"] == pytest.approx(low)
    for record in records:
        assert record["r2"] > 0.99 and record["coverage"] > 0.99 and record["mae"] < 1.0 / 704, record
        assert record["curve_swap_share"] < 0.01
    assert pooled.compute()[style_class("solid")]["iou"] > 0.99


def _record(log: str, curve: str, r2: float, mae: float, style: str, n_curves: int = 2, height: int = 96,
            features: str = "", drawn_alike: int = 1) -> dict[str, object]:
    return {"id": log, "curve": curve, "r2": r2, "mae": mae, "swap_share": 0.25, "style": style,
            "n_curves": n_curves, "height": height, "features": features, "drawn_alike": drawn_alike}


def test_summary_takes_medians_over_logs_and_the_worst_style() -> None:
    records = [_record("a", "A", 0.9, 0.01, "solid"), _record("b", "A", 0.5, 0.02, "solid"),
               _record("c", "A", 0.7, 0.03, "solid", n_curves=3, height=704, features="tall,steep", drawn_alike=2),
               _record("a", "B", 0.2, 0.10, "dashed"), _record("b", "B", math.nan, 0.05, "dotted"),
               _record("c", "B", 0.4, math.nan, "dashed", n_curves=3, height=704, features="tall,steep"),
               _record("c", "C", 0.6, 0.02, "solid", n_curves=3, height=704, features="tall,steep", drawn_alike=2)]
    pooled = MaskScores(3)
    # Class 1: five pixels right, one false alarm, one miss; class 2: one pixel right.
    pooled.update(np.array([1, 1, 1, 1, 1, 1, 0, 2, 0, 0]), np.array([1, 1, 1, 1, 1, 0, 1, 2, 0, 0]))
    metrics = summarise(records, pooled, "test", 3)
    # By hand: A's R^2 sorted 0.5, 0.7, 0.9 -> median 0.7, 10th percentile 0.5 + 0.2 * (0.7 - 0.5) = 0.54.
    assert metrics["curves"]["A"]["median_r2"] == pytest.approx(0.7)
    assert metrics["curves"]["A"]["p10_r2"] == pytest.approx(0.54)
    # Styles: solid 0.9, 0.5, 0.7, 0.6 -> 0.65; dashed 0.2, 0.4 -> 0.3; dotted only NaN -> NaN.
    assert metrics["styles"]["solid"]["median_r2"] == pytest.approx(0.65)
    assert metrics["styles"]["dashed"]["median_r2"] == pytest.approx(0.3)
    assert math.isnan(metrics["median_r2"])  # a style never read fails the gate
    # Curve counts and heights: the three rows of log c are the 3-curve and the tall ones (0.7, 0.4, 0.6 -> 0.6).
    assert metrics["curve_counts"]["3"]["n"] == 3 and metrics["curve_counts"]["3"]["median_r2"] == pytest.approx(0.6)
    assert metrics["heights"]["tall"]["median_r2"] == pytest.approx(0.6) and metrics["heights"]["standard"]["n"] == 4
    assert set(metrics["features"]) == {"tall", "steep"} and metrics["features"]["steep"]["n"] == 3
    # Log c's two solid curves are drawn alike (0.7, 0.6 -> 0.65); the five others have a style of their own.
    alike = metrics["drawn_alike"]
    assert alike["alike"]["n"] == 2 and alike["alike"]["median_r2"] == pytest.approx(0.65) and alike["own"]["n"] == 5
    # The stage's metadata shows both: own curves' R^2 0.9, 0.5, 0.2, NaN, 0.4 -> median of the four read, 0.45.
    shown = headline({**metrics, "interval": {"median_r2": [0.1, 0.7]}})
    assert shown["drawn_alike.alike.median_r2"] == pytest.approx(0.65)
    assert shown["drawn_alike.own.median_r2"] == pytest.approx(0.45)
    assert metrics["swap_share"] == pytest.approx(0.25) and metrics["gate_figure"] == "lowest per-style median R^2"
    # Class 1: tp 5, fp 1, fn 1 -> IoU = 5 / (5 + 1 + 1).
    assert metrics["classes"]["1"]["iou"] == pytest.approx(5 / 7)
    read = summarise([r for r in records if r["style"] != "dotted"], pooled, "test", 3)
    # By hand: per-style medians 0.65 (solid) and 0.3 (dashed) -> the gate's figure is 0.3; MAE medians
    # solid (0.01, 0.02, 0.03, 0.02) -> 0.02, dashed (0.10) -> 0.10, the highest.
    assert read["median_r2"] == pytest.approx(0.3) and read["median_mae"] == pytest.approx(0.10)


def test_comparison_sets_own_and_foreign_side_by_side(tmp_path: Path) -> None:
    pooled = MaskScores(3)
    own = summarise([_record("a", "A", 0.9, 0.01, "solid"), _record("b", "A", 0.8, 0.02, "solid")], pooled, "test", 2)
    foreign = summarise([_record("x", "A", 0.6, 0.05, "solid")], pooled, "test", 1)
    rows = write_comparison(tmp_path, own, foreign)
    solid = {r["figure"]: r for r in rows if r["section"] == "styles" and r["group"] == "solid"}
    # By hand: own median R^2 0.85, foreign 0.6 -> gap 0.25; MAE 0.015 vs 0.05 -> gap 0.035 (foreign worse).
    assert solid["median R²"]["own"] == pytest.approx(0.85) and solid["median R²"]["gap"] == pytest.approx(0.25)
    assert solid["median MAE"]["gap"] == pytest.approx(0.035)
    assert "| solid | median R² | 0.8500 | 0.6000 | 0.2500 |" in (tmp_path / "comparison.md").read_text()
    assert json.loads((tmp_path / "comparison.json").read_text())["foreign"]["n_logs"] == 1
    # The gate figures, each with the bootstrap interval its evaluation gave (none for the foreign set here).
    own["interval"] = {"level": 0.9, "median_r2": [0.8, 0.9]}
    write_comparison(tmp_path, own, foreign)
    assert ("R^2 = 0.8500 (90 % interval 0.8000 to 0.9000); the foreign set's: 0.6000."
            in (tmp_path / "comparison.md").read_text())


def test_evaluate_model_names_an_empty_split(tmp_path: Path, test_settings: Settings) -> None:
    set_dir = tmp_path / "s"
    set_dir.mkdir()
    pd.DataFrame([_write_log(set_dir, "a", "train", 320, 96)]).to_parquet(set_dir / "index.parquet")
    with pytest.raises(ValueError, match="no logs in split 'test'"):
        evaluate_model(tmp_path / "model", set_dir, tmp_path / "eval", test_settings.evaluate, test_settings.extract,
                       seed=test_settings.seed, low_confidence=test_settings.infer.low_confidence)
