"""The review_queue asset in a real Dagster materialisation: the queue table with inline QC thumbnails."""

from __future__ import annotations

import base64
import io

import numpy as np
from dagster import AssetKey, materialize
from PIL import Image

from assets.resources import PipelineResource
from assets.review import review_queue
from tests.unit.test_review import EXPECTED, project  # noqa: F401 - the fixture

__all__ = ["project"]


def test_review_queue_metadata_shows_the_ranked_table_with_thumbnails(project) -> None:  # noqa: F811
    digitized = project.path("digitized")
    qc = "eeeeeeeeeeeeeeee/veernet-multiclass-v1-xabc/uncalibrated/e.qc.png"
    (digitized / qc).parent.mkdir(parents=True)
    Image.fromarray(np.full((640, 6400, 3), 200, np.uint8)).save(digitized / qc)
    resource = PipelineResource(params_path=str(project.root / "params.yaml"), profile="test")
    result = materialize([review_queue], resources={"pipeline": resource})
    assert result.success
    event = result.asset_materializations_for_node("review_queue")[0]
    assert event.asset_key == AssetKey("review_queue")
    meta = {k: v.value for k, v in event.metadata.items()}
    assert meta["queued"] == 8 and meta["unreviewed"] == 8 and meta["drawn_alike"] == 1 and meta["dash_exchanged"] == 1
    table = meta["queue"]
    rows = [line for line in table.splitlines() if line.startswith("| ") and line[2].isdigit()]
    assert [row.split("`")[1].split("/")[-1] for row in rows] == EXPECTED
    # e.tif's QC picture exists: a thumbnail inline, at most 480 x 96; the others say theirs is missing.
    e_row = rows.pop(EXPECTED.index("e.tif"))
    encoded = e_row.split("data:image/png;base64,")[1].rstrip(") |")
    with Image.open(io.BytesIO(base64.b64decode(encoded))) as thumb:
        assert thumb.size == (480, 48)
    assert all("QC picture missing" in row for row in rows)
