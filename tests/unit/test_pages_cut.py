"""Cutting a page into strips: pixel positions and depths computed by hand, stored and decoded pages alike."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from veernet_pipeline.io.tiff import decode_scan, write_tiff
from veernet_pipeline.pages.cut import cut_page, stored_view
from veernet_pipeline.pages.layout import LayoutError, parse_layout


def _page() -> np.ndarray:
    """20 rows x 12 columns, stored portrait; every pixel value unique (its index), so a position is its value."""
    return np.arange(240, dtype=np.uint8).reshape(20, 12)


def _layout(**extra: Any) -> dict[str, Any]:
    return {
        "tracks": [
            {"name": "A", "left": 2, "right": 5, "curves": [
                {"mnemonic": "GR", "unit": "GAPI", "left_value": 0, "right_value": 150}]},
            {"name": "B", "left": 7, "right": 11, "curves": [
                {"mnemonic": "SP", "left_value": -80, "right_value": 20, "style": "dashed", "colour": "Red"},
                {"mnemonic": "ILD", "unit": "OHMM", "left_value": 0.2, "right_value": 2000, "scale": "log",
                 "style": "solid"}]},
        ],
        # Row 3 is at 1000 ft, row 12 at 1045 ft: 5 ft per row.
        "sections": [{"name": "main", "kind": "main", "top_row": 3, "bottom_row": 13,
                      "depth": {"unit": "FT", "points": [{"row": 3, "depth": 1000}, {"row": 12, "depth": 1045}]}}],
        "well": {"WELL": "W1"},
        **extra,
    }


def test_strips_by_hand() -> None:
    page = _page()
    strips = cut_page(page, parse_layout(_layout()), "stored")
    assert [(s.section.name, s.track.name) for s in strips] == [("main", "A"), ("main", "B")]
    a, b = strips
    # Track A: 3 columns (2..4) wide, 10 rows (3..12) long -> a 3 x 10 landscape strip.
    assert a.image.shape == (3, 10) and b.image.shape == (4, 10)
    # Strip row 0 is the track's right edge column (4), strip column 0 the section's first row (3).
    assert a.image[0, 0] == 3 * 12 + 4 and a.image[0, 9] == 12 * 12 + 4
    assert a.image[2, 0] == 3 * 12 + 2 and a.image[2, 9] == 12 * 12 + 2
    assert b.image[0, 0] == 3 * 12 + 10 and b.image[3, 5] == 8 * 12 + 7
    # Depths of the strip's edges: rows 2.5 and 12.5 -> 997.5 and 1047.5 ft; column j sits at row 3 + j.
    calib = a.calibration
    assert (calib.depth_top, calib.depth_bottom) == pytest.approx((997.5, 1047.5)) and calib.depth_unit == "FT"
    np.testing.assert_allclose(calib.column_depths(10), 1000.0 + 5.0 * np.arange(10))
    # The right edge's value is the strip's top value; the left edge's its bottom value.
    assert (calib.curves[0].top_value, calib.curves[0].bottom_value) == (150.0, 0.0)
    assert calib.well == {"WELL": "W1"}
    # Track B lists SP (dashed) before ILD (solid): the solid curve is class 1.
    assert b.curve_order == (1, 0)
    assert [c.mnemonic for c in b.calibration.curves] == ["ILD", "SP"]
    # The legend's style and pen go into the strip's sidecar: they tell the track's curves apart.
    assert [(c.style, c.colour) for c in b.calibration.curves] == [("solid", None), ("dashed", "red")]
    assert (a.calibration.curves[0].style, a.calibration.curves[0].colour) == (None, None)
    assert (b.calibration.curves[0].top_value, b.calibration.curves[0].scale) == (2000.0, "log")


def test_a_value_read_at_the_strip_edge_is_the_tracks_edge_value() -> None:
    calib = cut_page(_page(), parse_layout(_layout()), "stored")[0].calibration
    # Strip row -0.5 is the top edge (the track's right edge, 150); row 2.5 the bottom edge (left, 0).
    assert calib.row_to_value(np.array([-0.5, 2.5]), 3, 0).tolist() == [150.0, 0.0]


def test_decoded_and_stored_pages_give_the_same_strips() -> None:
    page = _page()
    decoded = np.ascontiguousarray(np.rot90(page, k=1))  # what decode_scan makes of a portrait page
    np.testing.assert_array_equal(stored_view(decoded, "decoded"), page)
    layout = parse_layout(_layout())
    for stored, turned in zip(cut_page(page, layout, "stored"), cut_page(decoded, layout, "decoded"), strict=True):
        np.testing.assert_array_equal(stored.image, turned.image)
        assert stored.calibration == turned.calibration


def test_a_portrait_tiff_through_decode_scan_cuts_like_the_stored_array(tmp_path: Path) -> None:
    page = np.random.default_rng(0).integers(0, 256, size=(40, 24), dtype=np.uint8)
    write_tiff(tmp_path / "page.tif", page)
    decoded = decode_scan(tmp_path / "page.tif")
    assert decoded.shape == (24, 40)
    data = _layout()
    data["sections"][0]["bottom_row"] = 38
    layout = parse_layout(data)
    for a, b in zip(cut_page(page, layout, "stored"), cut_page(decoded, layout, "decoded"), strict=True):
        np.testing.assert_array_equal(a.image, b.image)
        np.testing.assert_array_equal(a.image, np.rot90(page[3:38, a.track.left:a.track.right], k=1))


def test_a_skewed_page_is_cut_row_by_row() -> None:
    page = (np.arange(60 * 14) % 256).astype(np.uint8).reshape(60, 14)  # any 256 neighbours unique
    data = _layout(skew={"angle_deg": math.degrees(math.atan(0.08)), "pivot_row": 28})
    data["sections"][0]["bottom_row"] = 53
    strip = cut_page(page, parse_layout(data), "stored")[0].image
    assert strip.shape == (3, 50)

    def at(row: int, column: int) -> int:
        return (row * 14 + column) % 256

    # Row y moves by floor(0.08 (y - 28) + 0.5): row 3 by floor(-1.5) = -2, row 28 by 0, row 40 by
    # floor(1.46) = 1, row 52 by floor(2.42) = 2. Strip (i, j) is page row 3 + j, column 4 - i + shift.
    assert strip[0, 0] == at(3, 4 - 2) and strip[2, 0] == at(3, 2 - 2)
    assert strip[0, 25] == at(28, 4) and strip[1, 37] == at(40, 3 + 1)
    assert strip[0, 49] == at(52, 4 + 2) and strip[2, 49] == at(52, 2 + 2)


@pytest.mark.parametrize(("extra", "shape", "fragment"), [
    ({"page": {"width": 12, "height": 21}}, (20, 12), "page is 12 x 20 px"),
    ({}, (20, 10), "tracks[1] (B) columns 7-11"),
    ({}, (12, 12), "sections[0] (main) ends at row 13, past the page's 12 rows"),
    ({"skew": {"angle_deg": 4.9, "pivot_row": 0}}, (20, 12), "with the skew's shift"),
])
def test_a_layout_that_does_not_fit_the_page(extra: dict[str, Any], shape: tuple[int, int], fragment: str) -> None:
    with pytest.raises(LayoutError) as raised:
        cut_page(np.zeros(shape, dtype=np.uint8), parse_layout(_layout(**extra)), "stored", source="p.tif")
    assert str(raised.value).startswith("p.tif: ") and fragment in str(raised.value)


def test_orientation_and_image_type_are_checked() -> None:
    layout = parse_layout(_layout())
    with pytest.raises(ValueError, match="orientation"):
        cut_page(_page(), layout, "sideways")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="2-D uint8"):
        cut_page(_page().astype(np.float32), layout, "stored")
