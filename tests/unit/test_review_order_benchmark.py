"""benchmarks/review_order.py: the queue's order of evaluated logs and how early it shows the wrong ones, by hand."""

from __future__ import annotations

import importlib
from pathlib import Path
from types import ModuleType

import pandas as pd
import pytest


@pytest.fixture
def review_order(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """benchmarks/review_order.py as its command line runs it: with its folder on the import path."""
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[2] / "benchmarks"))
    return importlib.import_module("review_order")


def test_curves_drawn_alike_first_finds_the_confident_wrong_log(review_order: ModuleType) -> None:
    # Four logs: a (sure, two curves drawn alike, one read at R² 0.2: wrong), b (least sure, right),
    # c (unsure, wrong), d (right).
    per_log = pd.DataFrame({"id": ["a", "a", "b", "c", "d"], "curve": ["A", "B", "A", "A", "A"],
                            "drawn_alike": [2, 2, 1, 1, 1], "r2": [0.2, 0.9, 0.95, 0.4, 0.99],
                            "conf_p10": [0.9, 0.9, 0.1, 0.3, 0.5], "conf_median": [0.9, 0.9, 0.8, 0.2, 0.7],
                            "null_share": 0.0, "low_conf_share": 0.0})
    scans = review_order.scans_of(per_log, bad_r2=0.5)
    assert list(scans["wrong"]) == [True, False, True, False] and list(scans["alike_curves"]) == [2, 0, 0, 0]
    # By hand, confidence alone: b, c, d, a -> wrong at ranks 2 and 4; of the 4 (wrong, right) pairs only c
    # before d -> AUC 1/4. The first 25 % (one log, b) holds none, the first 50 % (b, c) one.
    alone = review_order.order_figures(scans, review_order.BY_CONFIDENCE)
    assert alone["auc"] == pytest.approx(0.25)
    assert alone["first_25"] == {"logs": 1, "wrong": 0} and alone["first_50"] == {"logs": 2, "wrong": 1}
    # With curves drawn alike first: a, b, c, d -> a before b and d, c before d: 3 of 4 pairs.
    first = review_order.order_figures(scans, review_order.ORDERS["drawn alike first, then conf_p10"])
    assert first["auc"] == pytest.approx(0.75) and first["first_25"] == {"logs": 1, "wrong": 1}
    assert first["logs"] == 4 and first["wrong"] == 2
    # The queue's order: a (drawn alike), then by conf_median c (0.2), d (0.7), b (0.8): both wrong logs first.
    queue = review_order.order_figures(scans, review_order.ORDERS["drawn alike first, then conf_median (the queue)"])
    assert queue["auc"] == pytest.approx(1.0) and queue["first_50"] == {"logs": 2, "wrong": 2}
