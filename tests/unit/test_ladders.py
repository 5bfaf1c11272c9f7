"""A broken style's steep stroke cut into a ladder of short runs by its dash gaps: joined into one run, and climbed."""

from __future__ import annotations

from unittest import mock

import numpy as np

from tests.maps import blank, paint
from veernet_pipeline.config import load_settings
from veernet_pipeline.io.classes import style_class
from veernet_pipeline.reading import candidates
from veernet_pipeline.reading.candidates import LADDER_GAP_PX, find_candidates
from veernet_pipeline.reading.extract import trace_curves

DASHED, DOTTED, SOLID = style_class("dashed"), style_class("dotted"), style_class("solid")


def _column(pieces: list[tuple[int, int, int]], height: int = 60) -> np.ndarray:
    """A one-column map with each piece (first row, last row, class) inked at 0.95. Shape: (C, H, 1)."""
    probs = blank(height, 1)
    for first, last, cls in pieces:
        probs[:, first:last + 1, 0] = 0.0
        probs[cls, first:last + 1, 0], probs[0, first:last + 1, 0] = 0.95, 0.05
    return probs


def _runs(probs: np.ndarray, classes: list[tuple[int, ...]]) -> list[tuple[int, int]]:
    found = find_candidates(probs, classes, 8, 0.3)
    valid = np.isfinite(found.top[0])
    return sorted((int(t), int(b)) for t, b in zip(found.top[0][valid], found.bottom[0][valid], strict=True))


def test_a_ladder_of_one_broken_style_is_one_run() -> None:
    # Dashed ink on rows 10-14, 18-22 and 26-30: gaps of 3 rows (LADDER_GAP_PX is 4) -> one run, rows 10-30.
    assert LADDER_GAP_PX == 4
    ladder = [(10, 14, DASHED), (18, 22, DASHED), (26, 30, DASHED)]
    assert _runs(_column(ladder), [(DASHED,)]) == [(10, 30)]
    # A gap of 5 rows is a gap; so is one between two styles (a dashed line passing 3 rows above a dotted one),
    # and a solid line's gaps are never closed (a solid line has no dash gaps).
    assert _runs(_column([(10, 14, DASHED), (20, 24, DASHED)]), [(DASHED,)]) == [(10, 14), (20, 24)]
    assert _runs(_column([(10, 14, DASHED), (18, 22, DOTTED)]), [(DASHED,), (DOTTED,)]) == [(10, 14), (18, 22)]
    assert _runs(_column([(10, 14, SOLID), (18, 22, SOLID)]), [(SOLID,)]) == [(10, 14), (18, 22)]


def test_a_dashed_spike_is_read_to_its_tip() -> None:
    """A dashed curve at row 150 spikes to row 20 and back over five columns; along the steep stroke its dash gaps
    leave 3 rows in every 8 without ink. Read with the ladders joined it reaches the tip (its pen's centre, 20.5), and
    either side of it stays on the stroke (columns 59 and 61 sweep from halfway to the tip, 40, to halfway to the
    base, 85); without (LADDER_GAP_PX 0) the path cannot climb the rungs and bridges under the spike."""
    rows = np.full(120, 150.0)
    rows[58:63] = [110, 60, 20, 60, 110]
    probs = blank(200, 120)
    paint(probs, rows, DASHED)
    gaps = (np.arange(200) < 140) & (np.arange(200) % 8 >= 5)
    probs[:, gaps, 56:66] = 0.0
    probs[0, gaps, 56:66] = 1.0
    params = load_settings(None, "cpu").extract
    read, _ = trace_curves(probs, params, [(DASHED,)])
    assert read[0, 60] == 20.5
    assert np.all((read[0, [59, 61]] >= 40) & (read[0, [59, 61]] <= 85.5))
    with mock.patch.object(candidates, "LADDER_GAP_PX", 0):
        cut, _ = trace_curves(probs, params, [(DASHED,)])
    assert cut[0, 60] > 120
