"""Render one synthetic track strip: image, exact mask, calibration and the native curve samples.

Geometry follows the calibration contract exactly (see `strokes` for the row of a curve in a column,
including backup-scale wrap and skew). Layers, in drawing order, into one ink layer (uint8, 255 = no
ink) and the mask:

1. grid (`grid`), depth numbers on white backings and shaded flags (`text`);
2. the curves, A then B (`strokes`, styles from `styles`): each sets the ink to its gray where it is
   darker and the mask to its class. **Crossing rule: the later curve owns a shared pixel**, so where
   A and B both put ink the mask says B (class 2);
3. header boxes (`text`): white boxes that blank ink and mask, then their border and text;
4. outside a skewed track nothing is printed.

Then the scan artefacts (`artefacts`). The mask is fixed before them and never moves, with one
exception that keeps "each mask pixel belongs to the curve whose ink is there" true: in a bilevel
instance a curve pixel the threshold turned white (faded ink, noise, a dropout) is no longer labelled.

Random streams: (seed, index) draws the size, the window and the scales; (seed, index, k) streams
draw styles, layout, skew and each artefact, so changing one artefact's params changes nothing else.
Everything is drawn at native size; nothing is resized.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from veernet_pipeline.config import SynthesizeParams
from veernet_pipeline.io.calibration import Calibration
from veernet_pipeline.synthetic import artefacts as art
from veernet_pipeline.synthetic.curves import Well, procedural_window, window
from veernet_pipeline.synthetic.grid import clear_outside_track, draw_grid
from veernet_pipeline.synthetic.scales import choose_scale
from veernet_pipeline.synthetic.strokes import drawn_rows, stroke_pixels, track_top
from veernet_pipeline.synthetic.styles import choose_styles
from veernet_pipeline.synthetic.text import FONT_FILES, draw_depth_numbers, draw_flags, draw_header_box, header_lines

# Sub-stream ids of np.random.default_rng([seed, index, id]).
STYLE_STREAM, LAYOUT_STREAM, SKEW_STREAM, ARTEFACT_STREAM = 1, 2, 3, 4
ARTEFACTS = ("paper", "illumination", "blur", "noise", "speckle", "jpeg", "bilevel")


@dataclass(frozen=True)
class SyntheticLog:
    """One rendered instance.

    Shape:
        image, mask: (H, W) uint8; image ink dark on light, mask 0 background, 1 curve A, 2 curve B.
        depth and each entry of values: (N,) native LAS samples of the window.
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


def _skew(width: int, params: SynthesizeParams, rng: np.random.Generator) -> tuple[float, float]:
    angle = art.decide(params.artefacts.skew, rng)
    sign = 1.0 if rng.random() < 0.5 else -1.0
    pivot = round(float(rng.uniform(0.3, 0.7)) * width, 1)
    return (0.0, 0.0) if angle is None else (sign * round(angle, 4), pivot)


def _layout(ink: np.ndarray, calibration: Calibration, top: np.ndarray, params: SynthesizeParams,
            rng: np.random.Generator) -> tuple[int, int, float]:
    """Grid, depth numbers and flags; returns the instance's (font, font size, print gray) for its boxes."""
    width = ink.shape[1]
    numbered = draw_grid(ink, calibration, top, params, rng)
    font = int(rng.integers(len(FONT_FILES)))
    size = int(rng.integers(params.text.font_px.min, params.text.font_px.max + 1))
    gray = float(rng.uniform(params.ink.min, params.ink.max))
    if rng.random() < params.text.depth_numbers:
        draw_depth_numbers(ink, numbered, top, size, font, gray, rng)
    draw_flags(ink, int(rng.poisson(params.text.flags_per_10k * width / 10_000.0)), top, gray, rng)
    return font, size, gray


def _scan(ink: np.ndarray, mask: np.ndarray, params: SynthesizeParams, seed: int,
          index: int) -> tuple[np.ndarray, list[str]]:
    rngs = {name: np.random.default_rng([seed, index, ARTEFACT_STREAM, k]) for k, name in enumerate(ARTEFACTS)}
    found = params.artefacts
    image, applied = art.paper_and_ink(ink, found.paper, found.illumination, [rngs["paper"], rngs["illumination"]])
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
        mask[(mask > 0) & (gray > 0)] = 0
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
        params: synthesize parameters (sizes, scales, styles, grid, text, artefacts).
        wells: source wells; empty means every instance is procedural.
        n_curves: 1 or 2 curves in the track (curve A solid; curve B broken or thinner).
        size: (height, width) to render at; None draws both uniformly from params.

    Returns:
        The instance; `values` are the window's native samples, the ground truth for its LAS.
    """
    if n_curves not in (1, 2):
        raise ValueError(f"n_curves must be 1 or 2, got {n_curves}")
    rng = np.random.default_rng([seed, index])
    height = int(rng.integers(params.height.min, params.height.max + 1))
    width = int(rng.integers(params.width.min, params.width.max + 1))
    if size is not None:
        height, width = int(size[0]), int(size[1])
    procedural = not wells or rng.random() < params.procedural_share
    picked = None if procedural else window(wells, n_curves, width, rng)
    if picked is None:
        picked = procedural_window(n_curves, width, rng)
    curves = zip(picked.mnemonics, picked.units, picked.values, strict=True)
    scales = tuple(choose_scale(m, u, v, rng, params) for m, u, v in curves)
    skew_deg, pivot = _skew(width, params, np.random.default_rng([seed, index, SKEW_STREAM]))
    calibration = Calibration(float(picked.depth[0]), float(picked.depth[-1]), picked.depth_unit, scales,
                              dict(picked.header), skew_deg=skew_deg, skew_pivot=pivot)

    top = track_top(calibration, width)
    layout_rng = np.random.default_rng([seed, index, LAYOUT_STREAM])
    ink = np.full((height, width), 255, dtype=np.uint8)
    font, font_px, print_gray = _layout(ink, calibration, top, params, layout_rng)
    mask = np.zeros((height, width), dtype=np.uint8)
    styles = choose_styles(n_curves, width, params, np.random.default_rng([seed, index, STYLE_STREAM]))
    for curve, (values, style) in enumerate(zip(picked.values, styles, strict=True)):
        rows, wraps = drawn_rows(calibration, picked.depth, values, width, height, curve)
        ys, xs, grays = stroke_pixels(rows, wraps, top, height, style)
        ink[ys, xs] = np.minimum(ink[ys, xs], grays.astype(np.uint8))
        mask[ys, xs] = curve + 1
    scale_ends = [(c.top_value, c.bottom_value) for c in scales]
    for _ in range(int(layout_rng.poisson(params.text.headers_per_10k * width / 10_000.0))):
        lines = header_lines(picked.mnemonics, picked.units, scale_ends, layout_rng)
        ys, xs = draw_header_box(ink, lines, top, font_px, font, print_gray, layout_rng)
        mask[ys, xs] = 0
    clear_outside_track(ink, top)
    image, applied = _scan(ink, mask, params, seed, index)
    return SyntheticLog(
        image=image,
        mask=mask,
        calibration=calibration,
        depth=picked.depth,
        values=list(picked.values),
        well=picked.well,
        mnemonics=picked.mnemonics,
        units=picked.units,
        line_widths=tuple(s.width for s in styles),
        styles=tuple(s.name for s in styles),
        artefacts=tuple(applied) + (("skew",) if skew_deg else ()),
    )
