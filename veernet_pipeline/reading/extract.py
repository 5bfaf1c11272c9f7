"""Class probabilities -> curves that keep their identity: a joint Viterbi path over candidate rows.

Reading a log column by column fails where it matters: at a crossing both curves share one
run of ink, in a dash gap one curve has no ink at all, and on a grid line a stray run looks
like a curve. A reader follows each curve *across* columns instead. So do we:

1. Candidates. In each column, the runs of rows where some curve is likely
   (1 - P(background) >= `min_confidence`) are candidate positions: their probability-weighted
   centre row (subpixel), their peak probability, and each curve class's share of their mass.
   The `max_candidates` heaviest runs per column are kept.
2. States. A column's state says where each curve is: on candidate i, or absent. Both curves may
   sit on the same candidate (a crossing) at a small extra cost.
3. Costs. Emission: -log(peak) - `share_weight` x log(share of the curve's class) for a curve
   on a candidate, a fixed `absent_cost` for an absent one. Transition, per curve: |row change| / `jump_px` between two
   candidates (an L1 cost lets real spikes through), `gap_cost` to leave or re-enter absence.
   The transition separates over the two curves, so each column costs O(K^3), not O(K^4).
4. Gaps. After the best path is found, absences shorter than `max_gap` columns are bridged
   linearly (confidence stays 0 there, so a reader can see the value was not read), unless the
   curve re-appears more than half the track away: that is a wrap onto a backup scale, not a
   fade. Longer absences stay NaN: a value is never invented across a real gap.
"""

from __future__ import annotations

import numpy as np

from veernet_pipeline.config import ExtractParams

EPS = 1e-6


def candidates(probs: np.ndarray, params: ExtractParams) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The heaviest runs of likely ink in every column.

    Returns:
        `(rows, peak, share)`: centre row of each candidate (NaN where a column has fewer),
        its peak curve probability, and each curve class's share of its mass.

    Shape:
        probs: (C, H, W). rows, peak: (W, K). share: (W, K, C-1), K = params.max_candidates.
    """
    n_classes, height, width = probs.shape
    ink = 1.0 - probs[0].astype(np.float64)
    inside = ink >= params.min_confidence
    starts = inside & ~np.vstack([np.zeros((1, width), dtype=bool), inside[:-1]])
    run_id = np.cumsum(starts, axis=0) * inside
    n_runs = int(run_id.max()) + 1
    cols = np.broadcast_to(np.arange(width), (height, width))
    keys = (cols * n_runs + run_id)[inside]
    size = width * n_runs

    def per_run(weights: np.ndarray) -> np.ndarray:
        return np.bincount(keys, weights=weights, minlength=size).reshape(width, n_runs)

    mass = per_run(ink[inside])
    mass[:, 0] = 0.0  # run id 0 is "no run"
    y = np.broadcast_to(np.arange(height, dtype=np.float64)[:, None], (height, width))[inside]
    moment = per_run(ink[inside] * y)
    class_mass = np.stack([per_run(probs[k].astype(np.float64)[inside]) for k in range(1, n_classes)], axis=-1)
    peak = np.zeros((width, n_runs))
    np.maximum.at(peak, (cols[inside], run_id[inside]), ink[inside])

    k = params.max_candidates
    order = np.argsort(-mass, axis=1, kind="stable")[:, :k]
    picked = np.take_along_axis(mass, order, axis=1)
    valid = picked > 0
    rows = np.where(valid, np.take_along_axis(moment, order, axis=1) / np.maximum(picked, EPS), np.nan)
    peaks = np.where(valid, np.take_along_axis(peak, order, axis=1), 0.0)
    shares = np.take_along_axis(class_mass, order[..., None], axis=1) / np.maximum(
        np.take_along_axis(class_mass.sum(axis=-1), order, axis=1), EPS)[..., None]
    shares = np.where(valid[..., None], shares, 0.0)
    if rows.shape[1] < k:  # fewer runs in the whole map than candidates asked for
        pad = k - rows.shape[1]
        rows = np.pad(rows, ((0, 0), (0, pad)), constant_values=np.nan)
        peaks = np.pad(peaks, ((0, 0), (0, pad)))
        shares = np.pad(shares, ((0, 0), (0, pad), (0, 0)))
    return rows, peaks, shares


def _transition(prev_rows: np.ndarray, rows: np.ndarray, params: ExtractParams) -> np.ndarray:
    """Cost of one curve moving from each previous state to each state. Shape: (K+1, K+1)."""
    k = rows.shape[0]
    cost = np.full((k + 1, k + 1), np.inf)
    jump = np.abs(prev_rows[:, None] - rows[None, :]) / params.jump_px
    cost[:k, :k] = np.where(np.isfinite(jump), jump, np.inf)
    prev_ok, cur_ok = np.isfinite(prev_rows), np.isfinite(rows)
    cost[:k, k] = np.where(prev_ok, params.gap_cost, np.inf)  # a present curve leaves
    cost[k, :k] = np.where(cur_ok, params.gap_cost, np.inf)  # an absent curve re-enters
    cost[k, k] = 0.0
    return cost


def _emission(peak: np.ndarray, share: np.ndarray, rows: np.ndarray, params: ExtractParams) -> np.ndarray:
    """Cost of one curve sitting on each candidate of each column, or absent (last state).

    Shape:
        peak, share, rows: (W, K). Returns (W, K+1).
    """
    # Ink presence counts fully, class evidence at `share_weight`: a net unsure which curve a trace
    # is still knows a trace is there, and the path's continuity settles the identity.
    evidence = -np.log(np.clip(peak, EPS, 1.0)) - params.share_weight * np.log(np.clip(share, EPS, 1.0))
    cost = np.where(np.isfinite(rows), evidence, np.inf)
    return np.concatenate([cost, np.full((rows.shape[0], 1), params.absent_cost)], axis=1)


def trace_curves(probs: np.ndarray, params: ExtractParams) -> tuple[np.ndarray, np.ndarray]:
    """Rows and confidences of one or two curves along the best joint path.

    Args:
        probs: class probabilities; channel 0 background, channels 1..C-1 the curves (C = 2 or 3).
        params: path-search knobs (params.yaml `extract:`).

    Returns:
        `(rows, confidence)`: subpixel rows (pixel centre at row + 0.5), NaN where a curve is
        absent for more than `max_gap` columns; confidence = class share x peak probability on the
        path, 0 where the curve was absent or bridged.

    Shape:
        probs: (C, H, W). rows, confidence: (C-1, W).
    """
    probs = np.asarray(probs)
    if probs.ndim != 3 or probs.shape[0] not in (2, 3):
        raise ValueError(f"probs must be (C, H, W) with C = 2 (one curve) or 3 (two curves), got {probs.shape}")
    n_curves, width = probs.shape[0] - 1, probs.shape[2]
    rows, peak, share = candidates(probs, params)
    k = params.max_candidates
    emissions = [_emission(peak, share[..., c], rows, params) for c in range(n_curves)]
    if n_curves == 1:
        path = _viterbi_single(rows, emissions[0], params)
        states = path[None, :]
    else:
        states = _viterbi_pair(rows, emissions[0], emissions[1], params)
    out_rows = np.full((n_curves, width), np.nan)
    confidence = np.zeros((n_curves, width))
    for c in range(n_curves):
        present = states[c] < k
        cols = np.nonzero(present)[0]
        out_rows[c, cols] = rows[cols, states[c, cols]]
        confidence[c, cols] = share[cols, states[c, cols], c] * peak[cols, states[c, cols]]
        out_rows[c] = _bridge(out_rows[c], params.max_gap, probs.shape[1] / 2)
    return out_rows, confidence


def _viterbi_single(rows: np.ndarray, emission: np.ndarray, params: ExtractParams) -> np.ndarray:
    width, n_states = emission.shape
    back = np.zeros((width, n_states), dtype=np.int16)
    total = emission[0].copy()
    for x in range(1, width):
        step = total[:, None] + _transition(rows[x - 1], rows[x], params)
        back[x] = step.argmin(axis=0)
        total = step[back[x], np.arange(n_states)] + emission[x]
    path = np.empty(width, dtype=np.int64)
    path[-1] = int(total.argmin())
    for x in range(width - 1, 0, -1):
        path[x - 1] = back[x, path[x]]
    return path


def _viterbi_pair(rows: np.ndarray, emit_a: np.ndarray, emit_b: np.ndarray, params: ExtractParams) -> np.ndarray:
    """Joint path of two curves; state (i, j) = curve A on i, curve B on j (K = absent)."""
    width, n = emit_a.shape
    k = n - 1
    crossing = np.zeros((n, n))
    crossing[np.arange(k), np.arange(k)] = params.crossing_cost
    back_a = np.zeros((width, n, n), dtype=np.int16)
    back_b = np.zeros((width, n, n), dtype=np.int16)
    total = emit_a[0][:, None] + emit_b[0][None, :] + crossing
    for x in range(1, width):
        trans = _transition(rows[x - 1], rows[x], params)
        # Step 1, curve B: best previous j' for each (previous i', current j).
        via_b = total[:, :, None] + trans[None, :, :]  # (i', j', j)
        best_jp = via_b.argmin(axis=1)  # (i', j)
        partial = np.take_along_axis(via_b, best_jp[:, None, :], axis=1)[:, 0, :]
        # Step 2, curve A: best previous i' for each (current i, current j).
        via_a = partial[:, None, :] + trans[:, :, None]  # (i', i, j)
        best_ip = via_a.argmin(axis=0)  # (i, j)
        total = np.take_along_axis(via_a, best_ip[None], axis=0)[0] + emit_a[x][:, None] + emit_b[x][None, :] + crossing
        back_a[x] = best_ip
        back_b[x] = best_jp[best_ip, np.arange(n)[None, :]]
    states = np.empty((2, width), dtype=np.int64)
    i, j = np.unravel_index(int(total.argmin()), total.shape)
    for x in range(width - 1, -1, -1):
        states[:, x] = (i, j)
        if x:
            i, j = back_a[x, i, j], back_b[x, i, j]
    return states


def _bridge(values: np.ndarray, max_gap: int, max_step: float) -> np.ndarray:
    """Linearly fill interior NaN runs no longer than `max_gap`; longer ones and the ends stay NaN.

    A gap whose two ends lie more than `max_step` rows apart is a wrap onto a backup scale (or a
    spike) rather than a faded stretch, so it is left empty instead of drawn straight across.
    """
    out = values.copy()
    finite = np.nonzero(np.isfinite(values))[0]
    if finite.size < 2:
        return out
    for left, right in zip(finite[:-1], finite[1:], strict=True):
        if 1 < right - left <= max_gap + 1 and abs(values[right] - values[left]) <= max_step:
            out[left + 1:right] = np.interp(np.arange(left + 1, right), [left, right], values[[left, right]])
    return out
