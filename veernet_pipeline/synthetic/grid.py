"""The printed grid of a track: depth lines, value divisions or log cycles, and track borders.

Depth lines sit at round depths, as on a printed log: the minor step is the round number (1, 2 or
5 times a power of ten, in the sidecar's depth unit) whose spacing comes nearest a target drawn from
`grid.minor_px`; every `grid.major_every`-th line is a major line (darker, `grid.major_px` thick)
and every n-th major line is a numbered, heavier one, n from `text.number_every` (preferring an n
that puts the numbers at round depths: 10, 20, 25, 50, ...). Across the track a linear
grid has `grid.value_divisions` divisions; a track holding a log curve gets that curve's cycles
(lines at 1..9 x each power of ten, crowding towards each decade, heavier at the decades). Those
heavier value lines (the middle of a linear track, a log track's decades) are `grid.major_value_px`
thick: prints rule them 2-3 px as often as 1, and a dark 2-px line along the track is otherwise
drawn only by curves (a straight tension line looks just like it). The
track borders are the first and last `grid.border_px` track rows.

Some prints rule their grid heavier, and a reader must not take a heavy line running along the
track for a curve: with probability `grid.heavy.share` the major depth lines, the heavy value lines
(the middle of a linear track, the decades of a log track) and the borders are `grid.heavy.px`
thick; with probability `grid.doubled.share` each of them is printed twice, `grid.doubled.gap` px
of paper apart. Grid lines are background in the mask, heavy or not.

Everything is drawn into the ink layer (uint8, 255 = no ink) with the skew applied: a value line at
track row r sits at image row ``r + top[x]`` in column x; depth lines are vertical at any skew.
"""

from __future__ import annotations

import math

import numpy as np

from veernet_pipeline.config import SynthesizeParams
from veernet_pipeline.io.calibration import Calibration, CurveScale

# Gray jitter of individual lines around the instance's level, gray levels.
LINE_JITTER = 12.0


def round_step(target: float) -> float:
    """The number of the form 1, 2 or 5 x 10^k nearest to `target` on a log scale."""
    exponent = math.floor(math.log10(target))
    candidates = [m * 10.0**e for e in (exponent, exponent + 1) for m in (1.0, 2.0, 5.0)]
    return min(candidates, key=lambda c: abs(math.log(c / target)))


def _is_round(value: float) -> bool:
    mantissa = value / 10.0 ** math.floor(math.log10(value) + 1e-9)
    return any(abs(mantissa - m) < 1e-6 for m in (1.0, 2.0, 2.5, 5.0))


def depth_label(depth: float) -> str:
    """A depth as printed beside its line: whole numbers without decimals."""
    return f"{depth:.0f}" if abs(depth - round(depth)) < 1e-6 else f"{depth:.1f}"


def _offsets(px: int, gap: int) -> np.ndarray:
    """Offsets of a ruled line `px` thick from its first pixel; a doubled line (`gap` > 0) repeats after the gap."""
    first = np.arange(px)
    return np.concatenate([first, first + px + gap]) if gap > 0 else first


def _depth_lines(calibration: Calibration, width: int, params: SynthesizeParams, rng: np.random.Generator,
                 weight: tuple[int, int]) -> tuple[np.ndarray, list[tuple[int, str]]]:
    grid = params.grid
    low, high = sorted((calibration.depth_top, calibration.depth_bottom))
    px_per_unit = width / (high - low)
    step = round_step(rng.uniform(grid.minor_px.min, grid.minor_px.max) / px_per_unit)
    major_every = int(rng.integers(grid.major_every.min, grid.major_every.max + 1))
    choices = list(range(params.text.number_every.min, params.text.number_every.max + 1))
    round_choices = [n for n in choices if _is_round(step * major_every * n)]
    number_every = major_every * int(rng.choice(round_choices or choices))
    minor_gray = rng.uniform(grid.minor_gray.min, grid.minor_gray.max)
    major_gray = rng.uniform(grid.major_gray.min, grid.major_gray.max)
    major_px = int(rng.integers(grid.major_px.min, grid.major_px.max + 1))
    heavy_px, gap = weight
    ks = np.arange(math.ceil(low / step), math.floor(high / step) + 1)
    columns = np.floor(calibration.depth_to_column(ks * step, width) + 0.5).astype(np.int64)
    grays = np.where(ks % major_every == 0, major_gray, minor_gray) + rng.uniform(-1, 1, ks.size) * LINE_JITTER
    grays = np.where(ks % number_every == 0, grays - 25.0, grays)
    line_gray = np.full(width, 255.0)
    major = ks % major_every == 0
    for lines, offsets in ((~major, np.zeros(1, dtype=np.int64)), (major, _offsets(heavy_px or major_px, gap))):
        for extra in offsets:
            cols = columns[lines] + extra
            ok = (cols >= 0) & (cols < width)
            np.minimum.at(line_gray, cols[ok], grays[lines][ok])
    numbered = [(int(c), depth_label(k * step)) for k, c in zip(ks, columns, strict=True)
                if k % number_every == 0 and 0 <= c < width]
    return line_gray, numbered


def _log_fractions(scale: CurveScale) -> tuple[np.ndarray, np.ndarray]:
    low, high = sorted((scale.top_value, scale.bottom_value))
    decades = np.arange(math.floor(math.log10(low)) - 1, math.ceil(math.log10(high)) + 1)
    values = (np.arange(1, 10)[None, :] * 10.0 ** decades[:, None]).ravel()
    decade = np.tile(np.arange(1, 10) == 1, decades.size)
    inside = (values >= low * (1 - 1e-9)) & (values <= high * (1 + 1e-9))
    return scale.value_to_fraction(values[inside]), decade[inside]


def _value_rows(calibration: Calibration, height: int, params: SynthesizeParams, rng: np.random.Generator,
                weight: tuple[int, int]) -> np.ndarray:
    grid = params.grid
    minor_gray = rng.uniform(grid.minor_gray.min, grid.minor_gray.max)
    major_gray = rng.uniform(grid.major_gray.min, grid.major_gray.max)
    divisions = int(rng.integers(grid.value_divisions.min, grid.value_divisions.max + 1))
    heavy_middle = rng.random() < 0.5
    border_px = int(rng.integers(grid.border_px.min, grid.border_px.max + 1))
    log_scales = [c for c in calibration.curves if c.scale == "log"]
    if log_scales:
        fractions, heavy = _log_fractions(log_scales[0])
    else:
        fractions = np.arange(1, divisions) / divisions
        heavy = heavy_middle & (np.arange(1, divisions) * 2 == divisions)
    heavy_px, gap = weight
    if heavy_px and not log_scales:
        heavy = np.arange(1, divisions) * 2 == divisions
    rows = np.clip(np.floor(fractions * height), 0, height - 1).astype(np.int64)
    grays = np.where(heavy, major_gray, minor_gray) + rng.uniform(-1, 1, rows.size) * LINE_JITTER
    # A range of one value draws no random number, so 1..1 reproduces the sets drawn before this parameter.
    span = grid.major_value_px
    value_px = int(rng.integers(span.min, span.max + 1)) if span.max > span.min else span.min
    row_gray = np.full(height, 255.0)
    np.minimum.at(row_gray, rows, grays)
    # Heavy value lines are centred on their row; borders grow inwards from the track edges.
    for extra in _offsets(heavy_px or value_px, gap) - (heavy_px or value_px) // 2:
        np.minimum.at(row_gray, np.clip(rows[heavy] + extra, 0, height - 1), grays[heavy])
    border = _offsets(heavy_px or border_px, gap)
    row_gray[border] = np.minimum(row_gray[border], major_gray - 20.0)
    row_gray[height - 1 - border] = np.minimum(row_gray[height - 1 - border], major_gray - 20.0)
    return row_gray


def line_weight(params: SynthesizeParams, rng: np.random.Generator) -> tuple[int, int]:
    """(heavy thickness or 0, doubling gap or 0) of an instance's major lines, from its own stream."""
    heavy, doubled = rng.random(2)
    px = int(rng.integers(params.grid.heavy.px.min, params.grid.heavy.px.max + 1))
    gap = int(rng.integers(params.grid.doubled.gap.min, params.grid.doubled.gap.max + 1))
    return (px if heavy < params.grid.heavy.share else 0), (gap if doubled < params.grid.doubled.share else 0)


def draw_grid(ink: np.ndarray, calibration: Calibration, top: np.ndarray, params: SynthesizeParams,
              rng: np.random.Generator, weight: tuple[int, int] = (0, 0)) -> list[tuple[int, str]]:
    """Draw the grid into `ink` (H, W) uint8; return the numbered depth lines as (column, label).

    Args:
        weight: `line_weight`, (heavy thickness, doubling gap); 0 = off.
    """
    height, width = ink.shape
    line_gray, numbered = _depth_lines(calibration, width, params, rng, weight)
    row_gray = _value_rows(calibration, height, params, rng, weight)
    cols = np.flatnonzero(line_gray < 255.0)
    ink[:, cols] = np.minimum(ink[:, cols], np.clip(line_gray[cols], 0, 255).astype(np.uint8))
    rows = np.flatnonzero(row_gray < 255.0)
    grays = np.clip(row_gray[rows], 0, 255).astype(np.uint8)
    if not top.any():
        ink[rows] = np.minimum(ink[rows], grays[:, None])
        return numbered
    image_rows = rows[:, None] + top[None, :]
    columns = np.broadcast_to(np.arange(width), image_rows.shape)
    ok = (image_rows >= 0) & (image_rows < height)
    ys, xs, gs = image_rows[ok], columns[ok], np.broadcast_to(grays[:, None], image_rows.shape)[ok]
    ink[ys, xs] = np.minimum(ink[ys, xs], gs)
    return numbered
