"""Identity between curves drawn alike where they meet: the one whose line continues into the other's gets it.

Two curves of the same classes cost the same on either branch after they meet, so the path search
(`reading.extract`) cannot tell a crossing from a bounce; `untangle` decides each contact by
which curve jumped onto the other's line where one rode it through its own pen gap (`jumped`),
else by the curves' slopes either side (`crossed`). `alike_pairs` says which pairs only their
lines can settle (also for `reading.rejoin`, which decides across a stretch where both are absent).
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
