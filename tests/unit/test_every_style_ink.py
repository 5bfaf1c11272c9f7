"""Ink the net names in a style no curve of the track is drawn in is still curve ink to the path search."""

from __future__ import annotations

from unittest import mock

import numpy as np
import pytest

from tests.maps import blank, centre, paint
from veernet_pipeline.config import load_settings
from veernet_pipeline.io.classes import style_class
from veernet_pipeline.reading.candidates import find_candidates
from veernet_pipeline.reading.extract import trace_curves

DASHED, DASH_DOT = style_class("dashed"), style_class("dash_dot")


def _hump() -> tuple[np.ndarray, np.ndarray]:
    """A dashed curve on row 100 rising to row 60 and back over columns 200-239, where the net names its ink
    dash-dot at 0.7 (a style the sidecar gives no curve) and dashed at 0.25, under `min_confidence` (0.3).
    Returns the map (C, H, W) and the painted rows (W,)."""
    x = np.arange(400)
    rows = np.where((x >= 200) & (x < 240), 100.0 - 40.0 * np.sin(np.pi * (x - 200) / 40), 100.0)
    probs = blank(160, 400)
    paint(probs, rows, DASHED, columns=np.nonzero((x < 200) | (x >= 240))[0])
    hump = np.arange(200, 240)
    paint(probs, rows, DASH_DOT, columns=hump, p=0.7)  # background 0.3 on the pen's pixels ...
    inked = probs[DASH_DOT] == 0.7
    probs[DASHED][inked], probs[0][inked] = 0.25, 0.05  # ... of which 0.25 is dashed
    return probs, rows


def test_ink_of_a_style_no_curve_has_is_followed_not_bridged() -> None:
    probs, rows = _hump()
    params = load_settings(None, "cpu").extract
    read, _ = trace_curves(probs, params, [(DASHED,)])
    # By hand: at column 220 the pen's top edge is on row 100 - 40 = 60, its centre 60.5.
    assert abs(read[0, 220] - 60.5) <= 1.5
    assert np.all(np.abs(read[0] - centre(rows)) <= 1.5)
    # Counting only the sidecar's styles, the hump has no curve ink: 40 columns absent, bridged along row 100.5.
    with mock.patch("veernet_pipeline.reading.extract.STYLE_CLASSES", ()):
        bridged, confidence = trace_curves(probs, params, [(DASHED,)])
    assert abs(bridged[0, 220] - 100.5) <= 1.5 and np.all(confidence[0, 200:240] == 0)


def test_the_curve_share_of_such_ink_is_small_but_the_run_is_there() -> None:
    probs, _ = _hump()
    column = probs[:, :, 220:221]
    alone = find_candidates(column, [(DASHED,)], 8, 0.3)
    every = find_candidates(column, [(DASHED,)], 8, 0.3, ink_classes=(DASHED, DASH_DOT))
    assert not np.isfinite(alone.top).any()
    # One run, rows 60-61 (the 2-row pen at its top); of its curve ink 0.95 per pixel, 0.25 is dashed: share 0.263.
    assert (every.top[0, 0], every.bottom[0, 0]) == (60, 61)
    assert every.share[0, 0, 0] == pytest.approx(0.25 / 0.95, abs=1e-4)
