"""Lines the net named in each other's styles, given back by the length of their dashes.

The net names a broken style partly by the absolute length of its dashes (docs/accuracy.md), so on a
print whose dashes are drawn otherwise than the generator's it can name two curves' lines the other
way round for a whole log: on the foreign renderer's scan 000006 the long-dash line (dashes of 20 px,
the generator's are 30-90) is named dashed and the dashed one (dashes of 8 px) long-dash, and the path
search, which follows the names, gives each curve the other's line. A legend's styles are relative,
though, whoever drew them: dashes are shorter than long dashes.

So after the reading each curve's dashes are measured (`dash_lengths`: the connected pieces of ink in
the net's map that its line passes through and no other line touches, each as long as the line's arc
through it; `typical_dash`: their median), and the lines of the track's curves named dashed and
long-dash are given to the curves whose styles their dashes fit (`exchange_by_dashes`): a pair of
lines misfits by how much the one named dashed has the longer dashes (log ratio of the medians,
`misfit`). Lines move only where that removes at least `MARGIN`; among assignments within `TIE` of
the best, the one moving fewest lines wins (two dashed curves in different pens beside a long-dash
one). The other styles keep their lines. Dots are not measured so: where the net's map joins them
into pieces, a dotted line's pieces outgrow short dashes (test log 000111: dotted 9.3 px against
dashed 4.5, which would be swapped wrongly; on val 000404 the true dotted line's pieces have a median
of 15 px). Dash-dot dashes are as long as dashed ones, and its dots could not be told from the pieces
a faint long dash breaks into (on val 000293 the long-dash line showed more short pieces than the
dash-dot line beside it). Curves drawn alike (one kind) and solid curves keep their lines.
"""

from __future__ import annotations

import itertools
import logging
from dataclasses import replace

import numpy as np
from scipy import ndimage

from veernet_pipeline.io.classes import BACKGROUND, NUM_CLASSES, OTHER_INK
from veernet_pipeline.reading.styles import ReadingPlan

log = logging.getLogger(__name__)

# Where one style is drawn with longer dashes than another; the styles this module may move.
DASH_RANK = {"dashed": 0, "long_dash": 1}
# A line needs this many dashes measured clear of the others.
MIN_DASHES = 15
# Misfit an exchange must remove (a 1.65x inversion of median dashes). On the first 80 val logs every track's lines
# misfit 0 as read (no dashes out of order; so do the first 100 test logs'), on the foreign scans 000006 misfits 0.90.
MARGIN = 0.5
# Assignments within this of the best are ties, settled by moving the fewest lines (a log ratio of 0.1 = 10 %).
TIE = 0.1
# Lines nearer than this (px) touch or cross: the ink there may be either's, so it is not measured.
CLEAR_PX = 8.0
# Rows either side of the line searched for its ink, and the probability that is ink.
INK_ROWS = 2
INK_PROBABILITY = 0.5


def pieces_hit(pieces: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """The piece of ink a line passes through in each column (0: none, or the line is absent).

    The line's own row is looked at first, then the rows either side out to `INK_ROWS`.

    Shape:
        pieces: (H, W) labels of connected ink (`scipy.ndimage.label`); rows: (W,) NaN where absent. Returns (W,).
    """
    height, width = pieces.shape
    cols = np.arange(width)
    shown = np.isfinite(rows)
    centre = np.round(np.nan_to_num(rows)).astype(np.int64)
    hit = np.zeros(width, dtype=pieces.dtype)
    for offset in sorted(range(-INK_ROWS, INK_ROWS + 1), key=abs):
        look = pieces[np.clip(centre + offset, 0, height - 1), cols]
        hit = np.where((hit == 0) & shown, look, hit)
    return hit


def dash_lengths(pieces: np.ndarray, rows: np.ndarray, others: np.ndarray) -> np.ndarray:
    """Lengths (px of arc) of the dashes a line passes through that no other line touches.

    A dash is a connected piece of ink in the net's map; its length is the line's arc through it, so a
    dash on a steep stroke counts whole. Pieces another line passes through, or this line passes
    through within `CLEAR_PX` of another, are left out: where lines touch or cross their ink joins.

    Shape:
        pieces: (H, W) labels of connected ink; rows: (W,) NaN where absent; others: (K', W). Returns 1-D.
    """
    hit = pieces_hit(pieces, rows)
    arc = np.sqrt(1.0 + np.gradient(np.nan_to_num(rows)) ** 2) if rows.size > 1 else np.ones(rows.size)
    shared = [0]
    for other in others:
        shared += [*np.unique(pieces_hit(pieces, other)), *np.unique(hit[np.abs(other - rows) < CLEAR_PX])]
    lengths = np.bincount(hit, weights=arc)  # indexed by every label the line passes through
    own = np.setdiff1d(np.unique(hit), shared)
    return lengths[own]


def typical_dash(dashes: np.ndarray) -> float | None:
    """A line's median dash (px of arc), None with fewer than `MIN_DASHES` measured."""
    return float(np.median(dashes)) if dashes.size >= MIN_DASHES else None


def misfit(dashes: list[float], styles: list[str]) -> float:
    """How badly lines fit the styles they are given: over pairs, the log ratio by which the line given dashed
    has longer dashes than the one given long-dash (0 where in order).

    Args:
        dashes: each line's typical dash (`typical_dash`).
        styles: the style each line is given, keys of `DASH_RANK`.
    """
    total = 0.0
    for (a, style_a), (b, style_b) in itertools.combinations(zip(dashes, styles, strict=True), 2):
        if DASH_RANK[style_a] != DASH_RANK[style_b]:
            shorter, longer = (a, b) if DASH_RANK[style_a] < DASH_RANK[style_b] else (b, a)
            total += max(0.0, float(np.log(shorter / longer)))
    return total


def best_assignment(dashes: list[float], styles: list[str]) -> tuple[int, ...]:
    """Which line each style gets (`order[i]` = the line for styles[i]); the identity unless it misfits by MARGIN."""
    identity = tuple(range(len(styles)))
    costs = {order: misfit([dashes[j] for j in order], styles) for order in itertools.permutations(identity)}
    least = min(costs.values())
    ties = [order for order, cost in costs.items() if cost <= least + TIE]
    chosen = min(ties, key=lambda order: (sum(i != j for i, j in enumerate(order)), costs[order]))
    return chosen if costs[identity] - costs[chosen] >= MARGIN else identity


def exchange_by_dashes(probs: np.ndarray, plan: ReadingPlan, rows: np.ndarray, confidence: np.ndarray
                       ) -> tuple[ReadingPlan, np.ndarray, np.ndarray] | None:
    """Give the lines of curves named dashed and long-dash to the curves whose styles their dashes fit.

    Returns:
        None where every line keeps its curve (or fewer than two such curves had their dashes measured);
        else the plan with a note naming the curves whose lines moved and their dashes (those curves in its
        `moved`), and the rows and confidences moved with their lines (a moved curve's confidence is still the
        net's for the line it took: the review queue ranks such scans first, `inference.review`).

    Shape:
        probs: (7, H, W); rows, confidence: (K, W), K = len(plan.classes).
    """
    if probs.shape[0] != NUM_CLASSES:
        return None
    kinds = plan.kinds
    named = [k for k, label in enumerate(plan.labels)
             if label in DASH_RANK and len(plan.classes[k]) == 1 and kinds.count(kinds[k]) == 1]
    if len(named) < 2:
        return None
    ink = 1.0 - probs[BACKGROUND] - probs[OTHER_INK]
    pieces, _ = ndimage.label(ink >= INK_PROBABILITY, structure=np.ones((3, 3), dtype=bool))
    typical = {k: typical_dash(dash_lengths(pieces, rows[k], np.delete(rows, k, axis=0))) for k in named}
    measured = {k: dash for k, dash in typical.items() if dash is not None}
    if len(measured) < 2:
        return None
    curves, dashes = list(measured), list(measured.values())
    order = best_assignment(dashes, [plan.labels[k] for k in curves])
    if order == tuple(range(len(curves))):
        return None
    source = np.arange(len(rows))
    source[curves] = [curves[j] for j in order]
    mnemonics = [c.mnemonic for c in plan.calibration.curves]
    taken = [f"{mnemonics[k]} ({plan.labels[k]}) took the line read as {mnemonics[source[k]]} "
             f"({plan.labels[source[k]]}; median dash {dashes[j]:.1f} px against {dashes[i]:.1f})"
             for i, (k, j) in enumerate(zip(curves, order, strict=True)) if source[k] != k]
    note = ("the net named these lines in each other's styles; the length of their dashes says otherwise: "
            + "; ".join(taken) + "; check them in the QC picture (docs/reading.md)")
    log.info("%s", note)
    moved = tuple(k for k in curves if source[k] != k)
    return replace(plan, notes=[*plan.notes, note], moved=moved), rows[source], confidence[source]
