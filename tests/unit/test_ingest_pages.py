"""Ingest's page step: a page with a layout becomes one manifest row per track strip, losslessly, with its sidecar."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tests.pages import small_page_params
from veernet_pipeline.config import LowerBound, Range, Settings
from veernet_pipeline.io.calibration import Calibration
from veernet_pipeline.io.ingest import _check_counts, ingest_archive
from veernet_pipeline.io.manifest import read_manifest
from veernet_pipeline.io.resolution import Resampling
from veernet_pipeline.io.tiff import decode_scan, read_header, write_tiff
from veernet_pipeline.stages.ingest import PAGES
from veernet_pipeline.synthetic.curves import load_wells
from veernet_pipeline.synthetic.page import render_page
from veernet_pipeline.synthetic.page_truth import write_page


def test_a_page_is_cut_into_strip_rows_with_their_sidecars(tmp_path: Path, test_settings: Settings) -> None:
    page = render_page(5, 0, small_page_params(), test_settings.synthesize, load_wells(""))
    raw = tmp_path / "raw"
    write_page(raw, "well", page.image, page.layout, [])
    bounds = test_settings.validate_.model_copy(update={"width": LowerBound(min=200)})
    counts = ingest_archive(raw, tmp_path / "ing", test_settings.ingest, bounds, pages=PAGES)
    sections, tracks = page.layout.sections, page.layout.tracks
    assert {k: counts[k] for k in ("files", "pages", "strips", "rows", "errors")} == {
        "files": 1, "pages": 1, "strips": len(sections) * len(tracks), "rows": len(sections) * len(tracks),
        "errors": 0}
    manifest = read_manifest(tmp_path / "ing")[0]
    stored = decode_scan(raw / "well.tif")  # portrait: decode_scan turned it by np.rot90(k=1)
    stored = np.rot90(stored, k=-1)
    for row, (section, track) in zip(manifest.itertuples(), [(s, t) for s in sections for t in tracks], strict=True):
        assert row.path == f"well.tif#{section.name}/{track.name}" and row.page_file == "well.tif"
        assert row.page_strips == len(sections) * len(tracks)
        # Lossless: the strip is the page's block turned, pixel for pixel (an independent slice of the page).
        block = stored[section.top_row:section.bottom_row, track.left:track.right]
        strip = decode_scan(tmp_path / "ing" / row.decoded)
        np.testing.assert_array_equal(strip, np.rot90(block, k=1))
        assert (row.width, row.height) == (section.bottom_row - section.top_row, track.right - track.left)
        sidecar = tmp_path / "ing" / row.calibration
        assert row.calibration_sha256 == hashlib.sha256(sidecar.read_bytes()).hexdigest()
        # The strip's top edge is the track's right edge; its depths are the section's at its edges.
        calibration = Calibration.from_file(sidecar)
        top, bottom = section.depth.depth_at([section.top_row - 0.5, section.bottom_row - 0.5])
        assert (calibration.depth_top, calibration.depth_bottom) == pytest.approx((top, bottom))
        assert calibration.curves[0].top_value == next(
            c.right_value for c in track.curves if c.mnemonic == calibration.curves[0].mnemonic)


def test_a_pages_strips_are_held_to_the_bounds_at_the_pages_resolution(tmp_path: Path,
                                                                       test_settings: Settings) -> None:
    page = render_page(5, 0, small_page_params(), test_settings.synthesize, load_wells(""))
    raw = tmp_path / "raw"
    scan = write_page(raw, "well", page.image, page.layout, [])
    # Tagged 300 dpi across the portrait page (a strip's rows) and 400 dpi down it (a strip's columns).
    write_tiff(scan, page.image, dpi=(300.0, 400.0))
    bounds = test_settings.validate_.model_copy(update={"width": LowerBound(min=150),
                                                        "height": Range(min=50, max=256)})
    ingest_archive(raw, tmp_path / "ing", test_settings.ingest, bounds, pages=PAGES,
                   resampling=Resampling(200.0))
    manifest = read_manifest(tmp_path / "ing")[0]
    assert len(manifest) == len(page.layout.sections) * len(page.layout.tracks)
    for row in manifest.itertuples():
        # By hand: a strip's rows at 300 dpi read at 2/3 of their number, its columns at 400 dpi at 1/2.
        assert (row.net_height, row.net_width) == (round(row.height * 2 / 3), round(row.width / 2)), row.path
        # The 480-row main section reads 240 columns long (kept), the 240-row repeat 120 (below 150: not decoded).
        assert bool(row.decoded) == (row.width / 2 >= 150), row.path
        if row.decoded:
            assert read_header(tmp_path / "ing" / row.decoded).landscape_dpi == (300.0, 400.0)
    assert {row.width for row in manifest.itertuples()} == {480, 240}


def test_an_unchanged_page_is_not_read_again_and_an_edited_layout_is(tmp_path: Path, test_settings: Settings) -> None:
    page = render_page(5, 0, small_page_params(), test_settings.synthesize, load_wells(""))
    raw, out = tmp_path / "raw", tmp_path / "ing"
    write_page(raw, "well", page.image, page.layout, [])
    bounds = test_settings.validate_.model_copy(update={"width": LowerBound(min=200)})
    first = ingest_archive(raw, out, test_settings.ingest, bounds, pages=PAGES)
    rows = read_manifest(out)[0]
    again = ingest_archive(raw, out, test_settings.ingest, bounds, pages=PAGES)
    assert (first["read"], first["reused"]) == (1, 0) and (again["read"], again["reused"]) == (0, 1)
    pd.testing.assert_frame_equal(read_manifest(out)[0], rows)
    # The layout, not the page, changes: the page is cut again (same bytes, new mtime: read again, same rows).
    layout = raw / "well.tif.layout.json"
    layout.write_text(layout.read_text())
    edited = ingest_archive(raw, out, test_settings.ingest, bounds, pages=PAGES)
    assert (edited["read"], edited["reused"]) == (1, 0)
    pd.testing.assert_frame_equal(read_manifest(out)[0], rows)


def test_the_count_check_fails_when_a_page_loses_a_strip(tmp_path: Path) -> None:
    files = [tmp_path / "a.tif", tmp_path / "page.tif"]
    rows = pd.DataFrame({"path": ["a.tif", "page.tif#main/T1", "page.tif#main/T2"],
                         "page_file": ["", "page.tif", "page.tif"], "page_strips": [0, 2, 2]})
    _check_counts(tmp_path, files, {"page.tif"}, rows)  # 2 files in: one scan row, a page of 2 strips
    with pytest.raises(AssertionError, match="strip counts wrong"):
        _check_counts(tmp_path, files, {"page.tif"}, rows.iloc[:2])
    with pytest.raises(AssertionError, match="2 files in"):
        _check_counts(tmp_path, files, {"page.tif"}, rows.iloc[1:])
