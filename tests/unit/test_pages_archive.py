"""The infer stage's page path: a tranche of whole-log pages -> one LAS per well and section, bad layouts recorded."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from tests.nets import InkIsCurve
from tests.pages import check_against_native, clean_strip_params, small_page_params
from veernet_pipeline.config import Range, Settings
from veernet_pipeline.inference.pages_archive import BAD_LAYOUT, PAGES_INDEX, digitize_pages
from veernet_pipeline.io.ingest import scan_files
from veernet_pipeline.io.las import read_curves
from veernet_pipeline.pages.layout import TRANCHE_LAYOUT
from veernet_pipeline.synthetic.curves import load_wells
from veernet_pipeline.synthetic.page import SyntheticPage, render_page
from veernet_pipeline.synthetic.page_truth import native_name, write_page


@pytest.fixture(scope="module")
def page(test_settings: Settings) -> SyntheticPage:
    params = small_page_params(grid=False, curves=Range(min=1, max=1))
    return render_page(11, 0, params, clean_strip_params(test_settings.synthesize), load_wells(""))


def _tranche(root: Path, page: SyntheticPage) -> Path:
    """raw/tranche7: the page under two well names sharing one `tranche.layout.json`, a plain strip scan beside
    them that has no layout, and raw/broken: a page whose own layout lacks a track's right edge."""
    tranche = root / "raw" / "tranche7"
    for well in ("wellA", "wellB"):
        write_page(tranche, well, page.image, page.layout, page.truth)
        (tranche / f"{well}.tif.layout.json").unlink()
    (tranche / TRANCHE_LAYOUT).write_text(page.layout.model_dump_json(exclude_none=True))
    broken = json.loads(page.layout.model_dump_json(exclude_none=True))
    del broken["tracks"][1]["right"]
    write_page(root / "raw" / "broken", "wellC", page.image, page.layout, [])
    (root / "raw" / "broken" / "wellC.tif.layout.json").write_text(json.dumps(broken))
    return root / "raw"


def test_a_tranche_of_pages_becomes_one_las_per_well_with_the_native_curves(
        tmp_path: Path, page: SyntheticPage, test_settings: Settings) -> None:
    raw = _tranche(tmp_path, page)
    plain = raw / "strips" / "strip.tif"
    plain.parent.mkdir()
    plain.write_bytes((raw / "tranche7" / "wellA.tif").read_bytes())  # no layout beside it: not a page
    scans = scan_files(raw, test_settings.ingest.extensions)
    out = tmp_path / "digitized"
    reading = (test_settings.infer.tile_width, test_settings.infer.tile_overlap, test_settings.extract)
    counts = digitize_pages(raw, scans, InkIsCurve().eval(), "ink", out, *reading)
    assert counts == {"pages": 3, "pages_written": 2, "pages_skipped": 0, "pages_failed": 1, "pages_bad_layout": 1}
    index = pd.read_parquet(out / PAGES_INDEX)
    assert index["path"].tolist() == ["broken/wellC.tif", "tranche7/wellA.tif", "tranche7/wellB.tif"]
    bad = index.iloc[0]
    assert bad["reason_code"] == BAD_LAYOUT and "tracks[1].right" in bad["reason"] and "wellC" in bad["reason"]
    # The same bytes under two names: two wells, each with its own LAS files.
    for row in index.iloc[1:].itertuples():
        well = Path(row.path).stem
        las = sorted(out / p for p in row.las.split(";"))
        assert [p.name for p in las] == [f"{well}.las", f"{well}.repeat.las"]
        for path, section in zip(las, page.layout.sections, strict=True):
            depth, curves, _ = read_curves(path)
            assert len(depth) == section.bottom_row - section.top_row
            assert set(curves) == {m for t in page.layout.tracks for c in t.curves
                                   for m in (c.mnemonic, f"{c.mnemonic}_CONF")}
            for track in page.layout.tracks:
                truth = next(t for t in page.truth if (t.section, t.track) == (section.name, track.name))
                check_against_native(path, raw / "tranche7" / native_name("wellA", truth), track,
                                     track.right - track.left)
    # Run again: nothing is read twice; an edited layout is a new result, beside the old one.
    again = digitize_pages(raw, scans, InkIsCurve().eval(), "ink", out, *reading)
    assert (again["pages_skipped"], again["pages_written"], again["pages_bad_layout"]) == (2, 0, 1)
    own = json.loads(page.layout.model_dump_json(exclude_none=True))
    own["well"] = {"WELL": "B-2"}
    (raw / "tranche7" / "wellB.tif.layout.json").write_text(json.dumps(own))
    third = digitize_pages(raw, scans, InkIsCurve().eval(), "ink", out, *reading)
    assert (third["pages_skipped"], third["pages_written"]) == (1, 1)
    rows = pd.read_parquet(out / PAGES_INDEX).set_index("path")
    _, _, well = read_curves(out / rows.loc["tranche7/wellB.tif", "las"].split(";")[0])
    assert well["WELL"] == "B-2"
