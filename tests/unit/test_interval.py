"""Bootstrap intervals of the per-style median R^2 and of the gate's figure, against hand-computed ones."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from veernet_pipeline.config import IntervalParams
from veernet_pipeline.evaluation.interval import interval_text, r2_intervals
from veernet_pipeline.stages.evaluate import headline
from veernet_pipeline.tracking import store

SEED = 20261122


def _frame(by_style: dict[str, list[float]]) -> pd.DataFrame:
    return pd.DataFrame([{"style": style, "r2": r2} for style, values in by_style.items() for r2 in values])


def test_median_of_two_curves_takes_three_values_with_known_odds() -> None:
    # Two curves, R^2 0 and 1: a resample's median is 0 (both draws 0, odds 1/4), 0.5 (1/2) or 1 (1/4).
    # A 90 % interval runs from the 5th to the 95th percentile: 0 to 1. A 40 % one, the 30th to the 70th:
    # both inside the middle half, 0.5 and 0.5.
    frame = _frame({"dashed": [0.0, 1.0]})
    wide = r2_intervals(frame, IntervalParams(level=0.9, resamples=2000), SEED)
    narrow = r2_intervals(frame, IntervalParams(level=0.4, resamples=2000), SEED)
    assert wide["styles"]["dashed"] == pytest.approx([0.0, 1.0])
    assert narrow["styles"]["dashed"] == pytest.approx([0.5, 0.5])
    assert wide["level"] == 0.9 and wide["resamples"] == 2000


def test_gate_interval_resamples_each_style_on_its_own() -> None:
    # Solid's five curves all read 0.9, so its median is 0.9 in every resample; dashed's is 0, 0.5 or 1 as
    # above. The gate figure min(0.9, dashed) is 0, 0.5 or 0.9: its 90 % interval is 0 to 0.9.
    result = r2_intervals(_frame({"solid": [0.9] * 5, "dashed": [0.0, 1.0]}), IntervalParams(level=0.9, resamples=2000),
                          SEED)
    assert result["median_r2"] == pytest.approx([0.0, 0.9])
    assert result["styles"]["solid"] == pytest.approx([0.9, 0.9])


def test_a_style_of_one_curve_has_no_interval_but_caps_the_gate() -> None:
    # One dotted curve at 0.7: no spread to resample (NaN), yet every resample's lowest median is at most 0.7:
    # min(0.7, dashed) is 0, 0.5 or 0.7, so the gate's 90 % interval is 0 to 0.7.
    result = r2_intervals(_frame({"dotted": [0.7], "dashed": [0.0, 1.0]}), IntervalParams(level=0.9, resamples=2000),
                          SEED)
    assert all(math.isnan(v) for v in result["styles"]["dotted"])
    assert result["median_r2"] == pytest.approx([0.0, 0.7])


def test_a_style_never_read_leaves_the_gate_interval_undefined() -> None:
    result = r2_intervals(_frame({"solid": [0.8, 0.9, 0.95], "dotted": [math.nan, math.nan]}),
                          IntervalParams(level=0.9, resamples=500), SEED)
    assert all(math.isnan(v) for v in result["median_r2"])
    assert all(math.isnan(v) for v in result["styles"]["dotted"])
    assert result["styles"]["solid"][0] <= 0.9 <= result["styles"]["solid"][1]


def test_interval_width_matches_the_median_standard_error() -> None:
    # 400 curves from N(0.8, 0.1): the sample median's standard error is sqrt(pi / 2) * 0.1 / sqrt(400)
    # (the normal's asymptotic variance of the median), so a 90 % interval spans about 2 * 1.645 of it.
    values = np.random.default_rng(SEED).normal(0.8, 0.1, 400)
    low, high = r2_intervals(_frame({"solid": list(values)}), IntervalParams(level=0.9, resamples=4000),
                             SEED)["styles"]["solid"]
    expected = 2 * 1.645 * math.sqrt(math.pi / 2) * 0.1 / math.sqrt(400)
    assert high - low == pytest.approx(expected, rel=0.3)
    assert low < np.median(values) < high


def test_same_seed_same_interval() -> None:
    frame = _frame({"solid": list(np.linspace(0.2, 0.99, 17)), "long_dash": list(np.linspace(-1.0, 0.95, 13))})
    params = IntervalParams(level=0.9, resamples=1000)
    assert r2_intervals(frame, params, SEED) == r2_intervals(frame, params, SEED)


def test_summary_line_shows_the_interval_the_run_recorded_and_none_when_it_is_undefined() -> None:
    # The stage records `store.numeric(headline(metrics))`: NaN is dropped there, so an undefined interval
    # (a style never read) must leave the summary line without one rather than fail.
    def recorded(interval: list[float]) -> str:
        metrics = {"median_r2": 0.657, "median_mae": 0.02, "swap_share": 0.1, "styles": {}, "curves": {},
                   "drawn_alike": {}, "interval": {"median_r2": interval}}
        figures = store.numeric(headline(metrics))
        return interval_text(figures.get("median_r2_low"), figures.get("median_r2_high"), 0.9)

    assert recorded([0.4412, 0.8013]) == " (90 % interval 0.4412 to 0.8013)"
    assert recorded([math.nan, math.nan]) == ""
