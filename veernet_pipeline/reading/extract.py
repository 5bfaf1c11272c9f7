"""Class probabilities -> every requested curve, each keeping its identity through crossings.

Reading a log column by column fails where it matters: at a crossing two curves share one run of
ink, in a dash gap a curve has no ink at all, and a stray run looks like a curve. A reader follows
each curve *across* columns, and tells curves apart by their line style, as the log's legend
does. So do we (docs/reading.md):

1. Evidence. Curve k's evidence is the summed probability of its classes (`reading.styles.curve_classes`:
   the style the sidecar names, or the seeds' convention). Candidates are the heaviest runs of
   curve ink per column (`reading.candidates`; ink of every line style, named in the track or not), with
   their extents.
2. Groups. Curves whose classes overlap compete for the same ink, so they are read jointly
   (exact joint Viterbi up to three, peeling beyond, `reading.paths`), keeping their places
   through gaps on ghost runs (`reading.ghosts`); curves of disjoint styles are read by
   independent paths on their own evidence, batched into one pass.
3. Rows. A run no taller than about twice the stroke width is read at its weighted centre. A taller
   one is a steep stroke: where the path turns in that column (both neighbours on one side) the
   curve's value is the run's far end, otherwise its centre (`reading.rows`). A tall run reaching well
   past the curve's rows on both sides is an upright stroke the curve crosses (a heavy depth line,
   lettering): the curve reads the straight line between its rows either side.
4. Gaps. Absences up to `max_gap` columns are bridged linearly (confidence 0 there), unless the
   curve re-appears more than half the track away (a wrap onto a backup scale). Longer absences
   stay NaN: a value is never invented across a real gap. A broken curve's visit to another
   curve's line between two of its own absences is dropped first, and bridged over (`reading.visits`).
5. Identity. Every curve's runs have a typical height (a heavy pen or a busy curve leaves taller
   ones) and a typical stroke thickness (its pen), so the track is searched again with a cost for
   runs unlike each curve's own in both (`height_weight_styles`): where the net's style names leave
   two lines ambiguous, the runs decide. Curves of the same classes are interchangeable to every
   style cost, so a group of them whose pens differ (typical stroke thickness), or else whose
   typical run heights differ, is searched again with that cost among themselves (`reread_by_height`);
   for the others, where two meet, the one whose line before the contact continues into the
   other's line after it gets that line (`untangle`; where one's steep stroke crosses the other's line, the one
   whose jump continues the stroke: `untangle.hand_offs`), and after a stretch where both are absent, the one whose
   rows before it continue into the other's after it gets those (`reading.rejoin`). Then they are listed top first,
   except that lines stepping through an edge go to curves with a backup scale (`reading.alike_order`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Hashable, Sequence

import numpy as np

from veernet_pipeline.config import ExtractParams
from veernet_pipeline.io.classes import NUM_CLASSES
from veernet_pipeline.reading.alike_order import alike_order
from veernet_pipeline.reading.candidates import BROKEN_CLASSES, STYLE_CLASSES, Candidates, find_candidates
from veernet_pipeline.reading.ghosts import JointSteps, joint_steps, read_jointly
from veernet_pipeline.reading.paths import emissions, give_way, viterbi_single
from veernet_pipeline.reading.rejoin import rejoin
from veernet_pipeline.reading.rows import refine_rows
from veernet_pipeline.reading.run_heights import (
    alike_measure,
    height_emission,
    track_run_emission,
)
from veernet_pipeline.reading.untangle import alike_pairs, hand_offs, untangle
from veernet_pipeline.reading.visits import gap_visits


def default_classes(n_channels: int) -> list[tuple[int, ...]]:
    """The curves a map holds when nobody says: one for a binary map (channel 1 is ink).

    Raises:
        ValueError: a style-class map needs the classes per curve (from the sidecar or `detect_styles`).
    """
    if n_channels == 2:
        return [(1,)]
    raise ValueError(f"probabilities with {n_channels} channels need the classes of each curve to read "
                     "(reading.styles.curve_classes of the sidecar's styles, or reading.styles.detect_styles)")


def trace_curves(
    probs: np.ndarray, params: ExtractParams, classes: Sequence[Sequence[int]] | None = None,
    rgb: np.ndarray | None = None, colours: Sequence[str | None] = (), wraps: Sequence[bool] = (),
) -> tuple[np.ndarray, np.ndarray]:
    """Rows and confidences of every requested curve along the best paths.

    Args:
        probs: class probabilities: the style classes of `io.classes` (C = 7) or a binary map (C = 2).
        params: path-search knobs (params.yaml `extract:`).
        classes: per curve, the channels that are its evidence; default one curve for a binary map.
        rgb: a colour print on the map's grid, whose pens `colours` names per curve (None each where not named):
            a curve's evidence is then its classes' ink in its pen's colour (`reading.colour`), and curves of
            one style but different pens are not drawn alike. None, or no pen named: by style alone.
        wraps: per curve, whether it has a backup scale: its path may leave one edge and re-enter at the other
            (`paths.transitions(wrap=True)`). Empty: none has.

    Returns:
        `(rows, confidence)`: subpixel rows (pixel centre at row + 0.5), NaN where a curve is
        absent for more than `max_gap` columns; confidence = the curve's share x peak probability
        of the run it reads on the path, divided by the number of curves reading that run
        (`run_holders`), 0 where the curve was absent or bridged.

    Shape:
        probs: (C, H, W); rgb: (H, W, 3) uint8. rows, confidence: (K, W), K = len(classes).
    """
    probs = np.asarray(probs)
    if probs.ndim != 3 or probs.shape[0] not in (2, NUM_CLASSES):
        raise ValueError(f"probs must be (C, H, W) with C = {NUM_CLASSES} (io.classes) or 2 (binary), "
                         f"got {probs.shape}")
    classes = [tuple(c) for c in (default_classes(probs.shape[0]) if classes is None else classes)]
    height, width = probs.shape[1:]
    out_rows = np.full((len(classes), width), np.nan)
    confidence = np.zeros((len(classes), width))
    if not classes:
        return out_rows, confidence
    colours = tuple(colours) or (None,) * len(classes)
    kinds = list(zip(classes, colours, strict=True))  # curves of one kind are drawn alike: nothing tells them apart
    wrap = np.array(tuple(wraps) or (False,) * len(classes), dtype=bool)
    if wrap.shape != (len(classes),):
        raise ValueError(f"wraps names {wrap.size} curves, classes {len(classes)}: give one flag per curve")
    # Every line style is curve ink, whichever the sidecar names (`candidates.STYLE_CLASSES`).
    ink_classes = STYLE_CLASSES if probs.shape[0] == NUM_CLASSES else None
    cands = find_candidates(probs, classes, params.max_candidates, params.min_confidence, rgb, colours, ink_classes)
    # Both searches share the costs: the second only adds the run-height term for curves drawn alike.
    # The joint steps (ghost runs) are built on first use: a track whose curves are all read alone needs none.
    emission = emissions(cands, params)
    steps = functools.cache(lambda: joint_steps(cands, params, height, bool(wrap.any())))
    states = read_states(cands, classes, params, height, emission, steps, wrap)
    if params.height_weight_styles > 0 and len(classes) > 1:
        extra = track_run_emission(cands, states, params.height_weight_styles)
        if extra.any():
            emission = emission + extra
            states = read_states(cands, classes, params, height, emission, steps, wrap)
    typical = reread_by_height(cands, classes, kinds, params, emission, steps, states, wrap)
    m = params.max_candidates
    holders = run_holders(states, m)
    for k in range(len(classes)):
        cols = np.nonzero(states[k] < m)[0]
        confidence[k, cols] = (cands.share[k, cols, states[k, cols]] * cands.peak[cols, states[k, cols]]
                               / holders[k, cols])
        out_rows[k] = refine_rows(cands, k, states[k], height if wrap[k] else None)
    broken = BROKEN_CLASSES if probs.shape[0] == NUM_CLASSES else frozenset()
    for k in range(len(classes)):
        # A broken curve alone in its kind does not visit another curve's line inside its own gaps (`reading.visits`).
        if set(classes[k]) <= broken and kinds.count(kinds[k]) == 1:
            visits = gap_visits(out_rows[k], states[k], holders[k], m, params.max_gap, height if wrap[k] else None)
            out_rows[k, visits], confidence[k, visits] = np.nan, 0.0
        out_rows[k] = _bridge(out_rows[k], params.max_gap, height / 2)
    # Across joint absences first, then at contacts: each swaps whole tails, so neither undoes the other.
    pairs = alike_pairs(kinds, typical)
    rejoin(out_rows, confidence, pairs)
    untangle(out_rows, confidence, pairs)
    hand_offs(out_rows, confidence, pairs)
    order = alike_order(out_rows, kinds, wrap, height, params.max_gap)
    return out_rows[order], confidence[order]


def run_holders(states: np.ndarray, absent: int) -> np.ndarray:
    """How many curves read each curve's run in each column (1 where it reads a run alone, 0 where absent).

    A run two curves read is one line at most: where curves cross it is both for a column or two,
    but where one rides its neighbour (its own ink hidden or missed, read as the other's line) it is
    a copy. Confidence divides by this, so such stretches fall below `infer.low_confidence` and the
    review queue sees them (benchmarks/confidence.py, 47 val logs: 1 - confidence ranks misread
    columns at AUROC 0.644 against 0.635 undivided, curves drawn alike 0.595 against 0.563).

    Shape:
        states: (K, W), `absent` where a curve is absent. Returns (K, W) int64.
    """
    present = states != absent
    same = (states[:, None] == states[None]) & present[:, None] & present[None]
    return same.sum(axis=1)


def curve_groups(classes: Sequence[tuple[int, ...]]) -> list[list[int]]:
    """Curves linked by shared classes (connected components), each group in curve order, by first curve."""
    parent = list(range(len(classes)))

    def root(i: int) -> int:
        while parent[i] != i:
            i = parent[i]
        return i

    for a in range(len(classes)):
        for b in range(a + 1, len(classes)):
            if set(classes[a]) & set(classes[b]):
                parent[root(b)] = root(a)
    groups: dict[int, list[int]] = {}
    for k in range(len(classes)):
        groups.setdefault(root(k), []).append(k)
    return list(groups.values())


def read_states(cands: Candidates, classes: Sequence[tuple[int, ...]], params: ExtractParams, height: int,
                emission: np.ndarray, steps: Callable[[], JointSteps], wrap: np.ndarray) -> np.ndarray:
    """The state (candidate index, M = absent) of every curve in every column.

    Curves read alone skip their gaps in place (`paths.viterbi_single`); groups of the same size are read in
    one batched joint pass, keeping their gaps' places on ghost runs (`ghosts.read_jointly`). Then curves read
    alone that landed on another curve's runs give way (`paths.give_way`).

    Args:
        steps: gives the joint searches' steps (`ghosts.joint_steps`), called only if a group is read jointly.
        wrap: which curves have a backup scale (cyclic moves, `paths.transitions(wrap=True)`).

    Shape:
        emission: (K, W, M+1) (`paths.emissions`); wrap: (K,) bool. Returns (K, W) int64.
    """
    states = np.empty(emission.shape[:2], dtype=np.int64)
    by_size: dict[int, list[list[int]]] = {}
    for group in curve_groups(classes):
        by_size.setdefault(len(group), []).append(group)
    for size, groups in by_size.items():
        if size == 1:
            singles = [group[0] for group in groups]
            states[singles] = viterbi_single(emission[singles], cands, params, height, wrap[singles])
            continue
        found = read_jointly(np.stack([emission[group] for group in groups]), steps(), params,
                             np.stack([wrap[group] for group in groups]))
        for group, group_states in zip(groups, found, strict=True):
            states[group] = group_states
    return give_way(emission, states, [group[0] for group in by_size.get(1, [])], cands, params, height, wrap)


def reread_by_height(cands: Candidates, classes: Sequence[tuple[int, ...]], kinds: Sequence[Hashable],
                     params: ExtractParams, emission: np.ndarray, steps: Callable[[], JointSteps],
                     states: np.ndarray, wrap: np.ndarray) -> np.ndarray:
    """Read every group of curves drawn alike (one kind) again, each now charged for runs unlike its own.

    The first reading (`states`) gives each curve its typical stroke thickness, or its typical run
    height where the thicknesses do not tell every two curves of the group apart
    (`run_heights.alike_measure`); a group whose curves differ in it is searched again with
    `height_emission` added, `height_weight` per px of misfit. Changes `states` in place; `steps`
    and `wrap` as for `read_states`.

    Shape:
        emission: (K, W, M+1), the first search's (`paths.emissions`); states: (K, W); wrap: (K,). Returns (K,) typical
        thicknesses or heights in px, NaN where not estimated.
    """
    typical = np.full(len(classes), np.nan)
    if params.height_weight <= 0:
        return typical
    for group in curve_groups(classes):
        if len(group) < 2 or len({kinds[k] for k in group}) > 1:
            continue
        heights, typical[group] = alike_measure(cands, states[group])
        extra = height_emission(heights, typical[group], params.height_weight)
        if not extra.any():
            continue
        states[group] = read_jointly((emission[group] + extra)[None], steps(), params, wrap[group][None])[0]
    return typical


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
