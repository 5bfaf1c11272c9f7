"""A curve with a backup scale is followed off one edge of the track and back in at the other.

Maps are hand-painted (tests/maps.py) the way the renderer draws a wrap: the polyline stops at the
edge it leaves and resumes at the opposite one, nothing drawn across the track between.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from tests.maps import blank, centre, paint
from veernet_pipeline.config import Settings
from veernet_pipeline.io.calibration import Calibration, CurveScale
from veernet_pipeline.io.classes import style_class
from veernet_pipeline.reading.candidates import Candidates
from veernet_pipeline.reading.extract import trace_curves
from veernet_pipeline.reading.paths import crossing_penalty, peel, transitions, viterbi
from veernet_pipeline.reading.rows import refine_rows
from veernet_pipeline.reading.styles import plan_reading

H, W = 96, 300
X = np.arange(W)
SOLID, DASHED = style_class("solid"), style_class("dashed")


def _wrapped_map(excursion: slice) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A solid curve near the bottom edge that runs off it for the columns of `excursion` and comes back.

    Returns the map, the unwrapped rows (past H - 1 where it is off the track) and the rows it is drawn at.
    """
    unwrapped = np.full(W, 88.0)
    n = excursion.stop - excursion.start
    unwrapped[excursion] = 88.0 + 20.0 * np.sin(np.linspace(0.0, np.pi, n + 2)[1:-1])  # up to 20 rows past the edge
    off = unwrapped > H - 2  # a 2-row pen at row H - 2 still fits
    probs = blank(H, W)
    paint(probs, unwrapped, SOLID, X[~off])  # extents past the bottom edge are clipped
    paint(probs, unwrapped - H, SOLID, X[off])  # back in at the top, one scale on
    return probs, unwrapped, np.where(off, unwrapped - H, unwrapped)


def test_cyclic_transition_by_hand(test_settings: Settings) -> None:
    """Rows 18-19 then rows 0-1 of a 20-row track: 16 paper rows between them, none through the edge."""
    params = test_settings.extract
    cands = Candidates(top=np.array([[18.0], [0.0]]), bottom=np.array([[19.0], [1.0]]), peak=np.ones((2, 1)),
                       centre=np.zeros((0, 2, 1)), share=np.zeros((0, 2, 1)), thickness=np.ones((2, 1)))
    plain = transitions(cands, params, 20)[0, 0, 0]
    cyclic = transitions(cands, params, 20, wrap=True)[0, 0, 0]
    # Across: max(0 - 19, 18 - 1) - 1 = 16 rows, the middles 18.5 -> 0.5 travel 18 / 20 of the track.
    assert plain == pytest.approx(16 / params.jump_px + 0.9)
    # Through the bottom edge: (20 - 1 - 19) + 0 = 0 rows; the middles travel 2 / 20 the short way round.
    assert cyclic == pytest.approx(0.1)
    # Two runs mid-track are as far apart either way round the shorter side: the cyclic cost changes nothing.
    mid = Candidates(top=np.array([[5.0], [12.0]]), bottom=np.array([[6.0], [13.0]]), peak=np.ones((2, 1)),
                     centre=np.zeros((0, 2, 1)), share=np.zeros((0, 2, 1)), thickness=np.ones((2, 1)))
    assert transitions(mid, params, 20, wrap=True)[0, 0, 0] == transitions(mid, params, 20)[0, 0, 0]


def test_a_short_excursion_off_the_edge_is_followed_only_with_a_backup_scale(test_settings: Settings) -> None:
    """Five columns off the bottom edge. Without a backup scale, jumping across the paper (about 85 rows each
    way, 2 x (85 / jump_px + 0.9)) costs more than skipping the excursion in place (5 x absent_cost), so it is
    bridged along the bottom edge; with one, the move through the edge costs almost nothing."""
    params = test_settings.extract
    excursion = slice(140, 145)
    probs, _, drawn = _wrapped_map(excursion)
    off = X[drawn < 40]
    assert off.size == 5
    assert 2 * (85 / params.jump_px + 0.9) > 5 * params.absent_cost  # the premise, from the test profile's knobs
    with_scale, _ = trace_curves(probs, params, [(SOLID,)], wraps=[True])
    np.testing.assert_allclose(with_scale[0, off], centre(drawn)[off], atol=1.0)
    np.testing.assert_allclose(with_scale[0, :130], centre(drawn)[:130], atol=0.5)
    without, _ = trace_curves(probs, params, [(SOLID,)], wraps=[False])
    assert (without[0, off] > 80).all()


def test_a_wrapped_curve_read_jointly_with_its_twin(test_settings: Settings) -> None:
    """Two solid curves (drawn alike, one joint search): the one with a backup scale follows its excursion,
    the other keeps its own line mid-track."""
    probs, _, drawn = _wrapped_map(slice(140, 145))
    other = 48.0 + 10.0 * np.sin(X / 40.0)
    paint(probs, other, SOLID)
    off = X[drawn < 40]
    rows, _ = trace_curves(probs, test_settings.extract, [(SOLID,), (SOLID,)], wraps=[False, True])
    # Curves drawn alike are listed top first (alike_order.same_class_order): the mid-track one, then the wrapped one.
    np.testing.assert_allclose(rows[1, off], centre(drawn)[off], atol=1.0)
    np.testing.assert_allclose(rows[0], centre(other), atol=1.0)
    with pytest.raises(ValueError, match="one flag per curve"):
        trace_curves(probs, test_settings.extract, [(SOLID,), (SOLID,)], wraps=[True])


@pytest.mark.parametrize("g", [1, 2, 3])
def test_joint_viterbi_with_a_table_per_curve_is_exact(g: int) -> None:
    """Each curve moving by its own table: the path found costs what the cheapest of all paths costs."""
    rng = np.random.default_rng([17, g])
    width, n, groups = {1: 5, 2: 4, 3: 3}[g], 3, 2
    emission = rng.uniform(0, 3, size=(groups, g, width, n))
    tables = rng.uniform(0, 3, size=(2, width - 1, n, n))
    variant = rng.integers(0, 2, size=(groups, g))
    variant[0, 0], variant[1, 0] = 0, 1  # the groups' first curves differ: no table is shared
    penalty = crossing_penalty(g, n, 0.7)

    def cost(group: int, states: np.ndarray) -> float:  # states (g, W)
        total = sum(emission[group, k, x, states[k, x]] for k in range(g) for x in range(width))
        total += sum(tables[variant[group, k], x - 1, states[k, x - 1], states[k, x]]
                     for k in range(g) for x in range(1, width))
        return total + sum(penalty[tuple(states[:, x])] for x in range(width))

    found = viterbi(emission, tables, 0.7, variant)
    for group in range(groups):
        every = (np.array(p).reshape(g, width) for p in itertools.product(range(n), repeat=g * width))
        assert cost(group, found[group]) == pytest.approx(min(cost(group, p) for p in every))


def test_peeling_moves_each_curve_by_its_own_table() -> None:
    """Four curves; the last must start in a dear state and its table forbids moving: peeling keeps it there."""
    rng = np.random.default_rng(5)
    width, n = 6, 4
    emission = rng.uniform(0, 3, size=(4, width, n))
    emission[3, :, 2] = 10.0  # state 2 is dear for curve 3 ...
    emission[3, 0] = [np.inf, np.inf, 0.0, np.inf]  # ... but where it must start
    tables = np.stack([np.zeros((width - 1, n, n)), np.where(np.eye(n, dtype=bool), 0.0, np.inf)[None].repeat(
        width - 1, axis=0)])
    states = peel(emission, tables, 0.0, np.array([0, 0, 0, 1]))
    assert (states[3] == 2).all()
    free = peel(emission, tables[0], 0.0)  # one table for all: curve 3 leaves its dear state
    assert not (free[3] == 2).all()


def test_the_plan_gives_each_curve_its_backup_scale(test_settings: Settings) -> None:
    curves = (CurveScale("GR", "gAPI", 0.0, 150.0, backup_wraps=1, style="solid"),
              CurveScale("SP", "mV", -80.0, 20.0, style="dashed"))
    calib = Calibration(depth_top=1000.0, depth_bottom=1100.0, depth_unit="M", curves=curves)
    assert plan_reading(blank(4, 4), calib, test_settings.extract).wraps == [True, False]
    # A binary model reads one curve, on the first curve's scale.
    assert plan_reading(blank(4, 4, channels=2), calib, test_settings.extract).wraps == [True]


def test_a_steep_stroke_leaving_through_the_edge_passes_through_its_column() -> None:
    """Rows 60-61, then a stroke down to the bottom edge (61-99), then rows 0-1 at the top of a 100-row track.

    Read plainly, both neighbours lie above the tall run (60.5 and 0.5 against 80): a tip, read at its far end
    half a stroke in, 99 - 0.5. On the cylinder the next row lies 20.5 rows below the run's centre: the stroke
    passes through, read at its centre.
    """
    top, bottom = np.array([[60.0], [61.0], [0.0]]), np.array([[61.0], [99.0], [1.0]])
    cands = Candidates(top=top, bottom=bottom, peak=np.ones((3, 1)), centre=np.array([[[60.5], [80.0], [0.5]]]),
                       share=np.ones((1, 3, 1)), thickness=np.ones((3, 1)))
    path = np.zeros(3, dtype=np.int64)
    assert refine_rows(cands, 0, path)[1] == pytest.approx(98.5)
    np.testing.assert_allclose(refine_rows(cands, 0, path, wrap_height=100), [60.5, 80.0, 0.5])
