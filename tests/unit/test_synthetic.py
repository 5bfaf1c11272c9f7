"""Synthetic data: bundled wells, windows, scales, exact labels, determinism, sets and the sample archive."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import tifffile

from veernet_pipeline.config import Settings, SynthesizeParams, load_settings
from veernet_pipeline.io.calibration import Calibration
from veernet_pipeline.io.classes import NUM_CLASSES, OTHER_INK, style_class
from veernet_pipeline.io.sets import DETAIL_COLUMNS, INDEX_COLUMNS
from veernet_pipeline.io.tiff import ScanReadError, decode_scan, read_header
from veernet_pipeline.synthetic.curves import (
    PROCEDURAL,
    Well,
    fill_short_gaps,
    load_wells,
    round_significant,
    straight_runs,
    wells_by_split,
    window,
)
from veernet_pipeline.synthetic.dataset import curve_count, preview_sheet, synthesize_sets
from veernet_pipeline.synthetic.render import render_instance
from veernet_pipeline.synthetic.sample import PAGE_NAME, TRUNCATED_NAME, build_sample_archive
from veernet_pipeline.synthetic.scales import choose_scale

PARAMS = Path(__file__).parents[2] / "params.yaml"


def _settings(tmp_path: Path, *overrides: str) -> Settings:
    return load_settings(PARAMS, profile="test", overrides=[f"paths.synthetic={tmp_path / 'synthetic'}", *overrides])


@pytest.fixture(scope="module")
def wells() -> list[Well]:
    return load_wells("")


@pytest.fixture(scope="module")
def params() -> SynthesizeParams:
    return load_settings(PARAMS, profile="test").synthesize


def test_bundled_wells_are_complete_and_small(wells: list[Well]) -> None:
    folder = Path(str(resources.files("veernet_pipeline.resources").joinpath("las")))
    sizes = [f.stat().st_size for f in folder.glob("*.las.gz")]
    assert len(wells) == len(sizes) == 12
    assert sum(sizes) < 6 * 2**20
    attribution = " ".join((folder / "ATTRIBUTION.md").read_text().split())
    assert "FORCE 2020" in attribution and "(NLOD) 2.0" in attribution
    assert len({w.name for w in wells}) == 12
    for well in wells:
        assert np.all(np.diff(well.depth) > 0)
        assert "GR" in well.curves and well.unit == "M"
        assert all(v.shape == well.depth.shape for v in well.curves.values())


def test_fill_short_gaps_fills_only_short_interior_gaps() -> None:
    values = np.array([np.nan, 1.0, np.nan, np.nan, 4.0] + [np.nan] * 20 + [5.0, np.nan])
    filled = fill_short_gaps(values, max_gap=8)
    assert np.isnan(filled[0]) and np.isnan(filled[-1]) and np.isnan(filled[5:25]).all()
    np.testing.assert_allclose(filled[1:5], [1.0, 2.0, 3.0, 4.0])


def test_straight_runs_marks_interpolated_stretches_only() -> None:
    rng = np.random.default_rng(0)
    logged = round_significant(np.cumsum(rng.normal(0.0, 1.0, 100)) + 50.0)
    filled = logged.copy()
    filled[30:60] = round_significant(np.linspace(filled[30], filled[59], 30))
    marked = straight_runs(filled)
    assert marked[30:60].all() and not marked[:29].any() and not marked[61:].any()
    assert not straight_runs(logged).any()


def test_window_gives_distinct_finite_curves(wells: list[Well]) -> None:
    for index in range(5):
        n_curves = 1 + index
        picked = window(wells, n_curves, 3200, np.random.default_rng([1, index]))
        assert picked is not None
        assert len(set(picked.mnemonics)) == n_curves
        assert all(np.isfinite(v).all() and v.shape == picked.depth.shape for v in picked.values)
        assert 3200 / (picked.depth.size - 1) <= 12.0
    lone = Well("lone", np.arange(50.0), {"GR": np.ones(50)}, "M")
    assert window([lone], 2, 320, np.random.default_rng(0)) is None


def test_curves_per_track_follows_its_weights() -> None:
    # The base params: 3-5 curves in 70 % of tracks, each count at its weight (binomial sd 0.007 at 4,000 draws).
    weights = load_settings(PARAMS).synthesize.curves_per_track
    counts = np.bincount([curve_count(7, i, weights) for i in range(4000)], minlength=6)[1:]
    np.testing.assert_allclose(counts / 4000, np.asarray(weights) / sum(weights), atol=0.025)
    assert counts[2:].sum() / 4000 > 0.65
    # One weight switches every track to that count; the stream does not depend on the weights' scale.
    assert {curve_count(7, i, [0, 0, 0, 2, 0]) for i in range(200)} == {4}
    assert [curve_count(7, i, [1, 1, 1, 1, 1]) for i in range(50)] == [curve_count(7, i, [3] * 5) for i in range(50)]
    with pytest.raises(ValueError, match="curves_per_track"):
        load_settings(PARAMS, overrides=["synthesize.curves_per_track=[0, 0, 0, 0, 0]"])


def test_choose_scale_follows_shares(params: SynthesizeParams) -> None:
    values = np.array([0.3, 2.0, 40.0, 150.0])
    log_rev = params.model_copy(update={"log_scale_share": 1.0, "reversed_share": 1.0, "backup_share": 0.0})
    scale = choose_scale("RDEP", "OHMM", values, np.random.default_rng(0), log_rev)
    assert scale.scale == "log" and scale.top_value > scale.bottom_value
    assert scale.bottom_value <= 0.3 and scale.top_value >= 150.0
    decades = np.log10(scale.top_value / scale.bottom_value)
    assert decades == pytest.approx(round(decades))
    negative = np.array([-0.02, 0.1, 0.3])
    assert choose_scale("NPHI", "V/V", negative, np.random.default_rng(0), log_rev).scale == "linear"
    plain = params.model_copy(update={"log_scale_share": 0.0, "reversed_share": 0.0, "backup_share": 0.0})
    gr = choose_scale("GR", "GAPI", np.array([20.0, 80.0, 120.0]), np.random.default_rng(0), plain)
    assert gr.scale == "linear" and (gr.top_value, gr.bottom_value) in {(0.0, 150.0), (0.0, 200.0)}
    narrow = np.array([2.3, 2.4, 2.6])
    assert choose_scale("RHOB", "G/C3", narrow, np.random.default_rng(0), log_rev).scale == "linear"
    # A backup scale is tighter than the values, so some of them leave the track and wrap.
    backup = params.model_copy(update={"backup_share": 1.0, "max_wraps": 1, "log_scale_share": 0.0})
    gr_values = np.random.default_rng(1).uniform(20.0, 140.0, 500)
    ild_values = 10.0 ** np.random.default_rng(1).uniform(-0.5, 2.5, 500)
    for seed in range(5):
        for use_log, values in ((0.0, gr_values), (1.0, ild_values)):
            shares = backup.model_copy(update={"log_scale_share": use_log})
            tight = choose_scale("GR", "GAPI", values, np.random.default_rng(seed), shares)
            fraction = tight.value_to_fraction(values)
            assert tight.scale == ("log" if use_log else "linear") and tight.backup_wraps == 1
            assert ((fraction < 0) | (fraction > 1)).mean() > 0.01


def test_render_is_deterministic_and_sized(wells: list[Well], params: SynthesizeParams) -> None:
    first, again = render_instance(3, 7, params, wells, 2), render_instance(3, 7, params, wells, 2)
    assert first.image.tobytes() == again.image.tobytes() and first.mask.tobytes() == again.mask.tobytes()
    assert first.calibration == again.calibration
    other = render_instance(3, 8, params, wells, 2)
    assert other.image.shape != first.image.shape or other.image.tobytes() != first.image.tobytes()
    for index in range(6):
        log = render_instance(3, index, params, wells, 2)
        height, width = log.image.shape
        assert params.height.min <= height <= max(params.height.max, params.tall.height.max)
        assert params.width.min <= width <= params.width.max
        assert log.image.dtype == np.uint8 and log.mask.dtype == np.uint8
        assert set(np.unique(log.mask)) <= set(range(NUM_CLASSES)) and len(set(np.unique(log.mask)) - {0, 1}) >= 1


def test_procedural_source(wells: list[Well], params: SynthesizeParams) -> None:
    all_procedural = params.model_copy(update={"procedural_share": 1.0})
    for log in (render_instance(1, 0, all_procedural, wells, 2), render_instance(1, 0, params, [], 2)):
        assert log.well == PROCEDURAL and log.calibration.well == {"WELL": "PROCEDURAL"}
        assert len(set(log.mnemonics)) == 2 and all(np.isfinite(v).all() for v in log.values)


def test_synthesize_sets_splits_by_well_and_is_deterministic(tmp_path: Path, wells: list[Well]) -> None:
    settings = _settings(tmp_path)
    counts = synthesize_sets(settings)
    root = settings.path("synthetic")
    well_split: dict[str, set[str]] = {}
    for name, expected in (("binary", settings.synthesize.binary_count), ("multiclass", 10)):
        index = pd.read_parquet(root / name / "index.parquet")
        assert tuple(index.columns) == INDEX_COLUMNS + DETAIL_COLUMNS and len(index) == expected
        assert counts[name] == {s: int((index.split == s).sum()) for s in ("train", "val", "test")}
        assert all(counts[name][s] > 0 for s in ("train", "val", "test"))
        for row in index.itertuples():
            for column in ("image", "mask", "calibration", "las"):
                assert (root / name / getattr(row, column)).is_file()
            mask = tifffile.imread(root / name / row.mask)
            assert mask.shape == (row.height, row.width)
            calibration = Calibration.from_file(root / name / row.calibration)
            styles = [c.style for c in calibration.curves]
            assert row.styles == ",".join(styles) and len(styles) == row.n_curves
            # Both sets hold io.classes (the binary stage's loader collapses them): each style the sidecar
            # names labels ink; nothing else but background and other ink.
            assert set(np.unique(mask)) - {0, OTHER_INK} == {style_class(s) for s in styles}
            if row.well != PROCEDURAL:
                well_split.setdefault(row.well, set()).add(row.split)
        assert set(index.n_curves) <= {1, 2, 3, 4, 5} and len(set(index.n_curves)) >= 2
    assert all(len(splits) == 1 for splits in well_split.values())

    # Instance 3 of the multiclass set, rendered alone, equals the one in the batch.
    row = pd.read_parquet(root / "multiclass" / "index.parquet").iloc[3]
    pools = wells_by_split(wells, settings.synthesize.splits, settings.seed)
    seed = settings.seed + 1
    alone = render_instance(seed, 3, settings.synthesize, pools[row.split],
                            curve_count(seed, 3, settings.synthesize.curves_per_track))
    np.testing.assert_array_equal(alone.image, tifffile.imread(root / "multiclass" / row.image))

    again = _settings(tmp_path / "again")
    synthesize_sets(again)
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        twin = again.path("synthetic") / path.relative_to(root)
        assert path.read_bytes() == twin.read_bytes(), path

    preview_sheet(root / "multiclass", tmp_path / "sheet.png", n=3)
    assert (tmp_path / "sheet.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_build_sample_archive_writes_valid_and_broken_scans(tmp_path: Path) -> None:
    settings = _settings(tmp_path)
    bounds = settings.validate_
    written = build_sample_archive(tmp_path / "raw", settings)
    scans = [p for p in written if p.suffix.lower() in (".tif", ".tiff")]
    assert {TRUNCATED_NAME, PAGE_NAME} <= {p.name for p in scans}
    sidecars = {p.name for p in written if p.name.endswith(".calib.json")}
    valid = [p for p in scans if p.name not in (TRUNCATED_NAME, PAGE_NAME)]
    assert len(valid) == 4
    headers = {p.name: read_header(p) for p in valid}
    assert {h.compression for h in headers.values()} >= {"lzw", "packbits"}
    assert any(h.height > h.width for h in headers.values())
    assert any(h.bits == 1 and h.photometric == "miniswhite" for h in headers.values())
    assert sum(p.name + ".calib.json" not in sidecars for p in valid) == 1
    for path in valid:
        height, width = decode_scan(path).shape
        assert width >= bounds.width.min and bounds.height.min <= height <= bounds.height.max
    with pytest.raises(ScanReadError) as caught:
        decode_scan(tmp_path / "raw" / TRUNCATED_NAME)
    assert caught.value.code == "truncated"
    # A whole page, stored portrait: taller across the value axis than one track may be.
    page = read_header(tmp_path / "raw" / PAGE_NAME)
    assert page.rotated and page.landscape_height > bounds.height.max and PAGE_NAME + ".calib.json" not in sidecars
    assert build_sample_archive(tmp_path / "raw", settings) == []
