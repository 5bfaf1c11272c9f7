"""Which curves a map is read for: the sidecar's by style, as many as the map supports, the seeds' three classes."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from tests.maps import blank, centre, dashes, paint
from veernet_pipeline.config import Settings
from veernet_pipeline.io.calibration import Calibration
from veernet_pipeline.io.classes import style_class
from veernet_pipeline.reading.extract import trace_curves
from veernet_pipeline.reading.styles import (
    as_style_probs,
    curve_classes,
    detect_styles,
    plan_reading,
)

H, W = 128, 500
X = np.arange(W)
SIDECAR = {"depth": {"top": 0.0, "bottom": 10.0, "unit": "M"},
           "curves": [{"mnemonic": "GR", "top_value": 0, "bottom_value": 150},
                      {"mnemonic": "SP", "top_value": -80, "bottom_value": 20}]}


def _track() -> np.ndarray:
    probs = blank(H, W)
    paint(probs, 20 + 0.05 * X, style_class("solid"))
    paint(probs, 60 + 10 * np.sin(X / 40.0), style_class("solid"))
    paint(probs, 90 + 0.02 * X, style_class("dashed"), dashes(W, 18, 10))  # ink in 64 % of the columns
    paint(probs, 110 - 0.01 * X, style_class("dotted"), dashes(W, 2, 3))  # 40 %
    paint(probs, np.full(W, 5.0), style_class("dash_dot"), X[::25])  # stray specks: 4 % of the columns
    return probs


def test_the_map_decides_how_many_curves_of_each_style(test_settings: Settings) -> None:
    assert detect_styles(_track(), test_settings.extract) == ["solid", "solid", "dashed", "dotted"]
    # Raising the bar above the dotted curve's 40 % leaves it out.
    strict = test_settings.extract.model_copy(update={"min_support": 0.5})
    assert detect_styles(_track(), strict) == ["solid", "solid", "dashed"]
    assert detect_styles(blank(H, W), test_settings.extract) == []


def test_without_a_sidecar_the_detected_curves_are_named_in_track_units(test_settings: Settings) -> None:
    plan = plan_reading(_track(), None, test_settings.extract)
    assert [c.mnemonic for c in plan.calibration.curves] == ["CURVE_A", "CURVE_B", "CURVE_C", "CURVE_D"]
    assert plan.labels == ["solid", "solid", "dashed", "dotted"] and not plan.calibration.calibrated
    assert plan.classes == [(2,), (2,), (3,), (4,)]
    assert "4 curves found" in plan.notes[0]


def _undecided(probs: np.ndarray) -> np.ndarray:
    """The same ink with its probability spread evenly over the five styles, as a briefly trained net gives it."""
    ink = probs[2:].sum(axis=0)
    out = probs.copy()
    out[2:] = ink / 5
    return out


def test_ink_no_style_dominates_is_still_read_as_curves_of_any_style(test_settings: Settings) -> None:
    probs = blank(H, W)
    paint(probs, 20 + 0.05 * X, style_class("solid"))
    paint(probs, 90 + 0.02 * X, style_class("solid"))
    undecided = _undecided(probs)
    assert detect_styles(undecided, test_settings.extract) == []  # each style holds 1/5 of every run
    plan = plan_reading(undecided, None, test_settings.extract)
    assert [c.mnemonic for c in plan.calibration.curves] == ["CURVE_A", "CURVE_B"]
    assert plan.labels == ["any", "any"] and plan.classes == [(2, 3, 4, 5, 6)] * 2
    assert "no line style dominates" in plan.notes[0]
    rows, _ = trace_curves(undecided, test_settings.extract, plan.classes)
    np.testing.assert_allclose(rows[0], centre(20 + 0.05 * X), atol=1.0)
    np.testing.assert_allclose(rows[1], centre(90 + 0.02 * X), atol=1.0)
    # Paper alone is still no curve.
    assert plan_reading(blank(H, W), None, test_settings.extract).classes == []


def test_a_sidecar_decides_the_curves_and_a_binary_map_reads_one(test_settings: Settings) -> None:
    calib = Calibration.from_dict(SIDECAR)
    plan = plan_reading(_track(), calib, test_settings.extract)
    assert plan.calibration is calib and plan.labels == ["solid", "broken"]
    assert plan.classes == curve_classes([None, None])
    binary = plan_reading(blank(H, W, channels=2), calib, test_settings.extract)
    assert binary.classes == [(1,)] and "SP not digitised" in binary.notes[0]


def test_a_map_of_the_seeds_three_classes_reads_a_two_curve_sidecar(test_settings: Settings) -> None:
    """A model trained before the style classes: curve A's channel becomes solid, curve B's dashed."""
    seeds = blank(H, W, channels=3)
    a, b = 40 + 30 * np.sin(X / 60.0), 50 + 0.04 * X
    paint(seeds, a, 1)
    paint(seeds, b, 2, dashes(W, 18, 10))
    probs = as_style_probs(seeds)
    assert probs.shape == (7, H, W)
    np.testing.assert_array_equal(probs[style_class("solid")], seeds[1])
    np.testing.assert_array_equal(probs[style_class("dashed")], seeds[2])
    assert as_style_probs(probs) is probs
    plan = plan_reading(probs, Calibration.from_dict(SIDECAR), test_settings.extract)
    rows, _ = trace_curves(probs, test_settings.extract, plan.classes)
    apart = np.abs(a - b) > 4
    np.testing.assert_allclose(rows[0, apart], centre(a)[apart], atol=1.0)
    np.testing.assert_allclose(rows[1, apart], centre(b)[apart], atol=1.0)


def test_a_sidecar_file_naming_styles_reads_each_curve_on_its_style(test_settings: Settings, tmp_path: Path) -> None:
    """Styles come from the sidecar file as ingest parses it (io.sidecar), in the sidecar's order, not class order."""
    path = tmp_path / "scan.tif.calib.json"
    path.write_text(json.dumps({**SIDECAR, "curves": [{**SIDECAR["curves"][0], "style": "dotted"},
                                                      {**SIDECAR["curves"][1], "style": "dashed"}]}))
    plan = plan_reading(_track(), Calibration.from_file(path), test_settings.extract)
    assert plan.classes == [(style_class("dotted"),), (style_class("dashed"),)] and plan.labels == ["dotted", "dashed"]
    rows, _ = trace_curves(_track(), test_settings.extract, plan.classes)
    read = slice(0, 497)  # the dotted pattern's last dot ends at column 496
    np.testing.assert_allclose(rows[0, read], centre(110 - 0.01 * X)[read], atol=1.0)
    np.testing.assert_allclose(rows[1, :491], centre(90 + 0.02 * X)[:491], atol=1.0)


