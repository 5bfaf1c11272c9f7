"""Which mnemonic each line of curves drawn alike is written under: a backup scale's line, then the higher first.

Curves drawn alike (the same style and pen, `ReadingPlan.kinds`) look the same to every cost of the
search, so where they cross or both pause the search's own labels are arbitrary. The reading
therefore states a rule an operator can check against the sidecar: the higher line (lower mean
row) is the first such curve (`same_class_order`).

One thing the picture does tell: a curve with a backup scale runs out through one edge of the track
and in at the other, which a curve without one never does. So where a group drawn alike mixes
curves with and without a backup scale, and as many lines as there are such curves each step
through an edge more often than every other line of the group (`through_edge_steps`), the curves
with a backup scale take those lines; each part is then listed the higher line first. Where the
counts do not separate so (no line steps, or a misread line steps as often), the higher line comes
first as before. Without the rule the line that wrapped was written under whichever curve was
higher, often one without a backup scale, so its values jumped a track width at every wrap
(docs/accuracy.md, "Lines through an edge").
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

import numpy as np

# A step through an edge leaves within this share of the track of one edge and is next read within it of the other,
# as the renderer draws a wrap: the line stops at the edge it leaves and resumes at the opposite one.
EDGE = 0.2


def alike_groups(classes: Sequence[Sequence[Hashable]]) -> list[list[int]]:
    """Curves with identical classes (or kinds: classes and pen, `ReadingPlan.kinds`), each group in curve order
    (single curves are groups of one): curves in a group of two or more are drawn alike."""
    groups: dict[tuple[Hashable, ...], list[int]] = {}
    for k, curve in enumerate(classes):
        groups.setdefault(tuple(curve), []).append(k)
    return list(groups.values())


def same_class_order(rows: np.ndarray, classes: Sequence[Hashable]) -> np.ndarray:
    """Curve order in which curves of identical classes (or kinds) are sorted by mean row, top first; others stay.

    A curve never read sorts last.

    Shape:
        rows: (K, W). Returns (K,) int64, a permutation.
    """
    order = np.arange(len(classes))
    for kind in dict.fromkeys(classes):
        slots = [k for k in range(len(classes)) if classes[k] == kind]
        means = [np.nanmean(rows[k]) if np.isfinite(rows[k]).any() else np.inf for k in slots]
        order[slots] = [slots[i] for i in np.argsort(means, kind="stable")]
    return order


def through_edge_steps(rows: np.ndarray, height: int, max_gap: int) -> int:
    """How often a line steps through an edge of the track: from within `EDGE` of one edge to within it of the
    other between two read columns at most `max_gap` + 1 apart (a wrap the bridging left open).

    Shape:
        rows: (W,) subpixel rows, NaN where not read.
    """
    seen = np.nonzero(np.isfinite(rows))[0]
    if seen.size < 2:
        return 0
    fraction = (rows[seen] + 0.5) / height
    before, after = fraction[:-1], fraction[1:]
    near = np.diff(seen) <= max_gap + 1
    crossing = ((before > 1 - EDGE) & (after < EDGE)) | ((before < EDGE) & (after > 1 - EDGE))
    return int(np.count_nonzero(near & crossing))


def alike_order(rows: np.ndarray, kinds: Sequence[Hashable], wraps: Sequence[bool], height: int,
                max_gap: int) -> np.ndarray:
    """Curve order for the lines of curves drawn alike: lines through an edge to curves with a backup scale,
    then the higher line first (module docstring).

    Args:
        rows: the lines read, one per curve, in the search's order.
        kinds: what tells each curve apart (classes and pen); equal kinds are drawn alike.
        wraps: per curve, whether the sidecar gives it a backup scale.
        height: track height in px.
        max_gap: the longest absence bridged (`extract.max_gap`).

    Returns:
        A permutation: curve k is written with line `order[k]`.

    Shape:
        rows: (K, W). Returns (K,) int64.
    """
    order = same_class_order(rows, kinds)
    for kind in dict.fromkeys(kinds):
        slots = [k for k in range(len(kinds)) if kinds[k] == kind]
        backup = [k for k in slots if wraps[k]]
        if not backup or len(backup) == len(slots):
            continue
        lines = list(order[slots])  # the group's lines, the higher first
        steps = {line: through_edge_steps(rows[line], height, max_gap) for line in lines}
        ranked = sorted(lines, key=lambda line: -steps[line])  # stable: the higher first among equals
        wrapped = set(ranked[:len(backup)])
        if min(steps[line] for line in wrapped) <= max(steps[line] for line in ranked[len(backup):]):
            continue  # no line steps through an edge more often than the rest: nothing tells them apart
        order[backup] = [line for line in lines if line in wrapped]
        order[[k for k in slots if not wraps[k]]] = [line for line in lines if line not in wrapped]
    return order
