"""Which read curve is which true curve: identity swaps, and assignments where the picture cannot say.

Swap share. In a column where two or more curves are both read and have truth, the read curves
are labelled (curve k read as the sidecar's curve k). The column is *swapped* when some other
one-to-one assignment of those read curves to those true curves is strictly closer in total,
distance being each read row's distance to its true curve's band (`truth.truth_band`). Columns
with fewer than two such curves do not count. A curve is *involved* in a swapped column when the
closest assignment gives it another curve's truth. For two curves this is the seeds' swap share.

Curves drawn alike. Curves of identical classes (two solid curves, or every curve of the
classical tracer) look the same to any reader, so nothing in the picture says which is which
mnemonic. Their reading lists them top first (`reading.alike_order.same_class_order`); evaluation
scores such a group under whichever assignment of read to true curves fits best over the whole
log (`best_assignment`), and still counts every column where the chosen assignment is beaten.

Curves with a backup scale. Their track's two edges meet: a curve that runs off one edge is drawn
on at the other, so a row read just past the top edge is as far from a truth just inside the
bottom one as the curve's value is (`nearest_turn`). Distances to such a curve's truth are taken
the short way round (`cyclic`); the LAS values, scale and all, are scored by `mae_physical`.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np

# A read curve left without a compared column counts as this misfit (track units: the whole track).
MISSING_MAE = 1.0


def band_distance(pred: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Distance from each read row to the band [lo, hi] (0 inside it), NaN where either is missing.

    Shape:
        pred, lo, hi: broadcastable, track units.
    """
    return np.maximum(np.maximum(lo - pred, pred - hi), 0.0)  # NaN propagates through np.maximum


# Whole turns a read row may be moved by to meet a truth on a backup scale, the unmoved one first so it wins ties.
_TURNS = (0.0, -1.0, 1.0)


def nearest_turn(pred: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Each read row moved by a whole track width (-1, 0 or +1) to where it lies nearest the band.

    On a backup scale the track's edges meet, so a row read 0.01 above the top edge (-0.01) lies
    0.02 from a truth drawn 0.01 above the bottom one (0.99): one turn round, 0.99 against 0.99.

    Shape:
        pred, lo, hi: broadcastable, track units. Returns their broadcast shape, NaN where pred is.
    """
    shape = np.broadcast_shapes(np.shape(pred), np.shape(lo), np.shape(hi))
    turned = np.stack([np.broadcast_to(pred + turn, shape) for turn in _TURNS])
    distance = band_distance(turned, lo, hi)
    pick = np.argmin(np.where(np.isnan(distance), np.inf, distance), axis=0)
    return np.take_along_axis(turned, pick[None], axis=0)[0]


def pair_distance(pred: np.ndarray, lo: np.ndarray, hi: np.ndarray, cyclic: np.ndarray | None = None) -> np.ndarray:
    """Band distance of every read curve to every true curve, the short way round to those with a backup scale.

    Shape:
        pred, lo, hi: (K, W); cyclic: (K,) bool per true curve, None = none. Returns (read, true, W).
    """
    flat = band_distance(pred[:, None], lo[None], hi[None])
    if cyclic is None or not np.any(cyclic):
        return flat
    short_way = band_distance(nearest_turn(pred[:, None], lo[None], hi[None]), lo[None], hi[None])
    return np.where(np.asarray(cyclic, dtype=bool)[None, :, None], short_way, flat)


def best_assignment(pred: np.ndarray, lo: np.ndarray, hi: np.ndarray, groups: Sequence[Sequence[int]],
                    cyclic: np.ndarray | None = None) -> np.ndarray:
    """Which read curve to score against each true curve: within each group, the assignment that fits best.

    "Best" = lowest mean over the group's true curves of the mean band distance (`pair_distance`; a
    true curve left without a compared column counts as `MISSING_MAE`); ties keep the reading's order.

    Shape:
        pred, lo, hi: (K, W); cyclic: (K,) bool, true curves with a backup scale (None = none). Returns (K,)
        int64: true curve k is scored against pred[order[k]].
    """
    order = np.arange(pred.shape[0])
    distance = pair_distance(pred, lo, hi, cyclic)  # (read, true, W)
    compared = np.isfinite(distance)
    misfit = np.where(compared.any(axis=2),
                      np.where(compared, distance, 0.0).sum(axis=2) / np.maximum(compared.sum(axis=2), 1), MISSING_MAE)
    for group in groups:
        best = min(itertools.permutations(group),
                   key=lambda perm: sum(misfit[j, k] for j, k in zip(perm, group, strict=True)))
        order[list(group)] = best
    return order


def swap_share(pred: np.ndarray, lo: np.ndarray, hi: np.ndarray, cyclic: np.ndarray | None = None
               ) -> tuple[float, np.ndarray]:
    """Share of columns whose labelled assignment is beaten by another, and each curve's share of being moved.

    Returns:
        `(share, per_curve)`: swapped columns / columns with at least two read curves with truth
        (NaN when there is none); per curve, swapped columns that move it / such columns it is
        read in (NaN when none).

    Shape:
        pred, lo, hi: (K, W) track units, K <= 5 (every permutation is tried); cyclic: (K,) bool, true curves with a
        backup scale (`pair_distance`; None = none). per_curve: (K,).
    """
    n, width = pred.shape
    distance = pair_distance(pred, lo, hi, cyclic)  # (read j, true k, W)
    present = np.isfinite(distance[np.arange(n), np.arange(n)])  # (K, W): curve k read and with truth
    counted = present.sum(axis=0) >= 2
    if not counted.any():
        return float("nan"), np.full(n, np.nan)
    cost = np.where(np.isfinite(distance), distance, 0.0)
    labelled = np.sum(cost[np.arange(n), np.arange(n)] * present, axis=0)
    best = labelled.copy()
    moved = np.zeros((n, width), dtype=bool)
    for perm in itertools.permutations(range(n)):
        if perm == tuple(range(n)):
            continue
        perm_idx = np.asarray(perm)
        # Only assignments among the curves present in a column: present curves go to present curves.
        valid = np.all(~present | present[perm_idx], axis=0)
        total = np.sum(cost[perm_idx, np.arange(n)] * present, axis=0)
        better = valid & (total < best - 1e-12)
        best = np.where(better, total, best)
        moved[:, better] = (perm_idx != np.arange(n))[:, None] & present[:, better]
    swapped = counted & (best < labelled - 1e-12)
    involved = present & counted[None]
    with np.errstate(invalid="ignore"):
        per_curve = np.where(involved.any(axis=1),
                             (moved & swapped[None]).sum(axis=1) / np.maximum(involved.sum(axis=1), 1), np.nan)
    return float(swapped[counted].mean()), per_curve
