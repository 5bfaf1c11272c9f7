"""Rendered whole-log pages: deterministic, curves only inside the tracks of the sections, truth where the ink is."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.pages import clean_strip_params, small_page_params
from veernet_pipeline.config import Artefact, FloatRange, Range, Settings
from veernet_pipeline.io.classes import style_class
from veernet_pipeline.io.las import read_curves
from veernet_pipeline.io.tiff import decode_scan, read_header
from veernet_pipeline.pages.cut import cut_page
from veernet_pipeline.pages.layout import read_layout
from veernet_pipeline.synthetic.curves import load_wells
from veernet_pipeline.synthetic.page import render_page
from veernet_pipeline.synthetic.page_truth import native_name, write_page

FIRST_CURVE = style_class("solid")  # mask classes below it are paper and other ink (io.classes)


@pytest.fixture(scope="module")
def wells() -> list:
    return load_wells("")


def test_the_same_seed_and_index_give_the_same_page(test_settings: Settings, wells: list) -> None:
    params = small_page_params()
    a, b = (render_page(3, 5, params, test_settings.synthesize, wells) for _ in range(2))
    np.testing.assert_array_equal(a.image, b.image)
    np.testing.assert_array_equal(a.mask, b.mask)
    assert a.layout == b.layout and a.label_rows == b.label_rows
    other = render_page(3, 6, params, test_settings.synthesize, wells)
    assert other.image.shape != a.image.shape or not np.array_equal(other.image, a.image)


def test_the_page_is_laid_out_top_to_bottom_as_printed(test_settings: Settings, wells: list) -> None:
    page = render_page(3, 1, small_page_params(), test_settings.synthesize, wells)
    layout = page.layout
    assert [s.kind for s in layout.skip] == ["header", "track_header", "banner", "track_header", "footer"]
    main, repeat = layout.sections
    assert (main.kind, repeat.kind) == ("main", "repeat")
    assert main.bottom_row - main.top_row == 480 and repeat.bottom_row - repeat.top_row == 240
    # The track headers sit right on their sections.
    assert layout.skip[1].bottom_row == main.top_row and layout.skip[3].bottom_row == repeat.top_row
    assert page.image.shape == (layout.page.height, layout.page.width)
    # The depth column touches a track on at least one side.
    edges = {t.left for t in layout.tracks} | {t.right for t in layout.tracks}
    assert layout.depth_column.left in edges or layout.depth_column.right in edges


def test_every_curve_pixel_lies_in_a_track_of_a_section_even_when_skewed(test_settings: Settings,
                                                                         wells: list) -> None:
    skewed = small_page_params(artefacts=small_page_params().artefacts.model_copy(
        update={"skew": Artefact(share=1.0, strength=FloatRange(min=0.8, max=0.8))}))
    page = render_page(3, 2, skewed, test_settings.synthesize, wells)
    assert page.layout.skew is not None and abs(page.layout.skew.angle_deg) == 0.8
    ys, xs = np.nonzero(page.mask)
    assert ys.size > 500
    inside = np.zeros(ys.size, dtype=bool)
    shift = page.layout.skew.shifts(ys)
    for section in page.layout.sections:
        for track in page.layout.tracks:
            inside |= ((ys >= section.top_row) & (ys < section.bottom_row)
                       & (xs >= track.left + shift) & (xs < track.right + shift))
    assert inside.all()
    # Rows far from the pivot really moved: the skew is in the pixels, not only in the layout.
    assert abs(page.layout.skew.shifts(np.array([page.layout.sections[0].top_row]))[0]) >= 3


def test_the_native_curves_are_where_the_ink_is(test_settings: Settings, wells: list) -> None:
    params = small_page_params(grid=False, curves=Range(min=1, max=1))
    page = render_page(3, 4, params, clean_strip_params(test_settings.synthesize), wells)
    truths = {(t.section, t.track): t for t in page.truth}
    for strip in cut_page(page.mask, page.layout, "stored"):
        truth = truths[(strip.section.name, strip.track.name)]
        height, width = strip.image.shape
        # Independently of the reader: the truth's value at each column's depth, drawn by the sidecar.
        values = np.interp(strip.calibration.column_depths(width), truth.depth, truth.values[0])
        drawn, _ = strip.calibration.value_to_drawn_row(values, height, 0)
        inked = (strip.image >= FIRST_CURVE).any(axis=0)
        assert inked.mean() > 0.95
        centre = (strip.image >= FIRST_CURVE).argmax(axis=0)  # a 1-px curve: its top pixel is its row
        flat = np.abs(np.diff(np.round(drawn), prepend=np.nan)) <= 1
        flat &= np.abs(np.diff(np.round(drawn), append=np.nan)) <= 1
        np.testing.assert_allclose(centre[inked & flat], drawn[inked & flat], atol=0.5 + 1e-9)


def test_write_page_puts_the_page_its_layout_and_native_las_on_disk(tmp_path: Path, test_settings: Settings,
                                                                    wells: list) -> None:
    bilevel = small_page_params(artefacts=small_page_params().artefacts.model_copy(
        update={"bilevel": Artefact(share=1.0, strength=FloatRange(min=140, max=140))}))
    page = render_page(3, 3, bilevel, test_settings.synthesize, wells)
    scan = write_page(tmp_path, "page3", page.image, page.layout, page.truth)
    header = read_header(scan)
    assert (header.bits, header.rotated) == (1, True)
    np.testing.assert_array_equal(np.rot90(decode_scan(scan), k=-1), page.image)
    assert read_layout(tmp_path / "page3.tif.layout.json") == page.layout
    truth = page.truth[0]
    depth, curves, _ = read_curves(tmp_path / native_name("page3", truth))
    np.testing.assert_allclose(depth, truth.depth, atol=1e-6)
    np.testing.assert_allclose(curves[truth.mnemonics[0]], truth.values[0], rtol=1e-5, atol=1e-6)
