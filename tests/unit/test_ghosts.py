"""Ghost runs keep a broken curve's place through its gaps in a joint search.

Geometry by hand; the behaviour on hand-painted maps (tests/maps.py).
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.maps import blank, centre, paint
from veernet_pipeline.config import ExtractParams, Settings
from veernet_pipeline.io.classes import style_class
from veernet_pipeline.reading.candidates import Candidates
from veernet_pipeline.reading.extract import trace_curves
from veernet_pipeline.reading.ghosts import GHOSTS, ghost_runs

DOTTED = style_class("dotted")
NAN = np.nan


def _candidates(runs: list[tuple[int, int, int, int]], width: int, m: int) -> Candidates:
    """Candidates from (column, slot, top, bottom); nothing else matters to the ghosts."""
    top, bottom = np.full((width, m), np.nan), np.full((width, m), np.nan)
    for x, slot, t, b in runs:
        top[x, slot], bottom[x, slot] = t, b
    return Candidates(top=top, bottom=bottom, peak=np.where(np.isfinite(top), 0.95, 0.0),
                      centre=np.zeros((1, width, m)), share=np.zeros((1, width, m)),
                      thickness=bottom - top + 1.0)


@pytest.fixture()
def params(test_settings: Settings) -> ExtractParams:
    return test_settings.extract.model_copy(update={"jump_px": 4.0, "gap_cost": 2.0})


def test_a_gap_is_spanned_by_the_straight_join_of_its_ends(params: ExtractParams) -> None:
    """A run at rows 10-12 in columns 0-3 comes back at rows 16-18 in columns 6-7; a line at rows 40-41
    runs throughout. By hand: the join costs (16 - 12 - 1) / 4 + |34 - 22| / (2 x 48) = 0.875 < 2 x gap_cost,
    and columns 4 and 5 lie 1/3 and 2/3 of the way: rows 12-14 and 14-16. The unbroken line has no gap."""
    runs = [(x, 0, 10, 12) for x in range(4)] + [(x, 0, 16, 18) for x in (6, 7)] + [(x, 1, 40, 41) for x in range(8)]
    top, bottom = ghost_runs(_candidates(runs, 8, 2), params, 48)
    assert top.shape == bottom.shape == (8, GHOSTS)
    expected_top = np.full((8, GHOSTS), NAN)
    expected_bottom = np.full((8, GHOSTS), NAN)
    expected_top[4, 0], expected_bottom[4, 0] = 12.0, 14.0
    expected_top[5, 0], expected_bottom[5, 0] = 14.0, 16.0
    np.testing.assert_allclose(top, expected_top)
    np.testing.assert_allclose(bottom, expected_bottom)


def test_a_join_dearer_than_leaving_and_coming_back_is_no_ghost(params: ExtractParams) -> None:
    """The run comes back 31 rows of paper away: 31 / 4 = 7.75 > 2 x gap_cost = 4."""
    runs = [(x, 0, 10, 12) for x in range(4)] + [(x, 0, 44, 46) for x in (6, 7)]
    top, _ = ghost_runs(_candidates(runs, 8, 1), params, 48)
    assert np.isnan(top).all()


def test_each_column_keeps_its_cheapest_joins(params: ExtractParams) -> None:
    """Three runs break over columns 4-5. By hand the joins cost: A (10-12 -> 10-12) 0; B (30-32 -> 32-34)
    no paper between, drift 4 / 96 = 0.042; C (60-62 -> 66-68) 3 / 4 + 12 / 96 = 0.875. `GHOSTS` = 2 keeps A, B."""
    assert GHOSTS == 2
    ends = [(10, 12, 10, 12), (30, 32, 32, 34), (60, 62, 66, 68)]
    runs = [(x, slot, t0, b0) for slot, (t0, b0, _, _) in enumerate(ends) for x in range(4)]
    runs += [(x, slot, t1, b1) for slot, (_, _, t1, b1) in enumerate(ends) for x in (6, 7)]
    top, bottom = ghost_runs(_candidates(runs, 8, 3), params, 48)
    np.testing.assert_allclose(top[4], [10.0, 30 + 2 / 3])
    np.testing.assert_allclose(bottom[5], [12.0, 32 + 4 / 3])
    assert np.isnan(top[[0, 1, 2, 3, 6, 7]]).all()


def test_two_dotted_curves_drawn_alike_are_followed_dot_by_dot(test_settings: Settings) -> None:
    """Dots 4 columns apart on two lines of one style, read jointly. By hand (absent_cost 1.5, gap_cost 2):
    through absence each period costs 0.08 (the dot) + 2 + 3 x 1.5 + 2 = 8.58 against 4 x 1.5 = 6 for never
    reading the curve, so without ghosts neither is read; on ghosts a period costs 0.08 + 3 x 1.5 = 4.58."""
    height, width = 96, 400
    x = np.arange(width)
    truths = [30 + 10 * np.sin(x / 50.0), 66 - 10 * np.sin(x / 60.0)]
    probs = blank(height, width)
    for truth in truths:
        paint(probs, truth, DOTTED, x[x % 4 == 0])
    rows, _ = trace_curves(probs, test_settings.extract, [(DOTTED,), (DOTTED,)])
    read = slice(0, 397)  # first dot to last, gaps bridged
    for k, truth in enumerate(truths):  # top first: 30 + ... lies above 66 - ...
        assert np.isfinite(rows[k, read]).all(), f"curve {k} not read in {int(np.isnan(rows[k, read]).sum())} columns"
        np.testing.assert_allclose(rows[k, read], centre(truth)[read], atol=1.5)
