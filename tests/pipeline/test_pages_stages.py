"""The ingest, validate and infer stages on a tranche of whole-log pages, with a registered model in a real store.

The values read are compared with the native curves in tests/unit/test_pages_archive.py (a per-pixel
net reads them exactly); here the model is an untrained VeerNet, so this checks the stages: ingest
cuts each page into its track strips (one manifest row each), validation passes them as scans and
quarantines the bad layout once for its page, infer reads the strips and assembles one LAS per well
and section with every track's curves on the section's depths, while the other page goes on.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tests.conftest import make_project
from tests.nets import untrained_veernet
from tests.pages import small_page_params
from veernet_pipeline.config import Range, load_settings
from veernet_pipeline.inference.pages_archive import PAGES_INDEX
from veernet_pipeline.io.classes import NUM_CLASSES
from veernet_pipeline.io.las import read_curves
from veernet_pipeline.model.veernet import save_model
from veernet_pipeline.pages.layout import TRANCHE_LAYOUT
from veernet_pipeline.stages.infer import infer
from veernet_pipeline.stages.ingest import ingest
from veernet_pipeline.stages.validate import validate
from veernet_pipeline.synthetic.curves import load_wells
from veernet_pipeline.synthetic.page import render_page
from veernet_pipeline.synthetic.page_truth import write_page
from veernet_pipeline.tracking import store


def test_the_stages_read_a_tranche_of_pages_to_one_las_per_well(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    settings = load_settings(make_project(tmp_path / "project"))
    # A 256-row repeat section: its strips are validate.width.min (the test profile's) long.
    page = render_page(11, 0, small_page_params(repeat_rows=Range(min=256, max=256)), settings.synthesize,
                       load_wells(""))
    tranche = settings.path("raw") / "tranche7"
    write_page(tranche, "wellA", page.image, page.layout, [])
    (tranche / "wellA.tif.layout.json").rename(tranche / TRANCHE_LAYOUT)
    write_page(tranche, "wellB", page.image, page.layout, [])
    bad = json.loads((tranche / "wellB.tif.layout.json").read_text())
    bad["sections"][1]["depth"]["unit"] = 7
    (tranche / "wellB.tif.layout.json").write_text(json.dumps(bad))

    ingested = ingest(settings).counts
    # Pages are counted as files: 2 in, wellA cut into 2 sections x 2 tracks, wellB one bad_layout row.
    assert {k: ingested[k] for k in ("files", "pages", "strips", "rows")} == {"files": 2, "pages": 2, "strips": 4,
                                                                            "rows": 5}, ingested
    validated = validate(settings).counts
    assert (validated["validated"], validated["quarantined"], validated["by_reason.bad_layout"],
            validated["by_reason.height_out_of_range"]) == (4, 1, 1, 0), validated
    model = tmp_path / "model"
    save_model(model, untrained_veernet(settings, NUM_CLASSES), settings.model, NUM_CLASSES)
    with store.stage_run(settings.root, "train_multiclass", {}, {"profile": "test"}):
        version = store.log_model(model, "veernet-multiclass")
    store.set_alias(settings.root, "veernet-multiclass", "champion", version)

    counts = infer(settings).counts
    assert (counts["pages"], counts["pages_written"], counts["pages_bad_layout"]) == (2, 1, 1), counts
    index = pd.read_parquet(settings.path("digitized") / PAGES_INDEX).set_index("path")
    assert "sections[1].depth.unit" in index.loc["tranche7/wellB.tif", "reason"]
    las = [settings.path("digitized") / p for p in index.loc["tranche7/wellA.tif", "las"].split(";")]
    assert [p.name for p in las] == ["wellA.las", "wellA.repeat.las"]
    for path, section in zip(las, page.layout.sections, strict=True):
        depth, curves, well = read_curves(path)
        np.testing.assert_allclose(depth, section.depth.depth_at(np.arange(section.top_row, section.bottom_row)))
        assert set(curves) == {m for t in page.layout.tracks for c in t.curves
                               for m in (c.mnemonic, f"{c.mnemonic}_CONF")}
        assert well["WELL"] == page.layout.well_items()["WELL"]
    # Nothing new: a second infer reads no page again.
    again = infer(settings).counts
    assert (again["pages_skipped"], again["pages_written"]) == (1, 0)
