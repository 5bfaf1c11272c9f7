"""Best paths over candidate runs: exact Viterbi for one to three curves at once, peeling beyond.

A curve's state in a column is one of the M candidate runs or "absent" (state M). Costs:

- Emission, per curve: -log(peak) - `share_weight` x log(the curve's share of the run), or
  `absent_cost` when absent.
- Transition, per curve: `gap / jump_px`, where gap is the number of paper rows between the two
  runs' extents (0 when they touch or overlap: following a connected stroke costs almost nothing,
  however steep; jumping across paper costs), plus the run middle's travel in track heights (a
  tie-breaker: of two touching runs, the one that continues the curve); `gap_cost` to leave or
  re-enter absence. A curve with a backup scale runs off one edge and re-enters at the other, so
  its rows are cyclic: its gap and travel are the shorter of the two ways, across the paper or
  through the edges (`transitions(wrap=True)`); a curve without one cannot cross that way.
- Crossing, between curves read jointly: `crossing_cost` per pair sitting on the same run; and
  for a curve read alone, per run another curve holds, when it is read again (`give_way`).
- Skip, for a curve read alone (`viterbi_single`): from a run straight to a run up to
  `SKIP_COLUMNS` columns on, `absent_cost` per skipped column plus the transition between the two
  runs, so a dotted curve keeps its place through its gaps instead of paying `gap_cost` twice.

The transition separates over curves, so a joint step over g curves is g min-plus products of
(M+1)^g states, one curve axis at a time: O(g (M+1)^(g+1)) per column rather than (M+1)^(2g).
That is exact and cheap up to `MAX_JOINT` curves (729 states at M = 8); a larger group of
curves that share their evidence is read by peeling (`peel`): one curve at a time given the
others, then pair by pair given the rest, each paying the crossing cost where another sits.
"""

from __future__ import annotations

import itertools

import numpy as np

from veernet_pipeline.config import ExtractParams
from veernet_pipeline.reading.candidates import EPS, Candidates
from veernet_pipeline.reading.joint import joint_paths_1, joint_paths_2, joint_paths_3
from veernet_pipeline.reading.skips import best_skipping_paths

# Curves read by one exact joint search at most; (M+1)^g states, g x (M+1)^(g+1) work per column.
MAX_JOINT = 3
JOINT_STATES = 256  # states a curve of a joint search may have: candidates, ghost runs and absence (uint8)
PEEL_SWEEPS = 2
# Longest gap a single curve jumps in place (`viterbi_single`): dotted patterns' gaps, a pen skip's short ones.
SKIP_COLUMNS = 8
# Two curves on one run whose own centres lie closer than this read the same pixels (`give_way`).
CENTRE_PX = 1.0
# Fewest such columns in a stretch that make it contested: where two pens cross they coincide for one or
# two columns, and re-reading a curve for that rarely changes its path (47 val logs: figures within 0.005 of
# re-reading there too, 19 % less reading time).
MIN_SHARED = 3


def transitions(cands: Candidates, params: ExtractParams, height: int, step: int = 1, wrap: bool = False) -> np.ndarray:
    """Cost of one curve moving from each state of column x-step to each state of column x.

    `height` is the track's (the image's) height in px. With `step` > 1 only moves between
    candidates are meaningful (`viterbi_single`'s skips); the absent state's entries are still filled.
    With `wrap` (a curve with a backup scale) the rows are cyclic: a run at the bottom edge touches
    one at the top edge, and the gap and travel are the shorter way, across the paper or through the edges.

    Shape:
        Returns (W-step, M+1, M+1); row = previous state, column = current state; state M = absent.
    """
    m = cands.top.shape[1]
    top_prev, bot_prev = cands.top[:-step, :, None], cands.bottom[:-step, :, None]
    top_cur, bot_cur = cands.top[step:, None, :], cands.bottom[step:, None, :]
    # Paper rows between the two runs; runs that share or touch a row (8-connected) have none.
    gap = np.maximum(0.0, np.maximum(top_cur - bot_prev, top_prev - bot_cur) - 1.0)
    # Along connected ink the middle's travel costs one unit per track height: a full-height spike
    # stays far cheaper than a gap, but of two touching runs the one that continues the curve wins.
    drift = np.abs((top_cur + bot_cur) - (top_prev + bot_prev)) / (2.0 * height)
    if wrap:
        # Off the bottom edge and in at the top, or the other way: the paper rows left on each side of the edge.
        through = np.minimum((height - 1.0 - bot_prev) + top_cur, top_prev + (height - 1.0 - bot_cur))
        gap = np.minimum(gap, np.maximum(0.0, through))
        drift = np.minimum(drift, 1.0 - drift)
    cost = np.full((cands.top.shape[0] - step, m + 1, m + 1), np.inf)
    with np.errstate(invalid="ignore"):
        cost[:, :m, :m] = np.where(np.isfinite(gap), gap / params.jump_px + drift, np.inf)
    valid = cands.valid
    cost[:, :m, m] = np.where(valid[:-step], params.gap_cost, np.inf)  # a present curve leaves
    cost[:, m, :m] = np.where(valid[step:], params.gap_cost, np.inf)  # an absent curve re-enters
    cost[:, m, m] = 0.0
    return cost


def emissions(cands: Candidates, params: ExtractParams) -> np.ndarray:
    """Cost of each curve sitting on each candidate of each column, or absent (last state).

    Ink presence counts fully, the curve's share of it at `share_weight`: a net unsure which style
    a trace is still knows a trace is there.

    Shape:
        Returns (K, W, M+1).
    """
    evidence = -np.log(np.clip(cands.peak, EPS, 1.0))[None] - params.share_weight * np.log(
        np.clip(cands.share, EPS, 1.0))
    cost = np.where(cands.valid[None], evidence, np.inf)
    absent = np.full(cost.shape[:2] + (1,), params.absent_cost)
    return np.concatenate([cost, absent], axis=2)


def crossing_penalty(n_curves: int, n_states: int, crossing_cost: float) -> np.ndarray:
    """`crossing_cost` for every pair of curves on the same (present) candidate. Shape: (n_states,) * n_curves."""
    penalty = np.zeros((n_states,) * n_curves)
    grids = np.indices(penalty.shape)
    for a, b in itertools.combinations(range(n_curves), 2):
        penalty += crossing_cost * ((grids[a] == grids[b]) & (grids[a] < n_states - 1))
    return penalty


def viterbi(emission: np.ndarray, transition: np.ndarray, crossing_cost: float,
            variant: np.ndarray | None = None) -> np.ndarray:
    """Exact best joint path of G independent groups of g curves each (g <= `MAX_JOINT`).

    Args:
        emission: per group and curve, the cost of each state in each column.
        transition: per column step, the cost of one curve's state change: one table shared by every
            curve, or V tables (e.g. without and with a backup scale, `transitions(wrap=)`).
        crossing_cost: added per pair of one group's curves sitting on the same candidate.
        variant: with V tables, which one each group's curve moves by; None: the first for all.

    Returns:
        States per group, curve and column (M = absent).

    Shape:
        emission: (G, g, W, M+1); transition: (W-1, M+1, M+1) or (V, W-1, M+1, M+1); variant: (G, g) int.
        Returns (G, g, W) int64.
    """
    n_groups, g, _, n = emission.shape
    if g > MAX_JOINT:
        raise ValueError(f"an exact joint search reads at most {MAX_JOINT} curves at once, got {g}; use peel()")
    if n > JOINT_STATES:
        raise ValueError(f"a joint search holds at most {JOINT_STATES} states a curve (uint8 back-pointers), got {n}; "
                         "lower extract.max_candidates in params.yaml")
    tables = transition if transition.ndim == 4 else transition[None]
    variant = np.zeros((n_groups, g), dtype=np.int64) if variant is None else np.asarray(variant, dtype=np.int64)
    search = (joint_paths_1, joint_paths_2, joint_paths_3)[g - 1]  # compiled (reading/joint.py)
    return search(np.ascontiguousarray(emission, dtype=np.float64), np.ascontiguousarray(tables, dtype=np.float64),
                  variant, crossing_penalty(g, n, crossing_cost))


def viterbi_single(emission: np.ndarray, cands: Candidates, params: ExtractParams, height: int,
                   wrap: np.ndarray | None = None) -> np.ndarray:
    """Exact best path of G independent curves, each free to jump a gap of up to `SKIP_COLUMNS` in place.

    Absence forgets where the curve was, so a broken curve followed through the absent state pays
    `gap_cost` twice at every gap; a dotted curve whose dots cover a column or two would be
    cheaper to leave unread. Here a curve on a run at column x-d (2 <= d <= `SKIP_COLUMNS`) may
    also move straight to a run at column x, paying `absent_cost` for each skipped column and the
    transition cost between the two runs: it keeps its place through a dash or dot gap. The skipped
    columns are absent in the path (bridged later, confidence 0). A curve with `wrap` set (a backup
    scale) moves by the cyclic costs (`transitions(wrap=True)`).

    Shape:
        emission: (G, W, M+1); wrap: (G,) bool, default all False. Returns (G, W) int64.
    """
    n_curves = emission.shape[0]
    flags = np.zeros(n_curves, dtype=bool) if wrap is None else np.asarray(wrap, dtype=bool)
    variants = sorted(set(flags.tolist()))
    pick_variant = np.searchsorted(variants, flags)  # each curve's table
    step_cost = np.stack([transitions(cands, params, height, wrap=v) for v in variants])
    # The skips' costs (`transitions(step=d)` between runs, plus absence per skipped column) are computed in the loop.
    return best_skipping_paths(emission, step_cost, cands.top, cands.bottom, np.array(variants, dtype=bool),
                               pick_variant.astype(np.int64), height, SKIP_COLUMNS, float(params.jump_px),
                               float(params.absent_cost))


def peel(emission: np.ndarray, transition: np.ndarray, crossing_cost: float,
         variant: np.ndarray | None = None) -> np.ndarray:
    """Approximate joint path of more than `MAX_JOINT` curves: peeled one by one, then improved pair by pair.

    First each curve in turn gets its exact path given the curves before it (paying `crossing_cost`
    on every candidate one of them holds). Then, in sweeps, every pair of curves gets its exact
    joint path given all the others, until no path changes (at most `PEEL_SWEEPS` sweeps). Each
    step lowers or keeps the joint cost, so it ends; a pair step can undo a swap two curves made
    where they met, which a one-curve step cannot. `transition` and `variant` as for `viterbi`.

    Shape:
        emission: (g, W, M+1); transition: (W-1, M+1, M+1) or (V, W-1, M+1, M+1); variant: (g,) int.
        Returns (g, W) int64.
    """
    g, width, n = emission.shape
    variant = np.zeros(g, dtype=np.int64) if variant is None else np.asarray(variant, dtype=np.int64)
    states = np.full((g, width), n - 1, dtype=np.int64)  # all absent: nobody holds anything yet

    def held(skip: tuple[int, ...]) -> np.ndarray:
        count = np.zeros((width, n))
        for other in range(g):
            if other not in skip:
                np.add.at(count, (np.arange(width), states[other]), 1.0)
        count[:, n - 1] = 0.0  # absence is never shared
        return crossing_cost * count

    for k in range(g):
        states[k] = viterbi((emission[k] + held((k,)))[None, None], transition, crossing_cost,
                            variant[None, [k]])[0, 0]
    for _ in range(PEEL_SWEEPS):
        changed = False
        for pair in itertools.combinations(range(g), 2):
            found = viterbi((emission[list(pair)] + held(pair)[None])[None], transition, crossing_cost,
                            variant[None, list(pair)])[0]
            changed |= not np.array_equal(found, states[list(pair)])
            states[list(pair)] = found
        if not changed:
            break
    return states


def give_way(emission: np.ndarray, states: np.ndarray, singles: list[int], cands: Candidates, params: ExtractParams,
             height: int, wrap: np.ndarray | None = None) -> np.ndarray:
    """Curves read alone that read another curve's pixels are read again, weakest claim first, paying to share.

    Curves of different styles are read independently, each on its own class's evidence. Where
    the net is unsure which broken style a trace is (dashed, dash-dot and long-dash share half
    their pixels' probability), two such curves both find the same trace cheapest and read one
    line twice while the other line goes unread. Here each single curve that reads the same
    pixels as another (same run, own centres within `CENTRE_PX`: `contested`) is searched again
    with `crossing_cost` on every run another curve holds along those stretches, one curve at a
    time, the one with the lowest mean share of the contested runs first: the curve the net
    trusts least there moves to its next-best line, or stays where its own ink is worth the cost.
    Two curves crossing share a run too, but each keeps its centre on its own pen except for the
    column or two where the pens coincide: fewer than `MIN_SHARED` such columns in a stretch are
    a crossing, not contested, and cost nothing. A curve with
    nothing contested keeps its path: added costs it never pays cannot make another path cheaper.

    Args:
        emission: every curve's emission costs (`emissions`).
        states: every curve's states from the first reading; changed in place and returned.
        singles: the curves read alone (groups of one, `viterbi_single`); others only hold runs.
        wrap: which curves have a backup scale (`viterbi_single`); None: none.

    Shape:
        emission: (K, W, M+1); states: (K, W) int64; wrap: (K,) bool.
    """
    width, m = states.shape[1], emission.shape[2] - 1

    def claim(k: int) -> float:
        cols = np.nonzero(contested(states, cands.centre, k, m, params.max_gap) & (states[k] != m))[0]
        return float(cands.share[k, cols, states[k, cols]].mean()) if cols.size else np.inf

    for k in sorted(singles, key=claim):
        cols = np.nonzero(contested(states, cands.centre, k, m, params.max_gap))[0]
        if not cols.size:
            continue
        held = np.zeros((width, m + 1))
        for other in range(len(states)):
            if other != k:
                np.add.at(held, (cols, states[other, cols]), params.crossing_cost)
        held[:, m] = 0.0  # absence is never shared
        states[k] = viterbi_single((emission[k] + held)[None], cands, params, height,
                                   None if wrap is None else wrap[[k]])[0]
    return states


def contested(states: np.ndarray, centre: np.ndarray, k: int, absent: int, max_gap: int) -> np.ndarray:
    """Columns along which curve k reads another curve's pixels, and the gaps of up to `max_gap` between them.

    Curve k reads another's pixels where both sit on one run and their own centres lie within
    `CENTRE_PX`; the stretch between two such columns counts too when it is no longer than
    `max_gap` (a broken curve's dash gaps), so the curve cannot step back onto the line there.
    A stretch with fewer than `MIN_SHARED` such columns is a crossing, not contested.

    Shape:
        states: (K, W), `absent` (M) where a curve is absent; centre: (K, W, M). Returns (W,) bool.
    """
    columns = np.arange(states.shape[1])
    here = np.minimum(states[k], absent - 1)
    same = np.zeros(states.shape[1], dtype=bool)
    for other in range(len(states)):
        if other != k:
            close = np.abs(centre[k, columns, here] - centre[other, columns, here]) < CENTRE_PX
            same |= (states[other] == states[k]) & close
    shared = np.nonzero((states[k] != absent) & same)[0]
    out = np.zeros(states.shape[1], dtype=bool)
    if not shared.size:
        return out
    breaks = np.nonzero(np.diff(shared) > max_gap)[0]
    for run in np.split(shared, breaks + 1):
        if run.size >= MIN_SHARED:
            out[run[0]:run[-1] + 1] = True
    return out
