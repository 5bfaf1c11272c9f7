"""Inference: one scan -> LAS with calibration, the QC picture, the idempotent archive batch."""

from __future__ import annotations

import hashlib
import math
from pathlib import Path

import matplotlib.colors
import matplotlib.image as mpimg
import numpy as np
import pandas as pd
import pytest
import torch
from torch import nn

from tests.maps import run_extents
from tests.nets import InkIsCurve, InkIsStyle, untrained_veernet
from veernet_pipeline.config import InferParams, Settings
from veernet_pipeline.inference.archive import digitize_validated, output_paths
from veernet_pipeline.inference.digitize import (
    ALIKE_NOTE,
    EXCHANGED_NOTE,
    LOW_MARK,
    UNCALIBRATED_NOTE,
    alike_count,
    alike_note,
    digitize_scan,
    exchanged_count,
    write_digitized,
    write_qc_png,
)
from veernet_pipeline.io.calibration import Calibration
from veernet_pipeline.io.classes import NUM_CLASSES, style_class
from veernet_pipeline.io.las import read_curves, read_curves_and_notes
from veernet_pipeline.io.tiff import write_tiff
from veernet_pipeline.model.veernet import save_model
from veernet_pipeline.reading.predict import predict_probs

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
    # By hand: log10 runs from log10(0.2) at the top edge to log10(2000) at the bottom, 4 decades over 100 rows.
    expected = 0.2 * 10.0 ** (4.0 * (rows + 0.5) / 100.0)
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


def _draw(image: np.ndarray, rows: np.ndarray) -> None:
    """Ink a 1-px pen along `rows`, each column's run reaching halfway to its neighbours (the renderer's rule)."""
    low, high = run_extents(rows, pen=1)
    for x in range(image.shape[1]):
        image[low[x]:high[x] + 1, x] = 0


@pytest.mark.parametrize("height", [497, 1024])
def test_tall_and_odd_tracks_are_read_at_native_height(test_settings: Settings, height: int) -> None:
    """A 497-px and a 1,024-px track (taller than the training sets): padded to a multiple of 32, never resized."""
    width = 600
    x = np.arange(width)
    rows = np.round(height / 2 + 0.45 * height * np.sin(x / 150.0))
    image = np.full((height, width), 255, dtype=np.uint8)
    _draw(image, rows)
    result = digitize_scan(InkIsCurve().eval(), image, None, 256, 64, test_settings.extract, max_height=1280)
    assert result.rows.shape == (1, width)
    low, high = run_extents(rows, pen=1)
    # Every column reads a row of the run its column inks: the row itself where the run is one pixel.
    assert ((result.rows[0] >= low) & (result.rows[0] <= high)).all()
    flat = high == low
    assert flat.sum() >= 10 and np.abs(result.rows[0, flat] - rows[flat]).max() == 0.0
    np.testing.assert_allclose(result.curves[0].values, (result.rows[0] + 0.5) / height)
    # A real VeerNet takes the odd height as it is: probabilities for exactly the pixels of the track.
    assert predict_probs(untrained_veernet(test_settings, 7), image[:, :128], 128, 0).shape == (7, height, 128)


def test_a_track_above_max_height_fails_naming_the_scan_and_the_param(test_settings: Settings) -> None:
    image = np.full((1300, 256), 255, dtype=np.uint8)
    with pytest.raises(ValueError, match=r"kansas\.tif: the track is 1300 px tall, above infer\.max_height = 1280"):
        digitize_scan(InkIsCurve().eval(), image, None, 256, 64, test_settings.extract, max_height=1280,
                      source="kansas.tif")


def test_every_curve_the_sidecar_names_is_written(test_settings: Settings, tmp_path: Path) -> None:
    width, height = 500, 160
    x = np.arange(width)
    truths = [np.round(40 + 0.15 * x), np.round(120 - 0.12 * x), np.round(80 + 25 * np.sin(x / 50.0))]
    image = np.full((height, width), 255, dtype=np.uint8)
    for rows in truths:
        _draw(image, rows)
    names = ["GR", "CALI", "SP"]
    calib = Calibration.from_dict({"depth": {"top": 0.0, "bottom": 50.0, "unit": "M"},
                                   "curves": [{"mnemonic": n, "top_value": 0, "bottom_value": 1, "style": "solid"}
                                              for n in names]})
    result = digitize_scan(InkIsStyle(style_class("solid")).eval(), image, calib, 256, 64, test_settings.extract)
    assert [c.mnemonic for c in result.curves] == ["GR", "GR_CONF", "CALI", "CALI_CONF", "SP", "SP_CONF"]
    assert "solid" in result.curves[0].descr
    # All three are drawn alike: each description names the other two, the header lists the group, and the count
    # read back from the LAS on disk is 3.
    assert result.curves[0].descr.endswith("drawn alike with CALI, SP") and "with GR, SP" in result.curves[2].descr
    assert f"{ALIKE_NOTE}GR, CALI, SP" in result.notes
    write_digitized(result, image, tmp_path / "three.las", None, [])
    assert alike_count(read_curves_and_notes(tmp_path / "three.las")[3]) == 3
    # Three curves drawn alike: listed top first (by hand, mean rows 77.4, 90.1, 84.6 -> GR, SP, CALI).
    expected = [truths[0], truths[2], truths[1]]
    for k, rows in enumerate(expected):
        values = result.curves[2 * k].values
        apart = np.min([np.abs(rows - other) for other in truths if other is not rows], axis=0) > 3
        np.testing.assert_allclose(values[apart], (rows[apart] + 0.5) / height, atol=1.0 / height)
    png = tmp_path / "qc.png"
    write_qc_png(png, image, result.rows, result.confidence)
    assert mpimg.imread(png).shape[:2] == (height, width)


def test_without_a_sidecar_every_curve_the_map_supports_is_read(test_settings: Settings) -> None:
    width, height = 500, 128
    x = np.arange(width)
    image = np.full((height, width), 255, dtype=np.uint8)
    _draw(image, np.round(30 + 0.1 * x))
    _draw(image, np.round(100 - 0.05 * x))
    image[5:8, 100:104] = 0  # a speck: a run in 4 of 500 columns, far below min_support
    result = digitize_scan(InkIsStyle(style_class("solid")).eval(), image, None, 256, 64, test_settings.extract)
    assert [c.mnemonic for c in result.curves] == ["CURVE_A", "CURVE_A_CONF", "CURVE_B", "CURVE_B_CONF"]
    assert result.curves[0].descr.startswith("curve A, solid") and not result.calibrated
    assert any("2 curves found" in note for note in result.notes)
    upper, lower = np.round(30 + 0.1 * x), np.round(100 - 0.05 * x)  # they cross at column 466
    apart = np.abs(upper - lower) > 3
    np.testing.assert_allclose(result.rows[0, apart & (x < 466)], upper[apart & (x < 466)], atol=0.5)  # upper first


def test_alike_count_reads_the_header_line_and_knows_when_it_is_absent() -> None:
    # By hand: two groups of 2 and 3 curves -> 5; none -> 0; a LAS written before the line -> not known.
    assert alike_count("source scan a.tif\n" + alike_note([["GR", "SP"], ["RT", "RXO", "RS"]])) == 5
    assert alike_count(alike_note([])) == 0
    assert math.isnan(alike_count("source scan a.tif\noutput label v1"))


def test_exchanged_count_reads_the_header_line_and_knows_when_it_is_absent() -> None:
    # By hand: two curves listed -> 2; none -> 0; a LAS written before the line -> not known.
    assert exchanged_count(f"source scan a.tif\n{EXCHANGED_NOTE}ILM, ILD\n{ALIKE_NOTE}none") == 2
    assert exchanged_count(f"{EXCHANGED_NOTE}none") == 0
    assert math.isnan(exchanged_count(alike_note([["GR", "SP"]])))


class NamesByHalf(nn.Module):
    """A real net that names dark ink long-dash in the upper half of the track and dashed in the lower (paper
    background; logits +-10): a print whose dashed and long-dash lines it names the other way round."""

    def forward(self, x: torch.Tensor, valid: torch.Tensor | None = None) -> torch.Tensor:
        ink = 10.0 - 20.0 * x  # > 0 on dark ink, < 0 on paper
        upper = (torch.arange(x.shape[-2]) < x.shape[-2] // 2).view(1, 1, -1, 1)
        logits = torch.full((x.shape[0], NUM_CLASSES, *x.shape[-2:]), -10.0)
        logits[:, 0] = -ink[:, 0]
        logits[:, style_class("long_dash")] = torch.where(upper, ink[:, 0:1], -10.0)[:, 0]
        logits[:, style_class("dashed")] = torch.where(upper, -10.0, ink[:, 0:1])[:, 0]
        return logits


def test_curves_given_their_lines_by_dash_length_say_so_in_the_las(test_settings: Settings, tmp_path: Path) -> None:
    # ILM (dashed) is drawn on row 40 with 8 px dashes, ILD (long-dash) on row 90 with 24 px dashes; the net names
    # the upper line long-dash and the lower dashed, so the path search gives each curve the other's line and the
    # dash check gives them back.
    width, height = 1200, 128
    image = np.full((height, width), 255, dtype=np.uint8)
    x = np.arange(width)
    image[40:42, x[x % 12 < 8]] = 0
    image[90:92, x[x % 29 < 24]] = 0
    calib = Calibration.from_dict({"depth": {"top": 0.0, "bottom": 10.0, "unit": "M"},
                                   "curves": [{"mnemonic": name, "top_value": 0, "bottom_value": 1, "style": style}
                                              for name, style in (("ILM", "dashed"), ("ILD", "long_dash"))]})
    result = digitize_scan(NamesByHalf().eval(), image, calib, 256, 64, test_settings.extract)
    read = np.isfinite(result.rows)
    assert np.all(np.abs(result.rows[0][read[0]] - 40.5) < 2) and np.all(np.abs(result.rows[1][read[1]] - 90.5) < 2)
    assert f"{EXCHANGED_NOTE}ILM, ILD" in result.notes
    assert [c.descr.endswith("line given by its dash length") for c in result.curves] == [True, False, True, False]
    write_digitized(result, image, tmp_path / "exchanged.las", None, [])
    assert exchanged_count(read_curves_and_notes(tmp_path / "exchanged.las")[3]) == 2


def test_qc_png_is_native_pixels_on_the_least_confident_window(tmp_path: Path) -> None:
    image, rows = _scan_with_line(width=3000)
    confidence = np.ones((1, 3000))
    confidence[0, 2500:2600] = 0.1
    start, stop = write_qc_png(tmp_path / "qc.png", image, rows[None].astype(float), confidence, max_columns=1000)
    assert stop - start == 1000 and start <= 2500 and stop >= 2600
    assert mpimg.imread(tmp_path / "qc.png").shape[:2] == (100, 1000)


def test_qc_png_marks_the_columns_read_below_low_confidence(tmp_path: Path) -> None:
    """Gold dots (`LOW_MARK`) under exactly the columns read on ink below the threshold, a lone column too, not
    under bridged ones (confidence 0); none without the threshold."""
    image, rows = _scan_with_line(width=800)
    confidence = np.ones((1, 800))
    confidence[0, 400:451] = 0.3
    confidence[0, 700] = 0.5  # below 0.55: a lone column, which a line would not draw
    confidence[0, 600:620] = 0.0  # bridged (a broken style's gap): left unmarked
    line = rows[None].astype(float)

    def gold_columns(png: Path) -> np.ndarray:
        rgb = mpimg.imread(png)[..., :3]
        gold = np.array(matplotlib.colors.to_rgb(LOW_MARK))
        over_paper = 0.8 * gold + 0.2  # the dots are drawn at alpha 0.8, as every series
        is_gold = np.minimum(np.abs(rgb - gold).max(axis=2), np.abs(rgb - over_paper).max(axis=2)) < 0.1
        near_line = np.abs(np.arange(rgb.shape[0])[:, None] - rows[None]) <= 4  # the legend sits elsewhere
        return np.nonzero(is_gold & near_line)[1]

    write_qc_png(tmp_path / "marked.png", image, line, confidence, names=["GR"], low_confidence=0.55)
    columns = np.unique(gold_columns(tmp_path / "marked.png"))
    # By hand: a dot 4 points across at 100 dpi is 5.6 px, so it reaches 3 columns either side of its own.
    assert set(columns) <= set(range(397, 454)) | set(range(697, 704))
    assert {400, 425, 450, 700} <= set(columns)
    write_qc_png(tmp_path / "plain.png", image, line, confidence, names=["GR"])
    assert gold_columns(tmp_path / "plain.png").size == 0


# --- digitize_validated ----------------------------------------------------------------------

def _archive(tmp_path: Path) -> tuple[Path, Path, Path]:
    raw, ingested, validated = tmp_path / "raw", tmp_path / "ingested", tmp_path / "validated"
    rng = np.random.default_rng([5, 0])
    rows = []
    for i, sidecar in enumerate((True, False, True)):
        image = rng.integers(200, 256, size=(96, 320), dtype=np.uint8)
        image[40 + i, :] = 0
        sha = f"{i:02d}" * 32
        write_tiff(ingested / "scans" / f"{sha[:16]}.tif", image)
        calibration, calibration_sha256 = "", ""
        if sidecar:
            calibration = f"scan{i}.tif.calib.json"
            Calibration.from_dict({"depth": {"top": 0.0, "bottom": 32.0, "unit": "M"},
                                   "curves": [{"mnemonic": "GR", "top_value": 0, "bottom_value": 150},
                                              {"mnemonic": "NPHI", "top_value": 0.45, "bottom_value": -0.15}],
                                   "well": {"WELL": f"W{i}"}}).write(raw / calibration)
            calibration_sha256 = hashlib.sha256((raw / calibration).read_bytes()).hexdigest()
        rows.append({"path": f"scan{i}.tif", "sha256": sha, "decoded": f"scans/{sha[:16]}.tif", "width": 320,
                     "height": 96, "net_width": 320, "net_height": 96, "calibration": calibration,
                     "calibration_sha256": calibration_sha256, "page_file": ""})
    # The last scan's decoded file is missing: it must fail alone, with its reason.
    (ingested / "scans" / f"{rows[2]['sha256'][:16]}.tif").unlink()
    validated.mkdir()
    pd.DataFrame(rows).to_parquet(validated / "validated.parquet")
    return raw, ingested, validated


def test_digitize_validated_writes_skips_and_records_failures(tmp_path: Path, test_settings: Settings) -> None:
    raw, ingested, validated = _archive(tmp_path)
    model_dir, out = tmp_path / "model", tmp_path / "digitized"
    save_model(model_dir, untrained_veernet(test_settings, NUM_CLASSES), test_settings.model, NUM_CLASSES)

    counts = digitize_validated(validated, ingested, raw, model_dir, "v1", out, test_settings.infer,
                                test_settings.extract)
    assert counts == {"validated": 3, "written": 2, "skipped": 0, "failed": 1}
    index = pd.read_parquet(out / "index.parquet")
    assert list(index["status"]) == ["written", "written", "failed"]
    assert list(index["calibrated"]) == [True, False, True]
    assert "scan2.tif" in set(pd.read_parquet(out / "failures.parquet")["path"])
    assert index.loc[2, "reason"]

    sidecar_sha = hashlib.sha256((raw / "scan0.tif.calib.json").read_bytes()).hexdigest()
    las, qc = output_paths(out, "00" * 32, sidecar_sha, "v1", "scan0.tif")
    assert las.parent.name == f"c{sidecar_sha[:12]}" and "/uncalibrated/" in index.loc[1, "las"]
    assert (out / index.loc[0, "las"]) == las and qc.is_file()
    depth, curves, well = read_curves(las)
    assert set(curves) == {"GR", "GR_CONF", "NPHI", "NPHI_CONF"} and well.get("WELL") == "W0"
    np.testing.assert_allclose(depth, (np.arange(320) + 0.5) * 0.1)
    uncal_depth, uncal_curves, _ = read_curves(out / index.loc[1, "las"])
    np.testing.assert_array_equal(uncal_depth, np.arange(320))
    assert UNCALIBRATED_NOTE in (out / index.loc[1, "las"]).read_text()
    # Without a sidecar an untrained net's map decides how many curves there are; each is in track units.
    assert all(name.startswith("CURVE_") for name in uncal_curves)
    assert all(math.isnan(v) or 0 <= v <= 1 for name, values in uncal_curves.items() if not name.endswith("_CONF")
               for v in values)

    # The confidence figures, read back from the LAS on disk with numpy directly.
    _, curves_on_disk, _ = read_curves(las)
    conf = np.stack([curves_on_disk["GR_CONF"], curves_on_disk["NPHI_CONF"]])
    read = np.isfinite(np.stack([curves_on_disk["GR"], curves_on_disk["NPHI"]]))
    row = index.loc[0]
    assert row.conf_median == pytest.approx(np.median(conf), abs=1e-6)
    assert row.conf_p10 == pytest.approx(np.quantile(conf.ravel(), 0.1), abs=1e-6)
    assert row.null_share == pytest.approx(1 - read.mean())
    assert row.low_conf_share == pytest.approx((read & (conf < test_settings.infer.low_confidence)).sum() / conf.size)
    assert row.low_conf_threshold == test_settings.infer.low_confidence and math.isnan(index.loc[2, "conf_median"])
    # scan0's sidecar names no styles: GR solid, NPHI broken (the seeds' two curves), none drawn alike, as its header
    # says; a failed scan: not known.
    assert row.alike_curves == 0 and f"{ALIKE_NOTE}none" in read_curves_and_notes(las)[3]
    assert row.exchanged_curves == 0 and f"{EXCHANGED_NOTE}none" in read_curves_and_notes(las)[3]
    assert math.isnan(index.loc[2, "alike_curves"]) and math.isnan(index.loc[2, "exchanged_curves"])

    mtime = las.stat().st_mtime_ns
    again = digitize_validated(validated, ingested, raw, model_dir, "v1", out, test_settings.infer,
                               test_settings.extract)
    assert again == {"validated": 3, "written": 0, "skipped": 2, "failed": 1}
    assert las.stat().st_mtime_ns == mtime
    skipped = pd.read_parquet(out / "index.parquet")
    changing = ["status", "attempts", "reason"]
    pd.testing.assert_frame_equal(skipped.drop(columns=changing), index.drop(columns=changing))
    # Another threshold: skipped outputs get figures read back from their LAS files.
    strict = test_settings.infer.model_copy(update={"low_confidence": 1.01})
    digitize_validated(validated, ingested, raw, model_dir, "v1", out, strict, test_settings.extract)
    read_back = pd.read_parquet(out / "index.parquet")
    assert read_back.loc[0, "low_conf_share"] == pytest.approx(read.mean()) and read_back.loc[0, "alike_curves"] == 0
    rerun = digitize_validated(validated, ingested, raw, model_dir, "v2", out, test_settings.infer,
                               test_settings.extract)
    assert rerun["written"] == 2


def test_a_scan_that_keeps_failing_is_given_up_after_max_attempts(tmp_path: Path, test_settings: Settings) -> None:
    raw, ingested, validated = _archive(tmp_path)
    model_dir, out = tmp_path / "model", tmp_path / "digitized"
    save_model(model_dir, untrained_veernet(test_settings, NUM_CLASSES), test_settings.model, NUM_CLASSES)
    infer = test_settings.infer.model_copy(update={"max_attempts": 2})

    def run(params: InferParams = infer) -> pd.Series:
        digitize_validated(validated, ingested, raw, model_dir, "v1", out, params, test_settings.extract)
        return pd.read_parquet(out / "index.parquet").set_index("path").loc["scan2.tif"]

    first, second = run(), run()
    assert (first.status, first.attempts, second.status, second.attempts) == ("failed", 1, "failed", 2)
    assert "ScanReadError" in second.reason
    # Repaired now, but the limit is reached: it is not read again, and says so.
    lost = ingested / "scans" / f"{'02' * 8}.tif"
    write_tiff(lost, np.full((96, 320), 255, np.uint8))
    third = run()
    assert (third.status, third.attempts) == ("failed", 2) and third.reason.startswith("gave up after 2 failed runs")
    assert "ScanReadError" in third.reason and not (out / third.las).exists()
    assert run().reason == third.reason  # not prefixed twice
    assert "scan2.tif" in set(pd.read_parquet(out / "failures.parquet")["path"])
    # Raising the limit lets it through.
    fifth = run(infer.model_copy(update={"max_attempts": 3}))
    assert (fifth.status, fifth.attempts) == ("written", 3) and (out / fifth.las).is_file()


def test_digitize_validated_needs_a_validated_manifest(tmp_path: Path, test_settings: Settings) -> None:
    with pytest.raises(FileNotFoundError, match="veernet validate"):
        digitize_validated(tmp_path, tmp_path, tmp_path, tmp_path, "v1", tmp_path / "out", test_settings.infer,
                           test_settings.extract)


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
