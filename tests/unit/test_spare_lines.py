"""A curve named in a style the net did not see is read on a style that shows a line more than the sidecar names."""

from __future__ import annotations

import numpy as np
import pytest

from tests.maps import blank, dashes, paint, read_share, sidecar
from veernet_pipeline.config import Settings
from veernet_pipeline.io.classes import style_class
from veernet_pipeline.reading.track import read_track

H, W = 128, 500
X = np.arange(W)
SOLID, DASHED, DOTTED, DASH_DOT, LONG_DASH = (style_class(s) for s in ("solid", "dashed", "dotted", "dash_dot",
                                                                       "long_dash"))
HIGH, LOW = 30 + 0.05 * X, 90 - 0.05 * X  # two lines that never meet


@pytest.mark.parametrize("dashed_line", ["high", "low"])
def test_a_long_dash_the_net_calls_dashed_is_read_on_the_spare_dashed_line(test_settings: Settings,
                                                                           dashed_line: str) -> None:
    # Short gaps: two broken curves drawn alike ride each other through long ones (docs/reading.md, Limits).
    rmed, rdep = (HIGH, LOW) if dashed_line == "high" else (LOW, HIGH)
    probs = blank(H, W)
    paint(probs, rmed, DASHED, dashes(W, 18, 3))  # RMED, named dashed, seen dashed
    paint(probs, rdep, DASHED, dashes(W, 40, 3))  # RDEP, named long-dash, but the net calls every dash dashed
    reading = read_track(probs, sidecar("dashed", "long_dash"), test_settings.extract)
    # Both lines are read (RDEP's would otherwise have no ink at all), drawn alike: the higher line is the first
    # curve's, whoever's it is (nothing on the map tells them apart; the note says so).
    assert read_share(reading.rows[0], HIGH) > 0.9 and read_share(reading.rows[1], LOW) > 0.9
    note = reading.plan.notes[-1]
    assert note.startswith("RDEP (long_dash) found almost no ink of its style (mean confidence 0.00)")
    assert "a dashed line more than the sidecar names in" in note and "drawn alike with RMED (the higher line" in note
    # The plan still names the sidecar's styles, so the evaluation scores RMED and RDEP as different curves.
    assert reading.plan.classes == [(DASHED,), (LONG_DASH,)] and reading.plan.labels == ["dashed", "long_dash"]


def test_a_style_no_curve_is_named_in_lends_its_line(test_settings: Settings) -> None:
    probs = blank(H, W)
    paint(probs, HIGH, SOLID)
    paint(probs, LOW, DOTTED, dashes(W, 2, 4))  # named dash-dot, seen dotted; no curve is named dotted
    reading = read_track(probs, sidecar("solid", "dash_dot"), test_settings.extract)
    assert read_share(reading.rows[0], HIGH) > 0.95
    inked = dashes(W, 2, 4)
    assert read_share(reading.rows[1][inked], LOW[inked]) > 0.9
    # Dots in 2 of every 6 columns: 83 whole periods and 2 columns more, 168 of 500 columns, 34 %.
    assert "a dotted line more than the sidecar names in 34%" in reading.plan.notes[-1]
    assert "drawn alike" not in reading.plan.notes[-1]


def test_curves_seen_in_their_styles_or_with_no_line_to_spare_are_read_as_before(test_settings: Settings) -> None:
    seen = blank(H, W)
    paint(seen, HIGH, DASHED, dashes(W, 18, 10))
    paint(seen, LOW, LONG_DASH, dashes(W, 40, 8))
    reading = read_track(seen, sidecar("dashed", "long_dash"), test_settings.extract)
    assert reading.plan.notes == [] and read_share(reading.rows[1], LOW) > 0.8
    # RDEP missing and the map's one dashed line is RMED's: nothing to read RDEP on, so it stays missing.
    alone = blank(H, W)
    paint(alone, HIGH, DASHED, dashes(W, 18, 10))
    reading = read_track(alone, sidecar("dashed", "long_dash"), test_settings.extract)
    assert reading.plan.notes == [] and read_share(reading.rows[0], HIGH) > 0.9
    assert read_share(reading.rows[1], LOW) == 0.0
    # A third curve missing too (GR, dash-dot) takes no line that another moved curve already took.
    two = blank(H, W)
    paint(two, HIGH, DASHED, dashes(W, 18, 10))
    paint(two, LOW, DASHED, dashes(W, 40, 8))
    reading = read_track(two, sidecar("dashed", "long_dash", "dash_dot"), test_settings.extract)
    assert len(reading.plan.notes) == 1 and reading.plan.notes[0].startswith("RDEP")
    assert DASH_DOT in reading.plan.classes[2]


def test_a_curve_that_found_some_of_its_style_is_not_moved(test_settings: Settings) -> None:
    """Confidence is the style's share x the ink's peak (0.95 painted) where the curve holds its own ink, 0 elsewhere:
    its own style in 15 % of the columns averages 0.14, at or above MISSING_CONFIDENCE (0.1); in 5 %, 0.05, below."""
    for own_share, moved in ((0.15, False), (0.05, True)):
        own = np.arange(W) < round(own_share * W)
        dash = np.isin(X, dashes(W, 40, 3))
        probs = blank(H, W)
        paint(probs, HIGH, DASHED, dashes(W, 18, 3))
        paint(probs, LOW, LONG_DASH, np.nonzero(own)[0])
        paint(probs, LOW, DASHED, np.nonzero(~own & dash)[0])
        reading = read_track(probs, sidecar("dashed", "long_dash"), test_settings.extract)
        assert bool(reading.plan.notes) == moved
        if moved:
            assert "(mean confidence 0.05)" in reading.plan.notes[-1]
