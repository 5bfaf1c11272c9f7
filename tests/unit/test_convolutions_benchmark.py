"""benchmarks/convolutions.py: the step's convolutions found by their hooks, GFLOP counted by hand."""

from __future__ import annotations

import importlib
from pathlib import Path
from types import ModuleType

import pytest
from torch import nn


@pytest.fixture
def convolutions(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """benchmarks/convolutions.py as its command line runs it: with its folder on the import path."""
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[2] / "benchmarks"))
    return importlib.import_module("convolutions")


def test_gflop_of_a_convolution_by_hand(convolutions: ModuleType) -> None:
    # 2 -> 3 channels, 3x3, on 4 x 4: 48 outputs x 18 multiply-adds x 2 = 1,728 flop forward, x 3 with backward.
    same = convolutions.time_convolution((1, 2, 4, 4, 3, (3, 3), (1, 1), (1, 1), (1, 1)), repeats=1)
    assert same["gflop"] == pytest.approx(3 * 1728e-9)
    # Stride 2 keeps a quarter of the outputs (2 x 2): 12 x 18 x 2 x 3.
    halved = convolutions.time_convolution((1, 2, 4, 4, 3, (3, 3), (2, 2), (1, 1), (1, 1)), repeats=1)
    assert halved["gflop"] == pytest.approx(3 * 432e-9) and halved["seconds"] > 0


def test_every_convolution_of_the_forward_is_counted(convolutions: ModuleType) -> None:
    # Two convolutions of one shape and a strided one; the pool between has no weights and is not counted.
    net = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.Conv2d(4, 4, 3, padding=1), nn.Conv2d(4, 4, 3, padding=1),
                        nn.MaxPool2d(2), nn.Conv2d(4, 8, 3, stride=2, padding=1))
    seen = convolutions.step_convolutions(net)
    batch, crop = convolutions.BATCH, convolutions.CROP
    assert seen[(batch, 4, *crop, 4, (3, 3), (1, 1), (1, 1), (1, 1))] == 2
    assert seen[(batch, 4, crop[0] // 2, crop[1] // 2, 8, (3, 3), (2, 2), (1, 1), (1, 1))] == 1
    assert sum(seen.values()) == 4
