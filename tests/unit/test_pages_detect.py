"""`veernet layout`: the layout detector on rendered pages against their exact layout, and pages that are not logs."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image, ImageDraw

from tests.pages import detectable_page_params
from veernet_pipeline.cli import main
from veernet_pipeline.commands import layout as layout_command
from veernet_pipeline.config import Settings
from veernet_pipeline.io.tiff import write_tiff
from veernet_pipeline.pages.detect import detect_layout
from veernet_pipeline.pages.layout import LayoutError, parse_layout
from veernet_pipeline.synthetic.curves import load_wells
from veernet_pipeline.synthetic.page import SyntheticPage, render_page
from veernet_pipeline.synthetic.page_truth import write_page

TOLERANCE_PX = 3


def _true_tracks(page: SyntheticPage) -> list[tuple[int, int]]:
    return [(t.left, t.right) for t in page.layout.tracks]


def _within(found: list[tuple[int, int]], truth: list[tuple[int, int]], px: int = TOLERANCE_PX) -> bool:
    return len(found) == len(truth) and all(abs(a - c) <= px and abs(b - d) <= px
                                            for (a, b), (c, d) in zip(found, truth, strict=True))


@pytest.fixture(scope="module")
def pages(test_settings: Settings) -> dict[str, SyntheticPage]:
    """Two rendered pages: gray with uneven lighting and the depth column right of the tracks; bilevel, skewed
    0.4 degrees, the depth column between the tracks. (The benchmark measures the share of pages read right.)"""
    wells = load_wells("")
    picked = {"gray": 1, "bilevel_skewed": 5}
    return {name: render_page(10, index, detectable_page_params(), test_settings.synthesize, wells)
            for name, index in picked.items()}


@pytest.mark.parametrize("name", ["gray", "bilevel_skewed"])
def test_detected_tracks_lie_within_3_px_of_the_rendered_truth(pages: dict[str, SyntheticPage], name: str) -> None:
    page = pages[name]
    assert (page.layout.skew is not None) == (name == "bilevel_skewed")
    found = detect_layout(page.image)
    assert _within(found.tracks, _true_tracks(page)), (found.tracks, _true_tracks(page))
    true_depth = (page.layout.depth_column.left, page.layout.depth_column.right)
    assert found.depth_column is not None and max(abs(a - b) for a, b in zip(found.depth_column, true_depth,
                                                                              strict=True)) <= TOLERANCE_PX
    assert len(found.sections) == len(page.layout.sections)
    for band, section in zip(found.sections, page.layout.sections, strict=True):
        assert abs(band.top - section.top_row) <= 20 and abs(band.bottom - section.bottom_row) <= 20
    if page.layout.skew is not None:
        assert abs(found.skew_deg - page.layout.skew.angle_deg) <= 0.05
    assert found.notes == []


def test_the_bounds_come_from_the_pixels(pages: dict[str, SyntheticPage]) -> None:
    """The same page moved 9 px right: the bounds found move with it, and miss the unmoved truth."""
    page = pages["gray"]
    moved = np.pad(page.image, ((0, 0), (9, 0)), constant_values=int(np.percentile(page.image, 99)))
    truth = _true_tracks(page)
    found = detect_layout(moved).tracks
    assert _within(found, [(a + 9, b + 9) for a, b in truth])
    assert not _within(found, truth)


def _text_page() -> np.ndarray:
    """A letter of typed text: no rules, no grid, no curves. Shape: (1800, 1300) uint8."""
    picture = Image.new("L", (1300, 1800), 255)
    draw = ImageDraw.Draw(picture)
    rng = np.random.default_rng(4)
    for line in range(60):
        words = " ".join("".join(chr(97 + c) for c in rng.integers(0, 26, rng.integers(2, 9))) for _ in range(14))
        draw.text((80, 80 + 27 * line), words, fill=0)
    return np.asarray(picture)


@pytest.mark.parametrize("page", [_text_page(), np.full((1500, 1000), 255, dtype=np.uint8)], ids=["text", "blank"])
def test_a_page_that_is_not_a_log_gets_no_tracks_and_says_so(page: np.ndarray) -> None:
    found = detect_layout(page)
    assert found.tracks == [] and found.sections == []
    assert any("no tracks found" in note for note in found.notes)
    with pytest.raises(LayoutError, match="draft: "):
        parse_layout(found.draft(), "draft")


def test_veernet_layout_writes_a_draft_and_a_picture_and_reports_what_it_cannot_read(
        tmp_path: Path, pages: dict[str, SyntheticPage], test_settings: Settings) -> None:
    page = pages["bilevel_skewed"]
    scan = write_page(tmp_path / "archive", "well5", page.image, page.layout, [])
    text = tmp_path / "archive" / "letter.tif"
    write_tiff(text, _text_page(), compression="zlib")
    broken = tmp_path / "archive" / "broken.tif"
    broken.write_bytes(b"II*\x00 not really a tiff")
    out = tmp_path / "drafts"
    params = ["--params", str(test_settings.root / "params.yaml"), "--profile", "test"]
    assert main([*params, "layout", str(scan), "--out", str(out)]) == 0
    report = layout_command.run(argparse.Namespace(scans=[text, broken], out=out))
    assert report["counts"] == {"proposed": 1, "kept": 0, "failed": 1}
    assert "broken.tif" in report["pages"][1]["scan"] and report["pages"][1]["reason"]
    draft = json.loads((out / "well5.tif.layout.json").read_text())
    assert _within([(t["left"], t["right"]) for t in draft["tracks"]], _true_tracks(page))
    assert draft["skew"]["angle_deg"] == pytest.approx(page.layout.skew.angle_deg, abs=0.05)
    # The depth values and curve names need a person: the draft is refused, naming a field to fill in. So does the
    # legend's style, which tells a track's curves apart.
    with pytest.raises(LayoutError, match=r"tracks\[0\]\.curves\[0\]\.mnemonic|null"):
        parse_layout(draft, "draft")
    with pytest.raises(LayoutError, match=r"tracks\[0\]\.curves\[0\]\.style"):
        parse_layout(draft, "draft")
    with Image.open(out / "well5.tif.layout.png") as picture:
        assert picture.mode == "RGB" and picture.size[0] >= page.image.shape[1] // 2
    letter = json.loads((out / "letter.tif.layout.json").read_text())
    assert letter["tracks"] == [] and any("no tracks found" in n for n in letter["notes"])
    assert not (tmp_path / "archive" / "drafts").exists()  # the archive folder is not written to
    # A second run keeps a draft an operator may be editing; the broken file is reported, not raised.
    (out / "well5.tif.layout.json").write_text('{"edited": true}')
    assert layout_command.propose(scan, out)["status"] == "kept"
    assert json.loads((out / "well5.tif.layout.json").read_text()) == {"edited": True}
