"""The foreign test renderer: exact sizes, labels redrawn from the written LAS and sidecar, test wells only,
G4 fax files, an evaluation-only set, and no code shared with the generator."""

from __future__ import annotations

import json
import pkgutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import tifffile

from tests.renders import PARAMS, redraw
from veernet_pipeline.config import Settings, load_settings
from veernet_pipeline.foreign.dataset import (
    FOREIGN_DIR,
    evaluation_wells,
    render_foreign,
    write_foreign_set,
    write_scan,
)
from veernet_pipeline.io.calibration import Calibration
from veernet_pipeline.io.classes import BACKGROUND, BROKEN_STYLES, OTHER_INK, STYLES, style_class
from veernet_pipeline.io.sets import DETAIL_COLUMNS, EVALUATION_ONLY_FILE, INDEX_COLUMNS, INDEX_FILE, read_split
from veernet_pipeline.io.splits import assign_well_splits
from veernet_pipeline.io.tiff import decode_scan, read_header
from veernet_pipeline.io.wells import load_source_wells
from veernet_pipeline.provenance import PACKAGE_DIR, import_closure, relative
from veernet_pipeline.reading.styles import curve_classes
from veernet_pipeline.stages.cache import stage_modules

# Small scans, every one of them 1-bit or every one 8-bit, 1-5 curves.
SMALL = ("foreign.width={min: 1500, max: 2500}", "foreign.height={min: 200, max: 300}")


def _settings(tmp_path: Path, *overrides: str) -> Settings:
    return load_settings(PARAMS, profile="test", overrides=[f"paths.synthetic={tmp_path / 'synthetic'}", *SMALL,
                                                            *overrides])


@pytest.mark.parametrize("bilevel", [0, 1])
def test_labels_are_the_curves_redrawn_from_las_and_sidecar(tmp_path: Path, bilevel: int) -> None:
    settings = _settings(tmp_path, f"foreign.bilevel_share={bilevel}", "foreign.count=6")
    write_foreign_set(settings)
    set_dir = settings.path("synthetic") / FOREIGN_DIR
    index = read_split(set_dir, "test")
    assert len(index) == 6 and set(index.bits) == {1 if bilevel else 8}
    inside_band, labelled, seen_features = 0, 0, set()
    for row in index.itertuples():
        image = decode_scan(set_dir / row.image)
        mask = tifffile.imread(set_dir / row.mask)
        assert image.shape == mask.shape == (row.height, row.width)
        header = read_header(set_dir / row.image)
        assert (header.bits, header.compression) == ((1, "ccittfax4") if bilevel else (8, "lzw"))
        sidecar = json.loads((set_dir / row.calibration).read_text())
        styles = [c["style"] for c in sidecar["curves"]]
        assert row.styles == ",".join(styles) and set(styles) <= set(STYLES) and 1 <= len(styles) <= 5
        seen_features |= set(row.features.split(","))
        # A label sits on ink: black in a 1-bit scan, well darker than the paper in an 8-bit one.
        paper = np.median(image)
        assert (image[mask > BACKGROUND] <= (0 if bilevel else paper - 40)).mean() > (1.0 if bilevel else 0.97) - 1e-9
        for k, (rows, wraps) in enumerate(redraw(set_dir / row.las, set_dir / row.calibration, row.height,
                                                  row.width)):
            ys, xs = np.nonzero(mask == style_class(styles[k]))
            # Columns next to a wrap are excepted: there the stroke runs to the track edge.
            steady = np.convolve(np.diff(wraps, prepend=wraps[0]) != 0, np.ones(9), mode="same") == 0
            # The stroke, at most 3.2 px wide, follows the contract's row; between columns it is straight,
            # so it reaches half the row change s to a neighbour, and is sqrt(1 + s^2) times taller than wide.
            drawn = rows.astype(float)
            s = np.maximum(np.abs(np.diff(drawn, prepend=drawn[0])), np.abs(np.diff(drawn, append=drawn[-1])))
            reach = 1.6 * np.sqrt(1.0 + s**2) + s / 2 + 1.0
            near = np.abs(ys - rows[xs]) <= reach[xs]
            inside_band += int((near & steady[xs]).sum())
            labelled += int(steady[xs].sum())
    # Two curves of one style share a class, so a few labels lie in the other curve's band.
    assert labelled > 1000 and inside_band / labelled > 0.97
    assert {"log", "reversed"} <= seen_features


def test_same_bytes_twice_exact_size_and_test_wells_only(tmp_path: Path) -> None:
    settings = _settings(tmp_path)
    wells = evaluation_wells(settings)
    split = assign_well_splits([w.name for w in load_source_wells("")], settings.synthesize.splits, settings.seed)
    assert wells and {split[w.name] for w in wells} == {"test"}
    first, again = render_foreign(settings, 3, wells), render_foreign(settings, 3, wells)
    assert first.image.tobytes() == again.image.tobytes() and first.mask.tobytes() == again.mask.tobytes()
    assert first.calibration == again.calibration
    for index in range(4):
        found = render_foreign(settings, index, wells)
        assert found.image.shape == (found.log.height, found.log.width) and found.log.well in {w.name for w in wells}
        assert 200 <= found.log.height <= 300 and 1500 <= found.log.width <= 2500
        classes = {style_class(c.scale.style) for c in found.log.curves}
        owned = found.curves > 0
        assert set(np.unique(found.mask[owned])) <= classes and (found.mask[~owned] <= OTHER_INK).all()


def test_a_scan_drawn_at_300_dpi_is_the_same_print_at_one_and_a_half_times_the_pixels(tmp_path: Path) -> None:
    settings = _settings(tmp_path, "foreign.bilevel_share=0")
    wells = evaluation_wells(settings)
    native, fine = render_foreign(settings, 2, wells), render_foreign(settings, 2, wells, 1.5)
    height, width = native.image.shape
    assert fine.image.shape == fine.mask.shape == (round(height * 1.5), round(width * 1.5))
    assert fine.calibration == native.calibration
    # Pens, dashes and fonts are in points: at 1.5 x the pixels a curve's inked pixels are about 1.5^2 = 2.25 x.
    ratio = (fine.curves > 0).sum() / (native.curves > 0).sum()
    assert 1.9 < ratio < 2.6, ratio
    # Its labels follow the contract at its own grid: within 1.5 x the reach of the first test of the row redrawn
    # from its LAS and sidecar at the finer size.
    row = write_scan(tmp_path, "fine", fine)
    near = labelled = 0
    for k, (rows, _) in enumerate(redraw(tmp_path / str(row["las"]), tmp_path / str(row["calibration"]),
                                         *fine.image.shape)):
        ys, xs = np.nonzero(fine.curves == k + 1)
        drawn = rows.astype(float)
        s = np.maximum(np.abs(np.diff(drawn, prepend=drawn[0])), np.abs(np.diff(drawn, append=drawn[-1])))
        near += int((np.abs(ys - rows[xs]) <= 1.5 * (1.6 * np.sqrt(1.0 + s**2) + s / 2 + 1.0)[xs]).sum())
        labelled += xs.size
    assert labelled > 1000 and near / labelled > 0.97


def test_wraps_reach_the_backup_scale(tmp_path: Path) -> None:
    settings = _settings(tmp_path, "foreign.curves_per_track=[0, 0, 0, 0, 1]")
    wells = evaluation_wells(settings)
    wrapped = 0
    for index in range(8):
        found = render_foreign(settings, index, wells)
        wraps = [c.scale.wrap(c.scale.value_to_fraction(c.values))[1] for c in found.log.curves]
        any_wrap = any((w != 0).any() for w in wraps)
        assert any_wrap == ("wrap" in found.features)
        wrapped += any_wrap
    assert wrapped > 0


def test_the_set_is_evaluation_only(tmp_path: Path) -> None:
    settings = _settings(tmp_path, "foreign.count=2")
    counts = write_foreign_set(settings)
    set_dir = settings.path("synthetic") / FOREIGN_DIR
    assert counts["scans"] == 2 and (set_dir / EVALUATION_ONLY_FILE).is_file()
    index = pd.read_parquet(set_dir / INDEX_FILE)
    assert tuple(index.columns[: len(INDEX_COLUMNS) + len(DETAIL_COLUMNS)]) == INDEX_COLUMNS + DETAIL_COLUMNS
    assert set(index.split) == {"test"}
    for split in ("train", "val"):
        with pytest.raises(ValueError, match="evaluation-only"):
            read_split(set_dir, split)


# What the two renderers may share: the contracts every stage reads or writes (settings, file formats,
# the calibration, mask classes, set indexes, the source wells and their split) and progress reporting;
# never drawing code. A file added to both closures fails the test until it is named here, on purpose.
CONTRACTS = {f"veernet_pipeline/{name}" for name in (
    "__init__.py", "config.py", "errors.py", "progress.py", "io/__init__.py", "io/atomic.py", "io/calibration.py",
    "io/classes.py", "io/colours.py", "io/gray.py", "io/las.py", "io/scan_errors.py", "io/sets.py", "io/sidecar.py",
    "io/splits.py", "io/tiff.py", "io/wells.py")}


def _closure(package: str) -> set[str]:
    """Every file of the package the modules of `package` run, lazy imports included."""
    modules = [f"{package}.{m.name}" for m in pkgutil.iter_modules([str(PACKAGE_DIR / package.split(".")[1])])]
    return {relative(p) for p in import_closure(modules)}


def test_no_code_shared_with_the_generator() -> None:
    foreign, generator = _closure("veernet_pipeline.foreign"), _closure("veernet_pipeline.synthetic")
    assert not {p for p in foreign if p.startswith("veernet_pipeline/synthetic/")}
    assert foreign & generator <= CONTRACTS, sorted((foreign & generator) - CONTRACTS)
    # The check can fail: the generator's closure holds drawing code of its own, outside the contracts.
    assert "veernet_pipeline/synthetic/render.py" in generator - CONTRACTS


def test_training_never_runs_the_foreign_renderer() -> None:
    def foreign_files(stage: str) -> set[str]:
        return {relative(p) for p in import_closure(stage_modules(stage)) if "/foreign/" in relative(p)}

    for stage in ("train_binary", "train_multiclass"):
        assert not foreign_files(stage), stage
    # The check can fail: the stage that writes the foreign set does run it.
    assert "veernet_pipeline/foreign/dataset.py" in foreign_files("synthesize")


def test_seeds_legend_draws_solid_then_broken_and_names_no_style(tmp_path: Path) -> None:
    settings = _settings(tmp_path, "foreign.legend=seeds", "foreign.curves_per_track=[0, 1, 0, 0, 0]",
                         "foreign.count=6")
    write_foreign_set(settings)
    set_dir = settings.path("synthetic") / FOREIGN_DIR
    broken_seen = set()
    for row in read_split(set_dir, "test").itertuples():
        sidecar = json.loads((set_dir / row.calibration).read_text())
        assert len(sidecar["curves"]) == 2 and all("style" not in c for c in sidecar["curves"])
        drawn = row.styles.split(",")
        assert drawn[0] == "solid" and drawn[1] in (*BROKEN_STYLES, "solid")
        broken_seen.add(drawn[1])
        # The mask holds the drawn styles; the reader, given no style, takes A as solid and B as any broken.
        mask = tifffile.imread(set_dir / row.mask)
        assert (mask == style_class("solid")).any() and (mask == style_class(drawn[1])).any()
        classes = curve_classes([c.style for c in Calibration.from_file(set_dir / row.calibration).curves])
        # A thin solid B lies outside B's evidence: the case `reading.pens.read_thick_thin` reads again.
        assert classes[0] == (style_class("solid"),)
        assert (style_class(drawn[1]) in classes[1]) == (drawn[1] != "solid")
    assert len(broken_seen - {"solid"}) >= 2


def test_seeds_legend_draws_some_pairs_thick_and_thin(tmp_path: Path) -> None:
    settings = _settings(tmp_path, "foreign.legend=seeds", "foreign.curves_per_track=[0, 1, 0, 0, 0]")
    wells = evaluation_wells(settings)
    logs = [render_foreign(settings, index, wells).log for index in range(16)]
    pairs = [log.curves for log in logs if [c.scale.style for c in log.curves] == ["solid", "solid"]]
    # REPEAT_SHARE (0.2) of 16 tracks: some, not most; curve A is always the thicker pen.
    assert 1 <= len(pairs) <= 8 and all(a.width_px >= b.width_px for a, b in pairs)
    assert any(a.width_px > b.width_px for a, b in pairs)


def test_seeds_legend_refuses_tracks_of_three_or_more_curves(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="at most two curves"):
        _settings(tmp_path, "foreign.legend=seeds")
