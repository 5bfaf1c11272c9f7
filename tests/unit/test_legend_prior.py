"""The track's legend as a prior: probability on styles the sidecar does not name goes back to its own classes.

Expected values are worked by hand from p(c | legend) = p(c) / (1 - m), m the absent styles' mass.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.maps import blank, centre, dashes, paint
from veernet_pipeline.config import Settings
from veernet_pipeline.io.classes import NUM_CLASSES, style_class
from veernet_pipeline.reading.candidates import legend_prior
from veernet_pipeline.reading.extract import trace_curves

SOLID, DASHED, LONG_DASH = (style_class(s) for s in ("solid", "dashed", "long_dash"))
# One pixel: background 0.05, other ink 0.05, dashed 0.7, long-dash 0.2 (a long dash the net calls dashed).
PIXEL = np.array([0.05, 0.05, 0.0, 0.7, 0.0, 0.0, 0.2], dtype=np.float32)


def _one_pixel() -> np.ndarray:
    return PIXEL.reshape(NUM_CLASSES, 1, 1).copy()


@pytest.mark.parametrize(("weight", "expected"), [
    # m = 0.7 lies on dashed, which no curve of the track is drawn in; 1 - m = 0.3 remains.
    (1.0, [0.05 / 0.3, 0.05 / 0.3, 0.0, 0.0, 0.0, 0.0, 0.2 / 0.3]),
    # factor 1 + 0.5 x 0.7 / 0.3 = 13 / 6.
    (0.5, [0.05 * 13 / 6, 0.05 * 13 / 6, 0.0, 0.0, 0.0, 0.0, 0.2 * 13 / 6]),
])
def test_absent_styles_mass_goes_to_the_remaining_classes_in_proportion(weight: float, expected: list[float]) -> None:
    out = legend_prior(_one_pixel(), [(LONG_DASH,)], weight)
    np.testing.assert_allclose(out[:, 0, 0], expected, rtol=1e-6)


def test_nothing_changes_without_weight_without_absent_styles_or_on_a_binary_map() -> None:
    probs = _one_pixel()
    assert legend_prior(probs, [(LONG_DASH,)], 0.0) is probs
    every_style = [(c,) for c in range(2, NUM_CLASSES)]
    assert legend_prior(probs, every_style, 1.0) is probs
    binary = np.stack([np.full((3, 3), 0.4), np.full((3, 3), 0.6)])
    assert legend_prior(binary, [(1,)], 1.0) is binary


def test_the_posterior_keeps_the_proportions_of_what_remains() -> None:
    # Dashed 0.999 on a long-dash-only track: the remaining 0.001 is nine tenths background, one tenth
    # long-dash, and so is the posterior (0.9, 0.1): below min_confidence, no run of ink.
    probs = np.array([0.0009, 0.0, 0.0, 0.999, 0.0, 0.0, 0.0001], dtype=np.float32).reshape(NUM_CLASSES, 1, 1)
    out = legend_prior(probs, [(LONG_DASH,)], 1.0)[:, 0, 0]
    np.testing.assert_allclose(out[LONG_DASH], 0.1, rtol=1e-3)
    np.testing.assert_allclose(out.sum(), 1.0, rtol=1e-3)


def test_a_long_dash_curve_the_net_calls_dashed_is_read_on_a_track_without_a_dashed_curve(
        test_settings: Settings) -> None:
    height, width = 64, 400
    truth = 30 + 10 * np.sin(np.arange(width) / 40.0)
    probs = blank(height, width)
    paint(probs, truth, LONG_DASH, dashes(width, 40, 8))
    # The net's naming: 0.7 of each ink pixel on dashed, 0.2 on long-dash, 0.1 background.
    ink = probs[LONG_DASH] > 0.5
    probs[DASHED][ink], probs[LONG_DASH][ink], probs[0][ink] = 0.7, 0.2, 0.1
    without = trace_curves(probs, test_settings.extract.model_copy(update={"legend_prior": 0.0}), [(LONG_DASH,)])[0]
    # 0.2 of long-dash is below min_confidence: no run, nothing read.
    assert test_settings.extract.min_confidence > 0.2
    assert np.isnan(without).all()
    rows = trace_curves(probs, test_settings.extract.model_copy(update={"legend_prior": 1.0}), [(LONG_DASH,)])[0]
    read = np.isfinite(rows[0])
    assert read.mean() > 0.95
    assert np.abs(rows[0, read] - centre(truth)[read]).max() <= 1.0
