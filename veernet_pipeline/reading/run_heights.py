"""Run height as a cue to which of two curves drawn alike a run belongs.

Two curves printed in the same style in one track (three solid resistivities; two dashed
porosities) are interchangeable to every cost of the path search, so after each crossing their
identities are a guess that `reading.untangle`'s slopes only partly settle. The runs each curve
leaves in a column still differ: a heavy pen leaves taller runs than a light one, and a busy
curve (a gamma ray swinging across the track) taller runs than a quiet one (a resistivity near
its baseline), because a column's run spans the pen plus the stroke's travel in that column.

So a first reading gives each curve its typical run height (`typical_measure`: the median
of the runs it holds alone), and the group is read again with each curve charged for sitting on
a run unlike its own (`height_emission`). The charge is relative to the group's best-fitting
curve: the curve whose runs a run resembles pays nothing for it.

A run's height mixes the two, and only the pen holds along the curve: where a light curve turns
steep its runs grow taller than a heavy one's flat runs, and the group read by heights traded
lines there, each curve taking the other's stretch. So a group whose pens differ is read by
stroke thickness instead (`Candidates.thickness`, the pen wherever the stroke goes), and by run
heights only where the thicknesses do not tell every two of its curves apart (`alike_measure`):
pens alike, busyness not.
Where a first reading traded the lines, each curve's median mixes two pens; the pens are then
looked for in the stretches of line it read (`reading.stretches`).

Curves of different styles leave runs of their own heights too, and where the net names a
stretch of ink ambiguously (beside another curve, the style evidence splits) the height tells
which line is whose. So the whole track is read again with the charge over all its curves
(`height_emission_all`, weight `height_weight_styles`), once for run heights and once for stroke
thickness (`track_run_emission`): the pens tell apart two curves a stretch of swinging makes look
alike in height, the heights two curves of one pen whose busyness differs.
"""

from __future__ import annotations

import numpy as np

from veernet_pipeline.reading.candidates import Candidates
from veernet_pipeline.reading.stretches import held_alone, stretch_typical

# Quantile of the heights of a curve's lone runs taken as its typical height.
HEIGHT_QUANTILE = 0.5
# Lone runs a curve needs before its typical height is trusted.
MIN_HEIGHT_COLUMNS = 50
# Alike curves whose typical heights differ by less than this (px) are not told apart by height.
MIN_HEIGHT_DIFFERENCE = 1.0
# The same for pens found from stretches (`stretch_typical`). A median of whole-pixel runs is a whole or half pixel, so
# pens 1 px apart give medians 1 px apart; a pen from stretches is the weighted mean of a cluster of stretch medians,
# and two pens 1 px apart come out a little under or over 1 px (foreign scan 000014: 1.022 / 2.022 px read on one torch
# thread, 1.022 / 2.029 on two). Half a pixel and a quarter clears that; on the 80 val logs and every test log no curve
# moves (docs/accuracy.md, "Pens from stretches told apart at 0.75 px"). `untangle.alike_pairs` keeps the 1 px, so a
# pair told apart only so is untangled at its contacts as well.
MIN_PEN_DIFFERENCE = 0.75
# Misfit (px) beyond which a run is equally unlike every curve: a crossing's merged run, a spike.
MISFIT_CAP = 4.0


def typical_measure(measure: np.ndarray, states: np.ndarray) -> np.ndarray:
    """Each curve's typical run height or thickness: the `HEIGHT_QUANTILE` of the runs it holds alone.

    Args:
        measure: a measure of every run in px: `Candidates.height` or `Candidates.thickness`.
        states: each curve's path (candidate index, M = absent), from a first search.

    Returns:
        The measure per curve in px; NaN for a curve holding fewer than `MIN_HEIGHT_COLUMNS` runs alone.

    Shape:
        measure: (W, M); states: (K, W). Returns (K,).
    """
    m = measure.shape[1]
    n_curves = states.shape[0]
    cols = np.arange(states.shape[1])
    typical = np.full(n_curves, np.nan)
    for k in range(n_curves):
        alone = held_alone(states, k, m)
        held = measure[cols[alone], states[k, alone]]
        if held.size >= MIN_HEIGHT_COLUMNS:
            typical[k] = float(np.quantile(held, HEIGHT_QUANTILE))
    return typical


def height_emission(heights: np.ndarray, typical: np.ndarray, weight: float) -> np.ndarray:
    """Extra cost of each curve of one alike group for each run: its height's misfit to the curve's typical height.

    The misfit |height - typical| is capped at `MISFIT_CAP` and taken relative to the group's
    best-fitting curve. A group whose typical heights are unknown or differ by less than
    `MIN_HEIGHT_DIFFERENCE` gets no cost.

    Shape:
        heights: (W, M), the measure `typical` was taken in; typical: (g,) px. Returns (g, W, M+1), 0 in the
        absent state.
    """
    n_cols, m = heights.shape
    cost = np.zeros((typical.shape[0], n_cols, m + 1))
    if typical.shape[0] < 2 or not np.isfinite(typical).all() or np.ptp(typical) < MIN_HEIGHT_DIFFERENCE:
        return cost
    misfit = np.minimum(np.abs(heights[None] - typical[:, None, None]), MISFIT_CAP)
    misfit = np.where(np.isfinite(misfit), misfit, 0.0)
    cost[:, :, :m] = weight * (misfit - misfit.min(axis=0, keepdims=True))
    return cost


def height_emission_all(heights: np.ndarray, typical: np.ndarray, weight: float) -> np.ndarray:
    """`height_emission` over every curve of a track whose typical height is known; 0 for the others.

    A curve without a typical height (too few lone runs) is charged nothing and is not the measure
    the others' misfits are taken relative to.

    Shape:
        heights: (W, M); typical: (K,) px, NaN where unknown. Returns (K, W, M+1).
    """
    known = np.flatnonzero(np.isfinite(typical))
    cost = np.zeros((typical.shape[0], heights.shape[0], heights.shape[1] + 1))
    if known.size >= 2:
        cost[known] = height_emission(heights, typical[known], weight)
    return cost


def told_apart(typical: np.ndarray, margin: float | None = None) -> bool:
    """Whether every two curves' typical measures differ by `margin` px or more (NaN: not).

    Args:
        margin: None for `MIN_HEIGHT_DIFFERENCE` (medians); `MIN_PEN_DIFFERENCE` for pens from stretches.
    """
    margin = MIN_HEIGHT_DIFFERENCE if margin is None else margin
    apart = np.abs(typical[:, None] - typical[None]) >= margin  # NaN compares False
    return bool(apart[np.triu_indices(typical.shape[0], k=1)].all())


def alike_measure(cands: Candidates, states: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The run measure a group drawn alike is told apart by, and each curve's typical value in it.

    Stroke thickness where the curves' typical thicknesses tell every two of them apart (their pens
    differ); else run height (pen and busyness). Where the curves' own medians do not tell them apart
    in a measure, the first reading may have traded their lines and mixed their runs, so the pens are
    looked for in the stretches of line it read (`stretches.stretch_typical`) before the next measure.

    Shape:
        states: (g, W), the group's paths. Returns heights (W, M) and typical (g,) px, NaN where unknown.
    """
    for measure in (cands.thickness, cands.height):
        typical = typical_measure(measure, states)
        if told_apart(typical):
            return measure, typical
        pens = stretch_typical(measure, cands, states, MIN_HEIGHT_COLUMNS)
        if told_apart(pens, MIN_PEN_DIFFERENCE):
            return measure, pens
    return cands.height, typical


def track_run_emission(cands: Candidates, states: np.ndarray, weight: float) -> np.ndarray:
    """Every curve's charge for runs unlike its own, in run height plus in stroke thickness (`height_emission_all`).

    Args:
        cands: the column candidates (`Candidates.height`, `Candidates.thickness`).
        states: each curve's path from a first search of the track.
        weight: cost per px of misfit in each measure.

    Shape:
        states: (K, W). Returns (K, W, M+1).
    """
    return sum(height_emission_all(measure, typical_measure(measure, states), weight)
               for measure in (cands.height, cands.thickness))
