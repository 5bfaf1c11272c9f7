"""The mask-class contract and the sidecar's line style."""

from __future__ import annotations

import pytest

from veernet_pipeline.io.calibration import Calibration, CalibrationError
from veernet_pipeline.io.classes import CLASSES, style_class
from veernet_pipeline.reading.styles import curve_classes

SIDECAR = {"depth": {"top": 0.0, "bottom": 10.0, "unit": "M"},
           "curves": [{"mnemonic": "GR", "top_value": 0, "bottom_value": 150},
                      {"mnemonic": "SP", "top_value": -80, "bottom_value": 20}]}


def test_classes_are_background_other_ink_then_the_styles() -> None:
    assert CLASSES == ("background", "other_ink", "solid", "dashed", "dotted", "dash_dot", "long_dash")
    assert style_class("solid") == 2 and style_class("long_dash") == 6
    with pytest.raises(ValueError, match="not one of"):
        style_class("wavy")


def test_a_sidecar_without_styles_keeps_the_seeds_convention() -> None:
    # Solid first; then any of the four broken styles (3..6); any further curve any curve class (2..6).
    assert curve_classes([None, None, None]) == [(2,), (3, 4, 5, 6), (2, 3, 4, 5, 6)]


def test_named_styles_decide_and_unnamed_curves_may_be_any() -> None:
    assert curve_classes(["dashed", None, "solid"]) == [(3,), (2, 3, 4, 5, 6), (2,)]


def test_the_sidecar_carries_a_style_and_refuses_an_unknown_one() -> None:
    styled = {**SIDECAR, "curves": [{**SIDECAR["curves"][0], "style": "dotted"}, SIDECAR["curves"][1]]}
    calib = Calibration.from_dict(styled)
    assert [c.style for c in calib.curves] == ["dotted", None]
    assert Calibration.from_dict(calib.to_dict()) == calib
    assert "style" not in Calibration.from_dict(SIDECAR).to_dict()["curves"][0]
    wrong = {**SIDECAR, "curves": [{**SIDECAR["curves"][0], "style": "wavy"}]}
    with pytest.raises(CalibrationError, match=r"curves\[0\]\.style: 'wavy' is not one of"):
        Calibration.from_dict(wrong, "x.calib.json")
