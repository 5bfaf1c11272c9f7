"""Candidate positions of the curves in every column: the heaviest runs of curve ink, with their extent.

A run is a vertical stretch of rows in one column where curve ink is likely: the summed
probability of the classes that count as curve ink reaches `min_confidence` (the path search counts
every line style: `STYLE_CLASSES`, below; by default the classes some requested curve may be drawn
in), or a gap
of at most `LADDER_GAP_PX` rows between two stretches of one broken style's ink (a dashed steep
stroke's dash gaps, which would cut it into a ladder of runs too far apart to step between).
`other_ink` (text, flags, hatching) is never curve ink, so it neither forms runs nor takes
candidate slots. Each run keeps what the path search and the row read need:

- its extent (first and last row): consecutive columns whose runs touch or overlap belong to
  one connected stroke, however far their centres lie apart (a steep stroke);
- its centre row (subpixel) weighted by each requested curve's own evidence, the row that curve
  reads where the run is no taller than the stroke is wide: where two curves of different styles
  cross, their ink forms one run, and each curve's centre stays on its own pixels;
- its stroke thickness: the run's height, or, where the stroke is steep and its run tall, the
  length of the ink's horizontal run through the run's middle row (`stroke_thickness`): a pen
  leaves runs of its own thickness wherever its curve goes, while a run's height also counts the
  stroke's travel in the column;
- its peak curve-ink probability and, per requested curve, the share of the run's curve ink
  that is that curve's classes (the curve's own evidence); on a colour print whose sidecar names
  pens, the share of it that is also the curve's pen's colour (`reading.colour`), which its centre
  is weighted by too.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import ndimage

from veernet_pipeline.io.classes import BROKEN_STYLES, NUM_CLASSES, STYLES, style_class
from veernet_pipeline.reading.colour import pen_membership

EPS = 1e-6
# Horizontal ink counted each side of a run's middle pixel (px): more than any pen, so where it runs on, the stroke
# is flat there and its height is its thickness.
MAX_THICKNESS = 32
# Gaps in one broken style's ink up to this many rows within a column are curve ink too (`find_candidates`).
LADDER_GAP_PX = 4
BROKEN_CLASSES = frozenset(style_class(style) for style in BROKEN_STYLES)
# Every line style's class. The path search counts all of them as curve ink, not only the styles the sidecar names:
# a trace the net names in a style no curve of the track is drawn in is still a trace (most often a named curve's
# ink misnamed), and leaving it out made a broken curve bridge straight past it. On the first 80 val logs, in the
# columns where a bridged broken curve was more than 0.02 of the track off and no other curve was read, its truth lay
# on curve ink the net gave mostly to other styles in 6,814 and on no ink in 7,936 (docs/accuracy.md, "Every line
# style's ink counted as curve ink").
STYLE_CLASSES = tuple(style_class(style) for style in STYLES)


@dataclass(frozen=True)
class Candidates:
    """The `max_candidates` heaviest runs of every column, heaviest first; NaN / 0 where a column has fewer.

    `centre` is weighted by the curve's own evidence, or by all curve ink where the curve has none.

    Shape:
        top, bottom, peak, thickness: (W, M). centre, share: (K, W, M) for the K requested curves.
    """

    top: np.ndarray
    bottom: np.ndarray
    peak: np.ndarray
    centre: np.ndarray
    share: np.ndarray
    thickness: np.ndarray

    @property
    def height(self) -> np.ndarray:
        """Each run's height in px: the pen plus the stroke's travel in its column. Shape: (W, M), NaN where none."""
        return self.bottom - self.top + 1.0

    @property
    def valid(self) -> np.ndarray:
        """Where a candidate exists. Shape: (W, M) bool."""
        return np.isfinite(self.top)


def _float64_sum(probs: np.ndarray, channels: Sequence[int], shape: tuple[int, ...],
                 where: np.ndarray | None = None) -> np.ndarray:
    """The float64 sum of `probs[channels]` (each `[where]` if given), added channel by channel in order.

    The same bits as `np.sum` of the list along axis 0 (which adds in that order too), without the stacked
    (len(channels), ...) copy the list becomes first: most of `find_candidates`' time on a strip (docs/reading.md).
    """
    total = np.zeros(shape)
    for c in channels:
        total += probs[c] if where is None else probs[c][where]
    return total


def find_candidates(
    probs: np.ndarray, classes: Sequence[Sequence[int]], max_candidates: int, min_confidence: float,
    rgb: np.ndarray | None = None, colours: Sequence[str | None] = (), ink_classes: Sequence[int] | None = None,
) -> Candidates:
    """The heaviest runs of curve ink in every column, and each curve's share of them.

    Args:
        probs: class probabilities, channel 0 background.
        classes: per requested curve, the channels that are evidence of its ink (`reading.styles.curve_classes`).
        max_candidates: runs kept per column (by probability mass).
        min_confidence: a pixel is curve ink where the summed probability of the `ink_classes` reaches this.
        rgb: the colour print on the same grid, or None (a gray scan: shares by style alone).
        colours: with `rgb`, per curve its pen (`io.colours`) or None; empty = none named.
        ink_classes: channels that are curve ink beside every channel some curve's classes name (each curve's
            share is of all of it); None = those alone.

    Shape:
        probs: (C, H, W); rgb: (H, W, 3) uint8. Returns `Candidates` with M = max_candidates and K = len(classes).
    """
    n_channels, height, width = probs.shape
    union = sorted({c for curve in classes for c in curve}.union(ink_classes or ()))
    if any(not 0 < c < n_channels for c in union):
        raise ValueError(f"curve classes {list(classes)} or ink classes {ink_classes} name channels outside "
                         f"1..{n_channels - 1}")
    ink = _float64_sum(probs, union, (height, width))
    inside = ink >= min_confidence
    if n_channels == NUM_CLASSES:
        # Along a steep stroke a broken style's dash gaps cut its column into a ladder of short runs whose rows the
        # path cannot climb a column at a time; each broken class's own gaps of up to LADDER_GAP_PX rows are
        # closed, so the stroke is one run. Per class: two lines of different styles passing close stay apart.
        rungs = np.ones((LADDER_GAP_PX + 1, 1), dtype=bool)
        for c in BROKEN_CLASSES.intersection(union):
            inside |= ndimage.binary_closing(probs[c] >= min_confidence, structure=rungs)
    starts = inside & ~np.vstack([np.zeros((1, width), dtype=bool), inside[:-1]])
    run_id = np.cumsum(starts, axis=0, dtype=np.int32) * inside
    n_runs = int(run_id.max()) + 1
    cols = np.broadcast_to(np.arange(width), (height, width))[inside]
    ids = run_id[inside]
    keys = cols * n_runs + ids
    size = width * n_runs

    def per_run(weights: np.ndarray) -> np.ndarray:
        return np.bincount(keys, weights=weights, minlength=size).reshape(width, n_runs)

    ink_in = ink[inside]
    y = np.broadcast_to(np.arange(height, dtype=np.float64)[:, None], (height, width))[inside]
    mass = per_run(ink_in)
    mass[:, 0] = 0.0  # run id 0 is "no run"
    moment = per_run(ink_in * y)
    length = per_run(np.ones_like(ink_in))
    # Each run has exactly one first pixel: the sum of first rows per run is its top row.
    first = starts[inside]
    top = np.bincount(keys[first], weights=y[first], minlength=size).reshape(width, n_runs)
    curve_ink = [_float64_sum(probs, curve, ink_in.shape, inside) for curve in classes]
    if rgb is not None and any(c is not None for c in colours):
        if rgb.shape != (height, width, 3):
            raise ValueError(f"the colour print is {rgb.shape}, not the map's (H, W, 3) = {(height, width, 3)}")
        curve_ink = [weights * pen for weights, pen in zip(curve_ink, pen_membership(rgb[inside], colours),
                                                           strict=True)]
    curve_mass = [per_run(weights) for weights in curve_ink]
    curve_moment = [per_run(weights * y) for weights in curve_ink]
    peak = np.zeros((width, n_runs))
    np.maximum.at(peak, (cols, ids), ink_in)

    order = np.argsort(-mass, axis=1, kind="stable")[:, :max_candidates]
    picked = np.take_along_axis(mass, order, axis=1)
    valid = picked > 0

    def pick(values: np.ndarray, fill: float) -> np.ndarray:
        chosen = np.where(valid, np.take_along_axis(values, order, axis=1), fill)
        return np.pad(chosen, ((0, 0), (0, max_candidates - chosen.shape[1])), constant_values=fill)

    top_rows = pick(top, np.nan)
    run_mass = np.maximum(pick(mass, 0.0), EPS)
    ink_centre = pick(moment, np.nan) / run_mass
    centres, shares = [np.zeros((0, width, max_candidates))] * 2
    if classes:
        own = np.stack([pick(m, 0.0) for m in curve_mass])
        # A curve with (almost) no evidence in a run reads the run's ink centre if it sits there at all.
        centres = np.where(own > EPS, np.stack([pick(m, 0.0) for m in curve_moment]) / np.maximum(own, EPS),
                           ink_centre[None])
        shares = np.clip(own / run_mass[None], 0.0, 1.0)
    bottom_rows = top_rows + pick(length, np.nan) - 1.0
    return Candidates(top=top_rows, bottom=bottom_rows, peak=pick(peak, 0.0),
                      centre=np.where(np.isfinite(top_rows)[None], centres, np.nan), share=shares,
                      thickness=stroke_thickness(inside, top_rows, bottom_rows))


def stroke_thickness(inside: np.ndarray, top: np.ndarray, bottom: np.ndarray) -> np.ndarray:
    """Each run's stroke thickness: its height, or the horizontal run of ink through its middle row if shorter.

    A flat stroke's run is as tall as the pen; a steep one's spans its travel in the column too,
    while across its middle row the ink is about a pen wide. The shorter of the two is the pen
    wherever the stroke goes (at 45 degrees both are the pen times about 1.4). A horizontal run is
    counted up to `MAX_THICKNESS` px each side of the middle pixel.

    Shape:
        inside: (H, W) bool, curve ink; top, bottom: (W, M) rows, NaN where no run. Returns (W, M), NaN where no run.
    """
    width = inside.shape[1]
    valid = np.isfinite(top)
    row = np.where(valid, (np.nan_to_num(top) + np.nan_to_num(bottom)) // 2, 0).astype(np.int64)
    col = np.broadcast_to(np.arange(width)[:, None], top.shape)
    across = valid.astype(np.int64)  # the middle pixel itself
    for step in (-1, 1):
        going = valid.copy()
        for offset in range(1, MAX_THICKNESS + 1):
            at = col + step * offset
            going &= (at >= 0) & (at < width)
            going &= inside[row, np.clip(at, 0, width - 1)]
            if not going.any():
                break
            across += going
    return np.where(valid, np.minimum(bottom - top + 1.0, across), np.nan)
