"""Scans at another resolution: the tags, the factors, the resampling and the way back (reading/resolution.py)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import tifffile

from tests.nets import InkIsCurve
from veernet_pipeline.config import Settings
from veernet_pipeline.inference.digitize import digitize_file, digitize_scan
from veernet_pipeline.io.resolution import Resampling, net_scale
from veernet_pipeline.io.scanfile import decode_step
from veernet_pipeline.io.tiff import TiffHeader, read_header, write_tiff
from veernet_pipeline.pages.strips import strip_dpi
from veernet_pipeline.reading.resolution import to_net_grid, to_scan_grid


def test_resolution_tags_are_read_in_inches_or_centimetres_and_follow_the_rotation(tmp_path: Path) -> None:
    write_tiff(tmp_path / "wide.tif", np.zeros((10, 40), np.uint8), dpi=(300.0, 150.0))
    wide = read_header(tmp_path / "wide.tif")
    assert wide.dpi == (300.0, 150.0) and wide.landscape_dpi == (150.0, 300.0)  # rows run down: 150 dpi
    write_tiff(tmp_path / "tall.tif", np.zeros((40, 10), np.uint8), dpi=(300.0, 150.0))
    tall = read_header(tmp_path / "tall.tif")  # portrait: turned, so its rows run across the stored page
    assert tall.landscape_dpi == (300.0, 150.0) and tall.decoded_dpi == (150.0, 300.0)
    tifffile.imwrite(tmp_path / "cm.tif", np.zeros((10, 40), np.uint8), resolution=(100.0, 50.0),
                     resolutionunit="CENTIMETER")
    assert read_header(tmp_path / "cm.tif").dpi == pytest.approx((254.0, 127.0))  # 2.54 cm to the inch
    # A unit of NONE states an aspect ratio only (the synthetic sets' 1/1): no resolution.
    tifffile.imwrite(tmp_path / "none.tif", np.zeros((10, 40), np.uint8), resolution=(1, 1), resolutionunit="NONE")
    assert read_header(tmp_path / "none.tif").dpi is None
    write_tiff(tmp_path / "untagged.tif", np.zeros((10, 40), np.uint8))
    assert read_header(tmp_path / "untagged.tif").dpi is None


def test_ingest_keeps_the_scans_resolution_on_its_decoded_copy(tmp_path: Path) -> None:
    write_tiff(tmp_path / "scan.tif", np.full((60, 20), 255, np.uint8), dpi=(300.0, 150.0))  # portrait: turned
    fields = decode_step(str(tmp_path / "scan.tif"), "scan.tif", str(tmp_path / "decoded.tif"), 10**6)
    assert "error_code" not in fields
    assert read_header(tmp_path / "decoded.tif").landscape_dpi == read_header(tmp_path / "scan.tif").landscape_dpi


def test_net_scale_resamples_only_a_stated_resolution_unlike_the_nets() -> None:
    assert net_scale((300.0, 300.0), 200.0) == pytest.approx((2 / 3, 2 / 3))
    assert net_scale((196.0, 204.0), 200.0) == (1.0, 1.0)  # a fine fax page: within 10 %
    assert net_scale((98.0, 204.0), 200.0) == pytest.approx((200 / 98, 1.0))  # a normal fax page: rows only
    assert net_scale(None, 200.0) == (1.0, 1.0) and net_scale((300.0, 300.0), None) == (1.0, 1.0)
    # Image software's defaults (72, 96, matplotlib's 100) are no scanner's: read as drawn.
    for software in (72.0, 96.0, 100.0, 64.0):
        assert net_scale((software, software), 200.0) == (1.0, 1.0)
    assert net_scale((100.0, 300.0), 200.0) == (1.0, 1.0)
    assert net_scale((150.0, 150.0), 200.0) == pytest.approx((4 / 3, 4 / 3))
    assert net_scale((204.0, 98.0), 200.0) == pytest.approx((1.0, 200 / 98))  # a fax page turned to landscape


def test_a_scan_stating_no_resolution_takes_the_untagged_one_if_given() -> None:
    assert net_scale(None, 200.0, 300.0) == pytest.approx((2 / 3, 2 / 3))
    assert net_scale((72.0, 72.0), 200.0, 300.0) == pytest.approx((2 / 3, 2 / 3))  # image software's: none stated
    assert net_scale((400.0, 400.0), 200.0, 300.0) == pytest.approx((0.5, 0.5))  # a stated resolution wins
    assert net_scale(None, 200.0, 210.0) == (1.0, 1.0)  # within 10 % of the net's
    assert net_scale(None, None, 300.0) == (1.0, 1.0)  # no net resolution: nothing is resampled
    assert Resampling(200.0, 400.0).scale(None) == (0.5, 0.5) and Resampling().scale((300.0, 300.0)) == (1.0, 1.0)


def test_to_net_grid_takes_the_area_mean_where_it_shrinks() -> None:
    image = np.array([[0, 255, 255, 255], [255, 255, 255, 255]], np.uint8)
    # By hand: the left 2 x 2 block's mean is (0 + 3 x 255) / 4 = 191.25, the right one's 255 (Pillow's
    # fixed-point filter rounds to within 1).
    np.testing.assert_allclose(to_net_grid(image, (0.5, 0.5)), [[191.25, 255]], atol=1.0)
    assert to_net_grid(np.zeros((100, 300), np.uint8), (1.5, 2.0)).shape == (150, 600)


def test_to_scan_grid_interpolates_columns_and_maps_pixel_centres() -> None:
    rows = np.array([[10.0, 20.0, np.nan, 40.0]])
    out, conf = to_scan_grid(rows, np.array([[1.0, 0.5, 0.0, 1.0]]), (0.5, 0.5), 8)
    # By hand: scan column x sits at net column (x + 0.5) / 2 - 0.5; a net row r is scan row (r + 0.5) / 0.5 - 0.5.
    # x = 1: a quarter of the way from 10 to 20 = 12.5 -> 25.5; x = 3: between 20 and NaN, nearer 20 -> 40.5;
    # x = 4, 5: nearer the NaN; x = 6: nearer 40; x = 7 beyond the last centre: 40.
    np.testing.assert_allclose(out[0], [20.5, 25.5, 35.5, 40.5, np.nan, np.nan, 80.5, 80.5])
    np.testing.assert_allclose(conf[0], [1.0, 0.875, 0.625, 0.5, 0.0, 0.0, 1.0, 1.0])


def _thick_line(width: int, height: int) -> tuple[np.ndarray, np.ndarray]:
    """A 3-px line from row 30 down to row 120; returns the scan and its centre row per column."""
    top = np.round(30 + 90 * np.arange(width) / width).astype(int)
    image = np.full((height, width), 255, np.uint8)
    for d in range(3):
        image[top + d, np.arange(width)] = 0
    return image, top + 1.0


def test_a_scan_read_on_the_nets_grid_comes_back_on_its_own(test_settings: Settings) -> None:
    image, centre = _thick_line(600, 150)  # a 300-dpi scan of a 200-dpi net's 400 x 100 track
    result = digitize_scan(InkIsCurve().eval(), image, None, 128, 32, test_settings.extract, scale=(2 / 3, 2 / 3))
    assert result.rows.shape == (1, 600) and len(result.depth) == 600
    np.testing.assert_allclose(result.rows[0], centre, atol=1.0)
    assert any("resampled by 0.6667 (rows) x 0.6667 (columns)" in note for note in result.notes)


def test_digitize_file_resamples_a_tagged_scan_and_leaves_an_untagged_one(tmp_path: Path,
                                                                           test_settings: Settings) -> None:
    image, centre = _thick_line(600, 150)
    write_tiff(tmp_path / "tagged.tif", image, dpi=(300.0, 300.0))
    write_tiff(tmp_path / "untagged.tif", image)
    for name, resampled in (("tagged", True), ("untagged", False)):
        result = digitize_file(tmp_path / f"{name}.tif", tmp_path / f"{name}.las", InkIsCurve().eval(), "test",
                               128, 32, test_settings.extract, resampling=Resampling(200.0))
        np.testing.assert_allclose(result.rows[0], centre, atol=1.0)
        assert any("resampled" in note for note in result.notes) == resampled
    # An archive known to be scanned at 300 dpi: the untagged scan is read resampled too, and its LAS says why.
    result = digitize_file(tmp_path / "untagged.tif", tmp_path / "assumed.las", InkIsCurve().eval(), "test", 128, 32,
                           test_settings.extract, resampling=Resampling(200.0, 300.0))
    np.testing.assert_allclose(result.rows[0], centre, atol=1.0)
    assert any("resampled by 0.6667 (rows) x 0.6667 (columns)" in note for note in result.notes)
    assert "the scan states no resolution: read as 300 dpi (infer.untagged_dpi)" in (
        tmp_path / "assumed.las").read_text()
    assert "states no resolution" not in (tmp_path / "tagged.las").read_text()


def test_a_pages_strips_carry_its_resolution_turned_with_them() -> None:
    page = TiffHeader(width=1000, height=5000, bits=1, samples=1, dtype="bool", photometric="miniswhite",
                      compression="ccitt_t6", pages=1, dpi=(300.0, 150.0))
    # A strip's columns are the page's rows (down, 150 dpi) and its rows run across the page (300 dpi).
    assert strip_dpi(page) == (150.0, 300.0)
    assert strip_dpi(page.__class__(**{**page.__dict__, "dpi": None})) is None
