"""Ghost runs: where a broken curve read jointly with others is in its gaps, so absence keeps its place.

A curve read alone jumps a dash or dot gap in place (`paths.viterbi_single`'s skips). A joint
search cannot skip (its states are joint, a skip per curve would multiply them), so its absent
state forgets where a curve was: after a gap the curve re-enters at any run for `gap_cost`, the
same price near or far. Two curves drawn alike then trade places wherever both are in a gap at
once, and a dotted one collapses onto its neighbour's line, cheaper than two gaps (89 alike
curves of the val true masks: 227 of 613 identity flips were such jumps across paper).

A ghost run is a run a broken stroke would have drawn: wherever a run ends (no run of the next
column touches it) and a run starts within `paths.SKIP_COLUMNS` columns (no run of the column
before touches it), cheaper to join than `2 x gap_cost`, the straight line between the two ends
is a run in every column between. `GHOSTS` per column, the cheapest joins, join the candidates
of the joint searches at `absent_cost` (an absent curve's price, but one that remembers where it
is); the transition cost of the real runs applies to them unchanged. A curve on a ghost is absent
in the reading (bridged later, confidence 0). Ghosts join across the paper only: a curve with a
backup scale that leaves through one edge and re-enters at the other in a gap has no straight line
to draw there, and moves between the two runs by the cyclic cost (`paths.transitions(wrap=True)`).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from veernet_pipeline.config import ExtractParams
from veernet_pipeline.reading.candidates import Candidates
from veernet_pipeline.reading.paths import MAX_JOINT, SKIP_COLUMNS, peel, transitions, viterbi

# Ghost runs per column: two curves in a gap at once are the common case (two dotted curves drawn alike).
GHOSTS = 2


class JointSteps(NamedTuple):
    """The joint searches' steps over candidates and ghost runs (`joint_steps`).

    Shape:
        transition: (V, W-1, M+GHOSTS+1, M+GHOSTS+1), state M+GHOSTS = absent; V = 1 (across the paper), or 2
        (and through the edges, for curves with a backup scale: `paths.transitions(wrap=True)`); ghosts:
        (W, GHOSTS) bool, where a ghost run exists.
    """

    transition: np.ndarray
    ghosts: np.ndarray


def ghost_runs(cands: Candidates, params: ExtractParams, height: int) -> tuple[np.ndarray, np.ndarray]:
    """Tops and bottoms of the `GHOSTS` cheapest straight joins across each column's gaps, NaN where none.

    Shape:
        Returns top, bottom: (W, GHOSTS).
    """
    top, bottom = cands.top, cands.bottom
    width, m = top.shape
    valid = cands.valid
    # Runs of neighbouring columns touch when no paper row lies between them (as in `transitions`).
    with np.errstate(invalid="ignore"):
        gap = np.maximum(top[1:, None, :] - bottom[:-1, :, None], top[:-1, :, None] - bottom[1:, None, :])
        touching = gap <= 1.0  # (W-1, run of column x, run of column x+1)
    ends = valid.copy()
    ends[:-1] &= ~touching.any(axis=2)
    ends[-1] = False
    starts = valid.copy()
    starts[1:] &= ~touching.any(axis=1)
    starts[0] = False
    # Each end's cheapest join: distance d and start run j.
    best = np.full((width, m), np.inf)
    join = np.zeros((width, m, 2), dtype=np.int64)
    for d in range(2, min(SKIP_COLUMNS, width - 1) + 1):
        cost = transitions(cands, params, height, d)[:, :m, :m]  # (W-d, end run, start run)
        cost = np.where(ends[:-d, :, None] & starts[d:, None, :], cost, np.inf)
        j = cost.argmin(axis=2)
        cheapest = np.take_along_axis(cost, j[..., None], axis=2)[..., 0]
        better = cheapest < best[:-d]
        best[:-d] = np.where(better, cheapest, best[:-d])
        join[:-d] = np.where(better[..., None], np.stack([np.full_like(j, d), j], axis=-1), join[:-d])
    x, i = np.nonzero(best < 2.0 * params.gap_cost)  # cheaper than leaving and re-entering
    d, j = join[x, i, 0], join[x, i, 1]
    columns, tops, bottoms, costs = [], [], [], []
    for s in range(1, SKIP_COLUMNS):  # the straight line from the end to the start, column by column
        on = s < d
        f = s / d[on]
        xs, is_, js, ds = x[on], i[on], j[on], d[on]
        columns.append(xs + s)
        tops.append(top[xs, is_] + f * (top[xs + ds, js] - top[xs, is_]))
        bottoms.append(bottom[xs, is_] + f * (bottom[xs + ds, js] - bottom[xs, is_]))
        costs.append(best[xs, is_])
    ghost_top = np.full((width, GHOSTS), np.nan)
    ghost_bottom = np.full((width, GHOSTS), np.nan)
    if not x.size:
        return ghost_top, ghost_bottom
    column, cost = np.concatenate(columns), np.concatenate(costs)
    order = np.lexsort((cost, column))  # by column, cheapest join first
    column = column[order]
    rank = np.arange(column.size) - np.searchsorted(column, column)  # place among its column's joins
    kept = rank < GHOSTS
    ghost_top[column[kept], rank[kept]] = np.concatenate(tops)[order[kept]]
    ghost_bottom[column[kept], rank[kept]] = np.concatenate(bottoms)[order[kept]]
    return ghost_top, ghost_bottom


def joint_steps(cands: Candidates, params: ExtractParams, height: int, wrap: bool = False) -> JointSteps:
    """The joint searches' transition costs over the candidates and the ghost runs, and where ghosts exist.

    With `wrap`, also the cyclic costs of curves with a backup scale (the second table).
    """
    ghost_top, ghost_bottom = ghost_runs(cands, params, height)
    width = cands.top.shape[0]
    # Only the extents matter to `transitions`; ghosts carry no ink.
    joined = Candidates(top=np.concatenate([cands.top, ghost_top], axis=1),
                        bottom=np.concatenate([cands.bottom, ghost_bottom], axis=1),
                        peak=np.zeros((width, cands.top.shape[1] + GHOSTS)),
                        centre=np.zeros((0, width, cands.top.shape[1] + GHOSTS)),
                        share=np.zeros((0, width, cands.top.shape[1] + GHOSTS)),
                        thickness=np.zeros((width, cands.top.shape[1] + GHOSTS)))
    tables = [transitions(joined, params, height, wrap=cyclic) for cyclic in ((False, True) if wrap else (False,))]
    return JointSteps(np.stack(tables), np.isfinite(ghost_top))


def read_jointly(costs: np.ndarray, steps: JointSteps, params: ExtractParams,
                 wrap: np.ndarray | None = None) -> np.ndarray:
    """Joint paths of groups of curves over candidates and ghost runs; a curve on a ghost reads as absent.

    Groups of up to `MAX_JOINT` curves get the exact joint search (`paths.viterbi`), larger ones peeling
    (`paths.peel`, one group at a time).

    Args:
        costs: per group and curve, the emission of each candidate and of absence (`paths.emissions`, plus any
            extra cost of the caller's).
        steps: from `joint_steps`, with its second table when any curve wraps.
        wrap: per group and curve, whether it has a backup scale (moves by `steps`' second table); None: none.

    Shape:
        costs: (G, g, W, M+1); wrap: (G, g) bool. Returns (G, g, W) int64, M = absent.

    Raises:
        ValueError: a curve wraps but `steps` holds no cyclic table.
    """
    m = costs.shape[-1] - 1
    variant = np.zeros(costs.shape[:2], dtype=np.int64) if wrap is None else np.asarray(wrap, dtype=np.int64)
    if variant.max(initial=0) >= len(steps.transition):
        raise ValueError("a curve with a backup scale needs the cyclic steps: joint_steps(..., wrap=True)")
    ghost_cost = np.broadcast_to(np.where(steps.ghosts, params.absent_cost, np.inf), costs.shape[:-1] + (GHOSTS,))
    joined = np.concatenate([costs[..., :m], ghost_cost, costs[..., m:]], axis=-1)
    if costs.shape[1] > MAX_JOINT:
        states = np.stack([peel(group, steps.transition, params.crossing_cost, kinds)
                           for group, kinds in zip(joined, variant, strict=True)])
    else:
        states = viterbi(joined, steps.transition, params.crossing_cost, variant)
    return np.minimum(states, m)
