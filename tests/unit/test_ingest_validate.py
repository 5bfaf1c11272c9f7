"""Ingest a real archive of good and broken scans, then validate it: pandera, GX and quarantine."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pandera.pandas as pa
import pytest
import tifffile

from benchmarks.hostile import hostile_corpus
from veernet_pipeline.config import IngestParams, Settings, ValidateParams, load_settings
from veernet_pipeline.io import tiff
from veernet_pipeline.io.calibration import Calibration
from veernet_pipeline.io.ingest import MANIFEST_COLUMNS, image_statistics, ingest_archive, read_manifest
from veernet_pipeline.io.manifest import STATE_FILE
from veernet_pipeline.io.resolution import Resampling
from veernet_pipeline.io.tiff import write_tiff
from veernet_pipeline.validation.expectations import run_expectations
from veernet_pipeline.validation.quarantine import QUARANTINE_COLUMNS, ReasonCode
from veernet_pipeline.validation.schema import manifest_schema
from veernet_pipeline.validation.validate import validate_manifest

CALIBRATION = {
    "depth": {"top": 1000.0, "bottom": 1250.0, "unit": "FT"},
    "curves": [{"mnemonic": "GR", "unit": "GAPI", "top_value": 0.0, "bottom_value": 150.0, "scale": "linear"}],
    "well": {"WELL": "TEST 1"},
}
# File -> the quarantine reason it must get ("" = validated). Bounds of the test profile:
# width from 256, height 96-256, bits 1/2/4/8/12/16/32/64, one page; 250,000,000 px at most.
EXPECTED = {
    "good_zlib.tif": "",
    "tranche/portrait_lzw.TIFF": "",
    "tranche/bilevel_packbits.tif": "",
    "deep_zstd.tif": "",
    "rgb.tif": "",
    "float.tif": "",
    "good_zlib_copy.tif": ReasonCode.DUPLICATE,
    "narrow.tif": ReasonCode.WIDTH_OUT_OF_RANGE,
    "short.tif": ReasonCode.HEIGHT_OUT_OF_RANGE,
    "ten_bit.tif": ReasonCode.BITS_UNSUPPORTED,
    "two_pages.tif": ReasonCode.TOO_MANY_PAGES,
    "bad_sidecar.tif": ReasonCode.BAD_CALIBRATION,
    "broken_truncated.tif": ReasonCode.TRUNCATED,
    "not_a_scan.TIF": ReasonCode.UNREADABLE,
    "lab.tif": ReasonCode.UNSUPPORTED,
    "crafted_bomb_g4.tif": ReasonCode.TOO_LARGE,
}
# Within the bounds but never decoded: their headers decided (ingest reads them, validation rejects them).
DECLINED = ("narrow.tif", "short.tif", "ten_bit.tif", "two_pages.tif")


@pytest.fixture(scope="module")
def settings() -> Settings:
    return load_settings(Path(__file__).parents[2] / "params.yaml", profile="test")


@pytest.fixture(scope="module")
def params(settings: Settings) -> ValidateParams:
    return settings.validate_


@pytest.fixture(scope="module")
def ingest(settings: Settings) -> IngestParams:
    return settings.ingest


def _scan(height: int, width: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng([seed, height, width])
    image = np.full((height, width), 255, dtype=np.uint8)
    rows = np.clip(np.cumsum(rng.integers(-1, 2, width)) + height // 2, 0, height - 1)
    image[rows, np.arange(width)] = 0
    return image


def _build_archive(raw: Path) -> None:
    (raw / "tranche").mkdir(parents=True)
    good = _scan(100, 400, 1)
    write_tiff(raw / "good_zlib.tif", good, compression="zlib")
    Calibration.from_dict(CALIBRATION).write(raw / "good_zlib.tif.calib.json")
    shutil.copy(raw / "good_zlib.tif", raw / "good_zlib_copy.tif")
    # Stored portrait (depth down the rows): ingest must rotate it to 500 x 110.
    write_tiff(raw / "tranche" / "portrait_lzw.TIFF", np.rot90(_scan(110, 500, 2), k=-1), compression="lzw")
    write_tiff(raw / "tranche" / "bilevel_packbits.tif", _scan(96, 320, 3) == 0, compression="packbits",
               photometric="miniswhite")
    Calibration.from_dict(CALIBRATION).write(raw / "tranche" / "tranche.calib.json")
    write_tiff(raw / "deep_zstd.tif", _scan(128, 640, 4).astype(np.uint16) * 257, compression="zstd")
    write_tiff(raw / "rgb.tif", np.stack([_scan(100, 350, 5)] * 3, axis=-1), photometric="rgb")
    write_tiff(raw / "narrow.tif", _scan(100, 200, 6))
    write_tiff(raw / "short.tif", _scan(40, 400, 7))
    tifffile.imwrite(raw / "ten_bit.tif", _scan(100, 400, 8).astype(np.uint16) * 4, bitspersample=10)
    write_tiff(raw / "two_pages.tif", np.stack([_scan(100, 400, 9), _scan(100, 400, 10)]))
    write_tiff(raw / "bad_sidecar.tif", _scan(100, 400, 11))
    (raw / "bad_sidecar.tif.calib.json").write_text('{"depth": {"top": 5, "bottom": 5}, "curves": []}')
    write_tiff(raw / "whole.tif", _scan(100, 400, 12), compression="none")
    data = (raw / "whole.tif").read_bytes()
    (raw / "whole.tif").unlink()
    (raw / "broken_truncated.tif").write_bytes(data[: len(data) // 3])
    (raw / "not_a_scan.TIF").write_text("scanned by hand, saved as text\n")
    write_tiff(raw / "float.tif", _scan(100, 400, 13).astype(np.float32) / 255)
    tifffile.imwrite(raw / "lab.tif", np.stack([_scan(100, 400, 14)] * 3, axis=-1), photometric="cielab")
    # A header promising 100,000 x 100,000 px in a few hundred bytes: one crafted kind of the hostile corpus.
    corpus = raw.parent / "corpus"
    hostile_corpus(corpus, seed=0, n_fuzz=0)
    shutil.copy(corpus / "crafted_bomb_g4.tif", raw / "crafted_bomb_g4.tif")
    (raw / "notes.txt").write_text("not matched by the extensions")


@pytest.fixture(scope="module")
def archive(tmp_path_factory: pytest.TempPathFactory, params: ValidateParams, ingest: IngestParams) -> dict:
    root = tmp_path_factory.mktemp("archive")
    raw, ingested, validated = root / "raw", root / "ingested", root / "validated"
    _build_archive(raw)
    ingest_counts = ingest_archive(raw, ingested, ingest, params)
    counts = validate_manifest(ingested, validated, params)
    return {"root": root, "raw": raw, "ingested": ingested, "validated": validated,
            "ingest_counts": ingest_counts, "counts": counts}


def test_ingest_manifest_rows_and_errors(archive: dict) -> None:
    manifest, raw_dir = read_manifest(archive["ingested"])
    assert raw_dir == archive["raw"].resolve()
    assert tuple(manifest.columns) == MANIFEST_COLUMNS
    assert manifest["path"].tolist() == sorted(EXPECTED)
    assert archive["ingest_counts"] == {"files": 16, "pages": 0, "strips": 0, "rows": 16, "decoded": 8,
                                       "resampled": 0, "errors": 4, "read": 16, "reused": 0}
    by_path = manifest.set_index("path")
    errors = by_path.loc[by_path["error_code"] != "", "error_code"].to_dict()
    assert errors == {"broken_truncated.tif": "truncated", "lab.tif": "unsupported", "not_a_scan.TIF": "unreadable",
                      "crafted_bomb_g4.tif": "too_large"}
    # The header decided: read, sized, not decoded.
    for name in DECLINED:
        assert by_path.loc[name, "decoded"] == "" and by_path.loc[name, "width"] > 0, name
    assert by_path.loc["ten_bit.tif", "bits"] == 10 and by_path.loc["two_pages.tif", "pages"] == 2
    for name, row in by_path[by_path["error_code"] != ""].iterrows():
        assert row["error_message"].startswith(f"{name}: ")
        assert row["decoded"] == ""
    portrait = by_path.loc["tranche/portrait_lzw.TIFF"]
    assert (portrait["stored_width"], portrait["stored_height"]) == (110, 500)
    assert (portrait["width"], portrait["height"], portrait["rotated"]) == (500, 110, True)
    assert portrait["calibration"] == "tranche/tranche.calib.json"
    assert by_path.loc["good_zlib.tif", "calibration"] == "good_zlib.tif.calib.json"
    assert by_path.loc["narrow.tif", "calibration"] == ""
    assert by_path.loc["deep_zstd.tif", "bits"] == 16 and by_path.loc["deep_zstd.tif", "compression"] == "zstd"
    assert by_path.loc["tranche/bilevel_packbits.tif", "photometric"] == "miniswhite"
    assert by_path.loc["good_zlib.tif", "decoded"] == by_path.loc["good_zlib_copy.tif", "decoded"]


def test_decoded_scans_are_landscape_uint8(archive: dict) -> None:
    manifest, _ = read_manifest(archive["ingested"])
    decoded = manifest[manifest["decoded"] != ""]
    assert len(set(decoded["decoded"])) == 7  # the copy shares its original's decoded file
    for row in decoded.itertuples():
        image = tiff.decode_scan(archive["ingested"] / row.decoded)
        assert image.shape == (row.height, row.width)
        assert row.decoded == f"scans/{row.sha256[:16]}.tif"
    bilevel = manifest.set_index("path").loc["tranche/bilevel_packbits.tif"]
    image = tiff.decode_scan(archive["ingested"] / bilevel["decoded"])
    np.testing.assert_array_equal(image, _scan(96, 320, 3))


def test_image_statistics_by_hand() -> None:
    # 8 x 8 paper at 200 with a black first row: the 4th-row-and-column sample (rows 0 and 4, columns
    # 0 and 4) holds two 0s and two 200s, median 100; 8 of 64 pixels are ink.
    image = np.full((8, 8), 200, np.uint8)
    image[0] = 0
    assert image_statistics(image) == {"paper_level": 100.0, "ink_share": 0.125}
    image[0] = 127  # still darker than mid-gray
    assert image_statistics(image)["ink_share"] == 0.125
    image[0] = 128
    assert image_statistics(image) == {"paper_level": 164.0, "ink_share": 0.0}
    with pytest.raises(ValueError, match="uint8"):
        image_statistics(image.astype(np.uint16))


def test_ingest_records_pixel_statistics_of_decoded_scans(archive: dict, tmp_path: Path, ingest: IngestParams,
                                                          params: ValidateParams) -> None:
    manifest, _ = read_manifest(archive["ingested"])
    for row in manifest.itertuples():
        if not row.decoded:
            assert (row.paper_level, row.ink_share) == (0.0, 0.0), row.path
            continue
        image = tifffile.imread(archive["ingested"] / row.decoded)
        assert row.paper_level == np.median(image[::4, ::4]), row.path
        assert row.ink_share == np.mean(image < 128), row.path
    # _scan draws one ink pixel per column on white paper: ink share 1 / height.
    good = manifest.set_index("path").loc["good_zlib.tif"]
    assert (good["paper_level"], good["ink_share"]) == (255.0, 1 / 100)
    # Without ingest's memory of the files (files.parquet), every file is read again, to the same manifest.
    shutil.copytree(archive["ingested"], tmp_path / "ingested")
    (tmp_path / "ingested" / STATE_FILE).unlink()
    assert ingest_archive(archive["raw"], tmp_path / "ingested", ingest, params)["read"] == len(EXPECTED)
    again, _ = read_manifest(tmp_path / "ingested")
    pd.testing.assert_frame_equal(again, manifest)


def test_ingest_is_idempotent(archive: dict, ingest: IngestParams, params: ValidateParams) -> None:
    scans = archive["ingested"] / "scans"
    stamps = {p.name: p.stat().st_mtime_ns for p in scans.iterdir()}
    before = pd.read_parquet(archive["ingested"] / "manifest.parquet")
    again = ingest_archive(archive["raw"], archive["ingested"], ingest, params)
    assert again == {**archive["ingest_counts"], "read": 0, "reused": len(EXPECTED)}
    assert {p.name: p.stat().st_mtime_ns for p in scans.iterdir()} == stamps
    pd.testing.assert_frame_equal(pd.read_parquet(archive["ingested"] / "manifest.parquet"), before)


def test_validation_counts_and_reasons(archive: dict) -> None:
    counts = archive["counts"]
    assert counts["files"] == len(EXPECTED) == counts["validated"] + counts["quarantined"]
    assert counts["validated"] == 6
    validated = pd.read_parquet(archive["validated"] / "validated.parquet")
    quarantine = pd.read_parquet(archive["validated"] / "quarantine.parquet")
    assert tuple(validated.columns) == MANIFEST_COLUMNS
    assert tuple(quarantine.columns) == QUARANTINE_COLUMNS
    assert sorted(validated["path"]) == sorted(k for k, v in EXPECTED.items() if not v)
    assert quarantine.set_index("path")["reason_code"].to_dict() == {k: str(v) for k, v in EXPECTED.items() if v}
    for code in ReasonCode:
        assert counts["by_reason"][str(code)] == sum(v == code for v in EXPECTED.values()), code
    reason = quarantine.set_index("path")["reason"]
    assert reason["narrow.tif"].startswith("narrow.tif: width 200 px is below 256")
    assert reason["short.tif"].startswith("short.tif: height 40 px is outside 96-256")
    assert reason["ten_bit.tif"].startswith("ten_bit.tif: bits 10 is not one of 1, 2, 4, 8, 12, 16, 32, 64")
    assert "100,000 x 100,000 px" in reason["crafted_bomb_g4.tif"]
    assert reason["two_pages.tif"].startswith("two_pages.tif: pages 2 is outside 1-1")
    assert reason["bad_sidecar.tif"].startswith(
        "bad_sidecar.tif: sidecar bad_sidecar.tif.calib.json is unusable (depth: top and bottom are both 5.0; "
        "give the depths of the image's two edges; curves: empty; list at least one curve)")
    assert not any(str(archive["root"]) in text for text in reason)  # outputs do not depend on the machine
    assert "good_zlib.tif, which is kept" in reason["good_zlib_copy.tif"]
    assert reason["broken_truncated.tif"].startswith("broken_truncated.tif: file is")


def test_report_holds_counts_and_gx_result_matching_pandera(archive: dict, params: ValidateParams) -> None:
    report = json.loads((archive["validated"] / "report.json").read_text())
    assert report["files"] == report["validated"] + report["quarantined"]
    gx = report["great_expectations"]
    assert gx["success"] is False and gx["rows"] == 12  # the scans whose headers ingest could read
    by_column = {e["column"]: e for e in gx["expectations"]}
    assert params.width.max is None  # inference reads any length: no upper bound
    assert by_column["net_width"]["bound"] == {"min_value": params.width.min}
    assert by_column["net_height"]["bound"] == {"min_value": params.height.min, "max_value": params.height.max}
    assert by_column["bits"]["bound"] == {"value_set": params.bits}
    assert by_column["pages"]["bound"] == {"min_value": 1, "max_value": params.max_pages}
    quarantine = pd.read_parquet(archive["validated"] / "quarantine.parquet")
    for column, entry in by_column.items():
        flagged = sorted(quarantine.loc[quarantine["reason_code"] == entry["reason_code"], "path"])
        assert entry["unexpected_paths"] == flagged, column
        assert entry["unexpected_count"] == len(flagged)


def test_validation_writes_great_expectations_data_docs(archive: dict) -> None:
    docs = archive["validated"] / "data_docs"
    report = json.loads((archive["validated"] / "report.json").read_text())
    assert report["great_expectations"]["data_docs"] == "data_docs/index.html"
    index = (docs / "index.html").read_text()
    assert "veernet_scan_layout" in index
    pages = sorted((docs / "validations" / "veernet_scan_layout").rglob("*.html"))
    assert len(pages) == 1  # one validation run so far, rendered with the bound each scan missed
    page = pages[0].read_text()
    assert "expect_column_values_to_be_between" in page.replace("-", "_") or "values must be" in page
    assert "height" in page and "pages" in page
    # The GX project stays inside the validated folder; nothing is written beside it.
    assert sorted(p.name for p in archive["validated"].iterdir()) == [
        "data_docs", "gx", "quarantine.parquet", "report.json", "validated.parquet"]


def test_run_expectations_on_an_accepted_frame(archive: dict, params: ValidateParams) -> None:
    validated = pd.read_parquet(archive["validated"] / "validated.parquet")
    result = run_expectations(validated, params)
    json.dumps(result)
    assert result["success"] is True
    assert all(e["unexpected_count"] == 0 for e in result["expectations"])
    assert result["statistics"]["evaluated_expectations"] == 4
    empty = run_expectations(validated.iloc[:0], params)
    assert empty["success"] is True and empty["rows"] == 0


def test_schema_uses_the_same_bounds(archive: dict, params: ValidateParams) -> None:
    validated = pd.read_parquet(archive["validated"] / "validated.parquet")
    manifest_schema(params).validate(validated)
    # The bound is on the net's grid: a scan stored taller but read at the bound's height passes.
    manifest_schema(params).validate(validated.assign(height=params.height.max * 3 // 2))
    too_tall = validated.assign(net_height=params.height.max + 1)
    with pytest.raises(pa.errors.SchemaErrors) as err:
        manifest_schema(params).validate(too_tall, lazy=True)
    assert set(err.value.failure_cases["column"]) == {"net_height"}


def test_reason_codes_cover_ingest_error_codes() -> None:
    assert {tiff.UNREADABLE, tiff.TRUNCATED, tiff.UNSUPPORTED, tiff.TOO_LARGE, "decode_crashed", "decode_timeout",
            "ingest_error", "bad_layout"} <= {str(c) for c in ReasonCode}
    assert len(ReasonCode) == 15


def test_runbook_lists_every_reason_code() -> None:
    runbook = (Path(__file__).parents[2] / "docs" / "runbooks" / "quarantine.md").read_text()
    missing = [str(code) for code in ReasonCode if f"`{code}`" not in runbook]
    assert not missing, f"docs/runbooks/quarantine.md does not explain {missing}"


def test_rows_within_bounds_that_ingest_did_not_decode(archive: dict, tmp_path: Path) -> None:
    # Validate with wider bounds than ingest ran with: the narrow scan now fits, but has no decoded copy.
    wider = load_settings(Path(__file__).parents[2] / "params.yaml", profile="test",
                          overrides=["validate.width.min=100"]).validate_
    counts = validate_manifest(archive["ingested"], tmp_path / "validated", wider)
    assert counts["by_reason"]["not_decoded"] == 1
    quarantine = pd.read_parquet(tmp_path / "validated" / "quarantine.parquet").set_index("path")
    assert quarantine.loc["narrow.tif", "reason"].endswith("run the ingest stage again")


def test_empty_archive(tmp_path: Path, params: ValidateParams, ingest: IngestParams) -> None:
    (tmp_path / "raw").mkdir()
    assert ingest_archive(tmp_path / "raw", tmp_path / "ing", ingest, params) == {
        "files": 0, "pages": 0, "strips": 0, "rows": 0, "decoded": 0, "resampled": 0, "errors": 0, "read": 0,
        "reused": 0}
    counts = validate_manifest(tmp_path / "ing", tmp_path / "val", params)
    assert (counts["files"], counts["validated"], counts["quarantined"]) == (0, 0, 0)
    assert pd.read_parquet(tmp_path / "val" / "quarantine.parquet").empty


def test_missing_archive_and_manifest_name_the_folder(tmp_path: Path, params: ValidateParams,
                                                      ingest: IngestParams) -> None:
    with pytest.raises(FileNotFoundError, match="paths.raw"):
        ingest_archive(tmp_path / "nowhere", tmp_path / "ing", ingest, params)
    with pytest.raises(FileNotFoundError, match="run the ingest stage"):
        validate_manifest(tmp_path / "ing", tmp_path / "val", params)


def test_a_scan_at_another_resolution_is_held_to_the_bounds_at_its_size_on_the_nets_grid(
        tmp_path: Path, params: ValidateParams, ingest: IngestParams) -> None:
    # Height bounds 96-256 px at 200 dpi. Sizes on the net's grid by hand: 300 dpi is 2/3, 400 dpi is 1/2.
    raw = tmp_path / "raw"
    raw.mkdir()
    write_tiff(raw / "tall_300dpi.tif", _scan(330, 600, 20), dpi=(300.0, 300.0))  # 220 x 400: a track
    write_tiff(raw / "taller_300dpi.tif", _scan(420, 600, 21), dpi=(300.0, 300.0))  # 280 x 400: too tall
    write_tiff(raw / "tall_untagged.tif", _scan(330, 600, 22))  # no resolution: 330 px as it is
    write_tiff(raw / "short_400dpi.tif", _scan(160, 800, 23), dpi=(400.0, 400.0))  # 80 x 400: too low
    write_tiff(raw / "track_200dpi.tif", _scan(200, 600, 24), dpi=(200.0, 200.0))  # the net's own: as it is
    counts = ingest_archive(raw, tmp_path / "ing", ingest, params, resampling=Resampling(200.0))
    assert (counts["decoded"], counts["resampled"]) == (2, 1)  # tall_300dpi resampled, track_200dpi as it is
    manifest = read_manifest(tmp_path / "ing")[0].set_index("path")
    assert manifest.loc["tall_300dpi.tif", ["net_height", "net_width"]].tolist() == [220, 400]
    assert manifest.loc["short_400dpi.tif", ["net_height", "net_width"]].tolist() == [80, 400]
    assert manifest.loc["tall_untagged.tif", ["net_height", "net_width"]].tolist() == [330, 600]
    assert manifest.loc["tall_300dpi.tif", "decoded"] and not manifest.loc["taller_300dpi.tif", "decoded"]
    validate_manifest(tmp_path / "ing", tmp_path / "val", params)
    assert pd.read_parquet(tmp_path / "val" / "validated.parquet")["path"].tolist() == ["tall_300dpi.tif",
                                                                                         "track_200dpi.tif"]
    reason = pd.read_parquet(tmp_path / "val" / "quarantine.parquet").set_index("path")["reason"]
    assert reason["taller_300dpi.tif"].startswith(
        "taller_300dpi.tif: height 280 px on the net's grid (420 px as scanned) is outside 96-256; ")
    assert reason["short_400dpi.tif"].startswith(
        "short_400dpi.tif: height 80 px on the net's grid (160 px as scanned) is outside 96-256; ")
    assert reason["tall_untagged.tif"].startswith("tall_untagged.tif: height 330 px is outside 96-256; ")
    # An archive known to be scanned at 300 dpi: the untagged scan is held at 220 px too, and read resampled.
    counts = ingest_archive(raw, tmp_path / "ing_300", ingest, params, resampling=Resampling(200.0, 300.0))
    assert (counts["decoded"], counts["resampled"]) == (3, 2)
    assert read_manifest(tmp_path / "ing_300")[0].set_index("path").loc["tall_untagged.tif", "net_height"] == 220
    # Without a net resolution every scan is held at its own pixels: the 400-dpi scan is a track, the 300-dpi not.
    ingest_archive(raw, tmp_path / "ing_as_is", ingest, params)
    validate_manifest(tmp_path / "ing_as_is", tmp_path / "val_as_is", params)
    assert pd.read_parquet(tmp_path / "val_as_is" / "validated.parquet")["path"].tolist() == ["short_400dpi.tif",
                                                                                              "track_200dpi.tif"]
