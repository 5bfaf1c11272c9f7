"""Render one synthetic track strip: image, exact mask, calibration and the native curve samples.

Geometry follows the calibration contract exactly (see `strokes` for the row of a curve in a column,
including backup-scale wrap and skew). The mask classes are `io.classes`: 0 background (paper and
grid), 1 other ink, 2-6 the curves' line styles. Layers, in drawing order, onto one `Canvas` (ink,
mask and which curve owns each pixel, always written together):

1. grid (`grid`, heavy or doubled lines included): ink only, background;
2. depth numbers on white backings (`text`) and flags (`flags`): other ink;
3. the curves (`strokes`, styles from `styles`), in `styles.draw_order`: each labels its style's class
   at every pixel it inks. **Crossing rule: a later curve owns a pixel it shares with an earlier
   one**, and sparse styles are drawn later (solid, long-dash, dashed, dash-dot, dotted), so every
   labelled pixel is ink of a curve of that class. Under a solid flag a curve does not show: other ink;
4. header boxes (`text`) and banners (`banners`): they blank ink and labels, then print other ink;
5. outside a skewed track nothing is printed.

Then the scan artefacts (`artefacts`). The mask is fixed before them and never moves, with one
exception that keeps "each label sits on its ink" true: in a bilevel instance a pixel the threshold
turned white loses its label, and a pixel it turned black under other ink's coverage is other ink.

The curves themselves: `n_curves` (1-5) from one well window or the procedural source; with their
own streams, some become near-constant lines near an edge (`straight`) and some get steep
excursions across the track (`excursions`). A share of instances is drawn tall (`tall`).

Random streams: (seed, index) draws the size, the window and the scales; (seed, index, k) streams
draw each feature (styles, layout, skew, artefacts, tall tracks, straight lines, excursions, grid
weight, flags, banners, header boxes), so changing one feature's params changes nothing else.
Everything is drawn at native size; nothing is resized.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from veernet_pipeline.config import SynthesizeParams
from veernet_pipeline.io.calibration import Calibration, CurveScale
from veernet_pipeline.io.classes import style_class
from veernet_pipeline.synthetic import artefacts as art
from veernet_pipeline.synthetic.banners import draw_banners
from veernet_pipeline.synthetic.canvas import Canvas
from veernet_pipeline.synthetic.curves import CurveWindow, Well, procedural_window, same_unit_groups, window
from veernet_pipeline.synthetic.excursions import add_excursions
from veernet_pipeline.synthetic.flags import draw_flags
from veernet_pipeline.synthetic.grid import draw_grid, line_weight
from veernet_pipeline.synthetic.scales import choose_scale, shared_scales
from veernet_pipeline.synthetic.straight import straight_curve, straight_slots
from veernet_pipeline.synthetic.strokes import drawn_rows, stroke_pixels, track_top
from veernet_pipeline.synthetic.styles import CurveStyle, choose_styles, draw_order
from veernet_pipeline.synthetic.text import FONT_FILES, draw_depth_numbers, draw_header_box, header_lines

# Sub-stream ids of np.random.default_rng([seed, index, id]); 11 is `sizes.SIZE_STREAM`.
STYLE_STREAM, LAYOUT_STREAM, SKEW_STREAM, ARTEFACT_STREAM = 1, 2, 3, 4
TALL_STREAM, STRAIGHT_STREAM, STEEP_STREAM, WEIGHT_STREAM, FLAG_STREAM, BANNER_STREAM = 5, 6, 7, 8, 9, 10
BOX_STREAM = 12
OVERLAY_STREAM = 14
ARTEFACTS = ("paper", "illumination", "blur", "noise", "speckle", "jpeg", "bilevel")
MAX_CURVES = 5


@dataclass(frozen=True)
class SyntheticLog:
    """One rendered instance.

    Shape:
        image, mask, curves: (H, W) uint8; image ink dark on light; mask the classes of `io.classes`;
        curves 0 where no curve owns the pixel, k + 1 where sidecar curve k does.
        depth and each entry of values: (N,) native LAS samples of the window.

    Attributes:
        styles: each curve's line style (`io.classes.STYLES`), as the sidecar names it.
        curve_styles: each curve's full style (pattern, phase, width, gray, pen skips, fades).
        features: the track features present: tall, straight, steep, heavy_grid, doubled_grid,
            flags, banners, header_boxes, and the scan's levels: bilevel (thresholded to 0/255) or gray.
        regions: flags, banners and header boxes as (kind, track row, column, rows, columns).
    """

    image: np.ndarray
    mask: np.ndarray
    calibration: Calibration
    depth: np.ndarray
    values: list[np.ndarray]
    well: str
    mnemonics: tuple[str, ...]
    units: tuple[str, ...]
    line_widths: tuple[int, ...]
    styles: tuple[str, ...] = ()
    artefacts: tuple[str, ...] = ()
    curves: np.ndarray | None = None
    curve_styles: tuple[CurveStyle, ...] = ()
    features: tuple[str, ...] = ()
    regions: tuple[tuple[str, int, int, int, int], ...] = ()


def _stream(seed: int, index: int, stream: int) -> np.random.Generator:
    return np.random.default_rng([seed, index, stream])


def _skew(width: int, params: SynthesizeParams, rng: np.random.Generator) -> tuple[float, float]:
    angle = art.decide(params.artefacts.skew, rng)
    sign = 1.0 if rng.random() < 0.5 else -1.0
    pivot = round(float(rng.uniform(0.3, 0.7)) * width, 1)
    return (0.0, 0.0) if angle is None else (sign * round(angle, 4), pivot)


def _size(seed: int, index: int, params: SynthesizeParams, rng: np.random.Generator) -> tuple[int, int, bool]:
    height = int(rng.integers(params.height.min, params.height.max + 1))
    width = int(rng.integers(params.width.min, params.width.max + 1))
    tall_rng = _stream(seed, index, TALL_STREAM)
    tall, tall_height = tall_rng.random() < params.tall.share, int(tall_rng.integers(params.tall.height.min,
                                                                                   params.tall.height.max + 1))
    return (tall_height if tall else height), width, bool(tall)


def _curves(picked: CurveWindow, scales: tuple[CurveScale, ...], width: int, params: SynthesizeParams, seed: int,
            index: int) -> tuple[CurveWindow, tuple[CurveScale, ...], list[str]]:
    """Straight lines replace some curves, steep excursions change others; returns the features present."""
    mnemonics, units, values, scales_out = (list(picked.mnemonics), list(picked.units), list(picked.values),
                                            list(scales))
    straight_rng = _stream(seed, index, STRAIGHT_STREAM)
    slots = straight_slots(len(values), params, straight_rng)
    for kind, slot in enumerate(slots):
        mnemonics[slot], units[slot], values[slot], scales_out[slot] = straight_curve(
            kind, picked.depth.size, width, params, straight_rng)
    steep = False
    for k in [k for k in range(len(values)) if k not in slots]:
        # Each curve has its own stream: which curves are straight changes nothing for the others.
        curve_rng = np.random.default_rng([seed, index, STEEP_STREAM, k])
        changed = add_excursions(values[k], scales_out[k], width, params, curve_rng)
        steep |= not np.array_equal(changed, values[k])
        values[k] = changed
    features = ["straight"] * bool(slots) + ["steep"] * steep
    picked = replace(picked, mnemonics=tuple(mnemonics), units=tuple(units), values=tuple(values))
    return picked, tuple(scales_out), features


def _scan(canvas: Canvas, params: SynthesizeParams, seed: int, index: int) -> tuple[np.ndarray, list[str]]:
    rngs = {name: np.random.default_rng([seed, index, ARTEFACT_STREAM, k]) for k, name in enumerate(ARTEFACTS)}
    found = params.artefacts
    image, applied = art.paper_and_ink(canvas.ink, found.paper, found.illumination,
                                       [rngs["paper"], rngs["illumination"]])
    side = art.decide(found.blur, rngs["blur"])
    if side is not None:
        art.blur(image, side)
        applied.append("blur")
    if params.noise_std > 0:
        art.add_noise(image, params.noise_std * float(rngs["noise"].uniform(0.25, 1.0)), rngs["noise"])
        applied.append("noise")
    density = art.decide(found.speckle, rngs["speckle"])
    if density is not None:
        art.speckle(image, density, rngs["speckle"])
        applied.append("speckle")
    gray = art.quantise(image)
    threshold = art.decide(found.bilevel, rngs["bilevel"])
    quality = art.decide(found.jpeg, rngs["jpeg"])
    if threshold is not None:
        gray = art.bilevel(gray, threshold)
        canvas.label_threshold(gray)
        applied.append("bilevel")
    elif quality is not None:
        gray = art.jpeg(gray, round(quality))
        applied.append("jpeg")
    return gray, applied


def render_instance(seed: int, index: int, params: SynthesizeParams, wells: list[Well], n_curves: int,
                    size: tuple[int, int] | None = None) -> SyntheticLog:
    """Render instance `index` of the stream `seed`; the same arguments give the same bytes.

    Args:
        seed: stream seed (the set's seed).
        index: instance index within the stream.
        params: synthesize parameters (sizes, scales, styles, grid, text, flags, banners, artefacts).
        wells: source wells; empty means every instance is procedural.
        n_curves: 1 to `MAX_CURVES` curves in the track, each in a style drawn from `params.styles`.
        size: (height, width) to render at; None draws both from params (tall tracks included).

    Returns:
        The instance; `values` are the window's samples (excursions and straight lines included),
        the ground truth for its LAS.
    """
    if not 1 <= n_curves <= MAX_CURVES:
        raise ValueError(f"n_curves must be 1 to {MAX_CURVES}, got {n_curves}")
    rng = np.random.default_rng([seed, index])
    height, width, tall = _size(seed, index, params, rng)
    if size is not None:
        height, width, tall = int(size[0]), int(size[1]), False
    procedural = not wells or rng.random() < params.procedural_share
    # Its own stream, so overlay_share 0 leaves every instance's bytes as they were.
    overlay_rng = _stream(seed, index, OVERLAY_STREAM)
    overlay = n_curves > 1 and overlay_rng.random() < params.overlay_share
    picked = None if procedural else window(wells, n_curves, width, rng, overlay=overlay)
    if picked is None:
        picked = procedural_window(n_curves, width, rng)
    curves = zip(picked.mnemonics, picked.units, picked.values, strict=True)
    scales = tuple(choose_scale(m, u, v, rng, params) for m, u, v in curves)
    overlaid = overlay and bool(same_unit_groups(picked.mnemonics, picked.units))
    if overlaid:
        scales = shared_scales(picked.mnemonics, picked.units, picked.values, scales, overlay_rng, params)
    picked, scales, features = _curves(picked, scales, width, params, seed, index)
    features += ["overlay"] * overlaid
    styles = choose_styles(n_curves, width, params, _stream(seed, index, STYLE_STREAM))
    scales = tuple(replace(scale, style=style.name) for scale, style in zip(scales, styles, strict=True))
    skew_deg, pivot = _skew(width, params, _stream(seed, index, SKEW_STREAM))
    calibration = Calibration(float(picked.depth[0]), float(picked.depth[-1]), picked.depth_unit, scales,
                              dict(picked.header), skew_deg=skew_deg, skew_pivot=pivot)

    top = track_top(calibration, width)
    layout_rng = _stream(seed, index, LAYOUT_STREAM)
    canvas = Canvas(height, width)
    weight = line_weight(params, _stream(seed, index, WEIGHT_STREAM))
    numbered = draw_grid(canvas.ink, calibration, top, params, layout_rng, weight)
    font = int(layout_rng.integers(len(FONT_FILES)))
    font_px = int(layout_rng.integers(params.text.font_px.min, params.text.font_px.max + 1))
    print_gray = float(layout_rng.uniform(params.ink.min, params.ink.max))
    if layout_rng.random() < params.text.depth_numbers:
        draw_depth_numbers(canvas, numbered, top, font_px, font, print_gray, layout_rng)
    regions = draw_flags(canvas, top, print_gray, params.flags, _stream(seed, index, FLAG_STREAM))
    for k in draw_order(styles):
        rows, wraps = drawn_rows(calibration, picked.depth, picked.values[k], width, height, k)
        ys, xs, grays = stroke_pixels(rows, wraps, top, height, styles[k])
        canvas.draw_curve(k, style_class(styles[k].name), ys, xs, grays)
    scale_ends = [(c.top_value, c.bottom_value) for c in scales]
    box_rng = _stream(seed, index, BOX_STREAM)
    for _ in range(int(box_rng.poisson(params.text.headers_per_10k * width / 10_000.0))):
        box = draw_header_box(canvas, header_lines(picked.mnemonics, picked.units, scale_ends, box_rng), top,
                              font_px, font, print_gray, box_rng)
        regions += [("header_box", *box)] if box is not None else []
    legend = [(f"{a:g}  {m} {u}  {b:g}", style)
              for m, u, (a, b), style in zip(picked.mnemonics, picked.units, scale_ends, styles, strict=True)]
    regions += draw_banners(canvas, top, legend, font, font_px, print_gray, params.banners,
                            _stream(seed, index, BANNER_STREAM))
    canvas.clear_outside(top)
    image, applied = _scan(canvas, params, seed, index)
    kinds = {region[0] for region in regions}
    features += (["tall"] * tall + ["heavy_grid"] * bool(weight[0]) + ["doubled_grid"] * bool(weight[1])
                 + ["flags"] * bool(kinds & {"hatch", "cross", "halftone", "solid"})
                 + ["banners"] * bool(kinds & {"repeat_banner", "section_header"})
                 + ["header_boxes"] * ("header_box" in kinds)
                 # As the foreign renderer names them: per-feature tables then set own bilevel beside foreign.
                 + ["bilevel" if "bilevel" in applied else "gray"])
    return SyntheticLog(
        image=image,
        mask=canvas.mask,
        calibration=calibration,
        depth=picked.depth,
        values=list(picked.values),
        well=picked.well,
        mnemonics=picked.mnemonics,
        units=picked.units,
        line_widths=tuple(s.width for s in styles),
        styles=tuple(s.name for s in styles),
        artefacts=tuple(applied) + (("skew",) if skew_deg else ()),
        curves=canvas.curves,
        curve_styles=styles,
        features=tuple(features),
        regions=tuple(regions),
    )
