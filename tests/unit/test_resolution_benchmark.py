"""benchmarks/resolution.py's and page_resolution.py's own parts: the enlarged scan, the per-curve scores and a
layout brought back from an enlarged page (hand-computed)."""

from __future__ import annotations

import importlib
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

from veernet_pipeline.pages.detect import Detected
from veernet_pipeline.pages.rows import Band

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def _benchmark(name: str, monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """benchmarks/<name>.py as its command line runs it: with its folder on the import path."""
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    return importlib.import_module(name)


@pytest.fixture
def resolution(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    return _benchmark("resolution", monkeypatch)


@pytest.fixture
def page_resolution(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    return _benchmark("page_resolution", monkeypatch)


def test_a_1_bit_scan_is_enlarged_by_replication_and_a_gray_one_smoothly(resolution: ModuleType) -> None:
    bilevel = np.array([[0, 255], [255, 255]], np.uint8)
    np.testing.assert_array_equal(resolution.enlarge(bilevel, 2.0), np.kron(bilevel, np.ones((2, 2), np.uint8)))
    gray = np.array([[0, 200], [200, 200]], np.uint8)
    big = resolution.enlarge(gray, 2.0)
    assert big.shape == (4, 4) and len(np.unique(big)) > 2  # bilinear: values between 0 and 200 appear


def test_curve_scores_assign_curves_drawn_alike_and_score_each(resolution: ModuleType) -> None:
    height = 100
    truth = np.array([np.full(50, 0.2), np.linspace(0.5, 0.9, 50)])
    # Read in the other order and exactly on the truth's rows (row r is track fraction (r + 0.5) / height).
    rows = truth[::-1] * height - 0.5
    scores = resolution.curve_scores(rows, truth, [(2,), (2,)], ["solid", "solid"], height)
    assert [s["style"] for s in scores] == ["solid", "solid"]
    assert scores[1]["r2"] == pytest.approx(1.0) and scores[1]["mae"] == pytest.approx(0.0, abs=1e-12)
    assert scores[0]["mae"] == pytest.approx(0.0, abs=1e-12)
    # A reading 5 rows low everywhere: 0.05 of the track from a flat truth. A rising truth's band reaches half a
    # step (0.4 / 49 / 2) towards the reading in every column but the last, which has no right neighbour.
    worse = resolution.curve_scores(truth * height - 0.5 + 5.0, truth, [(2,), (3,)], ["solid", "dashed"], height)
    half_step = 0.4 / 49 / 2
    assert [s["mae"] for s in worse] == pytest.approx([0.05, (49 * (0.05 - half_step) + 0.05) / 50])


def test_a_layout_found_at_twice_the_pixels_comes_back_to_the_pages_own(page_resolution: ModuleType) -> None:
    found = Detected(height=2000, width=800, skew_deg=0.3, pivot_row=1001, tracks=[(21, 241), (301, 599)],
                     depth_column=(243, 299), bands=[Band("header", 0, 400), Band("section", 401, 1999)],
                     label_rows=[[501, 701]], notes=["kept"])
    back = page_resolution.at_page_scale(found, 2.0)
    # By hand, p -> (p + 0.5) / 2 - 0.5 rounded: 21 -> 10.25 -> 10, 241 -> 120.25 -> 120, 301 -> 150.25 -> 150,
    # 599 -> 299.25 -> 299, 243 -> 121.25 -> 121, 401 -> 200.25 -> 200, 1999 -> 999.25 -> 999, 1001 -> 500.25 -> 500.
    assert back.tracks == [(10, 120), (150, 299)] and back.depth_column == (121, 149)
    assert back.bands == [Band("header", 0, 200), Band("section", 200, 999)]
    assert back.label_rows == [[250, 350]] and back.pivot_row == 500 and (back.height, back.width) == (1000, 400)
    assert back.skew_deg == 0.3 and back.notes == ["kept"]  # an angle does not scale
    assert page_resolution.at_page_scale(found, 1.0) == found
