"""Colour prints: pens named in the sidecar, the print decoded in colour, each curve read on its pen's ink,
and scored as labelled. Expected values by hand or by construction."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import tifffile

from tests.maps import blank, centre, paint
from tests.nets import InkIsStyle
from veernet_pipeline.config import LowerBound, Settings, load_settings
from veernet_pipeline.evaluation.evaluate import score_curves
from veernet_pipeline.foreign.dataset import FOREIGN_DIR, VENDOR_PENS, write_foreign_set
from veernet_pipeline.inference.page import digitize_page_file
from veernet_pipeline.io.calibration import Calibration, CalibrationError
from veernet_pipeline.io.classes import style_class
from veernet_pipeline.io.colours import colour_rgb, parse_colour
from veernet_pipeline.io.ingest import ingest_archive
from veernet_pipeline.io.las import read_curves
from veernet_pipeline.io.manifest import read_manifest
from veernet_pipeline.io.scanfile import decode_step
from veernet_pipeline.io.sets import read_split
from veernet_pipeline.io.tiff import decode_colour, decode_scan
from veernet_pipeline.reading.colour import pen_membership
from veernet_pipeline.reading.extract import trace_curves
from veernet_pipeline.reading.track import read_track
from veernet_pipeline.stages.ingest import PAGES

PARAMS = Path(__file__).parents[2] / "params.yaml"
SOLID = style_class("solid")
H, W = 96, 600
X = np.arange(W)


def test_colours_are_names_or_hex_and_anything_else_says_what_is_accepted() -> None:
    assert parse_colour(" Red ") == "red" and colour_rgb("red") == (220, 0, 0)
    assert parse_colour("#1F77B4") == "#1f77b4" and colour_rgb("#1f77b4") == (31, 119, 180)
    sidecar = {"depth": {"top": 0, "bottom": 10}, "curves": [
        {"mnemonic": "GR", "top_value": 0, "bottom_value": 150, "colour": "Green"},
        {"mnemonic": "SP", "top_value": -80, "bottom_value": 20, "colour": "mauve"}]}
    with pytest.raises(CalibrationError, match=r"x.json: curves\[1\].colour: 'mauve' is not a pen colour"):
        Calibration.from_dict(sidecar, "x.json")
    sidecar["curves"].pop()
    calibration = Calibration.from_dict(sidecar)
    assert calibration.curves[0].colour == "green"
    assert Calibration.from_dict(calibration.to_dict()) == calibration  # written and read back


def test_a_colour_page_decodes_to_gray_and_rgb_in_one_orientation(tmp_path: Path) -> None:
    rgb = np.full((40, 30, 3), 255, np.uint8)  # portrait: turned to landscape
    rgb[5, :] = (220, 0, 0)
    rgb[:, 7] = (0, 0, 220)
    tifffile.imwrite(tmp_path / "print.tif", rgb, photometric="rgb", compression="lzw")
    gray, colour = decode_colour(tmp_path / "print.tif")
    assert colour is not None and colour.shape == (30, 40, 3) and gray.shape == (30, 40)
    np.testing.assert_array_equal(colour, np.rot90(rgb, k=1))
    np.testing.assert_array_equal(gray, decode_scan(tmp_path / "print.tif"))
    # Palette: RGB through the colormap (16-bit entries, by hand 0xFFFF -> 255).
    cmap = np.zeros((3, 256), np.uint16)
    cmap[:, 1] = (65535, 0, 0)
    tifffile.imwrite(tmp_path / "palette.tif", np.array([[0, 1], [1, 0]], np.uint8), photometric="palette",
                     colormap=cmap)
    np.testing.assert_array_equal(decode_colour(tmp_path / "palette.tif")[1][0], [[0, 0, 0], [255, 0, 0]])
    tifffile.imwrite(tmp_path / "gray.tif", np.full((4, 8), 200, np.uint8))
    assert decode_colour(tmp_path / "gray.tif")[1] is None


def test_ingest_keeps_a_colour_print_in_colour_and_a_gray_scan_gray(tmp_path: Path) -> None:
    rgb = np.full((30, 60, 3), 250, np.uint8)
    rgb[10, :] = (214, 39, 40)
    tifffile.imwrite(tmp_path / "print.tif", rgb, photometric="rgb", compression="lzw")
    tifffile.imwrite(tmp_path / "scan.tif", rgb[..., 1])
    for name, colour in (("print.tif", rgb), ("scan.tif", None)):
        target = tmp_path / f"decoded-{name}"
        stats = decode_step(str(tmp_path / name), name, str(target), 10**6)
        gray, kept = decode_colour(target)
        np.testing.assert_array_equal(gray, decode_scan(tmp_path / name))  # the same gray as the scan decodes to
        assert stats["ink_share"] > 0 and (kept is None if colour is None else np.array_equal(kept, colour))


def test_ink_goes_to_the_pen_whose_colour_it_is_and_black_to_no_named_pen() -> None:
    pixels = np.array([[220, 0, 0], [250, 160, 160], [0, 0, 220], [40, 40, 40], [255, 255, 255]], np.uint8)
    share = pen_membership(pixels, ["red", "blue", None])
    # Red and its faint edge (a paler red, same direction within 3 degrees) go to red; blue to blue; dark gray is
    # black's, a pen nobody named; paper has no colour: split evenly among red, blue and black.
    assert share[0, 0] > 0.99 and share[0, 1] > 0.99 and share[1, 2] > 0.99
    assert share[0, 3] < 0.01 and share[1, 3] < 0.01
    np.testing.assert_allclose(share[:2, 4], [1 / 3, 1 / 3])
    np.testing.assert_array_equal(share[2], 1.0)  # a curve with no pen named: every pixel may be its ink


def test_a_print_s_own_blue_and_cyan_are_fitted_to_their_names() -> None:
    # matplotlib's blue (31, 119, 180) lies nearer the contract's cyan than its blue (cosines 0.965 and 0.956 by
    # hand): one pixel at a time it would be cyan. Fitted to the print, each pen keeps its own name.
    rng = np.random.default_rng(0)
    strength = rng.uniform(0.6, 1.0, (300, 1))
    blue = (255 - strength * (255 - np.array(VENDOR_PENS["blue"]))).astype(np.uint8)
    cyan = (255 - strength * (255 - np.array(VENDOR_PENS["cyan"]))).astype(np.uint8)
    share = pen_membership(np.concatenate([blue, cyan]), ["blue", "cyan"])
    assert share[0, :300].mean() > 0.9 and share[1, 300:].mean() > 0.9


def _two_solid_pens() -> tuple[np.ndarray, np.ndarray, list[np.ndarray]]:
    """Two solid curves that come within a row and part again (no crossing): red, the first named, below blue."""
    truths = [63 - 14 * np.abs(np.sin(X / 95.0)), 46 + 0.0 * X]
    probs, rgb = blank(H, W), np.full((H, W, 3), 255, np.uint8)
    for truth, pen in zip(truths, ("red", "blue"), strict=True):
        alone = blank(H, W)
        paint(alone, truth, SOLID)
        paint(probs, truth, SOLID)
        rgb[alone[SOLID] > 0.5] = colour_rgb(pen)
    return probs, rgb, truths


def test_curves_of_one_style_in_two_pens_are_read_as_named(test_settings: Settings) -> None:
    probs, rgb, truths = _two_solid_pens()
    expected = np.stack([centre(t) for t in truths])
    apart = np.abs(expected[0] - expected[1]) >= 6
    by_style, _ = trace_curves(probs, test_settings.extract, [(SOLID,), (SOLID,)])
    # The check can fail: by style alone nothing says which is which, and curves drawn alike are listed top first,
    # so the first curve named (red) gets blue's line.
    assert np.nanmax(np.abs(by_style[:, apart] - expected[:, apart])) > 6
    rows, _ = trace_curves(probs, test_settings.extract, [(SOLID,), (SOLID,)], rgb, ["red", "blue"])
    assert np.abs(rows[:, apart] - expected[:, apart]).max() <= 1.0
    # Named the other way round, the reading follows the names: the lines come back swapped.
    swapped, _ = trace_curves(probs, test_settings.extract, [(SOLID,), (SOLID,)], rgb, ["blue", "red"])
    assert np.abs(swapped[:, apart] - expected[::-1, apart]).max() <= 1.0


def test_the_seeds_two_solid_lines_are_told_apart_by_pens_when_the_sidecar_names_them(test_settings: Settings
                                                                                       ) -> None:
    # No style named (the seeds' sidecar: A solid, B broken), but B finds no broken ink: two solid lines are read
    # again, and their pens, not their widths or rows, say which is A.
    probs, rgb, truths = _two_solid_pens()
    calibration = Calibration.from_dict({"depth": {"top": 0, "bottom": 1}, "curves": [
        {"mnemonic": "GR", "top_value": 0, "bottom_value": 1, "colour": "red"},
        {"mnemonic": "SP", "top_value": 0, "bottom_value": 1, "colour": "blue"}]})
    reading = read_track(probs, calibration, test_settings.extract, rgb)
    expected = np.stack([centre(t) for t in truths])
    apart = np.abs(expected[0] - expected[1]) >= 6
    assert np.abs(reading.rows[:, apart] - expected[:, apart]).max() <= 1.0
    assert "told apart by their pens (red, blue)" in reading.plan.notes[-1]
    without = read_track(probs, calibration, test_settings.extract)  # the gray scan: the higher line is A
    assert np.nanmax(np.abs(without.rows[:, apart] - expected[:, apart])) > 6


def test_curves_told_apart_by_pen_are_scored_as_labelled() -> None:
    truth = np.stack([np.linspace(0.2, 0.4, 50), np.linspace(0.7, 0.5, 50)])
    rows = truth[::-1] * 100 - 0.5  # read swapped, on a 100-row track
    classes = [(SOLID,), (SOLID,)]
    alike, _, _ = score_curves(rows, truth, classes, 100)
    labelled, _, _ = score_curves(rows, truth, list(zip(classes, ["red", "blue"], strict=True)), 100)
    assert min(s["r2"] for s in alike) > 0.99  # drawn alike: the best assignment, nothing says which is which
    assert max(s["mae"] for s in labelled) > 0.2  # named pens: the swap counts against the reading


def test_the_foreign_renderer_prints_in_colour_with_the_pens_named(tmp_path: Path) -> None:
    settings = load_settings(PARAMS, profile="test", overrides=[f"paths.synthetic={tmp_path}", "foreign.count=2",
                                                                "foreign.colour_share=1"])
    write_foreign_set(settings)
    set_dir = tmp_path / FOREIGN_DIR
    for row in read_split(set_dir, "test").itertuples():
        gray, rgb = decode_colour(set_dir / row.image)
        pens = [c.get("colour") for c in json.loads((set_dir / row.calibration).read_text())["curves"]]
        assert rgb is not None and "colour" in row.features.split(",") and row.bits == 8
        assert len(set(pens)) == len(pens) == row.n_curves and set(pens) <= set(VENDOR_PENS)
        # Each curve's pixels in the mask are printed in its pen (where no other ink lies over them).
        mask = tifffile.imread(set_dir / row.mask)
        assert mask.shape == gray.shape and (mask >= SOLID).any()
    plain = load_settings(PARAMS, profile="test", overrides=[f"paths.synthetic={tmp_path / 'plain'}",
                                                             "foreign.count=2"])
    write_foreign_set(plain)
    for row in read_split(tmp_path / "plain" / FOREIGN_DIR, "test").itertuples():
        sidecar = json.loads((tmp_path / "plain" / FOREIGN_DIR / row.calibration).read_text())
        assert all("colour" not in c for c in sidecar["curves"]) and "colour" not in row.features.split(",")


def test_the_benchmark_s_luma_is_the_gray_a_colour_page_decoded_to_before(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(Path(__file__).parents[2] / "benchmarks"))
    from colour import luma  # benchmarks/colour.py

    # BT.601 by hand: yellow 0.299 * 255 + 0.587 * 255 = 226.0; red (220, 0, 0) 65.8 -> 66; gray 128 stays.
    np.testing.assert_array_equal(luma(np.array([[[255, 255, 0], [220, 0, 0], [128, 128, 128]]], np.uint8)),
                                  [[226, 66, 128]])


def _colour_page(tmp_path: Path) -> tuple[Path, Path, np.ndarray]:
    """The two pens' strip as a portrait colour page (one track, columns 10-105, rows 0-599 at 1 m a row), its
    layout naming red GR and blue SP, both solid; the same page in gray beside it. Returns (colour page, gray
    page, each curve's value where the track reads it: value = 95.5 - row, the track's right edge (96) at strip
    row -0.5)."""
    _, rgb, truths = _two_solid_pens()
    tmp_path.mkdir(exist_ok=True)
    page = np.full((W, 116, 3), 255, np.uint8)
    page[:, 10:106] = np.rot90(rgb, k=-1)  # `pages.cut` turns a block by np.rot90(k=1) into its strip
    tifffile.imwrite(tmp_path / "print.tif", page, photometric="rgb", compression="lzw")
    # decode_scan gives a portrait page turned by np.rot90(k=1): turned back, it is the page as stored.
    tifffile.imwrite(tmp_path / "gray.tif", np.rot90(decode_scan(tmp_path / "print.tif"), k=-1))
    curves = [{"mnemonic": m, "left_value": 0, "right_value": 96, "style": "solid", "colour": c}
              for m, c in (("GR", "red"), ("SP", "blue"))]
    depth = {"unit": "M", "points": [{"row": 0, "depth": 0}, {"row": W - 1, "depth": W - 1}]}
    layout = {"tracks": [{"name": "T1", "left": 10, "right": 106, "curves": curves}],
              "sections": [{"name": "main", "kind": "main", "top_row": 0, "bottom_row": W, "depth": depth}]}
    (tmp_path / "tranche.layout.json").write_text(json.dumps(layout))
    return tmp_path / "print.tif", tmp_path / "gray.tif", 95.5 - np.stack([centre(t) for t in truths])


def test_a_colour_page_s_strips_are_read_by_their_pens(tmp_path: Path, test_settings: Settings) -> None:
    colour, gray, expected = _colour_page(tmp_path)
    apart = np.abs(expected[0] - expected[1]) >= 6
    net = InkIsStyle(SOLID).eval()
    args = (net, "ink-is-solid", test_settings.infer.tile_width, test_settings.infer.tile_overlap,
            test_settings.extract)
    for scan, right in ((colour, True), (gray, False)):
        las = digitize_page_file(scan, tmp_path / scan.stem, *args)[0]
        depth, curves, _ = read_curves(las)
        np.testing.assert_allclose(depth, np.arange(W))
        read = np.stack([curves["GR"], curves["SP"]])
        if right:  # each mnemonic on its own pen's line
            assert np.abs(read[:, apart] - expected[:, apart]).max() <= 1.0
        else:  # the same page in gray: drawn alike, the higher line (blue's) is listed first, under GR
            assert np.nanmax(np.abs(read[:, apart] - expected[:, apart])) > 6


def test_ingest_cuts_a_colour_page_into_colour_strips(tmp_path: Path, test_settings: Settings) -> None:
    colour, _, _ = _colour_page(tmp_path / "raw")
    (tmp_path / "raw" / "gray.tif").unlink()
    bounds = test_settings.validate_.model_copy(update={"width": LowerBound(min=200)})
    ingest_archive(tmp_path / "raw", tmp_path / "ing", test_settings.ingest, bounds, pages=PAGES)
    row = read_manifest(tmp_path / "ing")[0].iloc[0]
    gray, rgb = decode_colour(tmp_path / "ing" / row.decoded)
    page = tifffile.imread(colour)
    np.testing.assert_array_equal(rgb, np.rot90(page[:, 10:106], k=1))  # the block turned, pixel for pixel
    np.testing.assert_array_equal(gray, np.rot90(np.rot90(decode_scan(colour), k=-1)[:, 10:106], k=1))
    sidecar = Calibration.from_file(tmp_path / "ing" / row.calibration)
    assert [(c.style, c.colour) for c in sidecar.curves] == [("solid", "red"), ("solid", "blue")]
