"""benchmarks/naming.py: a curve's ink and the net's names on it, misnamed stretches, distances, by hand."""

from __future__ import annotations

import importlib
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

SOLID, DASHED, LONG_DASH = 2, 3, 6


@pytest.fixture
def naming(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """benchmarks/naming.py as its command line runs it: with its folder on the import path."""
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[2] / "benchmarks"))
    return importlib.import_module("naming")


def test_ink_is_the_curve_class_within_the_band_and_names_are_counted_per_column(naming: ModuleType) -> None:
    mask = np.zeros((10, 6), np.uint8)
    mask[4, [0, 1, 4, 5]] = DASHED  # a dash gap at columns 2-3
    mask[6, :] = SOLID  # another curve inside the band: not this curve's ink
    mask[9, 0] = DASHED  # this class, but 5 rows off: outside the 3-row band
    names = np.zeros_like(mask)
    names[4, :] = [DASHED, LONG_DASH, DASHED, DASHED, DASHED, 0]
    counts = naming.ink_names(mask, names, np.full(6, 4.2), DASHED)
    expected = np.zeros((6, 7), np.int64)
    expected[0, DASHED] = expected[1, LONG_DASH] = expected[4, DASHED] = expected[5, 0] = 1
    np.testing.assert_array_equal(counts, expected)


def test_no_ink_where_the_curve_is_not_drawn(naming: ModuleType) -> None:
    mask = np.full((8, 3), DASHED, np.uint8)
    counts = naming.ink_names(mask, mask, np.array([np.nan, 3.0, np.nan]), DASHED)
    assert counts.sum(axis=1).tolist() == [0, 7, 0]  # rows 0..6 of column 1 (band 3 around 3)


def test_misnamed_columns_make_stretches_across_dash_gaps(naming: ModuleType) -> None:
    counts = np.zeros((10, 7), np.int64)
    ink_columns, wrong = [0, 1, 4, 5, 8, 9], {1, 4, 9}
    for column in ink_columns:
        counts[column, LONG_DASH if column in wrong else DASHED] = 2
    counts[5, LONG_DASH] = 2  # half right, half wrong: not misnamed (fewer than half must be right)
    # Misnamed 1, then 4 (columns 2-3 carry no ink: the stretch goes on), right at 5: 1..4 is 4 long;
    # 9 alone is 1.
    assert naming.misnamed_runs(counts, DASHED) == [4, 1]


def test_nearest_other_curve_ignores_curves_not_drawn(naming: ModuleType) -> None:
    rows = np.array([[10.0, 10.0, np.nan], [14.0, 30.0, 12.0], [7.0, np.nan, np.nan]])
    assert naming.nearest_other(rows, 0).tolist() == [3.0, 20.0, np.inf]


def test_slope_is_rows_per_column_over_the_span(naming: ModuleType) -> None:
    got = naming.slope(2.0 * np.arange(20))
    span = naming.SLOPE_SPAN
    assert np.isnan(got[:span]).all() and np.isnan(got[-span:]).all()
    np.testing.assert_allclose(got[span:-span], 2.0)


def test_tally_bins_by_distance_and_finds_the_misnamed_stretch(naming: ModuleType) -> None:
    # A one-pixel dashed curve on row 5 over 20 columns; a solid curve 2 rows off over the first 10
    # columns and 35 rows off over the last 10. The net names the near half solid, the far half right.
    mask = np.zeros((50, 20), np.uint8)
    mask[5, :] = DASHED
    mask[7, :10] = SOLID
    mask[40, 10:] = SOLID
    names = mask.copy()
    names[5, :10] = SOLID
    rows = np.array([np.full(20, 5.0), np.r_[np.full(10, 7.0), np.full(10, 40.0)]])
    tally = naming.Tally()
    tally.add(mask, names, rows, ["dashed", "solid"])
    figures = tally.figures()["dashed"]
    near, far = figures["distance"][0], figures["distance"][3]  # bins 0-4 and 20-50
    assert (near["pixels"], near["right"], near["wrong"]) == (10, 0.0, {"solid": 1.0})
    assert (far["pixels"], far["right"], far["wrong"]) == (10, 1.0, {})
    assert [e["pixels"] for e in figures["distance"]] == [10, 0, 0, 10, 0]
    # Flat: every column with a slope (4..15) in the first bin; the ends have none.
    assert figures["slope"][0]["pixels"] == 20 - 2 * naming.SLOPE_SPAN
    # One stretch of 10 misnamed columns out of 20 ink columns: half the ink in the 10-50 bin.
    assert [e["share"] for e in figures["runs"]] == [0.0, 0.5, 0.0, 0.0, 0.0]
    assert tally.figures()["dotted"]["ink_columns"] == 0


def test_dash_length_is_a_whole_dash_not_the_pieces_crossings_cut(naming: ModuleType) -> None:
    # A long-dash curve on row 5: dashes of 30 columns with gaps of 8 (columns 0-29, 38-67, 76-105), and a
    # crossing curve that takes 3 pixels of each of the first two dashes (classes are one per pixel), cutting
    # them into pieces of 12 and 15, and 5 and 22. Pieces: 12, 15, 5, 22, 30: the 90th percentile is
    # 22 + 0.6 * (30 - 22) = 26.8 (numpy's linear rule at rank 0.9 * 4 = 3.6).
    mask = np.zeros((12, 110), np.uint8)
    for start in (0, 38, 76):
        mask[5, start:start + 30] = LONG_DASH
    mask[5, 12:15] = SOLID
    mask[5, 43:46] = SOLID
    assert naming.dash_length(mask, np.full(110, 5.0), LONG_DASH) == pytest.approx(26.8)
    # A dash on a slope is one piece (8-connected) over the columns it spans.
    slope = np.zeros((40, 20), np.uint8)
    slope[np.arange(20), np.arange(20)] = DASHED
    assert naming.dash_length(slope, np.arange(20, dtype=float), DASHED) == 20.0
    assert np.isnan(naming.dash_length(np.zeros((5, 5), np.uint8), np.full(5, 2.0), DASHED))


def test_tally_bins_ink_by_its_curve_s_dash_length(naming: ModuleType) -> None:
    # Two long-dash curves: dashes of 15 columns (bin 10-20), named dashed; of 40 (bin 35-60), named right.
    mask = np.zeros((60, 200), np.uint8)
    for start in range(0, 200, 20):
        mask[10, start:start + 15] = LONG_DASH
    for start in range(0, 200, 50):
        mask[50, start:start + 40] = LONG_DASH
    names = mask.copy()
    names[10][names[10] == LONG_DASH] = DASHED
    tally = naming.Tally()
    tally.add(mask, names, np.array([np.full(200, 10.0), np.full(200, 50.0)]), ["long_dash", "long_dash"])
    by_dash = tally.figures()["long_dash"]["dash"]
    assert [e["pixels"] for e in by_dash] == [0, 150, 0, 160, 0]
    assert (by_dash[1]["right"], by_dash[1]["wrong"]) == (0.0, {"dashed": 1.0})
    assert by_dash[3]["right"] == 1.0
