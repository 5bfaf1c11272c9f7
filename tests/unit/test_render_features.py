"""Track features: each forced on through params and found in the rendered pixels and mask; off, it leaves no trace.

Each test renders one instance with the feature off and on (the same seed and index, everything else
clean): the feature must show where it belongs and change nothing elsewhere, because every feature
draws from its own random stream.
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.renders import CLEAN, DOCUMENTED_ORDER, column_runs, only_style
from tests.renders import synth_params as _params
from veernet_pipeline.io.classes import BACKGROUND, OTHER_INK, STYLES, style_class
from veernet_pipeline.synthetic.curves import Well, load_wells, same_unit_groups
from veernet_pipeline.synthetic.render import SyntheticLog, render_instance

SIZE = (128, 2000)


@pytest.fixture(scope="module")
def wells() -> list[Well]:
    return load_wells("")


def _render(wells: list[Well], *overrides: str, n_curves: int = 3, index: int = 0,
            size: tuple[int, int] | None = SIZE) -> SyntheticLog:
    return render_instance(5, index, _params(*CLEAN, *overrides), wells, n_curves, size=size)


def test_one_to_five_curves_each_with_its_style_in_sidecar_and_mask(wells: list[Well]) -> None:
    seen: set[str] = set()
    for n_curves in range(1, 6):
        log = _render(wells, n_curves=n_curves, index=n_curves)
        styles = [c.style for c in log.calibration.curves]
        assert len(log.values) == len(styles) == n_curves and styles == list(log.styles)
        assert set(styles) <= set(STYLES)
        for k, style in enumerate(styles):
            assert (log.mask[log.curves == k + 1] == style_class(style)).all() and (log.curves == k + 1).any()
        seen |= set(styles)
    assert len(seen) >= 4
    with pytest.raises(ValueError, match="n_curves must be 1 to 5"):
        _render(wells, n_curves=6)


def test_distinct_or_repeated_styles_and_widths(wells: list[Well]) -> None:
    distinct = [_render(wells, "synthesize.distinct_styles=1", n_curves=5, index=i).styles for i in range(4)]
    assert all(len(set(styles)) == 5 for styles in distinct)
    # Two curves of one style, as real tracks print them, differ in width while the range allows.
    for i in range(4):
        log = _render(wells, only_style("solid"), "synthesize.line_width={min: 1, max: 4}", n_curves=2, index=i)
        assert log.styles == ("solid", "solid") and log.line_widths[0] != log.line_widths[1]
    widest = _render(wells, only_style("solid"), "synthesize.line_width={min: 4, max: 4}", n_curves=1)
    thickness = (widest.curves == 1).sum(axis=0)
    assert widest.line_widths == (4,) and np.median(thickness) >= 4


@pytest.mark.parametrize("style", STYLES)
def test_every_style_is_reachable_with_its_pattern(wells: list[Well], style: str) -> None:
    log = _render(wells, only_style(style), "synthesize.line_width={min: 1, max: 1}", "synthesize.procedural_share=1",
                  "synthesize.patterns.dashed={ink: {min: 14, max: 14}, gap: {min: 8, max: 8}}",
                  "synthesize.patterns.long_dash={ink: {min: 60, max: 60}, gap: {min: 10, max: 10}}",
                  n_curves=1)
    assert log.styles == (style,)
    runs = column_runs((log.mask == style_class(style)).any(axis=0))
    if style == "solid":
        assert runs.size <= 3
    elif style == "dotted":
        assert runs.size > 150 and np.median(runs) <= 4
    elif style == "dashed":
        assert runs.size > 40 and 5 <= np.median(runs) <= 14
    elif style == "long_dash":
        assert runs.size > 10 and np.median(runs) >= 25
    else:
        assert (runs <= 4).sum() > 20 and (runs >= 6).sum() > 20


def test_dash_patterns_are_drawn_per_curve_from_wide_ranges(wells: list[Well]) -> None:
    params = _params(*CLEAN, only_style("dashed"), "synthesize.distinct_styles=0",
                     "synthesize.line_width={min: 1, max: 1}")
    spec = params.patterns.dashed
    patterns = [s.pattern for i in range(6) for s in render_instance(5, i, params, wells, 3, size=SIZE).curve_styles]
    assert len(set(patterns)) == len(patterns) == 18
    inks, gaps = np.array([p[0] for p in patterns]), np.array([p[1] for p in patterns])
    assert ((inks >= spec.ink.min) & (inks <= spec.ink.max)).all()
    assert ((gaps >= spec.gap.min) & (gaps <= spec.gap.max)).all()
    # Spread over the range, not a few presets: the drawn lengths fill most of it.
    assert inks.max() - inks.min() > 0.6 * (spec.ink.max - spec.ink.min)


def test_a_track_scale_stretches_every_dash_of_the_track_alike(wells: list[Well]) -> None:
    # A fixed factor draws nothing extra, so the same instance comes back with each broken curve's lengths exactly
    # 1.5 times the unscaled ones (1-px lines: the lengths drawn are the lengths seen, none clipped at 1 px).
    base = ("synthesize.distinct_styles=1", "synthesize.line_width={min: 1, max: 1}")
    plain = render_instance(5, 2, _params(*CLEAN, *base), wells, 5, size=SIZE).curve_styles
    scaled = render_instance(5, 2, _params(*CLEAN, *base, "synthesize.patterns.scale={min: 1.5, max: 1.5}"), wells,
                             5, size=SIZE).curve_styles
    assert [s.name for s in plain] == [s.name for s in scaled] and len({s.name for s in plain}) == 5
    for a, b in zip(plain, scaled, strict=True):
        assert b.pattern == pytest.approx([1.5 * x for x in a.pattern]), a.name
    # A range: one factor per track, so on every track the long dash stays longer than the dash beside it.
    ranged = _params(*CLEAN, *base, "synthesize.patterns.scale={min: 0.5, max: 2.0}",
                     "synthesize.patterns.dashed={ink: {min: 10, max: 10}, gap: {min: 5, max: 5}}",
                     "synthesize.patterns.long_dash={ink: {min: 40, max: 40}, gap: {min: 5, max: 5}}")
    factors = []
    for index in range(8):
        styles = {s.name: s for s in render_instance(5, index, ranged, wells, 5, size=SIZE).curve_styles}
        dash, long_dash = (styles[n].pattern[0] for n in ("dashed", "long_dash"))
        assert long_dash == pytest.approx(4 * dash)
        factors.append(dash / 10)
    assert min(factors) >= 0.5 and max(factors) <= 2.0 and max(factors) / min(factors) > 1.5
    with pytest.raises(ValueError, match="patterns.scale multiplies dash lengths: min must be > 0"):
        _params("synthesize.patterns.scale={min: 0, max: 1}")


def test_straight_lines_run_near_an_edge(wells: list[Well]) -> None:
    off = _render(wells, n_curves=3)
    log = _render(wells, "synthesize.straight.share=1", "synthesize.straight.edge={min: 0.03, max: 0.1}", n_curves=3)
    assert "straight" in log.features and log.mnemonics[1:] == ("TENS", "LSPD") and log.mnemonics[0] == off.mnemonics[0]
    for k in (1, 2):
        fraction = log.calibration.curves[k].value_to_fraction(log.values[k])
        nearer_edge = np.minimum(fraction, 1.0 - fraction)
        assert np.median(nearer_edge) <= 0.11 and np.percentile(fraction, 95) - np.percentile(fraction, 5) < 0.2
        ys, _ = np.nonzero(log.curves == k + 1)
        assert np.median(np.minimum(ys, SIZE[0] - 1 - ys)) <= 0.11 * SIZE[0] + log.line_widths[k]
    # The first curve, its pixels and its scale are those of the render without straight lines.
    np.testing.assert_array_equal(log.values[0], off.values[0])
    assert log.calibration.curves[0] == off.calibration.curves[0]
    assert not ((log.curves == 1) & (off.curves == 0)).any() and not ((off.curves == 1) & (log.curves == 0)).any()


def test_straight_lines_step_only_when_asked(wells: list[Well]) -> None:
    # steps_per_10k = 0: a flat line (wobble only, under half a percent of the track); 30 per 10,000 columns over
    # 2,000 columns: about six level changes of 1-6 % each, so the line moves by more than the wobble.
    spreads = {}
    for steps in (0, 30):
        log = _render(wells, "synthesize.straight.share=1", f"synthesize.straight.steps_per_10k={steps}", n_curves=2)
        fraction = log.calibration.curves[1].value_to_fraction(log.values[1])
        spreads[steps] = fraction.max() - fraction.min()
    assert spreads[0] < 0.01 and spreads[30] > 0.02


def test_steep_excursions_cross_the_track_within_a_few_columns(wells: list[Well]) -> None:
    forced = ("synthesize.steep.share=1", "synthesize.steep.per_10k=60", "synthesize.steep.far={min: 0.03, max: 0.1}",
              "synthesize.procedural_share=1", only_style("solid"), "synthesize.line_width={min: 1, max: 1}")
    off = _render(wells, *forced[3:], n_curves=1, size=(256, 2000))
    log = _render(wells, *forced, n_curves=1, size=(256, 2000))
    assert "steep" in log.features and "steep" not in off.features
    # Between two samples (a few columns) the curve crosses at least 30 % of the track, ten times or more.
    jumps = [np.abs(np.diff(x.calibration.curves[0].value_to_fraction(x.values[0]))) for x in (log, off)]
    assert (jumps[0] > 0.3).sum() >= 10 and jumps[1].max() < 0.3
    # In the mask: in some columns the curve's vertical run alone spans a tenth of the track or more.
    rows = np.arange(256)[:, None]
    spans = [np.where(x.curves == 1, rows, -1).max(axis=0) - np.where(x.curves == 1, rows, 999).min(axis=0)
             for x in (log, off)]
    assert (spans[0] > 26).sum() >= 4 and spans[1].max() <= 26


def test_tall_tracks(wells: list[Well]) -> None:
    params = _params(*CLEAN, "synthesize.tall.share=1", "synthesize.tall.height={min: 900, max: 1024}")
    log = render_instance(5, 0, params, wells, 2)
    assert 900 <= log.image.shape[0] <= 1024 and log.mask.shape == log.image.shape and "tall" in log.features
    short = render_instance(5, 0, _params(*CLEAN), wells, 2)
    assert short.image.shape[0] <= 128 and short.image.shape[1] == log.image.shape[1]


def _line_columns(log: SyntheticLog) -> np.ndarray:
    # Columns dark over most of the track height (depth numbers' backings interrupt them): major depth lines.
    return ((log.image < 100) | (log.mask > BACKGROUND)).mean(axis=0) > 0.6


def test_heavy_and_doubled_grid_lines(wells: list[Well]) -> None:
    # A range of one value draws nothing from the stream, so every render fixes the same ranges.
    fixed = ("synthesize.grid.major_gray={min: 0, max: 0}", "synthesize.grid.major_px={min: 2, max: 2}")
    plain = _render(wells, *fixed)
    heavy = _render(wells, *fixed, "synthesize.grid.heavy.share=1", "synthesize.grid.heavy.px={min: 5, max: 5}")
    doubled = _render(wells, *fixed, "synthesize.grid.doubled.share=1", "synthesize.grid.doubled.gap={min: 2, max: 2}")
    assert "heavy_grid" in heavy.features and "doubled_grid" in doubled.features and plain.features == ("gray",)
    assert column_runs(_line_columns(plain)).max() <= 2 and (column_runs(_line_columns(heavy)) >= 5).sum() >= 3
    # Doubled: two 2-px lines 2 px apart, at each major line.
    line = _line_columns(doubled).astype(np.int8)
    pattern = np.array([0, 1, 1, 0, 0, 1, 1, 0], dtype=np.int8)
    hits = np.flatnonzero((np.lib.stride_tricks.sliding_window_view(line, 8) == pattern).all(axis=1))
    assert hits.size >= 3
    # Heavy value lines across the track: a row (middle or decade) darker and thicker than in the plain render.
    assert (heavy.image.mean(axis=1) < 120).sum() > (plain.image.mean(axis=1) < 120).sum()
    # The grid is background, and it changes nothing else.
    for log in (heavy, doubled):
        np.testing.assert_array_equal(log.mask, plain.mask)


def _value_line_rows(log: SyntheticLog) -> np.ndarray:
    # Rows dark along nearly the whole strip, away from the borders: value lines (curves wander off any one row).
    dark = (log.image < 60).mean(axis=1) > 0.9
    dark[:6], dark[-6:] = False, False
    return dark


def test_major_value_lines_take_their_own_thickness(wells: list[Well]) -> None:
    # Light minor lines and black majors, so a row is dark only on a major value line; instance 0's second curve
    # is on a log scale, so its track has a decade line.
    fixed = ("synthesize.grid.major_gray={min: 0, max: 0}", "synthesize.grid.minor_gray={min: 220, max: 220}")
    plain = _render(wells, *fixed, "synthesize.grid.major_value_px={min: 1, max: 1}", n_curves=2)
    thick = _render(wells, *fixed, "synthesize.grid.major_value_px={min: 3, max: 3}", n_curves=2)
    assert "log" in [curve.scale for curve in plain.calibration.curves]
    assert column_runs(_value_line_rows(plain)).tolist() == [1]
    assert column_runs(_value_line_rows(thick)).tolist() == [3]
    # Grid lines are background: the labels do not change.
    np.testing.assert_array_equal(thick.mask, plain.mask)


@pytest.mark.parametrize("kind", ["hatch", "cross", "halftone", "solid"])
def test_flags_over_curves(wells: list[Well], kind: str) -> None:
    kinds = ", ".join(f"{name}: {int(name == kind)}" for name in ("hatch", "cross", "halftone", "solid"))
    flagged = ("synthesize.flags.per_10k=30", "synthesize.flags.mid_track=1", f"synthesize.flags.kinds={{{kinds}}}",
               "synthesize.flags.rows={min: 0.4, max: 0.5}", "synthesize.flags.columns={min: 60, max: 60}")
    plain = _render(wells, n_curves=4)
    log = _render(wells, *flagged, n_curves=4)
    boxes = [r for r in log.regions if r[0] == kind]
    assert len(boxes) >= 3 and "flags" in log.features
    inside = np.zeros(log.mask.shape, dtype=bool)
    for _, row0, col0, rows, cols in boxes:
        inside[row0 : row0 + rows, col0 : col0 + cols] = True
    share = ((log.mask == OTHER_INK) & inside).sum() / inside.sum()
    assert share > 0.9 if kind == "solid" else 0.08 < share < 0.8
    assert (log.image[log.mask == OTHER_INK] < 128).mean() > 0.9
    under = (plain.curves > 0) & inside
    assert under.sum() > 50
    if kind == "solid":
        # A curve under a solid flag does not show: other ink, no owner.
        assert (log.curves[under] == 0).all() and (log.mask[under] == OTHER_INK).all()
    else:
        # A curve over a pattern keeps every label it had.
        np.testing.assert_array_equal(log.curves[under], plain.curves[under])
    np.testing.assert_array_equal(log.mask[~inside], plain.mask[~inside])


@pytest.mark.parametrize("repeat", [0, 1])
def test_banners_interrupt_the_curves(wells: list[Well], repeat: int) -> None:
    forced = ("synthesize.banners.per_10k=8", "synthesize.banners.columns={min: 200, max: 200}",
              f"synthesize.banners.repeat_share={repeat}")
    plain = _render(wells, "synthesize.line_width={min: 1, max: 1}", size=(480, 3000))
    log = _render(wells, "synthesize.line_width={min: 1, max: 1}", *forced, size=(480, 3000))
    bands = [r for r in log.regions if r[0] in ("section_header", "repeat_banner")]
    assert bands and all(r[0] == ("repeat_banner" if repeat else "section_header") for r in bands)
    covered = np.zeros(log.mask.shape[1], dtype=bool)
    for _, _, col0, _, cols in bands:
        covered[col0 : col0 + cols] = True
        band = log.mask[:, col0 : col0 + cols]
        assert (band <= OTHER_INK).all() and (log.curves[:, col0 : col0 + cols] == 0).all()
        # Ruled edges across the whole track, and text.
        assert (band == OTHER_INK).all(axis=0)[[0, -1]].all() and (band == OTHER_INK).sum() > 40 * 20
        if repeat:
            # One legend sample per curve: a broken or solid line of other ink across most of the track.
            across = (band == OTHER_INK).sum(axis=0)
            assert (across[1:-1] > 0.3 * 480).sum() >= 2
    assert (plain.curves[:, covered] > 0).sum() > 100
    np.testing.assert_array_equal(log.mask[:, ~covered], plain.mask[:, ~covered])


def test_header_boxes_interrupt_the_curves(wells: list[Well]) -> None:
    plain = _render(wells, size=(256, 3000))
    log = _render(wells, "synthesize.text.headers_per_10k=10", size=(256, 3000))
    boxes = [r for r in log.regions if r[0] == "header_box"]
    assert len(boxes) >= 3 and "header_boxes" in log.features and "header_boxes" not in plain.features
    inside = np.zeros(log.mask.shape, dtype=bool)
    for _, row0, col0, rows, cols in boxes:
        inside[row0 : row0 + rows, col0 : col0 + cols] = True
        box = log.mask[row0 : row0 + rows, col0 : col0 + cols]
        # A white box: no curve inside, a ruled border all round, and text.
        assert (box <= OTHER_INK).all() and (log.curves[row0 : row0 + rows, col0 : col0 + cols] == 0).all()
        assert (box[[0, -1], :] == OTHER_INK).all() and (box[:, [0, -1]] == OTHER_INK).all()
        assert (box[2:-2, 2:-2] == OTHER_INK).any()
    assert (plain.curves[inside] > 0).sum() > 20
    np.testing.assert_array_equal(log.mask[~inside], plain.mask[~inside])


def test_documented_drawing_order_is_the_renderers() -> None:
    # The docs and the test helpers name the order the crossing rule follows; the styles module applies it.
    from veernet_pipeline.synthetic.styles import DRAW_RANK

    assert tuple(sorted(DRAW_RANK, key=DRAW_RANK.get)) == DOCUMENTED_ORDER and set(DOCUMENTED_ORDER) == set(STYLES)


def test_features_name_the_scans_levels(wells: list[Well]) -> None:
    # Independent of the renderer's bookkeeping: a bilevel scan holds only 0 and 255.
    for share, name in ((1.0, "bilevel"), (0.0, "gray")):
        log = _render(wells, f"synthesize.artefacts.bilevel.share={share}", "synthesize.artefacts.jpeg.share=0")
        levels = set(np.unique(log.image).tolist())
        assert name in log.features and ({"bilevel", "gray"} - {name}).isdisjoint(log.features)
        assert (levels <= {0, 255}) == (name == "bilevel"), levels


def test_same_unit_groups_by_hand() -> None:
    # Units compare without case or padding; a curve with no unit joins nothing.
    assert same_unit_groups(("RDEP", "GR", "RMED", "X"), ("ohm.m", "gAPI", " OHM.M", "")) == [[0, 2]]
    assert same_unit_groups(("RDEP", "GR"), ("ohm.m", "gAPI")) == []
    assert same_unit_groups(("A", "B", "C"), ("", "", "")) == []


def _centre_rows(log: SyntheticLog) -> np.ndarray:
    # Each curve's mean ink row per column (NaN where it has no pixel there), from the curve-index mask.
    rows = np.arange(log.curves.shape[0])[:, None]
    centres = []
    for k in range(1, len(log.values) + 1):
        hit = log.curves == k
        with np.errstate(invalid="ignore"):
            centres.append(np.where(hit, rows, 0).sum(axis=0) / hit.sum(axis=0))
    return np.array(centres)


def _close_share(log: SyntheticLog, rows: float = 4.0) -> float:
    centres = _centre_rows(log)
    i, j = np.triu_indices(len(centres), 1)
    with np.errstate(invalid="ignore"):
        close = (np.abs(centres[i] - centres[j]) <= rows).any(axis=0)
    return float(close.mean())


def test_overlays_share_one_scale_and_bring_curves_close(wells: list[Well]) -> None:
    common = ("synthesize.procedural_share=0", "synthesize.backup_share=0")
    off = [_render(wells, *common, "synthesize.overlay_share=0", index=i, size=(256, 2000)) for i in range(8)]
    on = [_render(wells, *common, "synthesize.overlay_share=1", index=i, size=(256, 2000)) for i in range(8)]
    assert not any("overlay" in x.features for x in off) and all("overlay" in x.features for x in on)
    for log in on:
        curves = log.calibration.curves
        pairs = [(a, b) for a in curves for b in curves
                 if a.mnemonic < b.mnemonic and a.unit.strip().lower() == b.unit.strip().lower()]
        assert pairs, [c.unit for c in curves]
        for a, b in pairs:
            assert (a.top_value, a.bottom_value, a.scale) == (b.top_value, b.bottom_value, b.scale)
    # In the drawn mask: curves run within 4 rows of each other in far more columns.
    assert np.mean([_close_share(x) for x in on]) > 1.6 * np.mean([_close_share(x) for x in off])
