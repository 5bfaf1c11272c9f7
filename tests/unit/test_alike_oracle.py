"""benchmarks/alike.py: the contact oracle swaps two read curves' tails exactly where the truth crosses, and
identity flips are counted and told apart by what the readings did (hand-drawn rows)."""

from __future__ import annotations

import importlib
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

WIDTH = 61
COLUMNS = np.arange(WIDTH, dtype=np.float64)


@pytest.fixture
def alike(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """benchmarks/alike.py as its command line runs it: with its folder on the import path."""
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[2] / "benchmarks"))
    return importlib.import_module("alike")


def _contact(rows: np.ndarray) -> tuple[int, int]:
    """First and last column where the two read rows lie within the contact distance the reader uses (2 px)."""
    near = np.nonzero(np.abs(rows[0] - rows[1]) <= 2.0)[0]
    return int(near[0]), int(near[-1])


def test_a_crossing_read_as_a_bounce_is_swapped(alike: ModuleType) -> None:
    # Truth: one line falls 10 -> 70, the other rises 70 -> 10; they cross at column 30.
    truth = np.stack([10 + COLUMNS, 70 - COLUMNS])
    # Read: each curve bounces off the other at the crossing (the upper stays upper): wrong after column 30.
    rows = np.stack([truth.min(axis=0), truth.max(axis=0)])
    oracle = alike.Oracle()
    oracle.truth_rows = truth
    first, last = _contact(rows)
    assert (first, last) == (29, 31)  # |(10 + x) - (70 - x)| <= 2 for x in 29..31
    assert oracle(rows, 0, 1, first, last)
    assert (oracle.contacts, oracle.agreed) == (1, 1)  # the slope rule sees the crossing too


def test_a_bounce_read_as_a_bounce_stands(alike: ModuleType) -> None:
    # Truth: two curves that touch at column 30 and part again, each staying on its own side.
    upper = 29.0 - np.minimum(np.abs(COLUMNS - 30), 20)
    lower = 31.0 + np.minimum(np.abs(COLUMNS - 30), 20)
    truth = np.stack([upper, lower])
    oracle = alike.Oracle()
    oracle.truth_rows = truth
    first, last = _contact(truth)
    assert (first, last) == (30, 30)
    assert not oracle(truth.copy(), 0, 1, first, last)
    # Read with the tails swapped, the oracle swaps them back.
    swapped = truth.copy()
    swapped[:, last + 1:] = swapped[::-1, last + 1:]
    assert oracle(swapped, 0, 1, first, last)


FLAT = np.stack([np.full(101, 20.0), np.full(101, 60.0)])  # two true curves drawn alike, 40 px apart
X = np.arange(101)


def _flip(kind: str) -> np.ndarray:
    """Two readings that follow the truths straight, then crosswise from about column 50, by way of `kind`."""
    first = np.where(X < 50, 20.0, 60.0)
    if kind == "collapse":  # the first reading leaves for the other line at 40: both on 60 for columns 40-49
        first = np.where(X < 40, 20.0, 60.0)
    if kind == "contact":  # the readings cross over columns 45-55, meeting at 40 in column 50
        first = np.clip(20.0 + 4.0 * (X - 45), 20.0, 60.0)
    rows = np.stack([first, np.where(X < 50, 60.0, 20.0) if kind != "contact" else 80.0 - first])
    if kind == "absence":  # neither is read over columns 45-54
        rows[:, 45:55] = np.nan
    return rows


@pytest.mark.parametrize("kind", ["jump", "collapse", "contact", "absence"])
def test_an_identity_flip_is_told_by_what_the_readings_did(alike: ModuleType, kind: str) -> None:
    flips = alike.identity_flips(_flip(kind), FLAT, [(2,), (2,)])
    assert dict(flips) == {kind: 1}


def test_no_flip_without_a_change_of_pairing_that_lasts(alike: ModuleType) -> None:
    straight = FLAT.copy()
    assert not alike.identity_flips(straight, FLAT, [(2,), (2,)])
    # Crosswise for 10 columns only (shorter than MIN_SPAN = 20): straight on both sides, no flip.
    excursion = FLAT.copy()
    excursion[:, 50:60] = FLAT[::-1, 50:60]
    assert not alike.identity_flips(excursion, FLAT, [(2,), (2,)])
    # Curves of different styles are never a pair drawn alike.
    assert not alike.identity_flips(_flip("jump"), FLAT, [(2,), (3,)])
