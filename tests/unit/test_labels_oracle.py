"""benchmarks/labels.py: gaps counted along a read row by hand, the legend-order rule, and the windowed oracle."""

from __future__ import annotations

import importlib
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest


@pytest.fixture
def labels(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """benchmarks/labels.py as its command line runs it: with its folder on the import path."""
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[2] / "benchmarks"))
    return importlib.import_module("labels")


def _dashes(rows: np.ndarray, ink: int, gap: int, height: int = 40) -> np.ndarray:
    """Curve ink on `rows` (one per column), `ink` columns on and `gap` off, starting with ink."""
    image = np.zeros((height, rows.size))
    on = (np.arange(rows.size) % (ink + gap)) < ink
    image[np.round(rows[on]).astype(int), np.nonzero(on)[0]] = 1.0
    return image


def test_gaps_are_counted_per_100_px_of_a_flat_line(labels: ModuleType) -> None:
    row = np.full(100, 10.0)
    row[96:] = np.nan  # read over columns 0..95 only
    # 6 on, 4 off: the gaps start at 6, 16, ..., 86 (nine), then 96.. is beyond the read row.
    assert labels.gaps_per_100px(_dashes(row, 6, 4), row) == pytest.approx(100 * 9 / 96)


def test_a_steep_line_counts_its_length_along_the_line(labels: ModuleType) -> None:
    # Rows 2 + 0.75 x: every column is 1.25 px of line (3-4-5); 10 gaps over 100 columns = 125 px.
    row = 2.0 + 0.75 * np.arange(100)
    image = _dashes(row, 5, 5, height=80)
    expected = 100 * 10 / (1.0 + 99 * 1.25)  # the first column has no step behind it: 1 px
    assert labels.gaps_per_100px(image, row) == pytest.approx(expected)


def test_unread_columns_are_gaps_and_a_solid_line_has_none(labels: ModuleType) -> None:
    row = np.full(50, 20.0)
    solid = np.zeros((40, 50))
    solid[20] = 1.0
    assert labels.gaps_per_100px(solid, row) == 0.0
    row[10:15] = np.nan  # a gap left open by the reading, ink or not
    assert labels.gaps_per_100px(solid, row) == pytest.approx(100 * 1 / 50)


def test_legend_order_gives_the_fewer_gaps_the_longer_dashes(labels: ModuleType) -> None:
    styles = ["dashed", "long_dash", "solid"]
    # Read curve 1 (labelled long-dash) has more gaps than curve 0 (labelled dashed): they trade labels.
    order = labels.legend_order(np.array([1.0, 3.0, 0.1]), styles)
    assert order.tolist() == [1, 0, 2]
    # In legend order already: nothing moves.
    assert labels.legend_order(np.array([3.0, 1.0, 0.1]), styles).tolist() == [0, 1, 2]


def test_legend_order_leaves_curves_drawn_alike_and_unread_curves(labels: ModuleType) -> None:
    styles = ["dashed", "dashed", "long_dash", "dotted"]
    # Only long-dash and dotted are alone in the track; dotted is unread (NaN): nothing is renamed.
    assert labels.legend_order(np.array([9.0, 0.5, 5.0, np.nan]), styles).tolist() == [0, 1, 2, 3]
    # Both read: dotted has fewer gaps than long-dash, so the two trade labels; the dashed pair stays.
    assert labels.legend_order(np.array([9.0, 0.5, 5.0, 1.0]), styles).tolist() == [0, 1, 3, 2]
    # A curve whose sidecar names no style ("broken", after style_labels) has no place in the legend's order.
    assert labels.legend_order(np.array([0.1, 5.0]), ["broken", "solid"]).tolist() == [0, 1]


def test_the_windowed_oracle_renames_what_one_permutation_per_log_cannot(labels: ModuleType) -> None:
    height = 100
    truth = np.stack([np.full(40, 0.105), np.full(40, 0.505)])  # rows 10 and 50 (track units (row + 0.5) / H)
    rows = np.stack([np.full(40, 10.0), np.full(40, 50.0)])
    rows[:, 20:] = rows[::-1, 20:]  # the labels trade places halfway
    fixed = labels.relabel_windows(rows, truth, height, 20)
    np.testing.assert_array_equal(fixed, np.stack([np.full(40, 10.0), np.full(40, 50.0)]))
    # One permutation for the whole log: either way half the columns are wrong, so the reading stands.
    np.testing.assert_array_equal(labels.relabel_windows(rows, truth, height, 40), rows)
