"""benchmarks/compare_models.py's own parts: the per-style figures, the paired test and the keep rule
(expected values computed by hand)."""

from __future__ import annotations

import importlib
from pathlib import Path
from types import ModuleType

import pandas as pd
import pytest

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


@pytest.fixture
def compare(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    return importlib.import_module("compare_models")


def frame(maes: list[float], r2: list[float] | None = None) -> pd.DataFrame:
    """Logs L0, L1, ...: two curves each (A solid, B dashed), the given MAEs, coverage 1, swaps 0.1 x log; L0 tall."""
    rows = []
    for i, mae in enumerate(maes):
        log = i // 2
        rows.append({"id": f"L{log}", "curve": "AB"[i % 2], "style": ("solid", "dashed")[i % 2], "mae": mae,
                     "r2": (r2 or [0.9] * len(maes))[i], "coverage": 1.0, "swap_share": 0.1 * log,
                     "n_curves": 2, "height": 700 if log == 0 else 600})
    return pd.DataFrame(rows)


def test_style_figures_are_medians_per_style_and_swaps_per_log(compare: ModuleType) -> None:
    # solid R² 0.9, 0.5, 0.7 -> median 0.7; dashed 0.8, 0.6, 0.2 -> 0.6, the lowest. MAEs solid 0.01, 0.03, 0.05
    # -> 0.03, dashed 0.02, 0.04, 0.06 -> 0.04; their mean 0.035. Swaps per log 0, 0.1, 0.2: median 0.1, mean 0.1.
    figures = compare.style_figures(frame([0.01, 0.02, 0.03, 0.04, 0.05, 0.06], [0.9, 0.8, 0.5, 0.6, 0.7, 0.2]))
    assert figures["lowest_style"] == "dashed" and figures["lowest_r2"] == pytest.approx(0.6)
    assert figures["styles"]["solid"]["r2"] == pytest.approx(0.7)
    assert figures["mean_mae"] == pytest.approx(0.035) and figures["all_mae"] == pytest.approx(0.035)
    assert figures["swaps_median"] == pytest.approx(0.1) and figures["swaps_mean"] == pytest.approx(0.1)
    # Two curves a track: all six R² -> median of 0.2, 0.5, 0.6, 0.7, 0.8, 0.9 = 0.65; the tall log L0: 0.9, 0.8.
    assert figures["curve_counts"] == {2: pytest.approx(0.65)} and figures["tall_r2"] == pytest.approx(0.85)


def test_paired_counts_and_tests_curve_by_curve(compare: ModuleType) -> None:
    before = frame([0.02] * 8)
    after = frame([0.01] * 7 + [0.03])  # 7 curves lower, 1 higher
    pair = compare.paired(before, after)
    assert (pair["lower"], pair["higher"]) == (7, 1)
    # Differences -0.01 x 7 and +0.01: ranks tie at 4.5; W+ = 4.5 of 36, so lower is significant and higher is not.
    assert pair["p_lower"] < 0.05 < pair["p_higher"]
    assert compare.paired(before, frame([0.02] * 5 + [0.01, 0.03, 0.01]))["p_higher"] == 1.0  # 3 moved: too few


def test_the_rule_keeps_only_when_every_condition_holds(compare: ModuleType) -> None:
    base = compare.style_figures(frame([0.02] * 8, [0.9, 0.8] * 4))
    better = compare.style_figures(frame([0.01] * 8, [0.9, 0.85] * 4))
    calm = {"p_higher": 0.5}
    assert compare.verdict(base, better, calm)["kept"]
    assert not compare.verdict(base, base, calm)["kept"]  # the lowest style must rise, not stay
    assert not compare.verdict(base, better, {"p_higher": 0.01})["kept"]
    worse_mae = compare.style_figures(frame([0.03] * 8, [0.9, 0.85] * 4))
    assert compare.verdict(base, worse_mae, calm) == {
        "lowest style higher": True, "mean MAE not higher": False, "coverage kept": True,
        "per-curve MAE not significantly higher": True, "kept": False}
    thin = frame([0.01] * 8, [0.9, 0.85] * 4).assign(coverage=0.99)  # 0.01 below: more than the 0.005 allowed
    assert not compare.verdict(base, compare.style_figures(thin), calm)["coverage kept"]
