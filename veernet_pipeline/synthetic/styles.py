"""Curve styles: how each curve of a track is inked, drawn from `synthesize` params.

Every curve takes one of the five line styles of `io.classes.STYLES` (its mask class and the
sidecar's `style`), weighted by `params.styles`. With probability `distinct_styles` the curves of
a track all differ in style (drawn without replacement, as most log headers choose them);
otherwise styles may repeat, and curves that share a style differ in width where the width range
allows (a thick and a thin solid curve, as real tracks print them). A broken style draws its
lengths per curve from `params.patterns`, so dashes vary widely between curves rather than
repeating a few presets, and every length of a track's broken curves is multiplied by one factor
(`patterns.scale`), as print scale and scan resolution stretch a whole log's dashes alike.

A pattern is a tuple of alternating ink and gap lengths in px along the curve. The lengths drawn
are what the eye sees: thickening a pixel to `width` px lengthens each dash by `width - 1`, so that
much is taken off the ink and added to the gap.

Ownership: curves are drawn in `draw_order`, and a later curve owns the pixels it shares with an
earlier one. Sparse styles go last (solid, long-dash, dashed, dash-dot, dotted), so the few pixels
of a dotted curve are never painted over by a solid one; among curves of one style the thinner goes
later, then the later one in the sidecar.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from veernet_pipeline.config import FloatRange, StretchParams, SynthesizeParams
from veernet_pipeline.io.classes import STYLES

# Drawing order of the styles, earliest first (module docstring).
DRAW_RANK = {"solid": 0, "long_dash": 1, "dashed": 2, "dash_dot": 3, "dotted": 4}


@dataclass(frozen=True)
class CurveStyle:
    """How one curve is inked.

    Attributes:
        name: one of `io.classes.STYLES`.
        pattern: alternating ink and gap lengths along the curve, px; () for a solid line.
        phase: offset into the pattern, px.
        width: line thickness, px.
        gray: ink gray level (0 black).
        gaps: column stretches [start, end) with no ink (pen skips).
        fades: column stretches [start, end) inked at `fade_grays` instead of `gray`.
        fade_grays: one gray level per fade.
    """

    name: str
    pattern: tuple[float, ...]
    phase: float
    width: int
    gray: float
    gaps: tuple[tuple[int, int], ...]
    fades: tuple[tuple[int, int], ...]
    fade_grays: tuple[float, ...]

    def column_grays(self, width: int) -> np.ndarray:
        """Ink gray per column, fades applied. Shape: (W,) float32."""
        grays = np.full(width, self.gray, dtype=np.float32)
        for (start, end), gray in zip(self.fades, self.fade_grays, strict=True):
            grays[start:end] = np.maximum(grays[start:end], gray)
        return grays

    def column_inked(self, width: int) -> np.ndarray:
        """False in the columns of a pen skip. Shape: (W,) bool."""
        inked = np.ones(width, dtype=bool)
        for start, end in self.gaps:
            inked[start:end] = False
        return inked


def pattern_on(arc: np.ndarray, pattern: tuple[float, ...], phase: float) -> np.ndarray:
    """True where the arc-length position falls on an ink stretch of the pattern. Shape: like `arc`."""
    if not pattern:
        return np.ones(arc.shape, dtype=bool)
    bounds = np.cumsum(pattern)
    position = np.mod(arc + phase, bounds[-1])
    return np.searchsorted(bounds, position, side="right") % 2 == 0


def draw_order(styles: tuple[CurveStyle, ...]) -> list[int]:
    """Curve indices in drawing order: a later curve owns the pixels it shares with an earlier one."""
    return sorted(range(len(styles)), key=lambda k: (DRAW_RANK[styles[k].name], -styles[k].width, k))


def _stretches(width: int, params: StretchParams, rng: np.random.Generator) -> tuple[tuple[int, int], ...]:
    applies = rng.random() < params.share
    count = int(rng.poisson(params.per_10k * width / 10_000.0))
    starts = rng.integers(0, width, count)
    lengths = rng.integers(params.length.min, params.length.max + 1, count)
    if not applies:
        return ()
    return tuple((int(s), int(min(width, s + n))) for s, n in zip(starts, lengths, strict=True))


def _pattern(name: str, width: int, scale: float, params: SynthesizeParams,
             rng: np.random.Generator) -> tuple[float, ...]:
    if name == "solid":
        return ()
    spec = getattr(params.patterns, name)
    ink, gap = rng.uniform(spec.ink.min, spec.ink.max), rng.uniform(spec.gap.min, spec.gap.max)
    lengths = (ink, gap, rng.uniform(spec.dot.min, spec.dot.max), gap) if name == "dash_dot" else (ink, gap)
    lengths = tuple(scale * length for length in lengths)
    grow = width - 1
    return tuple(float(max(1.0, length - grow) if k % 2 == 0 else length + grow) for k, length in enumerate(lengths))


def _track_scale(bounds: FloatRange, rng: np.random.Generator) -> float:
    """The factor on every dash length of one track: log-uniform in `bounds`, drawn only when they differ, so a
    fixed scale leaves the generator's random stream (and so every instance) as it was."""
    if bounds.max <= bounds.min:
        return float(bounds.min)
    return float(np.exp(rng.uniform(np.log(bounds.min), np.log(bounds.max))))


def _names(n_curves: int, params: SynthesizeParams, rng: np.random.Generator) -> list[str]:
    weights = np.array([getattr(params.styles, name) for name in STYLES], dtype=np.float64)
    p = weights / weights.sum()
    distinct = rng.random() < params.distinct_styles and n_curves <= np.count_nonzero(weights)
    return [STYLES[int(i)] for i in rng.choice(len(STYLES), size=n_curves, replace=not distinct, p=p)]


def _widths(names: list[str], params: SynthesizeParams, rng: np.random.Generator) -> list[int]:
    choices = np.arange(params.line_width.min, params.line_width.max + 1)
    widths = [0] * len(names)
    for style in dict.fromkeys(names):
        members = [k for k, name in enumerate(names) if name == style]
        # Curves of one style differ in width while the range has widths enough.
        picked = rng.choice(choices, size=len(members), replace=len(members) > choices.size)
        for k, line_width in zip(members, picked, strict=True):
            widths[k] = int(line_width)
    return widths


def choose_styles(n_curves: int, width: int, params: SynthesizeParams,
                  rng: np.random.Generator) -> tuple[CurveStyle, ...]:
    """The styles of a track's curves, in sidecar order, for a `width`-column image."""
    names = _names(n_curves, params, rng)
    widths = _widths(names, params, rng)
    scale = _track_scale(params.patterns.scale, rng)
    styles = []
    for name, line_width in zip(names, widths, strict=True):
        pattern = _pattern(name, line_width, scale, params, rng)
        fades = _stretches(width, params.fades, rng)
        styles.append(CurveStyle(
            name=name,
            pattern=pattern,
            phase=float(rng.uniform(0.0, sum(pattern))) if pattern else 0.0,
            width=line_width,
            gray=float(rng.uniform(params.ink.min, params.ink.max)),
            gaps=_stretches(width, params.gaps, rng),
            fades=fades,
            fade_grays=tuple(float(rng.uniform(params.fade_gray.min, params.fade_gray.max)) for _ in fades),
        ))
    return tuple(styles)
