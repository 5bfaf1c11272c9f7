"""Lines the net named in each other's styles are given back by the length of their dashes (reading/dashes.py)."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from scipy import ndimage

from tests.maps import blank, dashes, paint, read_share, sidecar
from veernet_pipeline.config import Settings
from veernet_pipeline.io.classes import style_class
from veernet_pipeline.reading import dashes as dash_module
from veernet_pipeline.reading.dashes import best_assignment, dash_lengths, misfit, typical_dash
from veernet_pipeline.reading.track import read_track

H, W = 128, 600
X = np.arange(W)
DASHED, LONG_DASH = style_class("dashed"), style_class("long_dash")
HIGH, LOW = 30 + 0.05 * X, 90 - 0.05 * X  # two lines that never meet


def _pieces(ink: np.ndarray) -> np.ndarray:
    return ndimage.label(ink, structure=np.ones((3, 3), dtype=bool))[0]


def test_a_flat_line_of_6_px_dashes_and_3_px_gaps_measures_ten_dashes_of_6() -> None:
    ink = np.zeros((20, 90), dtype=bool)
    ink[10, dashes(90, 6, 3)] = True  # 90 columns = 10 whole periods of 9
    lengths = dash_lengths(_pieces(ink), np.full(90, 10.0), np.empty((0, 90)))
    np.testing.assert_allclose(lengths, [6.0] * 10)


def test_a_dash_on_a_steep_stroke_counts_its_arc() -> None:
    # Rows 2x over 10 columns, inked from row to row: one piece, each column sqrt(1 + 2^2) of arc.
    ink = np.zeros((30, 10), dtype=bool)
    for x in range(10):
        ink[2 * x:2 * x + 2, x] = True
    lengths = dash_lengths(_pieces(ink), 2.0 * np.arange(10), np.empty((0, 10)))
    np.testing.assert_allclose(lengths, [10 * math.sqrt(5)])


def test_pieces_another_line_touches_or_runs_near_are_left_out() -> None:
    ink = np.zeros((40, 60), dtype=bool)
    ink[10, dashes(60, 6, 4)] = True  # six dashes on row 10
    ink[10:31, 22] = True  # an upright stroke through the third dash: another line's ink joined to it
    own = np.full(60, 10.0)
    crossing = np.where(np.arange(60) == 22, 10.0, 30.0)  # the other line passes through that piece in column 22
    assert dash_lengths(_pieces(ink), own, crossing[None]).tolist() == [6.0] * 5
    near = np.full(60, 40.0)
    near[40:46] = 14.0  # within CLEAR_PX (8) of the line over the fifth dash only
    assert dash_lengths(_pieces(ink), own, near[None]).size == 5


def test_typical_dash_needs_min_dashes() -> None:
    assert typical_dash(np.arange(1.0, dash_module.MIN_DASHES)) is None
    assert typical_dash(np.array([3.0] * 7 + [5.0] + [40.0] * 7)) == 5.0


def test_misfit_by_hand() -> None:
    # The line given long-dash has dashes of 4 px, the one given dashed 20 px: log(20 / 4) = 1.609.
    assert misfit([4.0, 20.0], ["long_dash", "dashed"]) == pytest.approx(math.log(5.0))
    assert misfit([20.0, 4.0], ["long_dash", "dashed"]) == 0.0
    # Two dashed lines (two pens) over a long-dash line of 3 px: log(9 / 3) + log(6 / 3); none between the dashed.
    assert misfit([9.0, 6.0, 3.0], ["dashed", "dashed", "long_dash"]) == pytest.approx(math.log(3 * 2))


def test_best_assignment_exchanges_only_a_clear_inversion() -> None:
    assert best_assignment([4.0, 20.0], ["long_dash", "dashed"]) == (1, 0)
    # 6.0 against 8.0: misfit log(4 / 3) = 0.29 < MARGIN: too alike, the net's names stand.
    assert best_assignment([8.0, 6.0], ["dashed", "long_dash"]) == (0, 1)
    # Long dashes of 40 px on the line named dashed in the second pen: it and the long-dash line change places; the
    # other dashed line (4.4 px, as short as the 4.0 of the line moving to it) stays, the fewest lines moving.
    assert best_assignment([4.4, 40.0, 4.0], ["dashed", "dashed", "long_dash"]) == (0, 2, 1)


def _swapped_names() -> np.ndarray:
    """A dashed line (8 px dashes) on HIGH the net calls long-dash, a long-dash line (24 px) on LOW it calls dashed."""
    probs = blank(H, W)
    paint(probs, HIGH, LONG_DASH, dashes(W, 8, 4))
    paint(probs, LOW, DASHED, dashes(W, 24, 5))
    return probs


def test_lines_named_the_other_way_round_are_given_back(test_settings: Settings) -> None:
    reading = read_track(_swapped_names(), sidecar("dashed", "long_dash"), test_settings.extract)
    assert read_share(reading.rows[0], HIGH) > 0.95 and read_share(reading.rows[1], LOW) > 0.95
    assert reading.plan.moved == (0, 1)
    note = reading.plan.notes[-1]
    moved = re.findall(r"(\w+) \((\w+)\) took the line read as (\w+) \(\w+; median dash ([\d.]+) px against ([\d.]+)\)",
                       note)
    assert [m[:3] for m in moved] == [("RMED", "dashed", "RDEP"), ("RDEP", "long_dash", "RMED")]
    # Each dash as many columns long as painted, along read rows that wander a fraction of a row (arc >= columns).
    assert [(float(m[3]), float(m[4])) for m in moved] == [(pytest.approx(8.0, abs=0.5), pytest.approx(24.0, abs=0.5)),
                                                           (pytest.approx(24.0, abs=0.5), pytest.approx(8.0, abs=0.5))]


def test_without_the_check_each_curve_reads_the_other_line(test_settings: Settings,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("veernet_pipeline.reading.track.exchange_by_dashes", lambda *args: None)
    reading = read_track(_swapped_names(), sidecar("dashed", "long_dash"), test_settings.extract)
    assert read_share(reading.rows[0], LOW) > 0.95 and read_share(reading.rows[1], HIGH) > 0.95


@pytest.mark.parametrize("styles", [("dashed", "long_dash"), ("dashed", "dashed"), ("dashed", "dash_dot"),
                                    ("dashed", "solid")])
def test_lines_whose_dashes_fit_or_that_it_does_not_compare_keep_their_curves(test_settings: Settings,
                                                                              styles: tuple[str, str]) -> None:
    # HIGH is drawn with 8 px dashes, LOW with 24 px, each in the class of the style its curve is named in.
    probs = blank(H, W)
    paint(probs, HIGH, style_class(styles[0]), dashes(W, 8, 4))
    paint(probs, LOW, style_class(styles[1]), dashes(W, 24, 5))
    reading = read_track(probs, sidecar(*styles), test_settings.extract)
    assert not any("length of their dashes" in note for note in reading.plan.notes)
    assert read_share(reading.rows[0], HIGH) > 0.9 and read_share(reading.rows[1], LOW) > 0.9


def test_a_dotted_line_whose_dots_join_into_long_pieces_keeps_its_line(test_settings: Settings) -> None:
    # Test log 000111: the net's map joined a dotted line's dots into pieces longer than the dashed line's dashes.
    probs = blank(H, W)
    paint(probs, HIGH, style_class("dotted"), dashes(W, 24, 5))
    paint(probs, LOW, DASHED, dashes(W, 8, 4))
    reading = read_track(probs, sidecar("dotted", "dashed"), test_settings.extract)
    assert read_share(reading.rows[0], HIGH) > 0.9 and read_share(reading.rows[1], LOW) > 0.9
    assert not any("length of their dashes" in note for note in reading.plan.notes)


@pytest.mark.parametrize("long_dash_line", ["high", "low"])
def test_a_long_dash_curve_read_on_a_spare_dashed_line_gets_the_line_of_longer_dashes(test_settings: Settings,
                                                                                      long_dash_line: str) -> None:
    # The net calls every dash dashed, so RDEP (long-dash) is read on the spare dashed line, drawn alike with RMED
    # (reading.spare_lines), which lists the top line first; the dashes then give each curve its own line.
    width = 1500
    x = np.arange(width)
    high, low = 30 + 0.02 * x, 90 - 0.02 * x
    long_dash, short_dash = (high, low) if long_dash_line == "high" else (low, high)
    probs = blank(H, width)
    paint(probs, short_dash, DASHED, dashes(width, 10, 3))  # RMED's line
    paint(probs, long_dash, DASHED, dashes(width, 30, 3))  # RDEP's line, in the class the net gives it
    reading = read_track(probs, sidecar("dashed", "long_dash"), test_settings.extract)
    assert read_share(reading.rows[0], short_dash) > 0.9 and read_share(reading.rows[1], long_dash) > 0.9
    exchanged = any("length of their dashes" in note for note in reading.plan.notes)
    # Listed top first, RMED took the top line: the dashes moved the lines exactly when that was RDEP's.
    assert exchanged == (long_dash_line == "high")
