"""Curve styles: how each curve of a track is inked, drawn from `synthesize` params.

Curve A (class 1) is always solid; curve B (class 2) takes a style from `params.styles`: dashed,
dotted, long-dash, dash-dot, or a thin solid line (then A is at least 2 px and B at least 1 px
thinner). So the two classes differ the way a reader tells them apart: solid vs broken, thick vs
thin. A one-curve track is solid, or with probability `solo_broken_share` one of B's broken styles.

A pattern is a tuple of alternating ink and gap lengths in px along the curve. The lengths given
in params are what the eye sees: thickening a pixel to `width` px lengthens each dash by
`width - 1`, so that much is taken off the ink and added to the gap.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from veernet_pipeline.config import StretchParams, SynthesizeParams

BROKEN = ("dashed", "dotted", "long_dash", "dash_dot")
B_STYLES = (*BROKEN, "thin_solid")


@dataclass(frozen=True)
class CurveStyle:
    """How one curve is inked.

    Attributes:
        name: "solid", "thin_solid" or one of `BROKEN`.
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


def _stretches(width: int, params: StretchParams, rng: np.random.Generator) -> tuple[tuple[int, int], ...]:
    applies = rng.random() < params.share
    count = int(rng.poisson(params.per_10k * width / 10_000.0))
    starts = rng.integers(0, width, count)
    lengths = rng.integers(params.length.min, params.length.max + 1, count)
    if not applies:
        return ()
    return tuple((int(s), int(min(width, s + n))) for s, n in zip(starts, lengths, strict=True))


def _pattern(name: str, width: int, params: SynthesizeParams, rng: np.random.Generator) -> tuple[float, ...]:
    if name in ("solid", "thin_solid"):
        return ()
    base = {"dashed": (params.dash.ink, params.dash.gap), "dotted": (params.dotted.ink, params.dotted.gap),
            "long_dash": (params.long_dash.ink, params.long_dash.gap),
            "dash_dot": (params.dash.ink, params.dotted.gap + 1, params.dotted.ink, params.dotted.gap + 1)}[name]
    jitter = rng.uniform(1.0 - params.dash_jitter, 1.0 + params.dash_jitter)
    grow = width - 1
    out: list[float] = []
    for k, length in enumerate(base):
        scaled = max(1.0, length * jitter)
        out.append(max(1.0, scaled - grow) if k % 2 == 0 else scaled + grow)
    return tuple(out)


def _widths(names: tuple[str, ...], params: SynthesizeParams, rng: np.random.Generator) -> list[int]:
    low, high = params.line_width.min, params.line_width.max
    widths = [int(rng.integers(low, high + 1)) for _ in names]
    if len(names) == 2 and names[1] == "thin_solid":
        widths[0] = max(widths[0], 2)
        widths[1] = int(rng.integers(1, widths[0])) if widths[1] >= widths[0] else widths[1]
    return widths


def choose_styles(n_curves: int, width: int, params: SynthesizeParams,
                  rng: np.random.Generator) -> tuple[CurveStyle, ...]:
    """The styles of a track's curves (A first), for a `width`-column image."""
    weights = np.array([getattr(params.styles, name) for name in B_STYLES], dtype=np.float64)
    b_style = B_STYLES[int(rng.choice(len(B_STYLES), p=weights / weights.sum()))]
    broken = [getattr(params.styles, name) for name in BROKEN]
    solo_pick = rng.random()
    solo = BROKEN[int(rng.choice(len(BROKEN), p=np.asarray(broken) / sum(broken)))] if sum(broken) > 0 else "solid"
    if n_curves == 2:
        names: tuple[str, ...] = ("solid", b_style)
    else:
        names = (solo if solo_pick < params.solo_broken_share else "solid",)
    widths = _widths(names, params, rng)
    styles = []
    for name, line_width in zip(names, widths, strict=True):
        pattern = _pattern(name, line_width, params, rng)
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
