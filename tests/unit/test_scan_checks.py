"""The scan asset checks pass on the sample archive and fail on real damage done to its files.

The sample archive (`synthetic.sample`) holds, by its design, four valid scans (`sample_00_zlib.tif`
with a sidecar, ...) and two that validation quarantines (`broken_truncated.tif`,
`whole_page_portrait.tif`). Each failing case changes a copy of that project the way an archive or
a disk goes wrong, then runs the Dagster check itself.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import tifffile

from assets.checks import (
    quarantine_is_empty,
    scans_accounted_for,
    validated_scans_expectations,
    validated_scans_schema,
)
from tests.conftest import (
    SAMPLE_VALID,
    copy_project,
    ingest_and_validate,
    make_project,
    run_check,
    sample_scans_project,
)
from veernet_pipeline.config import Settings, load_settings
from veernet_pipeline.io.tiff import write_tiff
from veernet_pipeline.synthetic.sample import PAGE_NAME, TRUNCATED_NAME, build_sample_archive

FIRST = SAMPLE_VALID[0]


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    return sample_scans_project(tmp_path_factory.mktemp("sample") / "project")


def _validated(settings: Settings) -> pd.DataFrame:
    return pd.read_parquet(settings.path("validated") / "validated.parquet").set_index("path", drop=False)


def _rewrite(settings: Settings, name: str, change: Callable[[pd.DataFrame], pd.DataFrame]) -> None:
    path = settings.path("validated") / name
    change(pd.read_parquet(path)).to_parquet(path, index=False)


def _decoded(settings: Settings, scan: str) -> Path:
    return settings.path("ingested") / _validated(settings).at[scan, "decoded"]


def test_scan_checks_pass_on_the_sample(sample: Settings) -> None:
    passed, _, description, metadata = run_check(scans_accounted_for, sample)
    assert passed and metadata == {"archive": 6, "validated": 4, "quarantined": 2}
    assert description.startswith("6 scans in") and description.endswith("= 4 validated + 2 quarantined")
    passed, _, _, metadata = run_check(validated_scans_schema, sample)
    assert passed and metadata == {"rows": 4}
    passed, _, description, metadata = run_check(validated_scans_expectations, sample)
    assert passed and metadata == {"rows": 4, "failed": []}
    assert description == "3/3 content expectations met on 4 validated scans"


def _add_scan_after_ingest(settings: Settings) -> None:
    late = settings.path("raw") / "late" / "added_after_ingest.TIF"
    late.parent.mkdir()
    late.write_bytes((settings.path("raw") / FIRST).read_bytes())


def _duplicate_first_validated_row(settings: Settings) -> None:
    _rewrite(settings, "validated.parquet", lambda frame: pd.concat([frame, frame.iloc[:1]], ignore_index=True))


def _lose_a_quarantine_row(settings: Settings) -> None:
    _rewrite(settings, "quarantine.parquet", lambda frame: frame[frame["path"] != PAGE_NAME])


def _remove_a_raw_file(settings: Settings) -> None:
    (settings.path("raw") / TRUNCATED_NAME).unlink()


@pytest.mark.parametrize(("damage", "problem", "names"), [
    (_add_scan_after_ingest, "archive_files_in_neither_table", ["late/added_after_ingest.TIF"]),
    (_lose_a_quarantine_row, "archive_files_in_neither_table", [PAGE_NAME]),
    (_duplicate_first_validated_row, "rows_listed_twice", [FIRST]),
    (_remove_a_raw_file, "rows_whose_file_left_the_archive", [TRUNCATED_NAME]),
])
def test_scans_accounted_for_fails_when_archive_and_tables_disagree(
        sample: Settings, tmp_path: Path, damage: Callable[[Settings], None], problem: str, names: list[str]) -> None:
    project = copy_project(sample, tmp_path / "project")
    damage(project)
    passed, severity, description, metadata = run_check(scans_accounted_for, project)
    assert not passed and severity == "ERROR"
    assert metadata[problem] == names
    assert description.startswith(f"{problem.replace('_', ' ')}: 1; materialise raw_scans")


def _delete_decoded(settings: Settings) -> str:
    _decoded(settings, FIRST).unlink()
    return "cannot open the file"


def _truncate_decoded(settings: Settings) -> str:
    path = _decoded(settings, FIRST)
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    return "the copy is incomplete"


def _narrower_decoded(settings: Settings) -> str:
    row = _validated(settings).loc[FIRST]
    write_tiff(_decoded(settings, FIRST), np.full((row["height"], row["width"] - 32), 255, np.uint8))
    return f"decoded {row['height']} x {row['width'] - 32} px, row {row['height']} x {row['width']} px"


def _sixteen_bit_decoded(settings: Settings) -> str:
    path = _decoded(settings, FIRST)
    write_tiff(path, tifffile.imread(path).astype(np.uint16) * 257)
    return "uint16"


def _gray_alpha_decoded(settings: Settings) -> str:
    # One gray sample, or a colour print's three: two (gray and alpha) is neither.
    path = _decoded(settings, FIRST)
    gray = tifffile.imread(path)
    tifffile.imwrite(path, np.stack([gray, np.full_like(gray, 255)], axis=-1), photometric="minisblack",
                     extrasamples=[2], planarconfig="contig")
    return "2"


def _two_page_decoded(settings: Settings) -> str:
    path = _decoded(settings, FIRST)
    image = tifffile.imread(path)
    write_tiff(path, np.stack([image, image]))
    return "2"


def _portrait_row_and_decoded(settings: Settings) -> str:
    path = _decoded(settings, FIRST)
    write_tiff(path, np.ascontiguousarray(np.rot90(tifffile.imread(path))))
    row = _validated(settings).loc[FIRST]

    def swap(frame: pd.DataFrame) -> pd.DataFrame:
        first = frame["path"] == FIRST
        frame.loc[first, ["height", "width"]] = frame.loc[first, ["width", "height"]].to_numpy()
        return frame

    _rewrite(settings, "validated.parquet", swap)
    return f"decoded {row['width']} x {row['height']} px, row {row['width']} x {row['height']} px"


def _remove_sidecar(settings: Settings) -> str:
    (settings.path("raw") / f"{FIRST}.calib.json").unlink()
    return "False"


@pytest.mark.parametrize(("damage", "check"), [
    (_delete_decoded, "decoded_error: is_empty"),
    (_truncate_decoded, "decoded_error: is_empty"),
    (_narrower_decoded, "decoded_shape_equals_row"),
    (_sixteen_bit_decoded, "decoded_dtype: equal_to(uint8)"),
    (_gray_alpha_decoded, "decoded_samples: isin([1, 3])"),
    (_two_page_decoded, "decoded_pages: equal_to(1)"),
    (_portrait_row_and_decoded, "decoded_scan_landscape"),
    (_remove_sidecar, "calibration_found: equal_to(True)"),
])
def test_validated_scans_schema_fails_on_the_files_rows_point_at(
        sample: Settings, tmp_path: Path, damage: Callable[[Settings], str], check: str) -> None:
    project = copy_project(sample, tmp_path / "project")
    found = damage(project)
    passed, severity, description, metadata = run_check(validated_scans_schema, project)
    assert not passed and severity == "ERROR"
    assert metadata["by_check"] == {check: 1}
    [failure] = metadata["failures"]
    assert failure["path"] == FIRST and failure["check"] == check and found in failure["found"]
    assert description == f'1 of 4 validated scans fail: {{"{check}": 1}}'


def test_repeated_rows_fail_the_schema_and_the_expectations(sample: Settings, tmp_path: Path) -> None:
    project = copy_project(sample, tmp_path / "project")
    # A second row for the first scan's bytes under another path, as a hand-merged table would have.
    _rewrite(project, "validated.parquet",
             lambda frame: pd.concat([frame, frame.iloc[:1].assign(path="copy.tif")], ignore_index=True))
    passed, _, _, metadata = run_check(validated_scans_schema, project)
    assert not passed and metadata["by_check"] == {"sha256: field_uniqueness": 2}
    assert sorted(f["path"] for f in metadata["failures"]) == ["copy.tif", FIRST]
    passed, _, description, metadata = run_check(validated_scans_expectations, project)
    assert not passed and description.endswith(": sha256 repeated in 2")
    [failed] = metadata["failed"]
    assert failed["column"] == "sha256" and sorted(failed["unexpected_paths"]) == ["copy.tif", FIRST]


def test_validated_scans_expectations_fail_on_negative_blank_and_black_pages(tmp_path: Path) -> None:
    """Pages inside every layout bound, so validation accepts them, whose pixels are not a paper log."""
    settings = load_settings(make_project(tmp_path / "project"), profile="test")
    raw = settings.path("raw")
    build_sample_archive(raw, settings)
    tranche = raw / "tranche"
    tranche.mkdir()
    sample_image = tifffile.imread(raw / FIRST)
    # A MINISWHITE tag on minisblack values: decoding inverts the page into a negative.
    write_tiff(tranche / "negative_a.tif", sample_image, photometric="miniswhite")
    write_tiff(tranche / "negative_b.tif", np.ascontiguousarray(sample_image[:, ::-1]), photometric="miniswhite")
    write_tiff(tranche / "blank_a.tif", np.full((100, 400), 255, np.uint8))
    write_tiff(tranche / "blank_b.tif", np.full((110, 420), 250, np.uint8))
    write_tiff(tranche / "black.tif", np.zeros((100, 400), np.uint8))
    ingest_and_validate(settings)
    assert len(_validated(settings)) == 9  # every page fits the layout bounds
    negatives = ["tranche/negative_a.tif", "tranche/negative_b.tif"]
    blanks = ["tranche/blank_a.tif", "tranche/blank_b.tif"]

    passed, severity, description, metadata = run_check(validated_scans_expectations, settings)
    assert not passed and severity == "ERROR"
    by_column = {failed["column"]: failed for failed in metadata["failed"]}
    assert set(by_column) == {"paper_level", "ink_share"}
    # A negative's paper and a black page are 0; blank paper is 250-255 and has no ink at all.
    assert sorted(by_column["paper_level"]["unexpected_paths"]) == ["tranche/black.tif", *negatives]
    assert sorted(by_column["ink_share"]["unexpected_paths"]) == sorted([*blanks, "tranche/black.tif", *negatives])
    assert by_column["paper_level"]["bound"] == {"min_value": 150}
    assert description.startswith("1/3 content expectations met on 9 validated scans: paper_level")
    assert run_check(validated_scans_schema, settings)[0]  # the files themselves are sound


def test_quarantine_warns_with_counts_by_reason_and_passes_once_empty(sample: Settings, tmp_path: Path) -> None:
    passed, severity, description, metadata = run_check(quarantine_is_empty, sample)
    assert not passed and severity == "WARN" and description == "2 scans in quarantine"
    assert metadata == {"quarantined": 2, "by_reason": {"truncated": 1, "height_out_of_range": 1},
                        "files": [TRUNCATED_NAME, PAGE_NAME]}

    project = copy_project(sample, tmp_path / "project")
    for name in (TRUNCATED_NAME, PAGE_NAME):
        (project.path("raw") / name).unlink()
    ingest_and_validate(project)
    passed, _, description, metadata = run_check(quarantine_is_empty, project)
    assert passed and description == "0 scans in quarantine"
    assert metadata == {"quarantined": 0, "by_reason": {}, "files": []}
    assert run_check(scans_accounted_for, project)[0]
