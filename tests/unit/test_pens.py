"""Thick vs thin: a seeds' sidecar (no style) over two solid pens reads A on the thicker, B on the thinner."""

from __future__ import annotations

import numpy as np
import pytest

from tests.maps import blank, centre, dashes, paint, run_extents
from veernet_pipeline.config import Settings
from veernet_pipeline.io.calibration import Calibration
from veernet_pipeline.io.classes import style_class
from veernet_pipeline.reading.candidates import find_candidates
from veernet_pipeline.reading.pens import pen_widths
from veernet_pipeline.reading.track import read_track

H, W = 128, 500
X = np.arange(W)
SOLID, DASHED = style_class("solid"), style_class("dashed")
SIDECAR = {"depth": {"top": 0.0, "bottom": 10.0, "unit": "M"},
           "curves": [{"mnemonic": "GR", "top_value": 0, "bottom_value": 150},
                      {"mnemonic": "SP", "top_value": -80, "bottom_value": 20}]}
HIGH, LOW = 30 + 0.05 * X, 90 - 0.05 * X  # two lines that never meet


def _two_solid(high_pen: int, low_pen: int) -> np.ndarray:
    probs = blank(H, W)
    paint(probs, HIGH, SOLID, pen=high_pen)
    paint(probs, LOW, SOLID, pen=low_pen)
    return probs


@pytest.mark.parametrize(("high_pen", "low_pen"), [(3, 1), (1, 3)])
def test_the_thicker_solid_line_is_curve_a_wherever_it_lies(test_settings: Settings, high_pen: int,
                                                            low_pen: int) -> None:
    reading = read_track(_two_solid(high_pen, low_pen), Calibration.from_dict(SIDECAR), test_settings.extract)
    thick, thin = (HIGH, LOW) if high_pen > low_pen else (LOW, HIGH)
    np.testing.assert_allclose(reading.rows[0], centre(thick, max(high_pen, low_pen)), atol=1.0)
    np.testing.assert_allclose(reading.rows[1], centre(thin, 1), atol=1.0)
    assert reading.plan.labels == ["solid (thick)", "solid (thin)"]
    # A and B stay told apart (the seeds' classes), so the evaluate stage scores their identities strictly.
    assert reading.plan.classes[1] != reading.plan.classes[0]
    note = reading.plan.notes[-1]
    assert note.startswith("SP (curve B") and "0% of columns" in note and "two solid lines in 100%" in note
    assert "thick (A, 3." in note and "thin (B, 1." in note and '"style"' in note


def test_pens_of_one_width_are_read_as_curves_drawn_alike(test_settings: Settings) -> None:
    reading = read_track(_two_solid(2, 2), Calibration.from_dict(SIDECAR), test_settings.extract)
    np.testing.assert_allclose(reading.rows[0], centre(HIGH), atol=1.0)  # the higher line is A
    np.testing.assert_allclose(reading.rows[1], centre(LOW), atol=1.0)
    assert reading.plan.labels == ["solid", "solid"] and reading.plan.classes == [(SOLID,), (SOLID,)]
    assert "not told apart (2.0 / 2.0 px)" in reading.plan.notes[-1]


def test_the_seeds_reading_stands_where_b_is_broken_or_absent_or_styles_are_named(test_settings: Settings) -> None:
    calibration = Calibration.from_dict(SIDECAR)
    solid_dashed = blank(H, W)
    paint(solid_dashed, HIGH, SOLID)
    paint(solid_dashed, LOW, DASHED, dashes(W, 18, 10))  # B inked in 64 % of the columns: read as broken
    reading = read_track(solid_dashed, calibration, test_settings.extract)
    assert reading.plan.labels == ["solid", "broken"] and reading.plan.notes == []
    np.testing.assert_allclose(reading.rows[1, :491], centre(LOW)[:491], atol=1.0)
    alone = blank(H, W)
    paint(alone, HIGH, SOLID)  # B absent and one solid line only: nothing to read B on
    assert read_track(alone, calibration, test_settings.extract).plan.notes == []
    named = Calibration.from_dict({**SIDECAR, "curves": [{**c, "style": "solid"} for c in SIDECAR["curves"]]})
    assert read_track(_two_solid(3, 1), named, test_settings.extract).plan.labels == ["solid", "solid"]
    assert read_track(_two_solid(3, 1), named, test_settings.extract).plan.notes == []


def test_a_pen_is_measured_where_its_curve_runs_flat(test_settings: Settings) -> None:
    """A curve swinging at 2 px a column between flat stretches: its width is the pen's (2 px), not the runs' mean."""
    rows = np.where((X >= 150) & (X < 350), 40 + np.abs((2 * (X - 150)) % 120 - 60), 100.0)
    probs = blank(H, W)
    paint(probs, rows, SOLID, pen=2)
    low, high = run_extents(rows, pen=2)
    assert np.mean(high - low + 1) > 2.5  # every run's height, averaged: the travel counts
    extract = test_settings.extract
    solid = find_candidates(probs, [(SOLID,)], extract.max_candidates, extract.min_confidence)
    assert pen_widths(solid, centre(rows)[None])[0] == pytest.approx(2.0, abs=0.25)
    assert np.isnan(pen_widths(solid, np.full((1, W), np.nan))[0])  # nothing read
