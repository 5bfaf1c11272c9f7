"""The loss ablation's rule (benchmarks/losses.py): chosen on the recovered curves, decisive only when it separates."""

from __future__ import annotations

from typing import Any

import pandas as pd
import pytest

from benchmarks.losses import ALPHA, MAX_SWAP_SHARE, MIN_COVERAGE, R2_TOLERANCE, pick_winner, row_of

LOGS = [f"log{i}" for i in range(8)]


def _row(loss: str, mae: float, r2: float = 0.99, coverage: float = 0.98, swaps: float = 0.005) -> dict[str, Any]:
    """One loss's row from metrics.json-like figures: two styles, per-log MAE `mae` + a log-dependent offset."""
    styles = {style: {"median_mae": mae, "median_r2": r2, "median_coverage": coverage} for style in ("solid", "dashed")}
    metrics = {"styles": styles, "swap_share": swaps, "classes": {"0": {"iou": 0.99}, "2": {"iou": 0.8}}}
    per_log = pd.DataFrame({"id": LOGS * 2, "mae": [mae + 0.001 * i for i in range(8)] * 2})
    return row_of(loss, metrics, per_log, {"wall_clock_s": 1.0, "final": {}, "history": [{"seconds": 1.0}]}, 1.0)


def test_lowest_mae_on_every_log_wins_decisively() -> None:
    rows = [_row("dice", 0.02), _row("tversky", 0.01), _row("focal", 0.03)]
    winner, decisive, p_values = pick_winner(rows)
    # 8 logs all lower: one-sided Wilcoxon p = 1 / 2**8, below ALPHA / 2 comparisons.
    assert winner == "tversky" and decisive
    assert p_values == {"dice": pytest.approx(1 / 256), "focal": pytest.approx(1 / 256)} and ALPHA / 2 > 1 / 256
    assert rows[1]["min_median_r2"] == 0.99 and rows[1]["mean_median_mae"] == pytest.approx(0.01)


def test_a_winner_on_mae_whose_r2_trails_is_not_decisive() -> None:
    rows = [_row("dice", 0.02, r2=0.99), _row("tversky", 0.01, r2=0.99 - 2 * R2_TOLERANCE)]
    winner, decisive, _ = pick_winner(rows)
    assert winner == "tversky" and not decisive


def test_unread_curves_or_swapped_identities_make_a_loss_ineligible() -> None:
    low_coverage = _row("lovasz", 0.001, coverage=MIN_COVERAGE - 0.1)
    swapping = _row("soft_ce", 0.002, swaps=MAX_SWAP_SHARE + 0.01)
    rows = [low_coverage, swapping, _row("tversky", 0.01), _row("dice", 0.02)]
    assert [row["eligible"] for row in rows] == [False, False, True, True]
    winner, _, p_values = pick_winner(rows)
    assert winner == "tversky" and set(p_values) == {"dice"}


def test_too_few_logs_never_decide() -> None:
    rows = [_row("dice", 0.02), _row("tversky", 0.01)]
    for row in rows:
        row["log_mae"] = dict(list(row["log_mae"].items())[:5])  # 5 pairs: the smallest one-sided p is 1/32
    assert pick_winner(rows)[1] is False
