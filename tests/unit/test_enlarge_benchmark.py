"""benchmarks/enlarge.py's own parts: the smaller print, the legend share, the joined maps and the choosers
(expected values computed by hand)."""

from __future__ import annotations

import importlib
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


@pytest.fixture
def enlarge(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    return importlib.import_module("enlarge")


def _probs(pixels: list[dict[int, float]]) -> np.ndarray:
    """(7, 1, N) probabilities, one pixel per dict of class -> probability, the rest background."""
    probs = np.zeros((7, 1, len(pixels)), np.float32)
    for j, pixel in enumerate(pixels):
        for c, p in pixel.items():
            probs[c, 0, j] = p
        probs[0, 0, j] = 1.0 - sum(pixel.values())
    return probs


def test_a_1_bit_print_is_shrunk_to_1_bit_and_a_gray_one_by_box_means(enlarge: ModuleType) -> None:
    bilevel = np.array([[0, 0, 255, 255], [0, 255, 255, 255]], np.uint8)
    # Box means of the 2 x 2 blocks: 63.75 and 255 -> thresholded at 128: 0 and 255.
    np.testing.assert_array_equal(enlarge.shrink(bilevel, 2.0), [[0, 255]])
    gray = np.array([[10, 30, 200, 200], [50, 70, 200, 100]], np.uint8)
    np.testing.assert_array_equal(enlarge.shrink(gray, 2.0), [[40, 175]])


def test_the_legend_share_counts_curve_ink_only(enlarge: ModuleType) -> None:
    # Pixel 0 is paper; 1 is ink (solid 0.2 + dashed 0.6); 2 is ink named dotted (0.5); 3 is below 0.5 of ink.
    probs = _probs([{}, {2: 0.2, 3: 0.6}, {4: 0.5}, {3: 0.3}])
    # Legend solid + dashed: on the ink, 0.8 of 1.3 is on the named classes.
    assert enlarge.legend_share(probs, [(2,), (3,)]) == pytest.approx(0.8 / 1.3)
    assert enlarge.legend_share(probs, [(4,)]) == pytest.approx(0.5 / 1.3)
    assert enlarge.legend_share(_probs([{}, {3: 0.3}]), [(3,)]) == 0.0


def test_pick_takes_each_curve_from_the_scale_where_it_shows_more(enlarge: ModuleType) -> None:
    # Curve 0 (solid) shows at size in 2 of 2 columns, enlarged in 1; curve 1 (dashed) at size in 0, enlarged in 1.
    at_size = _probs([{2: 0.9, 3: 0.05}, {2: 0.8, 3: 0.1}])
    enlarged = _probs([{2: 0.3, 3: 0.6}, {2: 0.6, 3: 0.3}])
    joined = enlarge.joined_maps(at_size, enlarged, [(2,), (3,)])
    np.testing.assert_allclose(joined["pick"][2], at_size[2])
    np.testing.assert_allclose(joined["pick"][3], enlarged[3])
    np.testing.assert_allclose(joined["mean"][3, 0], [0.325, 0.2])
    np.testing.assert_allclose(joined["max"][2, 0], [0.9, 0.8])


def test_the_choosers_keep_the_enlarged_reading_only_as_each_rule_says(enlarge: ModuleType) -> None:
    ways = enlarge.choosers()
    fewer = {"missing": 1, "missing_enlarged": 0, "legend_share": 0.80, "legend_share_enlarged": 0.83,
             "ways": {"at size": [], "enlarged": [], "mean": [], "max": [], "pick": []}}
    assert ways["fewer missing"](fewer) == "enlarged"
    assert ways["fewer missing, legend share +0"](fewer) == "enlarged"
    assert ways["fewer missing, legend share +0.05"](fewer) == "at size"  # 0.83 < 0.80 + 0.05
    as_many = fewer | {"missing_enlarged": 1}
    assert ways["fewer missing"](as_many) == "at size"
    assert ways["pick"](fewer) == "pick"
    shown = {"missing": 0, "legend_share": 0.9, "ways": {"at size": []}}
    assert {choose(shown) for choose in ways.values()} == {"at size"}


def test_the_summary_counts_the_curves_a_choice_moved(enlarge: ModuleType) -> None:
    record = {"styles": ["solid", "dashed"], "missing": 1, "missing_enlarged": 0, "legend_share": 0.5,
              "legend_share_enlarged": 0.9,
              "ways": {"at size": [{"r2": 0.9, "mae": 0.010}, {"r2": 0.1, "mae": 0.050}],
                       "enlarged": [{"r2": 0.8, "mae": 0.012}, {"r2": 0.7, "mae": 0.020}]}}
    kept = enlarge.summarise([record], enlarge.choosers()["fewer missing"])
    assert (kept["changed_scans"], kept["mae_lower"], kept["mae_higher"]) == (1, 1, 1)
    assert kept["lowest_style"] == "dashed" and kept["lowest_r2"] == pytest.approx(0.7)
    assert kept["mean_style_mae"] == pytest.approx((0.012 + 0.020) / 2)
    not_kept = enlarge.summarise([record], enlarge.choosers()["at size"])
    assert not_kept["lowest_r2"] == pytest.approx(0.1) and not_kept["worse_p"] is None
