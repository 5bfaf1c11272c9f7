"""Inference: tile planning and stitching, one scan -> LAS, the idempotent archive batch."""

from __future__ import annotations

import math
from pathlib import Path

import matplotlib.image as mpimg
import numpy as np
import pandas as pd
import pytest
import torch
from torch import nn

from veernet_pipeline.config import Settings
from veernet_pipeline.inference.archive import digitize_archive, output_paths
from veernet_pipeline.inference.digitize import (
    UNCALIBRATED_NOTE,
    digitize_scan,
    rows_to_values,
    wrap_counts,
    write_qc_png,
)
from veernet_pipeline.inference.predict import logits_to_probs, plan_tiles, predict_probs
from veernet_pipeline.io.calibration import Calibration
from veernet_pipeline.io.las import read_curves
from veernet_pipeline.io.tiff import write_tiff
from veernet_pipeline.model.veernet import build_model, pad_to_multiple, save_model


class InkIsCurve(nn.Module):
    """A real per-pixel net (1x1 conv): dark ink -> curve logit +10, paper -> -10.

    Its output at a pixel depends on that pixel only, so any stitching error (a shifted or
    missing column) changes the result; and it digitises a drawn line exactly.
    """

    def __init__(self) -> None:
        super().__init__()
        self.head = nn.Conv2d(1, 1, kernel_size=1)
        with torch.no_grad():
            self.head.weight.fill_(-20.0)
            self.head.bias.fill_(10.0)

    def forward(self, x: torch.Tensor, valid: torch.Tensor | None = None) -> torch.Tensor:
        return self.head(x)


def _veernet(settings: Settings, num_classes: int) -> nn.Module:
    torch.manual_seed(settings.seed)
    return build_model(settings.model, num_classes).eval()


# --- tiling --------------------------------------------------------------------------------

@pytest.mark.parametrize(("width", "tile", "overlap"), [(100, 256, 64), (256, 256, 64), (600, 256, 64),
                                                        (1000, 128, 96), (257, 256, 0)])
def test_plan_tiles_kept_ranges_partition_the_width(width: int, tile: int, overlap: int) -> None:
    tiles = plan_tiles(width, tile, overlap)
    assert tiles[0].keep_start == 0 and tiles[-1].keep_stop == width
    for a, b in zip(tiles, tiles[1:], strict=False):
        assert a.keep_stop == b.keep_start
    for t in tiles:
        assert t.start <= t.keep_start < t.keep_stop <= t.stop <= width
        assert t.stop - t.start == min(tile, width)


def test_plan_tiles_cuts_in_the_middle_of_the_overlap() -> None:
    tiles = plan_tiles(600, 256, 64)
    assert [(t.start, t.stop) for t in tiles] == [(0, 256), (192, 448), (344, 600)]
    assert [t.keep_start for t in tiles] == [0, 224, 396]


def test_plan_tiles_rejects_bad_tile_sizes() -> None:
    with pytest.raises(ValueError, match="multiple of 32"):
        plan_tiles(600, 250, 10)
    with pytest.raises(ValueError, match="tile_overlap"):
        plan_tiles(600, 256, 256)


def test_binary_logit_becomes_background_and_curve_probabilities() -> None:
    probs = logits_to_probs(torch.tensor([[[[0.0, 100.0]]]]))
    np.testing.assert_allclose(probs.numpy()[0, :, 0], [[0.5, 0.0], [0.5, 1.0]])


# --- predict_probs -------------------------------------------------------------------------

def test_single_tile_equals_one_padded_forward(test_settings: Settings) -> None:
    model = _veernet(test_settings, 3)
    image = np.random.default_rng([1, 2]).integers(0, 256, size=(100, 200), dtype=np.uint8)
    probs = predict_probs(model, image, tile_width=256, tile_overlap=64)
    with torch.no_grad():
        padded, valid = pad_to_multiple(torch.from_numpy(image).float()[None, None] / 255.0)
        direct = torch.softmax(model(padded, valid), dim=1)[0, :, :100, :200].numpy()
    assert probs.shape == (3, 100, 200) and probs.dtype == np.float32
    np.testing.assert_allclose(probs, direct, atol=1e-6)


def test_tiled_veernet_covers_every_column(test_settings: Settings) -> None:
    model = _veernet(test_settings, 3)
    image = np.random.default_rng([1, 3]).integers(0, 256, size=(96, 700), dtype=np.uint8)
    probs = predict_probs(model, image, tile_width=256, tile_overlap=64)
    assert probs.shape == (3, 96, 700)
    assert np.isfinite(probs).all()
    np.testing.assert_allclose(probs.sum(axis=0), 1.0, atol=1e-5)
    assert np.array_equal(probs, predict_probs(model, image, tile_width=256, tile_overlap=64))  # deterministic


def test_tiled_equals_untiled_for_a_per_pixel_net() -> None:
    image = np.random.default_rng([1, 4]).integers(0, 256, size=(50, 1000), dtype=np.uint8)
    model = InkIsCurve().eval()
    tiled = predict_probs(model, image, tile_width=128, tile_overlap=32)
    whole = predict_probs(model, image, tile_width=1024, tile_overlap=0)
    np.testing.assert_allclose(tiled, whole, atol=1e-6)


def test_mirror_is_the_mean_of_the_scan_and_its_two_mirror_images(test_settings: Settings) -> None:
    model = _veernet(test_settings, 3)
    image = np.random.default_rng([1, 5]).integers(0, 256, size=(96, 300), dtype=np.uint8)
    plain = predict_probs(model, image, tile_width=256, tile_overlap=64)
    flipped = np.ascontiguousarray(image[:, ::-1])
    along_depth = predict_probs(model, flipped, tile_width=256, tile_overlap=64)[:, :, ::-1]
    across = predict_probs(model, np.ascontiguousarray(image[::-1]), tile_width=256, tile_overlap=64)[:, ::-1]
    mirrored = predict_probs(model, image, tile_width=256, tile_overlap=64, mirror=True)
    assert mirrored.shape == plain.shape and mirrored.dtype == np.float32
    np.testing.assert_allclose(mirrored, (plain + along_depth + across) / 3.0, atol=1e-6)
    np.testing.assert_allclose(mirrored.sum(axis=0), 1.0, atol=1e-5)
    assert not np.allclose(mirrored, plain)  # an untrained net is not mirror-symmetric: the passes differ


# --- digitize_scan -------------------------------------------------------------------------

def _scan_with_line(width: int = 400, height: int = 100) -> tuple[np.ndarray, np.ndarray]:
    rows = (20 + 60 * (np.arange(width) / width)).astype(int)
    image = np.full((height, width), 255, dtype=np.uint8)
    image[rows, np.arange(width)] = 0
    image[:, 300:350] = 255  # a gap longer than extract.max_gap: no value, confidence 0
    return image, rows


def test_digitize_scan_reads_values_through_the_calibration(test_settings: Settings) -> None:
    image, rows = _scan_with_line()
    calib = Calibration.from_dict({
        "depth": {"top": 2000.0, "bottom": 2400.0, "unit": "FT"},
        "curves": [{"mnemonic": "ILD", "unit": "OHMM", "top_value": 0.2, "bottom_value": 2000.0, "scale": "log"}],
        "well": {"WELL": "W 1", "UWI": "15-1"},
    })
    result = digitize_scan(InkIsCurve().eval(), image, calib, 128, 32, test_settings.extract)
    assert result.calibrated and result.depth_unit == "FT" and result.well == {"WELL": "W 1", "UWI": "15-1"}
    np.testing.assert_allclose(result.depth, 2000.0 + np.arange(400) + 0.5)
    assert [c.mnemonic for c in result.curves] == ["ILD", "ILD_CONF"]
    values, conf = result.curves[0].values, result.curves[1].values
    expected = calib.row_to_value(rows.astype(float), 100, 0)
    keep = np.ones(400, dtype=bool)
    keep[300:350] = False
    np.testing.assert_allclose(values[keep], expected[keep], rtol=1e-3)
    assert np.isnan(values[300:350]).all() and (conf[300:350] == 0).all() and (conf[keep] > 0.99).all()


def test_digitize_scan_without_calibration_stays_in_track_units(test_settings: Settings) -> None:
    image, rows = _scan_with_line()
    result = digitize_scan(InkIsCurve().eval(), image, None, 128, 32, test_settings.extract)
    assert not result.calibrated and UNCALIBRATED_NOTE in result.notes
    np.testing.assert_array_equal(result.depth, np.arange(400))
    np.testing.assert_allclose(result.curves[0].values[:300], (rows[:300] + 0.5) / 100, atol=1e-4)
    assert [c.mnemonic for c in result.curves] == ["CURVE_A", "CURVE_A_CONF"]


def test_qc_png_is_native_pixels_on_the_least_confident_window(tmp_path: Path) -> None:
    image, rows = _scan_with_line(width=3000)
    confidence = np.ones((1, 3000))
    confidence[0, 2500:2600] = 0.1
    start, stop = write_qc_png(tmp_path / "qc.png", image, rows[None].astype(float), confidence, max_columns=1000)
    assert stop - start == 1000 and start <= 2500 and stop >= 2600
    assert mpimg.imread(tmp_path / "qc.png").shape[:2] == (100, 1000)


# --- digitize_archive ----------------------------------------------------------------------

def _archive(tmp_path: Path) -> tuple[Path, Path, Path]:
    raw, ingested, validated = tmp_path / "raw", tmp_path / "ingested", tmp_path / "validated"
    rng = np.random.default_rng([5, 0])
    rows = []
    for i, sidecar in enumerate((True, False, True)):
        image = rng.integers(200, 256, size=(96, 320), dtype=np.uint8)
        image[40 + i, :] = 0
        sha = f"{i:02d}" * 32
        write_tiff(ingested / "scans" / f"{sha[:16]}.tif", image)
        calibration = ""
        if sidecar:
            calibration = f"scan{i}.tif.calib.json"
            Calibration.from_dict({"depth": {"top": 0.0, "bottom": 32.0, "unit": "M"},
                                   "curves": [{"mnemonic": "GR", "top_value": 0, "bottom_value": 150},
                                              {"mnemonic": "NPHI", "top_value": 0.45, "bottom_value": -0.15}],
                                   "well": {"WELL": f"W{i}"}}).write(raw / calibration)
        rows.append({"path": f"scan{i}.tif", "sha256": sha, "decoded": f"scans/{sha[:16]}.tif",
                     "calibration": calibration})
    # The last scan's decoded file is missing: it must fail alone, with its reason.
    (ingested / "scans" / f"{rows[2]['sha256'][:16]}.tif").unlink()
    validated.mkdir()
    pd.DataFrame(rows).to_parquet(validated / "validated.parquet")
    return raw, ingested, validated


def test_digitize_archive_writes_skips_and_records_failures(tmp_path: Path, test_settings: Settings) -> None:
    raw, ingested, validated = _archive(tmp_path)
    model_dir, out = tmp_path / "model", tmp_path / "digitized"
    save_model(model_dir, _veernet(test_settings, 3), test_settings.model, 3)

    counts = digitize_archive(validated, ingested, raw, model_dir, "v1", out, 256, 64, test_settings.extract)
    assert counts == {"validated": 3, "written": 2, "skipped": 0, "failed": 1}
    index = pd.read_parquet(out / "index.parquet")
    assert list(index["status"]) == ["written", "written", "failed"]
    assert list(index["calibrated"]) == [True, False, True]
    assert "scan2.tif" in set(pd.read_parquet(out / "failures.parquet")["path"])
    assert index.loc[2, "reason"]

    las, qc = output_paths(out, "00" * 32, "v1", "scan0.tif")
    assert (out / index.loc[0, "las"]) == las and qc.is_file()
    depth, curves, well = read_curves(las)
    assert set(curves) == {"GR", "GR_CONF", "NPHI", "NPHI_CONF"} and well.get("WELL") == "W0"
    np.testing.assert_allclose(depth, (np.arange(320) + 0.5) * 0.1)
    uncal_depth, uncal_curves, _ = read_curves(out / index.loc[1, "las"])
    np.testing.assert_array_equal(uncal_depth, np.arange(320))
    assert UNCALIBRATED_NOTE in (out / index.loc[1, "las"]).read_text()
    assert all(math.isnan(v) or 0 <= v <= 1 for v in uncal_curves["CURVE_A"])

    mtime = las.stat().st_mtime_ns
    again = digitize_archive(validated, ingested, raw, model_dir, "v1", out, 256, 64, test_settings.extract)
    assert again == {"validated": 3, "written": 0, "skipped": 2, "failed": 1}
    assert las.stat().st_mtime_ns == mtime
    rerun = digitize_archive(validated, ingested, raw, model_dir, "v2", out, 256, 64, test_settings.extract)
    assert rerun["written"] == 2


def test_digitize_archive_needs_a_validated_manifest(tmp_path: Path, test_settings: Settings) -> None:
    with pytest.raises(FileNotFoundError, match="veernet validate"):
        digitize_archive(tmp_path, tmp_path, tmp_path, tmp_path, "v1", tmp_path / "out", 256, 64,
                         test_settings.extract)


def test_wrap_counts_follow_a_trace_across_the_edges() -> None:
    height = 100
    rows = np.array([50, 80, 95, np.nan, np.nan, 3, 10, 4, 97, 90, 2, 50], dtype=float)
    assert wrap_counts(rows, height, 1).tolist() == [0, 0, 0, 0, 0, 1, 1, 1, 0, 0, 1, 1]
    assert wrap_counts(rows, height, 0).tolist() == [0] * len(rows)  # no backup scale declared


def test_digitize_scan_unwraps_a_declared_backup_scale(test_settings: Settings) -> None:
    width, height = 320, 96
    calib = Calibration.from_dict({
        "depth": {"top": 0.0, "bottom": 320.0, "unit": "M"},
        "curves": [{"mnemonic": "GR", "unit": "GAPI", "top_value": 0.0, "bottom_value": 150.0, "scale": "linear",
                    "backup": {"mode": "wrap", "max_wraps": 1}}],
    })
    values = np.linspace(60.0, 240.0, width)  # runs off the bottom edge at 150 and wraps to the 150-300 scale
    drawn, _ = calib.value_to_drawn_row(values, height, 0)
    image = np.full((height, width), 255, dtype=np.uint8)
    image[np.round(drawn).astype(int), np.arange(width)] = 0
    result = digitize_scan(InkIsCurve().eval(), image, calib, 128, 32, test_settings.extract)
    read = result.curves[0].values
    ok = np.isfinite(read)
    assert ok.mean() > 0.9
    np.testing.assert_allclose(read[ok], values[ok], atol=150.0 / height * 1.5)


def test_rows_to_values_undoes_skew_and_wrap() -> None:
    width, height = 400, 120
    calib = Calibration.from_dict({
        "depth": {"top": 0.0, "bottom": 400.0, "unit": "M"},
        "curves": [{"mnemonic": "GR", "unit": "GAPI", "top_value": 150.0, "bottom_value": 0.0, "scale": "linear",
                    "backup": {"mode": "wrap", "max_wraps": 1}}],
        "skew": {"angle_deg": 0.4, "pivot_column": 200.0},
    })
    values = 75.0 + 100.0 * np.sin(np.arange(width) / 40.0)  # leaves the reversed 150-0 track at both ends
    drawn, wraps = calib.value_to_drawn_row(values, height, 0)
    assert set(np.unique(wraps)) == {-1, 0, 1}
    image_rows = drawn + calib.skew_offset(np.arange(width))
    image_rows[50:55] = np.nan  # a gap read as absent stays NaN
    read, read_wraps = rows_to_values(calib, image_rows, height, 0)
    ok = np.isfinite(image_rows)
    assert np.isnan(read[~ok]).all()
    # Exact but within half a pixel of an edge, where drawing clips to the outermost pixel row.
    np.testing.assert_allclose(read[ok], values[ok], atol=0.5 * 150.0 / height)
    np.testing.assert_array_equal(read_wraps[ok], wraps[ok])
