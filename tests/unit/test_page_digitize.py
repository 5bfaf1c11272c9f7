"""A whole page to one LAS per section: merging tracks, and the whole path on a rendered page with a real net."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tests.nets import InkIsCurve, InkIsStyle, untrained_veernet
from tests.pages import check_against_native, clean_strip_params, small_page_params
from veernet_pipeline.cli import main
from veernet_pipeline.config import Range, Settings
from veernet_pipeline.inference.page import digitize_page, digitize_page_file
from veernet_pipeline.io.classes import NUM_CLASSES, style_class
from veernet_pipeline.io.las import LasCurve, read_curves
from veernet_pipeline.io.resolution import Resampling
from veernet_pipeline.io.tiff import write_tiff
from veernet_pipeline.model.veernet import save_model
from veernet_pipeline.pages.assemble import TrackReading, las_name, merge_section
from veernet_pipeline.pages.layout import LayoutError, parse_layout
from veernet_pipeline.synthetic.curves import load_wells
from veernet_pipeline.synthetic.page import SyntheticPage, render_page
from veernet_pipeline.synthetic.page_truth import native_name, write_page

SECTION = {"name": "main", "kind": "main", "top_row": 0, "bottom_row": 4,
           "depth": {"unit": "M", "points": [{"row": 0, "depth": 10}, {"row": 3, "depth": 13}]}}


def _reading(track: str, depth: list[float], *names: str) -> TrackReading:
    curves = [LasCurve(n, "", np.arange(len(depth))) for n in names]
    return TrackReading(track, f"track {track}", np.array(depth), curves, ["common note", f"only {track}"])


def test_merge_puts_every_track_on_the_section_depths_and_says_where_each_curve_came_from() -> None:
    section = parse_layout({"tracks": [{"name": "A", "left": 0, "right": 2, "curves": [
        {"mnemonic": "GR", "left_value": 0, "right_value": 1}]}], "sections": [SECTION]}).sections[0]
    log = merge_section(section, [_reading("A", [10, 11, 12, 13], "GR", "GR_CONF"),
                                  _reading("B", [10, 11, 12, 13], "ILD", "ILD_CONF")], "M", {"WELL": "W"}, "p.tif")
    assert [c.mnemonic for c in log.curves] == ["GR", "GR_CONF", "ILD", "ILD_CONF"]
    assert log.notes[1:3] == ["track A: GR, GR_CONF", "track B: ILD, ILD_CONF"]
    assert log.notes[3:] == ["common note", "track A: only A", "track B: only B"]
    with pytest.raises(ValueError, match="track B is on other depths than track A"):
        merge_section(section, [_reading("A", [10, 11, 12, 13], "GR"), _reading("B", [10, 11, 12, 14], "ILD")],
                      "M", {}, "p.tif")
    with pytest.raises(ValueError, match="curves GR are read from more than one track"):
        merge_section(section, [_reading("A", [10, 11], "GR"), _reading("B", [10, 11], "gr")], "M", {}, "p.tif")
    assert las_name("well7", section) == "well7.las"
    assert las_name("well7", section.model_copy(update={"name": "repeat"})) == "well7.repeat.las"


@pytest.fixture(scope="module")
def clean_page(test_settings: Settings) -> SyntheticPage:
    """Two clean one-curve tracks (no grid, boxes or flags): a per-pixel net reads each curve to the pixel."""
    params = small_page_params(grid=False, curves=Range(min=1, max=1))
    return render_page(11, 0, params, clean_strip_params(test_settings.synthesize), load_wells(""))


def test_a_whole_page_becomes_one_las_per_section_matching_the_native_curves(
        tmp_path: Path, clean_page: SyntheticPage, test_settings: Settings) -> None:
    scan = write_page(tmp_path / "archive", "well11", clean_page.image, clean_page.layout, clean_page.truth)
    written = digitize_page_file(scan, tmp_path / "out", InkIsCurve().eval(), "ink-is-curve",
                                 test_settings.infer.tile_width, test_settings.infer.tile_overlap,
                                 test_settings.extract, qc_dir=tmp_path / "qc")
    assert [p.name for p in written] == ["well11.las", "well11.repeat.las"]
    layout = clean_page.layout
    for las, section in zip(written, layout.sections, strict=True):
        depth, curves, well = read_curves(las)
        assert len(depth) == section.bottom_row - section.top_row and well["WELL"] == "SYNTHETIC PAGE"
        # One depth index for every track: the section's row depths.
        np.testing.assert_allclose(depth, section.depth.depth_at(np.arange(section.top_row, section.bottom_row)))
        assert set(curves) == {m for t in layout.tracks for c in t.curves for m in (c.mnemonic, f"{c.mnemonic}_CONF")}
        text = las.read_text()
        assert f"section {section.name} ({section.kind})" in text and "layout well11.tif.layout.json" in text
        for track in layout.tracks:
            native = tmp_path / "archive" / native_name("well11", next(
                t for t in clean_page.truth if (t.section, t.track) == (section.name, track.name)))
            check_against_native(las, native, track, track.right - track.left)
    assert len(list((tmp_path / "qc").glob("well11.*.qc.png"))) == 4


def test_a_page_reads_each_curve_in_the_style_its_layout_names(
        tmp_path: Path, clean_page: SyntheticPage, test_settings: Settings) -> None:
    """The page's lines, named dotted by the net and by the layout's legend, are read as the native curves; a
    layout without the style reads each track's first curve as solid, which the net names nowhere."""
    styled = json.loads(clean_page.layout.model_dump_json(exclude_none=True))
    for track in styled["tracks"]:
        for curve in track["curves"]:
            curve["style"] = "dotted"
    layout = parse_layout(styled)
    scan = write_page(tmp_path / "archive", "dotted", clean_page.image, layout, clean_page.truth)
    net = InkIsStyle(style_class("dotted")).eval()
    args = (test_settings.infer.tile_width, test_settings.infer.tile_overlap, test_settings.extract)
    written = digitize_page_file(scan, tmp_path / "out", net, "ink-is-dotted", *args)
    for las, section in zip(written, layout.sections, strict=True):
        for track in layout.tracks:
            native = tmp_path / "archive" / native_name("dotted", next(
                t for t in clean_page.truth if (t.section, t.track) == (section.name, track.name)))
            check_against_native(las, native, track, track.right - track.left)
    unstyled = digitize_page(net, clean_page.image, clean_page.layout, "stored", *args)
    for log in unstyled:
        for curve in log.curves:
            if not curve.mnemonic.endswith("_CONF"):
                assert np.isfinite(curve.values).mean() < 0.05, curve.mnemonic


def test_stored_and_decoded_pages_read_the_same(clean_page: SyntheticPage, test_settings: Settings) -> None:
    args = (clean_page.layout, test_settings.infer.tile_width, test_settings.infer.tile_overlap, test_settings.extract)
    stored = digitize_page(InkIsCurve().eval(), clean_page.image, args[0], "stored", *args[1:])
    decoded = digitize_page(InkIsCurve().eval(), np.ascontiguousarray(np.rot90(clean_page.image, k=1)), args[0],
                            "decoded", *args[1:])
    for a, b in zip(stored, decoded, strict=True):
        for ca, cb in zip(a.curves, b.curves, strict=True):
            np.testing.assert_array_equal(ca.values, cb.values)


def test_a_page_without_a_usable_layout_is_a_layout_error(tmp_path: Path, clean_page: SyntheticPage,
                                                          test_settings: Settings) -> None:
    scan = write_page(tmp_path, "bare", clean_page.image, clean_page.layout, [])
    (tmp_path / "bare.tif.layout.json").unlink()
    args = (tmp_path / "out", InkIsCurve().eval(), "m", 256, 64, test_settings.extract)
    with pytest.raises(LayoutError, match="no layout; write bare.tif.layout.json"):
        digitize_page_file(scan, *args)
    draft = json.loads(clean_page.layout.model_dump_json(exclude_none=True))
    draft["sections"][0]["depth"]["points"][0]["depth"] = None
    (tmp_path / "bare.tif.layout.json").write_text(json.dumps(draft))
    with pytest.raises(LayoutError, match=r"fill in sections\[0\].depth.points\[0\].depth"):
        digitize_page_file(scan, *args)
    assert not (tmp_path / "out").exists()


def test_veernet_digitize_with_a_layout(tmp_path: Path, clean_page: SyntheticPage, test_settings: Settings) -> None:
    scan = write_page(tmp_path, "cli", clean_page.image, clean_page.layout, [])
    model = tmp_path / "model"
    save_model(model, untrained_veernet(test_settings, NUM_CLASSES), test_settings.model, NUM_CLASSES)
    params = ["--params", str(test_settings.root / "params.yaml"), "--profile", "test"]
    layout = tmp_path / "elsewhere.json"
    layout.write_text((tmp_path / "cli.tif.layout.json").read_text())
    (tmp_path / "cli.tif.layout.json").unlink()
    assert main([*params, "digitize", str(scan), "--layout", str(layout), "--out", str(tmp_path / "las"),
                 "--model", str(model)]) == 0
    assert sorted(p.name for p in (tmp_path / "las").iterdir()) == ["cli.las", "cli.repeat.las"]
    depth, curves, _ = read_curves(tmp_path / "las" / "cli.las")
    assert len(depth) == 480 and len(curves) == 4  # one curve per track and its _CONF


def test_a_page_tagged_at_another_resolution_is_read_resampled_onto_its_own_rows(
        tmp_path: Path, clean_page: SyntheticPage, test_settings: Settings) -> None:
    """A page stating 150 dpi is read by the net at 200 (each strip 4/3 as large), its LAS on the page's own rows,
    within 1.5 px: the 1-px lines, enlarged bilinearly, lose their pixel-exact centres."""
    scan = write_page(tmp_path / "archive", "well11", clean_page.image, clean_page.layout, clean_page.truth)
    write_tiff(scan, clean_page.image, compression="zlib", dpi=(150.0, 150.0))  # the same pixels, tagged
    written = digitize_page_file(scan, tmp_path / "out", InkIsCurve().eval(), "ink-is-curve",
                                 test_settings.infer.tile_width, test_settings.infer.tile_overlap,
                                 test_settings.extract, resampling=Resampling(200.0))
    for las, section in zip(written, clean_page.layout.sections, strict=True):
        depth, _, _ = read_curves(las)
        np.testing.assert_allclose(depth, section.depth.depth_at(np.arange(section.top_row, section.bottom_row)))
        assert "resampled by 1.333 (rows) x 1.333 (columns)" in las.read_text()
        for track in clean_page.layout.tracks:
            native = tmp_path / "archive" / native_name("well11", next(
                t for t in clean_page.truth if (t.section, t.track) == (section.name, track.name)))
            check_against_native(las, native, track, track.right - track.left, tol_px=1.5)
