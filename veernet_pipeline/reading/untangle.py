"""Identity between curves drawn alike where they meet: the one whose line continues into the other's gets it.

Two curves of the same classes cost the same on either branch after they meet, so the path search
(`reading.extract`) cannot tell a crossing from a bounce; `untangle` decides each contact by
which curve jumped onto the other's line where one rode it through its own pen gap (`jumped`),
else by the curves' slopes either side (`crossed`). Where one crosses the other's line in a steep
stroke they need not come near each other at all, and `hand_offs` decides (`handed_off`).
`alike_pairs` says which pairs only their lines can settle (also for `reading.rejoin`, which
decides across a stretch where both are absent).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence

import numpy as np

from veernet_pipeline.reading.rejoin import swap_tails
from veernet_pipeline.reading.run_heights import MIN_HEIGHT_DIFFERENCE

# Columns each side of a contact whose lines decide which curve continues where (`untangle`);
# a swap must more than halve the misfit, so a touch that is not a crossing keeps the path's identities.
UNTANGLE_COLUMNS = 12
UNTANGLE_MARGIN = 0.5
CONTACT_PX = 2.0  # two read rows this close (gaps bridged) meet: a crossing, or a touch
# A row that moves more than this from one column to the next, into or out of a contact, jumped there (`jumped`).
STEADY_PX = 8.0
# A hand-off (`hand_offs`): columns where either curve jumps, joined across breaks of up to this many columns; and
# the read columns each side whose median row stands for where a curve is before it and after it.
HANDOFF_JOIN = 6
HANDOFF_SIDE = 6


def alike_pairs(classes: Sequence[Hashable], typical: np.ndarray) -> list[tuple[int, int]]:
    """Pairs of curves drawn alike (identical classes, or kinds) whose identities only their lines can settle.

    Curves whose run heights differ were kept apart by them in the search (`reread_by_height`): lines do not
    overrule it.

    Shape:
        typical: (K,) run heights from `reread_by_height`, NaN where not estimated.
    """
    return [(a, b) for a in range(len(classes)) for b in range(a + 1, len(classes))
            if classes[a] == classes[b] and not abs(typical[a] - typical[b]) >= MIN_HEIGHT_DIFFERENCE]


def untangle(rows: np.ndarray, confidence: np.ndarray, pairs: Sequence[tuple[int, int]]) -> None:
    """Swap two same-class curves' tails after a contact where each one's line continues into the other's.

    Two curves of the same classes cost the same on either branch after they meet, so the path
    search cannot tell a crossing from a bounce. A reader can: a line continues straight through a
    crossing. For each contact (columns where the two read rows, gaps bridged, lie within
    `CONTACT_PX`, with breaks shorter than half `UNTANGLE_COLUMNS` closed), left to right, each
    curve's line over the `UNTANGLE_COLUMNS` columns before it is extended over the same number
    after it; when the line that fits best continues into the other curve's rows (`crossed`),
    everything after the contact is swapped. Where one of the two jumped onto the other's line and
    one jumped off it (`jumped`), that decides instead.

    Shape:
        rows, confidence: (K, W), changed in place; pairs: the curves drawn alike (`alike_pairs`).
    """
    width = rows.shape[1]
    start = 0
    while pairs and start < width:
        found = None
        for a, b in pairs:
            with np.errstate(invalid="ignore"):
                near = np.abs(rows[a] - rows[b]) <= CONTACT_PX
            touch = np.nonzero(near[start:])[0] + start
            if touch.size and (found is None or touch[0] < found[0]):
                # One contact runs on while the two come back within CONTACT_PX inside UNTANGLE_COLUMNS / 2.
                breaks = np.nonzero(np.diff(touch) > UNTANGLE_COLUMNS // 2)[0]
                found = (int(touch[0]), int(touch[breaks[0]] if breaks.size else touch[-1]), a, b)
        if found is None:
            return
        first, last, a, b = found
        swap = jumped(rows, a, b, first, last)
        if swap is None:
            swap = crossed(rows, a, b, first, last)
        if swap:
            swap_tails(rows, confidence, a, b, last + 1)
        start = last + 1


def jumped(rows: np.ndarray, a: int, b: int, first: int, last: int) -> bool | None:
    """Whether the curve that jumped onto the line at columns `first..last` is not the one that jumps off it.

    During its own pen gap a curve can ride the other's line: the search reads a shared run for less
    than an absence. It arrives there by a jump across paper and leaves by one, while the curve
    whose line it is runs into the contact and out of it steadily; after the ride the search may
    send either one off. So when exactly one of the two moves more than `STEADY_PX` rows from the
    column before the contact to its first (an absent row counts as a jump), and exactly one from
    its last column to the next, the tails swap if those two are not the same curve. A crossing or
    a touch, where both run steadily, or a side where both jump, says nothing: None, and the slope
    rule (`crossed`) decides.
    """
    if first == 0 or last + 1 >= rows.shape[1]:
        return None
    with np.errstate(invalid="ignore"):
        into = np.abs(rows[[a, b], first] - rows[[a, b], first - 1]) <= STEADY_PX  # NaN compares False: a jump
        out_of = np.abs(rows[[a, b], last + 1] - rows[[a, b], last]) <= STEADY_PX
    if into[0] == into[1] or out_of[0] == out_of[1]:
        return None
    return bool(into[0] != out_of[0])


def crossed(rows: np.ndarray, a: int, b: int, first: int, last: int) -> bool:
    """Whether curves a and b's directions before columns `first..last` continue into each other's after them.

    Each curve's slope is fitted (least squares) over the `UNTANGLE_COLUMNS` columns before the
    contact and each branch's over as many after it. The tails are swapped when pairing the
    slopes the other way round misfits by less than `UNTANGLE_MARGIN` of the pairing as read: a
    line keeps its direction through a crossing, while at a touch the two pairings misfit alike
    and the path search's reading stands.
    """
    width = rows.shape[1]
    windows = (np.arange(max(0, first - UNTANGLE_COLUMNS), first),
               np.arange(last + 1, min(width, last + 1 + UNTANGLE_COLUMNS)))
    slopes = {}
    for side, columns in enumerate(windows):
        for k in (a, b):
            seen = columns[np.isfinite(rows[k, columns])]
            if seen.size < 3:
                return False
            slopes[side, k] = np.polyfit(seen, rows[k, seen], 1)[0]
    as_read = abs(slopes[0, a] - slopes[1, a]) + abs(slopes[0, b] - slopes[1, b])
    crossed = abs(slopes[0, a] - slopes[1, b]) + abs(slopes[0, b] - slopes[1, a])
    return crossed < UNTANGLE_MARGIN * as_read


def hand_offs(rows: np.ndarray, confidence: np.ndarray, pairs: Sequence[tuple[int, int]]) -> None:
    """Swap two same-class curves' tails where one left its line by a jump just as the other landed on it.

    Where one curve's steep stroke crosses the other's line, the stroke's run in the crossing column
    holds both, and the search pays `crossing_cost` for two curves on one run; handing over costs it
    nothing more, since the jumps add up to the same rows: the other curve leaves its line up the rest
    of the stroke while the first stops on that line (val log 000441: a solid curve's excursion from
    row 401 to 159 read as 401 -> 258 and, for the curve at 260, 260 -> 159; the two stayed traded for
    3,100 columns). A reader takes the one stroke. So, left to right over each pair's jumps (steps of
    more than `STEADY_PX` between read columns, joined across `HANDOFF_JOIN` columns), where both
    curves moved but one would have stayed had they traded lines, at the same rows moved in all
    (`handed_off`), the tails are swapped at the column inside the jumps that leaves the fewest rows
    stepped (`least_steps_cut`).

    Shape:
        rows, confidence: (K, W), changed in place; pairs: the curves drawn alike (`alike_pairs`).
    """
    for a, b in pairs:
        with np.errstate(invalid="ignore"):  # a step from or to an absent column is no jump
            steps = np.abs(np.diff(rows[[a, b]], axis=1)) > STEADY_PX
        jumps = np.nonzero(steps.any(axis=0))[0] + 1  # columns whose row jumped from the one before
        # Trading tails at a column inside one window leaves every later step the same (both rows move together), so
        # the windows are found once.
        windows = np.split(jumps, np.nonzero(np.diff(jumps) > HANDOFF_JOIN)[0] + 1) if jumps.size else []
        for first, last in ((int(window[0]), int(window[-1])) for window in windows):
            if handed_off(rows, a, b, first, last):
                swap_tails(rows, confidence, a, b, least_steps_cut(rows, a, b, first, last))


def side_level(rows: np.ndarray, columns: np.ndarray) -> float:
    """Median of a curve's read rows in `columns` (inside the track); NaN unless more than half of them are read.

    Shape:
        rows: (W,).
    """
    seen = rows[columns[(columns >= 0) & (columns < rows.shape[0])]]
    seen = seen[np.isfinite(seen)]
    return float(np.median(seen)) if seen.size > HANDOFF_SIDE // 2 else float("nan")


def handed_off(rows: np.ndarray, a: int, b: int, first: int, last: int) -> bool:
    """Whether curves a and b handed a line over in their jumps at columns `first..last`.

    Each curve's level before (`HANDOFF_SIDE` columns up to `first`) and after (from `last` on): as read, both moved
    more than `STEADY_PX`; with the tails traded exactly one would move, and the rows moved would add up the same
    (within `STEADY_PX`): one stroke through the other's line. Where trading saves rows instead (both read curves
    jumped across each other's lines), the tails may have been traded before these jumps: they are left as read
    (on val log 000370 such a rule traded a pair back the wrong way).
    """
    before = np.array([side_level(rows[k], np.arange(first - HANDOFF_SIDE, first)) for k in (a, b)])
    after = np.array([side_level(rows[k], np.arange(last, last + HANDOFF_SIDE)) for k in (a, b)])
    if not np.all(np.isfinite(np.r_[before, after])):
        return False
    as_read, traded = np.abs(after - before), np.abs(after[::-1] - before)
    return bool(np.all(as_read > STEADY_PX) and np.sum(traded > STEADY_PX) == 1
                and abs(traded.sum() - as_read.sum()) <= STEADY_PX)


def least_steps_cut(rows: np.ndarray, a: int, b: int, first: int, last: int) -> int:
    """The column in `first..last` from which trading a and b's rows leaves the fewest rows stepped across them.

    Inside a stroke the two readings zigzag between its run's rows, so where the trade starts decides how much of
    that is left.
    """
    lo, hi = max(0, first - 1), min(rows.shape[1], last + 2)
    costs = []
    for cut in range(first, last + 1):
        trial = rows[[a, b], lo:hi].copy()
        trial[:, cut - lo:] = trial[::-1, cut - lo:]
        costs.append(np.nansum(np.abs(np.diff(trial, axis=1))))
    return first + int(np.argmin(costs))
