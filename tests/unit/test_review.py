"""The review queue: ranking by hand-computed order, marks that survive reruns, clear refusals."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from tests.conftest import make_project
from veernet_pipeline.cli import main
from veernet_pipeline.config import Settings, load_settings
from veernet_pipeline.stages.review_queue import review_queue

NAN = float("nan")
# (scan, status, conf_median, conf_p10, null_share, low_conf_share, alike_curves, exchanged_curves)
WHOLE = [("e.tif", "written", NAN, NAN, NAN, NAN, 0, 0),  # no curve read: least confident of all
         ("a.tif", "written", 0.55, 0.20, 0.00, 0.10, 0, 0),
         ("b.tif", "skipped", 0.70, 0.20, 0.00, 0.30, 0, 0),
         ("c.tif", "written", 0.60, 0.10, 0.50, 0.00, 0, 0),
         ("d.tif", "written", 0.65, 0.20, 0.20, 0.30, 0, 0),
         ("f.tif", "failed", NAN, NAN, NAN, NAN, NAN, NAN),  # no LAS: not for review
         ("g.tif", "written", 0.95, 0.90, 0.00, 0.00, 2, 0),  # two curves drawn alike
         ("i.tif", "written", 0.97, 0.90, 0.00, 0.00, 0, 2)]  # two curves given their lines by dash length
TRANCHE = [("a.tif", "skipped", 0.55, 0.20, 0.00, 0.10, 0, 0),  # the same output as the whole archive's: once
           ("h.tif", "written", 0.70, 0.50, 0.00, 0.05, NAN, NAN)]  # a LAS from before the counts: not known
# By hand: G and I first (identities in doubt, however confident), G's conf_median 0.95 before I's 0.97; then by
# conf_median, NaN first: E, A (0.55), C (0.60), D (0.65), then B and H (0.70 both): B's conf_p10 0.2 before H's
# 0.5 (H's unknown counts rank as none). By conf_p10 first, as the queue ranked before, A (0.2) would come after C
# (0.1) and D.
EXPECTED = ["g.tif", "i.tif", "e.tif", "a.tif", "c.tif", "d.tif", "b.tif", "h.tif"]


def _sha(scan: str) -> str:
    return (scan[0] * 64).replace(".", "0")


def _index(rows: list[tuple], drop: tuple[str, ...] = ()) -> pd.DataFrame:
    frame = pd.DataFrame([{"path": f"t1/{scan}", "sha256": _sha(scan), "calibration_sha256": "",
                           "las": f"{_sha(scan)[:16]}/veernet-multiclass-v1-xabc/uncalibrated/{scan[0]}.las",
                           "qc": f"{_sha(scan)[:16]}/veernet-multiclass-v1-xabc/uncalibrated/{scan[0]}.qc.png",
                           "calibrated": False, "status": status, "reason": "", "attempts": 1,
                           "conf_median": med, "conf_p10": p10, "null_share": null, "low_conf_share": low,
                           "alike_curves": alike, "exchanged_curves": exchanged, "low_conf_threshold": 0.5}
                          for scan, status, med, p10, null, low, alike, exchanged in rows])
    return frame.drop(columns=list(drop))


@pytest.fixture
def project(tmp_path: Path) -> Settings:
    settings = load_settings(make_project(tmp_path / "project"), profile="test")
    settings.path("digitized").mkdir(parents=True)
    _index(WHOLE).to_parquet(settings.path("digitized") / "index.parquet")
    tranche = settings.path("tranches") / "t1" / "digitized"
    tranche.mkdir(parents=True)
    _index(TRANCHE).to_parquet(tranche / "index.parquet")
    return settings


def _queue(settings: Settings) -> pd.DataFrame:
    return pd.read_parquet(settings.path("review") / "queue.parquet")


def _review(settings: Settings, *args: str) -> int:
    return main(["--params", str(settings.root / "params.yaml"), "--profile", "test", "review", *args])


def test_queue_order_is_the_hand_computed_one(project: Settings) -> None:
    result = review_queue(project)
    queue = _queue(project)
    assert [Path(p).name for p in queue["path"]] == EXPECTED
    assert list(queue["rank"]) == list(range(1, 9))
    assert result.counts == {"queued": 8, "unreviewed": 8, "accepted": 0, "rejected": 0, "drawn_alike": 1,
                             "dash_exchanged": 1}
    markdown = (project.path("review") / "queue.md").read_text()
    assert markdown.index("`t1/g.tif`") < markdown.index("`t1/e.tif`") < markdown.index("`t1/c.tif`")
    # G's row shows its two curves drawn alike, I's its two given their lines by dash length; H's counts are not known.
    assert "/g.las` | 2 | 0 | 0.950 | 0.900 |" in markdown and "/i.las` | 0 | 2 | 0.970 | 0.900 |" in markdown
    assert "/h.las` | n/a | n/a | 0.700 | 0.500 |" in markdown
    assert "](../digitized/eeeeeeeeeeeeeeee/veernet-multiclass-v1-xabc/uncalibrated/e.qc.png)" in markdown


def test_marks_put_reviewed_scans_last_and_survive_reruns(project: Settings) -> None:
    review_queue(project)
    assert _review(project, "t1/c.tif", "--reject", "--note", "curve B swapped", "--by", "ana") == 0
    marks = project.path("review") / "marks.jsonl"
    first_line = marks.read_text()
    assert _review(project, _sha("d.tif")[:10], "--accept", "--by", "ben") == 0
    assert marks.read_text().startswith(first_line)  # appended, never rewritten
    records = [json.loads(line) for line in marks.read_text().splitlines()]
    assert [(r["sha256"], r["mark"], r["note"], r["by"]) for r in records] == [
        (_sha("c.tif"), "rejected", "curve B swapped", "ana"), (_sha("d.tif"), "accepted", "", "ben")]
    assert all(r["at"].endswith("+00:00") for r in records)

    expected = ["g.tif", "i.tif", "e.tif", "a.tif", "b.tif", "h.tif", "c.tif", "d.tif"]
    assert [Path(p).name for p in _queue(project)["path"]] != expected  # the queue on disk predates the marks
    review_queue(project)
    assert [Path(p).name for p in _queue(project)["path"]] == expected
    # infer runs again: every scan skipped, the index rewritten under the same outputs; then the queue again.
    rerun = _index([(s, "skipped", *figures) if st != "failed" else (s, st, *figures) for s, st, *figures in WHOLE])
    rerun.to_parquet(project.path("digitized") / "index.parquet")
    review_queue(project)
    queue = _queue(project)
    assert [Path(p).name for p in queue["path"]] == expected
    assert list(queue["mark"].iloc[-2:]) == ["rejected", "accepted"]
    assert list(queue["marked_by"].iloc[-2:]) == ["ana", "ben"]
    # A later mark of the same scan wins.
    assert _review(project, "t1/c.tif", "--accept", "--by", "ana") == 0
    review_queue(project)
    assert _queue(project).set_index("path").loc["t1/c.tif", "mark"] == "accepted"
    assert len(marks.read_text().splitlines()) == 3


def test_a_mark_on_a_scan_the_index_does_not_hold_is_refused(project: Settings) -> None:
    for scan in ("t1/zzz.tif", "t1/f.tif"):  # unknown; failed (no LAS to review)
        with pytest.raises(SystemExit, match="refused.*no digitised scan"):
            _review(project, scan, "--accept")
    assert not (project.path("review") / "marks.jsonl").exists()


def test_an_index_without_the_confidence_columns_fails_naming_them(project: Settings) -> None:
    tranche_index = project.path("tranches") / "t1" / "digitized" / "index.parquet"
    _index(TRANCHE, drop=("conf_p10", "low_conf_share")).to_parquet(tranche_index)
    with pytest.raises(ValueError, match=r"t1/digitized/index.parquet: index lacks the column\(s\) conf_p10, "
                                         "low_conf_share"):
        review_queue(project)


def test_no_index_at_all_says_to_run_infer(tmp_path: Path) -> None:
    settings = load_settings(make_project(tmp_path / "empty"), profile="test")
    with pytest.raises(FileNotFoundError, match="run `veernet infer`"):
        review_queue(settings)
