"""benchmarks/extract.py: the two mixtures that split the net's loss into finding ink and naming its style
(hand-built 7-class maps, expected values worked out by hand), and forked workers scoring as one process does."""

from __future__ import annotations

import importlib
import multiprocessing
import os
import signal
import time
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

from veernet_pipeline.config import load_settings

# Classes: 0 background, 1 other ink, 2 solid, 3 dashed, 4 dotted, 5 dash-dot, 6 long-dash (io.classes).
MASK = np.array([[0, 2], [3, 1]])


@pytest.fixture
def extract(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """benchmarks/extract.py as its command line runs it: with its folder on the import path."""
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[2] / "benchmarks"))
    return importlib.import_module("extract")


def _net() -> np.ndarray:
    """A 2 x 2 map: paper read as paper; the solid pixel half found (0.5 ink, mostly named long-dash); the dashed
    pixel missed outright (all background); the other-ink pixel read as dotted ink (0.6)."""
    net = np.zeros((7, 2, 2), dtype=np.float32)
    net[0] = [[1.0, 0.5], [1.0, 0.4]]
    net[2, 0, 1], net[6, 0, 1] = 0.1, 0.4
    net[4, 1, 1] = 0.6
    return net


def test_net_ink_names_the_true_style_of_the_ink_the_net_found(extract: ModuleType) -> None:
    out = extract.source_probs({"probs": _net(), "mask": MASK}, "net_ink")
    # Solid pixel: its 0.1 + 0.4 = 0.5 of curve ink all goes to solid; background keeps its 0.5.
    assert out[:, 0, 1] == pytest.approx([0.5, 0, 0.5, 0, 0, 0, 0])
    # Missed dashed pixel: no curve ink to rename, so it stays background.
    assert out[:, 1, 0] == pytest.approx([1.0, 0, 0, 0, 0, 0, 0])
    # Off the true curves the net's map is left alone (the 0.6 dotted on other ink stays).
    assert out[:, 1, 1] == pytest.approx(_net()[:, 1, 1])


def test_true_ink_spreads_the_true_ink_over_the_net_s_styles(extract: ModuleType) -> None:
    out = extract.source_probs({"probs": _net(), "mask": MASK}, "true_ink")
    floor = 0.02 / 7  # mask_probs: 0.98 on the labelled class plus 0.02 spread over all seven
    curve_ink = 0.98 + 5 * floor
    # Solid pixel: the net named 0.1 solid, 0.4 long-dash of its 0.5 ink: 1/5 and 4/5 of the true curve ink.
    assert out[2, 0, 1] == pytest.approx(curve_ink * 0.2, rel=1e-4)
    assert out[6, 0, 1] == pytest.approx(curve_ink * 0.8, rel=1e-4)
    assert out[0, 0, 1] == pytest.approx(floor)
    # Missed dashed pixel: the net names no style, so the true ink is spread evenly over the five.
    assert out[2:, 1, 0] == pytest.approx([curve_ink / 5] * 5, rel=1e-4)
    # Paper and other ink keep the true mask's probabilities.
    assert out[:, 1, 1] == pytest.approx(extract.mask_probs(MASK, 7)[:, 1, 1])


def test_an_unknown_source_is_refused(extract: ModuleType) -> None:
    with pytest.raises(ValueError, match="not one of"):
        extract.source_probs({"probs": _net(), "mask": MASK}, "oracle")


def test_a_mixture_of_a_binary_map_is_refused(extract: ModuleType) -> None:
    binary = _net()[:2]
    assert extract.source_probs({"probs": binary, "mask": MASK}, "net").shape == (2, 2, 2)  # read as it is
    with pytest.raises(ValueError, match="7-class multiclass model"):
        extract.source_probs({"probs": binary, "mask": MASK}, "net_ink")


def _staircases(extract: ModuleType) -> list[dict]:
    """Three one-curve logs: a solid staircase (one row down every 8 columns) inked in the first 80, 60 and 40 of its
    80 columns, drawn as near-certain probabilities; one curve per log leaves the swap share undefined (NaN)."""
    logs = []
    columns = np.arange(80)
    for start, inked in ((2, 80), (5, 60), (8, 40)):
        rows = start + columns // 8
        mask = np.zeros((24, 80), dtype=np.uint8)
        mask[rows[:inked], columns[:inked]] = 2
        logs.append({"id": str(start), "height": 24, "mask": mask, "probs": extract.mask_probs(mask, 7),
                     "truth": ((rows + 0.5) / 24)[None], "classes": [(2,)], "styles": ["solid"]})
    return logs


def test_a_search_limited_to_some_knobs_tries_only_their_values(extract: ModuleType) -> None:
    logs = _staircases(extract)
    start = load_settings(Path(__file__).resolve().parents[2] / "params.yaml", profile="cpu").extract
    _, trials = extract.search(logs, start, knobs=["gap_cost", "jump_px"], passes=1)
    # The start, then every other value of the two knobs' grids (jump_px: 2, 4, 8, 32, 64 beside the start's 16;
    # gap_cost: 1, 2, 8, 16 beside 4), each with every other knob as the start has it.
    tried = [(t["params"]["jump_px"], t["params"]["gap_cost"]) for t in trials]
    assert tried[0] == (16.0, 4.0) and len(tried) == 1 + 5 + 4
    assert {jump for jump, _ in tried} == {2.0, 4.0, 8.0, 16.0, 32.0, 64.0}
    assert {gap for _, gap in tried} == {1.0, 2.0, 4.0, 8.0, 16.0}
    others = {k: v for k, v in start.model_dump().items() if k not in ("jump_px", "gap_cost")}
    assert all({k: t["params"][k] for k in others} == others for t in trials)
    with pytest.raises(ValueError, match=r"\['gap'\] are not searched"):
        extract.search(logs, start, knobs=["gap"])


def test_forked_workers_score_as_one_process(extract: ModuleType) -> None:
    logs = _staircases(extract)
    params = load_settings(Path(__file__).resolve().parents[2] / "params.yaml", profile="cpu").extract
    one = extract.score(logs, params)
    with extract.readers(logs, 2) as pool:
        two = extract.score(logs, params, pool=pool)
        again = extract.score(logs, params, source="mask", pool=pool)  # the same pool serves a second trial
        with pytest.raises(ValueError, match="other logs"):
            extract.score(logs[:2], params, pool=pool)
    alone = extract.score(logs, params, source="mask")
    for pooled, single in ((two, one), (again, alone)):
        assert pooled.keys() == single.keys()
        assert all(pooled[k] == single[k] or (np.isnan(pooled[k]) and np.isnan(single[k])) for k in single)
    # Read on the line wherever inked; coverage 1, 0.75 and 0.5, so a log a worker left out would move the median.
    assert (one["median_coverage_solid"], one["median_r2_solid"]) == (0.75, 1.0)


@pytest.mark.timeout(120)  # without the fix it waits for ever (seen: the 900 s default, as in CI)
def test_leaving_the_readers_ends_a_busy_worker_whatever_sigterm_handler_the_parent_holds(
        extract: ModuleType) -> None:
    # As inside Dagster's `capture_interrupts`: SIGTERM only recorded. A forked worker that kept this handler and is
    # busy (here asleep for 300 s) would not die of terminate()'s SIGTERM, and leaving `readers` would wait for it.
    caught: list[int] = []
    previous = signal.signal(signal.SIGTERM, lambda signum, frame: caught.append(signum))
    try:
        started = time.monotonic()
        with extract.readers([{"id": "0"}], 2) as pool:
            assert pool.apply(signal.getsignal, (signal.SIGTERM,)) == signal.SIG_DFL
            pool.apply_async(time.sleep, (300,))
            time.sleep(0.5)  # the sleep has reached a worker
        assert time.monotonic() - started < 60, "leaving the readers waited for a busy worker"
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert caught == []


# Set in the parent just before each fork (os.register_at_fork's `before`), read by the child just after it: the
# one child of the next fork that should hang as a child forked while another thread held a lock it needs does.
_HANG_AT_FORK = {"left": 0, "this_one": False}


def _count_down_before_fork() -> None:
    _HANG_AT_FORK["this_one"] = _HANG_AT_FORK["left"] > 0
    _HANG_AT_FORK["left"] = max(0, _HANG_AT_FORK["left"] - 1)


def _hang_in_the_child() -> None:
    if _HANG_AT_FORK["this_one"]:
        time.sleep(300)  # sleeps again after each signal a Python-level handler takes (PEP 475)


os.register_at_fork(before=_count_down_before_fork, after_in_child=_hang_in_the_child)


@pytest.mark.timeout(120)  # without the fix it waits for ever (seen: the 900 s default, CI of 2026-12-07)
def test_leaving_the_readers_ends_a_worker_that_hung_before_its_first_line(extract: ModuleType) -> None:
    # A worker stuck between fork and its initializer still holds the parent's SIGTERM handler (here one that only
    # records, as inside Dagster's `capture_interrupts`), so terminate()'s SIGTERM does not end it unless the
    # child was born with SIGTERM's default action.
    caught: list[int] = []
    before = set(multiprocessing.active_children())
    previous = signal.signal(signal.SIGTERM, lambda signum, frame: caught.append(signum))
    try:
        started = time.monotonic()
        _HANG_AT_FORK["left"] = 1
        with extract.readers([{"id": "0"}], 2) as pool:
            assert pool.apply(os.getpid) != os.getpid()  # the other worker serves
        assert time.monotonic() - started < 60, "leaving the readers waited for a worker hung at its fork"
    finally:
        _HANG_AT_FORK["left"] = 0
        signal.signal(signal.SIGTERM, previous)
        for child in set(multiprocessing.active_children()) - before:  # when failing: so the session can end
            child.kill()
    assert caught == [] and signal.getsignal(signal.SIGTERM) is previous
