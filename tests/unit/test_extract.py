"""The path search reads every requested curve, keeps identities through crossings and follows steep strokes.

All maps are hand-painted (tests/maps.py): the rows each curve must read are known by construction.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from tests.maps import blank, centre, dashes, paint
from veernet_pipeline.config import ExtractParams, Settings
from veernet_pipeline.io.classes import style_class
from veernet_pipeline.reading import extract
from veernet_pipeline.reading.candidates import Candidates, _float64_sum, find_candidates
from veernet_pipeline.reading.confidence import confidence_figures
from veernet_pipeline.reading.extract import curve_groups, run_holders, trace_curves
from veernet_pipeline.reading.paths import (
    SKIP_COLUMNS,
    contested,
    crossing_penalty,
    transitions,
    viterbi,
    viterbi_single,
)
from veernet_pipeline.reading.run_heights import height_emission_all, typical_measure
from veernet_pipeline.reading.styles import curve_classes

H, W = 96, 600
X = np.arange(W)
SOLID, DASHED, DOTTED, DASH_DOT, LONG_DASH = (style_class(s) for s in
                                              ("solid", "dashed", "dotted", "dash_dot", "long_dash"))


def _assert_follows(rows: np.ndarray, truths: list[np.ndarray], min_apart: float = 4.0, tol: float = 1.0) -> None:
    """Each read curve is within `tol` px of its own truth wherever the truths lie `min_apart` px apart."""
    truth = np.stack([centre(t) for t in truths])
    gaps = np.abs(truth[:, None] - truth[None]) + np.eye(len(truths))[:, :, None] * 1e9
    apart = gaps.min(axis=(0, 1)) >= min_apart
    for k in range(len(truths)):
        missed = int((~np.isfinite(rows[k, apart])).sum())
        assert missed == 0, f"curve {k} not read in {missed} columns"
        error = np.abs(rows[k, apart] - truth[k, apart])
        worst = int(np.arange(rows.shape[1])[apart][error.argmax()])
        assert error.max() <= tol, f"curve {k}: worst column {worst} off by {error.max():.1f} px"


def test_three_styles_crossing_keep_their_identities(test_settings: Settings) -> None:
    truths = [48 + 30 * np.sin(X / 60.0), 46 + 0.02 * X, 15 + 0.11 * X]
    probs = blank(H, W)
    paint(probs, truths[0], SOLID)
    paint(probs, truths[1], DASHED, dashes(W, 18, 10))
    paint(probs, truths[2], LONG_DASH, dashes(W, 40, 10, phase=5))
    probs[1, 88:91, :] = 0.9  # a stretch of other ink (lettering, a flag): never a curve
    probs[0, 88:91, :] = 0.1
    rows, confidence = trace_curves(probs, test_settings.extract, [(SOLID,), (DASHED,), (LONG_DASH,)])
    assert rows.shape == (3, W)
    _assert_follows(rows, truths)
    assert np.nanmax(rows) < 85  # nothing read on the other ink at rows 88-90
    # Dash gaps are bridged with confidence 0; ink read with the curve's share x peak.
    assert (confidence[1, 20:28] == 0).all() and (confidence[1, 5:15] > 0.9).all()


def test_four_styles_crossing_each_other(test_settings: Settings) -> None:
    truths = [48 + 30 * np.sin(X / 60.0), 46 + 0.02 * X, 15 + 0.11 * X, 75 - 0.09 * X]
    probs = blank(H, W)
    paint(probs, truths[0], SOLID)
    paint(probs, truths[1], DASHED, dashes(W, 18, 10))
    paint(probs, truths[2], LONG_DASH, dashes(W, 40, 10, phase=5))
    phase = (X + 5) % 24
    dash_dot = X[(phase < 12) | (phase >= 16) & (phase < 19)]  # dash 12, gap 4, dot 3, gap 5
    paint(probs, truths[3], DASH_DOT, dash_dot)
    rows, _ = trace_curves(probs, test_settings.extract, [(SOLID,), (DASHED,), (LONG_DASH,), (DASH_DOT,)])
    _assert_follows(rows, truths)


def test_a_curve_the_net_trusts_less_on_shared_ink_gives_way(test_settings: Settings) -> None:
    """Two broken styles the net confuses on one line: the less trusted one reads the other line.

    Line A (row 20): dashed 0.45, long-dash 0.50. Line B (row 60): dashed 0.35, long-dash 0.05.
    By hand with `share_weight` 0.5, emission = -ln(peak) - 0.5 ln(share):
    dashed on A 0.051 + 0.373 = 0.424, on B 0.916 + 0.067 = 0.983; long-dash on A 0.051 + 0.321
    = 0.372, on B 0.916 + 1.040 = 1.956. Read independently both sit on A and B goes unread.
    Dashed holds the smaller share of A (0.474 < 0.526), so it is read again first, paying
    `crossing_cost` (1.0) on A: 1.424 > 0.983 (and > absence, 1.5), so it moves to B.
    """
    line_a, line_b = np.full(W, 20.0), np.full(W, 60.0)
    probs = blank(H, W)
    paint(probs, line_a, DASHED, p=0.45)
    probs[LONG_DASH, 20:22], probs[0, 20:22] = 0.50, 0.05
    paint(probs, line_b, DASHED, p=0.35)
    probs[LONG_DASH, 60:62], probs[0, 60:62] = 0.05, 0.60
    assert np.allclose(probs.sum(axis=0), 1.0)
    rows, _ = trace_curves(probs, test_settings.extract, [(DASHED,), (LONG_DASH,)])
    assert np.allclose(rows[1], centre(line_a)), "long-dash should keep line A, where the net trusts it more"
    assert np.allclose(rows[0], centre(line_b)), "dashed should give way to line B instead of reading A twice"


def test_a_crossing_is_not_contested_but_a_stretch_read_twice_is() -> None:
    """Curve 0 sits on run 0 everywhere (centre row 10). Curve 1 shares it, centre within 1 px, in
    columns 5-6 (a crossing: two columns) and 12, 14, 15 (a line read twice, its gap at 13 included).
    By hand, with max_gap 2: only columns 12-15 are contested, for either curve.
    """
    width, m = 20, 2
    states = np.stack([np.zeros(width, dtype=np.int64), np.ones(width, dtype=np.int64)])
    states[1, [5, 6, 12, 14, 15]] = 0
    states[1, 13] = m  # absent in a dash gap
    centres = np.full((2, width, m), 40.0)
    centres[:, :, 0] = 10.0
    centres[1, :, 0] = 10.4
    expected = np.zeros(width, dtype=bool)
    expected[12:16] = True
    for k in (0, 1):
        np.testing.assert_array_equal(contested(states, centres, k, m, max_gap=2), expected)
    centres[1, 12:16, 0] = 12.0  # two pens side by side on one run: each keeps its own pixels
    assert not contested(states, centres, 0, m, max_gap=2).any()


def test_two_curves_of_one_style_crossing_keep_their_lines(test_settings: Settings) -> None:
    truths = [48 + 30 * np.sin(X / 60.0), 46 + 0.01 * X]  # cross six times
    probs = blank(H, W)
    paint(probs, truths[0], SOLID)
    paint(probs, truths[1], SOLID)
    rows, _ = trace_curves(probs, test_settings.extract, [(SOLID,), (SOLID,)])
    # Curves drawn alike come out in order of mean row, top first (by hand: 48 + 30 mean(sin) vs 46 + 3).
    means = [float(np.mean(t)) for t in truths]
    assert means[1] < means[0]
    _assert_follows(rows, [truths[1], truths[0]])


def test_a_dashed_curve_through_a_solid_one(test_settings: Settings) -> None:
    truths = [np.full(W, 40.0), 10 + 0.12 * X]  # the dashed curve crosses the solid one at column 250
    probs = blank(H, W)
    paint(probs, truths[1], DASHED, dashes(W, 18, 10))
    paint(probs, truths[0], SOLID)  # the solid curve holds the crossing pixels
    rows, _ = trace_curves(probs, test_settings.extract, curve_classes([None, None]))  # the seeds' convention
    _assert_follows(rows, truths)
    # Through the crossing the dashed curve is bridged along its own line, never pulled onto the solid one.
    crossing = slice(240, 262)
    # Where the solid curve covers part of its pen, the dashed one is read on the pixels it still holds: 1.5 px.
    np.testing.assert_allclose(rows[1, crossing], centre(truths[1])[crossing], atol=1.5)
    np.testing.assert_allclose(rows[0], 40.5)  # read on its own class's pixels where the two inks meet


def test_four_curves_of_one_style_are_read_by_peeling(test_settings: Settings) -> None:
    """Four solid lines crossing each other at six points: more than one exact joint search reads."""
    truths = [20 + 0.25 * X, 180 - 0.25 * X, 60 + 0.1 * X, 150 - 0.12 * X]
    probs = blank(200, W)
    for truth in truths:
        paint(probs, truth, SOLID)
    rows, _ = trace_curves(probs, test_settings.extract, [(SOLID,)] * 4)
    by_mean = sorted(truths, key=lambda t: float(np.mean(t)))  # by hand: 89.95, 94.9, 105.1, 114.1
    _assert_follows(rows, by_mean)


def test_a_stroke_across_most_of_the_track_in_three_columns_is_followed(test_settings: Settings) -> None:
    height, width = 200, 300
    truth = np.full(width, 10.0)
    truth[150:153] = [70.0, 190.0, 70.0]  # a spike over 90 % of the track and back within three columns
    truth[153:218] = 12.0
    truth[218:] = [60.0, 125.0] + [185.0] * (width - 220)  # a step across the track
    probs = blank(height, width)
    paint(probs, truth, SOLID, pen=1)
    params = test_settings.extract.model_copy(update={"jump_px": 4.0})
    rows, _ = trace_curves(probs, params, [(SOLID,)])
    assert np.isfinite(rows).all()  # coverage 1, across the spike and the step
    # The spike's tip column reads the tip (the curve's value at that column's depth), not its run's middle.
    assert rows[0, 151] == pytest.approx(190.0)
    # A column the stroke passes through reads the middle of its run: halfway rows 40..130 by hand.
    assert rows[0, 150] == pytest.approx(85.0, abs=1.0)
    assert rows[0, 219] == pytest.approx((92.5 + 155.0) / 2, abs=1.0)
    flat = np.r_[0:149, 154:217, 221:width]
    np.testing.assert_allclose(rows[0, flat], truth[flat], atol=0.5)


def test_a_jump_across_paper_still_costs(test_settings: Settings) -> None:
    params = test_settings.extract
    probs = blank(H, 200)
    paint(probs, np.full(200, 20.0), SOLID, p=0.6)  # the curve, faintly
    paint(probs, np.full(200, 80.0), SOLID, np.arange(80, 88), p=0.99)  # 8 columns of strong ink 58 rows away
    rows, _ = trace_curves(probs, params, [(SOLID,)])
    # By hand: the strong ink saves 8 x (-log 0.6 + log 0.99) = 4.0; getting there and back costs 2 x 58 / jump_px
    # across the paper, or 2 x (leave + one column absent + re-enter) = 11 through absence.
    np.testing.assert_allclose(rows[0], 20.5)
    # By hand: runs at rows 20-21 and 80-81 have 58 paper rows between them; touching runs have none.
    cands = find_candidates(probs, [(SOLID,)], params.max_candidates, params.min_confidence)
    cost = transitions(cands, params, H)
    before, near, far = (int(np.nanargmin(cands.centre[0, 79])), int(np.nanargmin(cands.centre[0, 80])),
                         int(np.nanargmax(cands.centre[0, 80])))
    assert cost[79, before, far] == pytest.approx(58 / params.jump_px + 60 / H)  # + the middle's travel, 60 rows
    assert cost[79, before, near] == 0.0


@pytest.mark.parametrize("g", [1, 2, 3])
def test_joint_viterbi_is_exact(g: int) -> None:
    """The joint search's path costs what the cheapest of all paths costs, found by enumerating every path."""
    rng = np.random.default_rng([11, g])
    width, n = {1: 5, 2: 4, 3: 3}[g], 3  # 3^(g W) paths: 243, 6561, 19683
    emission = rng.uniform(0, 3, size=(1, g, width, n))
    transition = rng.uniform(0, 3, size=(width - 1, n, n))
    penalty = crossing_penalty(g, n, 0.7)

    def cost(states: np.ndarray) -> float:  # states (g, W)
        total = sum(emission[0, k, x, states[k, x]] for k in range(g) for x in range(width))
        total += sum(transition[x - 1, states[k, x - 1], states[k, x]] for k in range(g) for x in range(1, width))
        return total + sum(penalty[tuple(states[:, x])] for x in range(width))

    every = (np.array(p).reshape(g, width) for p in itertools.product(range(n), repeat=g * width))
    best = min(cost(p) for p in every)
    assert cost(viterbi(emission, transition, 0.7)[0]) == pytest.approx(best)


def test_single_curve_viterbi_with_skips_is_exact(test_settings: Settings) -> None:
    """Against every path: a run of absent columns between two candidates costs the cheaper of going through
    absence (leave, absent columns, re-enter) and a skip in place (absent columns, then the move between runs)."""
    params = test_settings.extract.model_copy(update={"max_candidates": 2})
    rng = np.random.default_rng([13, 1])
    width, m = 7, 2
    top = rng.integers(0, 40, size=(width, m)).astype(float)
    cands = Candidates(top=top, bottom=top + rng.integers(0, 6, size=(width, m)), peak=np.ones((width, m)),
                       centre=top[None] + 1.0, share=np.ones((1, width, m)), thickness=np.ones((width, m)))
    emission = np.concatenate([rng.uniform(0, 3, size=(1, width, m)), np.full((1, width, 1), params.absent_cost)],
                              axis=2)
    step = transitions(cands, params, 48)
    skip = {d: transitions(cands, params, 48, d) for d in range(2, width)}

    def cost(path: tuple[int, ...]) -> float:
        total = float(sum(emission[0, x, s] for x, s in enumerate(path)))
        present = [x for x, s in enumerate(path) if s < m]
        total += sum(step[x - 1, path[x - 1], path[x]] for x in range(1, width)
                     if not (path[x - 1] == m and path[x] == m))
        for a, b in zip(present, present[1:], strict=False):  # a skip may replace leaving and re-entering
            if 2 <= b - a <= SKIP_COLUMNS:
                through = step[a, path[a], m] + step[b - 1, m, path[b]]
                total += min(0.0, skip[b - a][a, path[a], path[b]] - through)
        return total

    best = min(cost(p) for p in itertools.product(range(m + 1), repeat=width))
    found = viterbi_single(emission, cands, params, 48)[0]
    assert cost(tuple(found)) == pytest.approx(best)


@pytest.mark.parametrize("period", [4, SKIP_COLUMNS])
def test_a_dotted_curve_is_followed_dot_by_dot(test_settings: Settings, period: int) -> None:
    """One-column dots `period` columns apart, up to the longest skip: each gap is jumped in place.

    By hand (absent_cost 1.5, gap_cost 2): a dot costs about -1.5 log 0.95 = 0.08 to sit on, so a
    gap of period - 1 columns costs (period - 1) x 1.5 by a skip, 4 more through absence, and the
    dot saves 1.4 over leaving it unread.
    """
    truth = 40 + 20 * np.sin(X / 70.0)
    probs = blank(H, W)
    dots = X[X % period == 0]
    paint(probs, truth, DOTTED, dots)
    rows, _ = trace_curves(probs, test_settings.extract, [(DOTTED,)])
    read = slice(0, int(dots[-1]) + 1)  # from the first dot to the last, gaps bridged
    assert np.isfinite(rows[0, read]).all()
    np.testing.assert_allclose(rows[0, read], centre(truth)[read], atol=1.5)


def test_a_gap_longer_than_a_skip_is_not_bridged_in_place(test_settings: Settings) -> None:
    """Dots `SKIP_COLUMNS` + 1 apart: a skip no longer reaches; through absence a gap costs 4 more than the
    dot saves, so nothing is read (the evidence a dash pattern's gap of that length would need is a dash)."""
    probs = blank(H, W)
    paint(probs, np.full(W, 40.0), DOTTED, X[X % (SKIP_COLUMNS + 1) == 0])
    rows, _ = trace_curves(probs, test_settings.extract, [(DOTTED,)])
    assert np.isnan(rows).all()


def test_groups_follow_shared_classes() -> None:
    assert curve_groups([(2,), (3,), (4,)]) == [[0], [1], [2]]
    assert curve_groups([(2,), (3,), (2,)]) == [[0, 2], [1]]
    assert curve_groups(curve_classes([None, None, None])) == [[0, 1, 2]]  # a third curve may be any style


def test_binary_map_reads_one_curve_and_shapes_are_checked(test_settings: Settings) -> None:
    probs = blank(H, W, channels=2)
    truth = 48 + 30 * np.sin(X / 60.0)
    paint(probs, truth, 1)
    rows, _ = trace_curves(probs, test_settings.extract)
    assert rows.shape == (1, W)
    np.testing.assert_allclose(rows[0], centre(truth), atol=1.0)
    with pytest.raises(ValueError, match="C = 7"):
        trace_curves(np.zeros((4, 8, 8)), test_settings.extract)
    with pytest.raises(ValueError, match="classes of each curve"):
        trace_curves(blank(8, 8), test_settings.extract)


def test_empty_map_gives_no_curve(test_settings: Settings) -> None:
    rows, confidence = trace_curves(blank(32, 64), test_settings.extract, [(SOLID,), (DASHED,)])
    assert np.isnan(rows).all() and (confidence == 0).all()
    rows, _ = trace_curves(blank(32, 64), test_settings.extract, [])
    assert rows.shape == (0, 64)


def test_params_bound_the_candidates(test_settings: Settings) -> None:
    with pytest.raises(ValueError, match="max_candidates"):
        ExtractParams.model_validate({**test_settings.extract.model_dump(), "max_candidates": 300})


def test_two_curves_of_one_style_that_touch_and_part_keep_their_pens(test_settings: Settings) -> None:
    # A heavy and a light solid curve meet at column 300 and turn back: each one's direction
    # continues into the other's, so the slopes alone call it a crossing and swap them.
    heavy_pen, light_pen = 5, 1
    heavy = 20 + 0.1 * np.minimum(X, W - X)  # down to row 50 at the contact, then back up
    light = 83 - 0.1 * np.minimum(X, W - X)  # up to row 53, then back down: the pens touch
    probs = blank(H, W)
    paint(probs, heavy, SOLID, pen=heavy_pen)
    paint(probs, light, SOLID, pen=light_pen)
    truth = np.stack([centre(heavy, heavy_pen), centre(light, light_pen)])  # heavy first: its mean row is lower
    apart = np.abs(truth[0] - truth[1]) >= 8

    def worst_error(height_weight: float, height_weight_styles: float) -> float:
        params = test_settings.extract.model_copy(update={"height_weight": height_weight,
                                                          "height_weight_styles": height_weight_styles})
        rows, _ = trace_curves(probs, params, [(SOLID,), (SOLID,)])
        return float(np.nanmax(np.abs(rows[:, apart] - truth[:, apart])))

    assert worst_error(test_settings.extract.height_weight, 0.0) <= 1.0  # the group's own re-read alone
    assert worst_error(0.0, test_settings.extract.height_weight_styles) <= 1.0  # the track's re-read alone
    # By slope only, the heavy curve's reading runs on down the light one's line after the contact.
    assert worst_error(0.0, 0.0) > 20


@pytest.mark.parametrize("peak", [0.95, 1.0])
def test_a_run_read_by_two_curves_halves_their_confidence(test_settings: Settings, peak: float) -> None:
    """Two solid curves; the second's line ends at column 100. Sharing a run (crossing_cost 1.0 a column)
    is cheaper than absence (absent_cost 1.5), so it rides the first curve's line from there: a copy,
    which confidence must show. By hand: peak x share 1.0 alone, halved where two curves hold the run,
    and so counted in `low_conf_share` at `infer.low_confidence`. With ink the net is certain of (peak
    1.0, as the trained net gives on most such rides) the halved confidence is 0.5 exactly, which a
    threshold of 0.5 did not count."""
    width = 200
    x = np.arange(width)
    probs = blank(64, width)
    paint(probs, 20 + 10 * np.sin(x / 30.0), SOLID, p=peak)
    paint(probs, np.full(width, 45.0), SOLID, x[x < 100], p=peak)
    rows, confidence = trace_curves(probs, test_settings.extract, [(SOLID,), (SOLID,)])
    np.testing.assert_allclose(confidence[:, :95], peak)
    np.testing.assert_array_equal(rows[0, 110:], rows[1, 110:])  # the ride
    np.testing.assert_allclose(confidence[:, 110:], peak / 2)
    # Flagged for review: of the ride's 2 x 90 read columns, every one counts as low-confidence.
    ride = confidence_figures(rows[:, 110:], confidence[:, 110:], test_settings.infer.low_confidence)
    assert ride["low_conf_share"] == 1.0


def test_run_holders_count_the_curves_on_each_run() -> None:
    absent = 6
    states = np.array([[0, 1, absent, 2],
                       [0, 2, absent, 2],
                       [3, 1, 4, 2]])
    # Column by column by hand: curves 0 and 1 share run 0; 0 and 2 share run 1; nobody holds absence;
    # all three read run 2.
    expected = np.array([[2, 2, 0, 3],
                         [2, 1, 0, 3],
                         [1, 2, 1, 3]])
    np.testing.assert_array_equal(run_holders(states, absent), expected)


def test_run_heights_keep_two_styles_apart_where_the_net_names_them_ambiguously(test_settings: Settings) -> None:
    width = 400
    heavy, light = np.full(width, 30.0), np.full(width, 60.0)
    probs = blank(H, width)
    paint(probs, heavy, LONG_DASH, pen=4)
    paint(probs, light, DASHED, pen=1)
    stretch = np.arange(150, 251)  # here the net leans the wrong way on both lines
    for rows, own, other in ((slice(30, 34), LONG_DASH, DASHED), (slice(60, 61), DASHED, LONG_DASH)):
        probs[:, rows, stretch] = 0.0
        probs[own, rows, stretch], probs[other, rows, stretch], probs[0, rows, stretch] = 0.40, 0.55, 0.05
    params = test_settings.extract.model_copy(update={"jump_px": 16.0, "share_weight": 0.25, "height_weight": 0.5})
    # By hand, without the cue: on the other line each curve saves 0.25 x ln(0.55 / 0.40) = 0.080 a column, 8.0
    # over the 101 columns, and pays 2 x (26 paper rows / 16) = 3.25 to get there and back: the two swap.
    rows, _ = trace_curves(probs, params.model_copy(update={"height_weight_styles": 0.0}), [(LONG_DASH,), (DASHED,)])
    np.testing.assert_allclose(rows[:, 200], [60.0, 31.5])
    # With it: typical heights (and pens) 4 and 1 px from the lone runs, so a run of the other's height costs
    # 0.25 x 3 a column, and as much again for its thickness.
    rows, _ = trace_curves(probs, params.model_copy(update={"height_weight_styles": 0.25}), [(LONG_DASH,), (DASHED,)])
    np.testing.assert_allclose(rows, np.stack([np.full(width, 31.5), np.full(width, 60.0)]))


def _swinging_apart(light_class: int, heavy_class: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A light (1-px) curve that swings steeply but in columns 250-350, where it runs flat, and a heavy (4-px)
    one flat but there, where it swings. Returns the map, the truth (heavy first: its mean row is lower) and
    the columns of the stretch."""
    quiet = (X >= 250) & (X < 350)
    light = np.where(quiet, 70.0, 70 + 18 * np.sin(2 * np.pi * X / 16))
    heavy = np.where(quiet, 20 + 10 * np.sin(2 * np.pi * X / 12), 20.0)
    probs = blank(H, W)
    paint(probs, light, light_class, pen=1)
    paint(probs, heavy, heavy_class, pen=4)
    return probs, np.stack([centre(heavy, 4), centre(light, 1)]), quiet


def _worst_error(probs: np.ndarray, params: ExtractParams, classes: list[tuple[int, ...]], truth: np.ndarray) -> float:
    """Largest distance of any read row from its truth; NaN (a curve lost) fails every comparison."""
    rows, _ = trace_curves(probs, params, classes)
    return float(np.max(np.abs(rows - truth)))


def test_pens_keep_two_styles_apart_where_swinging_makes_their_runs_alike(
        test_settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    # The light curve named dashed, the heavy one long-dash; over the stretch the net names both lines 0.50 own
    # against 0.45 the other's. By run height alone each line's runs there fit the other curve's typical height
    # better (the light curve's flat 1-px runs are nearer the heavy pen's 4 px than its own swinging ones), and
    # the two trade lines; their pens (1 and 4 px) do not.
    probs, truth, quiet = _swinging_apart(DASHED, LONG_DASH)
    stretch = np.zeros((H, W), dtype=bool)
    stretch[:, quiet] = probs[0, :, quiet].T < 0.5  # the ink of columns 250-350
    for own, other in ((DASHED, LONG_DASH), (LONG_DASH, DASHED)):
        mine = stretch & (probs[own] > 0.5)
        probs[own][mine], probs[other][mine] = 0.50, 0.45
    classes = [(LONG_DASH,), (DASHED,)]
    assert _worst_error(probs, test_settings.extract, classes, truth) <= 4  # a steep column reads one end of its run
    monkeypatch.setattr(extract, "track_run_emission", lambda cands, states, weight: height_emission_all(
        cands.height, typical_measure(cands.height, states), weight))
    assert not _worst_error(probs, test_settings.extract, classes, truth) <= 4  # by heights they trade lines


def test_a_curve_crossing_an_upright_bar_of_ink_reads_its_own_row(test_settings: Settings) -> None:
    """A heavy depth line the net calls curve ink is crossed, not read: the curve keeps its row."""
    height, width = 200, 200
    probs = blank(height, width)
    paint(probs, np.full(width, 50.0), SOLID)  # rows 50-51: centre 50.5 by hand
    probs[:, :, 100:103] = 0.0
    probs[SOLID, :, 100:103] = 0.95  # a 3-column bar over the whole track, named the curve's style
    probs[0, :, 100:103] = 0.05
    rows, _ = trace_curves(probs, test_settings.extract, [(SOLID,)])
    # Without the rule each bar column reads its run's middle, row 99.5, or a tip at an end (0.5 or 198.5).
    np.testing.assert_allclose(rows[0], 50.5)
    # Ink reaching past the curve on one side only may be the curve's own (a spike, the stroke test above): the
    # rule leaves it, and the middle column reads its run's middle, rows 0-51 by hand.
    probs[:, 52:, 100:103] = 0.0
    probs[0, 52:, 100:103] = 1.0
    rows, _ = trace_curves(probs, test_settings.extract, [(SOLID,)])
    assert rows[0, 101] == pytest.approx(25.5)


def test_two_curves_of_one_style_keep_their_pens_where_the_busy_one_runs_flat(
        test_settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    # Both solid: by run height each takes the other's typical runs in the stretch (the light one's 1-px runs fit
    # the heavy pen's 4 px better than its own swinging ones) and the two trade lines; their strokes keep their
    # pens' thickness throughout.
    probs, truth, _ = _swinging_apart(SOLID, SOLID)
    classes = [(SOLID,), (SOLID,)]
    assert _worst_error(probs, test_settings.extract, classes, truth) <= 4  # a steep column reads one end of its run
    monkeypatch.setattr(extract, "alike_measure", lambda cands, states: (cands.height,
                                                                         typical_measure(cands.height, states)))
    assert not _worst_error(probs, test_settings.extract, classes, truth) <= 4  # re-read by heights: they trade


@pytest.mark.parametrize("channels", [[1], [2, 5], [6, 1, 3], [1, 2, 3, 4, 5, 6]])
def test_the_ink_sums_have_np_sums_bits(channels: list[int]) -> None:
    # The second formula: numpy's own sum along the stacked channels, which `find_candidates` used before it added
    # them one by one; float32 maps of skewed values, whose float64 sums depend on the order of adding.
    probs = np.random.default_rng(len(channels)).random((7, 61, 157), dtype=np.float32) ** 3
    where = probs[0] > 0.4
    whole = np.sum([probs[c] for c in channels], axis=0, dtype=np.float64)
    picked = np.sum([probs[c][where] for c in channels], axis=0, dtype=np.float64)
    assert np.array_equal(_float64_sum(probs, channels, whole.shape), whole)
    assert np.array_equal(_float64_sum(probs, channels, picked.shape, where), picked)
