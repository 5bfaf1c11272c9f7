"""The page path through ingest, validation and inference: a tranche of whole-log pages -> one LAS per well and
section, the native curves read back; bad layouts and quarantined strips recorded, never silently read."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from tests.nets import InkIsCurve
from tests.pages import check_against_native, clean_strip_params, small_page_params
from veernet_pipeline.config import LowerBound, Range, Settings
from veernet_pipeline.inference.archive import digitize_validated
from veernet_pipeline.inference.pages_archive import BAD_LAYOUT, PAGES_INDEX, assemble_pages
from veernet_pipeline.io.ingest import ingest_archive
from veernet_pipeline.io.las import read_curves
from veernet_pipeline.pages.layout import TRANCHE_LAYOUT
from veernet_pipeline.stages.ingest import PAGES
from veernet_pipeline.synthetic.curves import load_wells
from veernet_pipeline.synthetic.page import SyntheticPage, render_page
from veernet_pipeline.synthetic.page_truth import native_name, write_page
from veernet_pipeline.validation.validate import validate_manifest


@pytest.fixture(scope="module")
def page(test_settings: Settings) -> SyntheticPage:
    params = small_page_params(grid=False, curves=Range(min=1, max=1))
    return render_page(11, 0, params, clean_strip_params(test_settings.synthesize), load_wells(""))


def _tranche(root: Path, page: SyntheticPage) -> Path:
    """raw/tranche7: the page under two well names sharing one `tranche.layout.json`, a plain strip scan beside
    them that has no layout, raw/broken: a page whose own layout lacks a track's right edge, and raw/short: a
    page whose own layout cuts its repeat section 150 rows long, shorter than `BOUNDS`' width.min."""
    tranche = root / "raw" / "tranche7"
    for well in ("wellA", "wellB"):
        write_page(tranche, well, page.image, page.layout, page.truth)
        (tranche / f"{well}.tif.layout.json").unlink()
    (tranche / TRANCHE_LAYOUT).write_text(page.layout.model_dump_json(exclude_none=True))
    broken = json.loads(page.layout.model_dump_json(exclude_none=True))
    del broken["tracks"][1]["right"]
    write_page(root / "raw" / "broken", "wellC", page.image, page.layout, [])
    (root / "raw" / "broken" / "wellC.tif.layout.json").write_text(json.dumps(broken))
    short = json.loads(page.layout.model_dump_json(exclude_none=True))
    short["sections"][1]["bottom_row"] = short["sections"][1]["top_row"] + 150
    write_page(root / "raw" / "short", "wellS", page.image, page.layout, [])
    (root / "raw" / "short" / "wellS.tif.layout.json").write_text(json.dumps(short))
    return root / "raw"


def _run(root: Path, settings: Settings, label: str = "ink") -> dict[str, int]:
    """Ingest (pages cut), validate, read every validated strip with `InkIsCurve`, assemble the pages."""
    raw, out = root / "raw", root / "digitized"
    # The small pages' repeat section is 240 rows: strips that long pass, the short page's 150 do not.
    bounds = settings.validate_.model_copy(update={"width": LowerBound(min=200)})
    ingest_archive(raw, root / "ingested", settings.ingest, bounds, pages=PAGES)
    validate_manifest(root / "ingested", root / "validated", bounds)
    digitize_validated(root / "validated", root / "ingested", raw, root / "no-model", label, out, settings.infer,
                       settings.extract, loaded=InkIsCurve().eval())
    return assemble_pages(root / "validated", root / "ingested", raw, label, out)


def test_a_tranche_of_pages_becomes_one_las_per_well_with_the_native_curves(
        tmp_path: Path, page: SyntheticPage, test_settings: Settings) -> None:
    raw = _tranche(tmp_path, page)
    plain = raw / "strips" / "strip.tif"
    plain.parent.mkdir()
    plain.write_bytes((raw / "tranche7" / "wellA.tif").read_bytes())  # no layout beside it: not a page
    counts = _run(tmp_path, test_settings)
    assert counts == {"pages": 4, "pages_written": 2, "pages_skipped": 0, "pages_failed": 2, "pages_bad_layout": 1}
    # Count in = count out: 5 files, 4 of them pages; 3 pages of 2 sections x 2 tracks, one page with a bad layout.
    manifest = pd.read_parquet(tmp_path / "ingested" / "manifest.parquet")
    assert len(manifest) == 1 + 1 + 3 * 4
    assert manifest.groupby("page_file")["page_strips"].agg(["size", "max"]).to_dict("index") == {
        "": {"size": 1, "max": 0}, "broken/wellC.tif": {"size": 1, "max": 0},
        **{p: {"size": 4, "max": 4} for p in ("short/wellS.tif", "tranche7/wellA.tif", "tranche7/wellB.tif")}}
    quarantine = pd.read_parquet(tmp_path / "validated" / "quarantine.parquet").set_index("path")["reason_code"]
    assert quarantine.to_dict() == {"broken/wellC.tif": BAD_LAYOUT, "short/wellS.tif#repeat/T1": "width_out_of_range",
                                    "short/wellS.tif#repeat/T2": "width_out_of_range",
                                    "strips/strip.tif": "height_out_of_range"}  # a page without a layout: one scan
    out = tmp_path / "digitized"
    index = pd.read_parquet(out / PAGES_INDEX)
    assert index["path"].tolist() == ["broken/wellC.tif", "short/wellS.tif", "tranche7/wellA.tif",
                                      "tranche7/wellB.tif"]
    bad, short = index.iloc[0], index.iloc[1]
    assert bad["reason_code"] == BAD_LAYOUT and "tracks[1].right" in bad["reason"] and "wellC" in bad["reason"]
    # One quarantined strip fails its page whole, naming every such strip: no LAS misses a track silently.
    assert (short["status"], short["reason_code"], short["las"]) == ("failed", "width_out_of_range", "")
    assert "short/wellS.tif#repeat/T1" in short["reason"] and "short/wellS.tif#repeat/T2" in short["reason"]
    # The same bytes under two names: two wells, each with its own LAS files.
    for row in index.iloc[2:].itertuples():
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
    again = _run(tmp_path, test_settings)
    assert (again["pages_skipped"], again["pages_written"], again["pages_bad_layout"]) == (2, 0, 1)
    own = json.loads(page.layout.model_dump_json(exclude_none=True))
    own["well"] = {"WELL": "B-2"}
    (raw / "tranche7" / "wellB.tif.layout.json").write_text(json.dumps(own))
    third = _run(tmp_path, test_settings)
    assert (third["pages_skipped"], third["pages_written"]) == (1, 1)
    rows = pd.read_parquet(out / PAGES_INDEX).set_index("path")
    _, _, well = read_curves(out / rows.loc["tranche7/wellB.tif", "las"].split(";")[0])
    assert well["WELL"] == "B-2"
