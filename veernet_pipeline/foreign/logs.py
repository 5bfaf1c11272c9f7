"""What a foreign scan shows: a window of a test well, its curves' scales and their line styles.

Chosen the way a logging company's print set-up chooses them, not the way the generator does:

- **Depth scale**: a print scale of 1:200, 1:500 or 1:1000 at 200 dpi (6.0, 2.4 or 1.2 px per
  0.1524 m sample), so a W-px strip shows W / (px per metre) metres of the well.
- **Curves**: 1-5 curves of one test well (`foreign.curves_per_track` weights), every one finite over
  the window; if no window holds that many, one fewer is asked for.
- **Scales**: the header conventions per mnemonic (`CONVENTIONS`: gamma ray 0-150 API, resistivities
  on 0.2-2000 ohm.m logarithmic, neutron porosity 0.45 to -0.15 and sonic 140-40 us/ft reversed,
  ...): the first preset that holds the window's values. A linear curve that leaves its preset, or
  one printed on a deliberately narrow preset (`TIGHT_SHARE`), gets one backup scale each way and
  wraps. Unknown mnemonics get a round linear range around their values.
- **Line styles**: the track's legend deals styles out of a shuffled deck of the five; with
  `REPEAT_SHARE` the first two curves are both solid, told apart by width. Dash patterns come from
  `PATTERNS` (px along the curve), widths are fractional (0.8-3.2 px, antialiased). With
  `foreign.legend: seeds` the track follows the seeds' contract instead: curve A solid, curve B
  one broken style or, with `REPEAT_SHARE`, a thinner solid (the seeds' "thick vs thin"), and the
  sidecar names no style (`dataset.render_foreign`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from veernet_pipeline.config import ForeignParams
from veernet_pipeline.io.calibration import CurveScale
from veernet_pipeline.io.classes import STYLES
from veernet_pipeline.io.wells import SourceWell

PRINT_DPI = 200.0
FOOT = 0.3048
PRINT_SCALES = (200, 500, 1000)
# mnemonic -> (scale, presets as (top value, bottom value)), as printed log headers use them.
CONVENTIONS: dict[str, tuple[str, tuple[tuple[float, float], ...]]] = {
    "GR": ("linear", ((0.0, 150.0), (0.0, 200.0), (0.0, 100.0))),
    "RDEP": ("log", ((0.2, 2000.0), (0.2, 200.0), (2.0, 2000.0))),
    "RMED": ("log", ((0.2, 2000.0), (0.2, 200.0), (2.0, 2000.0))),
    "RHOB": ("linear", ((1.95, 2.95), (1.7, 2.7))),
    "NPHI": ("linear", ((0.45, -0.15), (0.6, 0.0))),
    "DTC": ("linear", ((140.0, 40.0), (190.0, 40.0))),
    "CALI": ("linear", ((6.0, 16.0), (4.0, 24.0))),
    "PEF": ("linear", ((0.0, 10.0), (0.0, 20.0))),
}
TIGHT_SHARE = 0.25
REPEAT_SHARE = 0.2
# Dash patterns in px along the curve (ink, gap, ...), chosen per curve.
PATTERNS: dict[str, tuple[tuple[float, ...], ...]] = {
    "solid": ((),),
    "dashed": ((4.0, 4.0), (8.0, 3.0), (12.0, 6.0), (6.0, 6.0)),
    "dotted": ((0.5, 3.0), (0.5, 4.5), (1.0, 2.5)),
    "dash_dot": ((9.0, 3.0, 1.0, 3.0), (14.0, 4.0, 2.0, 4.0)),
    "long_dash": ((20.0, 5.0), (32.0, 8.0), (48.0, 6.0)),
}
WIDTH_PX = (0.8, 3.2)
ATTEMPTS = 40


@dataclass(frozen=True)
class ForeignCurve:
    """One curve as the print shows it; `scale` is its sidecar entry (style and backup included)."""

    values: np.ndarray
    scale: CurveScale
    pattern: tuple[float, ...]
    width_px: float
    gray: float


@dataclass(frozen=True)
class ForeignLog:
    """One foreign scan's content.

    Shape:
        depth and every curve's values: (N,), the LAS window; `top` and `bottom` are the depths of
        the image's left and right edges, inside the window.
    """

    well: str
    header: dict[str, str]
    depth_unit: str
    depth: np.ndarray
    top: float
    bottom: float
    height: int
    width: int
    curves: tuple[ForeignCurve, ...]
    print_scale: int


def _preset_fit(values: np.ndarray, scale: CurveScale) -> float:
    fraction = scale.value_to_fraction(values)
    return float(np.mean((fraction >= 0.0) & (fraction <= 1.0)))


def _nice_linear(values: np.ndarray) -> tuple[float, float]:
    low, high = np.percentile(values, [1, 99])
    step = 10.0 ** math.floor(math.log10(max(high - low, 1e-6)))
    return float(math.floor(low / step) * step), float(math.ceil(high / step) * step + step)


def choose_scale(mnemonic: str, unit: str, values: np.ndarray, style: str, rng: np.random.Generator) -> CurveScale:
    """The curve's sidecar scale by header convention; a linear curve that leaves it wraps once each way."""
    kind, presets = CONVENTIONS.get(mnemonic, ("linear", (_nice_linear(values),)))
    if kind == "log" and np.min(values) <= 0:
        kind, presets = "linear", (_nice_linear(values),)
    scales = [CurveScale(mnemonic, unit, top, bottom, kind, style=style) for top, bottom in presets]
    tight = rng.random() < TIGHT_SHARE
    fits = [_preset_fit(values, s) for s in scales]
    if kind == "linear" and tight:
        # The narrowest preset still holding most values: the rest runs off and wraps.
        usable = [s for s, fit in zip(scales, fits, strict=True) if fit >= 0.7]
        chosen = min(usable, key=lambda s: abs(s.bottom_value - s.top_value)) if usable else scales[0]
    else:
        chosen = next((s for s, fit in zip(scales, fits, strict=True) if fit >= 0.99), scales[int(np.argmax(fits))])
    if kind == "linear" and _preset_fit(values, chosen) < 1.0:
        return CurveScale(mnemonic, unit, chosen.top_value, chosen.bottom_value, kind, backup_wraps=1, style=style)
    return chosen


def _styles(n_curves: int, legend: str, rng: np.random.Generator) -> list[str]:
    deck = [STYLES[int(i)] for i in rng.permutation(len(STYLES))]
    if legend == "seeds":
        # The seeds' contract: A solid, B whichever broken style the deck deals first; the seeds told
        # A from B "solid vs dashed, thick vs thin", so with REPEAT_SHARE B is solid too (thinner: pick_log).
        second = "solid" if rng.random() < REPEAT_SHARE else next(s for s in deck if s != "solid")
        return ["solid", second][:n_curves]
    if n_curves >= 2 and rng.random() < REPEAT_SHARE:
        deck = ["solid", "solid", *[s for s in deck if s != "solid"]]
    return deck[:n_curves]


def _window(well: SourceWell, names: list[str], n_samples: int, rng: np.random.Generator) -> int | None:
    finite = np.logical_and.reduce([np.isfinite(well.curves[m]) for m in names])
    # Starts whose next n_samples samples are all finite, from a running count of finite samples.
    counts = np.concatenate(([0], np.cumsum(finite)))
    starts = np.flatnonzero(counts[n_samples:] - counts[:-n_samples] == n_samples)
    return int(starts[int(rng.integers(starts.size))]) if starts.size else None


def pick_log(wells: list[SourceWell], params: ForeignParams, rng: np.random.Generator) -> ForeignLog:
    """A foreign scan's content, from the test wells only.

    Raises:
        ValueError: no test well holds a finite window of even one curve at this size.
    """
    height = int(rng.integers(params.height.min, params.height.max + 1))
    width = int(rng.integers(params.width.min, params.width.max + 1))
    weights = np.asarray(params.curves_per_track, dtype=np.float64)
    n_curves = 1 + int(rng.choice(weights.size, p=weights / weights.sum()))
    print_scale = int(rng.choice(PRINT_SCALES))
    while n_curves >= 1:
        for _ in range(ATTEMPTS):
            well = wells[int(rng.integers(len(wells)))]
            # Depth units shown by the strip: 1:N at PRINT_DPI, in metres or feet.
            span = width / (PRINT_DPI / 0.0254 / print_scale) / (FOOT if well.depth_unit.startswith("F") else 1.0)
            step = float(np.median(np.diff(well.depth)))
            n_samples = math.ceil(span / step) + 2
            names = sorted(well.curves)
            if len(names) < n_curves:
                continue
            chosen = [names[int(i)] for i in rng.choice(len(names), size=n_curves, replace=False)]
            start = _window(well, chosen, n_samples, rng)
            if start is None:
                continue
            window = slice(start, start + n_samples)
            top = float(well.depth[start])
            styles = _styles(n_curves, params.legend, rng)
            curves = tuple(ForeignCurve(
                values=well.curves[m][window].copy(),
                scale=choose_scale(m, well.units.get(m, ""), well.curves[m][window], style, rng),
                pattern=PATTERNS[style][int(rng.integers(len(PATTERNS[style])))],
                width_px=float(rng.uniform(*WIDTH_PX)),
                gray=float(rng.uniform(0.0, 0.25)),
            ) for m, style in zip(chosen, styles, strict=True))
            if params.legend == "seeds" and styles == ["solid", "solid"] and curves[0].width_px < curves[1].width_px:
                # Thick vs thin: curve A is the thicker pen.
                thin, thick = curves
                curves = (replace(thin, width_px=thick.width_px), replace(thick, width_px=thin.width_px))
            return ForeignLog(well.name, dict(well.header), well.depth_unit, well.depth[window].copy(), top,
                              top + span, height, width, curves, print_scale)
        n_curves -= 1
    raise ValueError(f"no test well ({', '.join(w.name for w in wells)}) holds a finite window of {width} px at "
                     f"1:{print_scale} of any curve; add wells (paths.las_source) or lower foreign.width")
