"""Curves drawn alike keep their sides across a stretch where both are absent: a banner, a blank, a pen lift.

Two curves of the same classes cost the same on either side after a joint absence longer than
the bridged gaps, so the path search comes out of it with their identities a coin toss: read from
the true mask of val log 000024, two solid curves 100 px apart that never touch traded places
after a blank of 380 columns (docs/accuracy.md). A reader goes by where each line was: a log's
values before a banner continue after it. So the pairing of the rows before the stretch with the
rows after it that fits best is kept.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

# Read columns each side of a joint absence whose median row stands for the curve there.
REJOIN_COLUMNS = 8
# The tails are swapped only when the other pairing misfits by less than this share of the pairing as read.
REJOIN_MARGIN = 0.5


def joint_absences(a: np.ndarray, b: np.ndarray) -> list[tuple[int, int]]:
    """Interior stretches `[first, last]` where both rows are NaN, neither touching an end of the track.

    Shape:
        a, b: (W,) rows.
    """
    both = ~np.isfinite(a) & ~np.isfinite(b)
    edges = np.diff(np.concatenate([[0], both.astype(np.int8), [0]]))
    starts, stops = np.nonzero(edges == 1)[0], np.nonzero(edges == -1)[0] - 1
    return [(int(s), int(e)) for s, e in zip(starts, stops, strict=True) if s > 0 and e < a.shape[0] - 1]


def side_rows(rows: np.ndarray, first: int, last: int) -> tuple[float, float]:
    """Median of a curve's last `REJOIN_COLUMNS` read rows before `first` and first ones after `last` (NaN if none).

    Shape:
        rows: (W,).
    """
    before = rows[:first][np.isfinite(rows[:first])][-REJOIN_COLUMNS:]
    after = rows[last + 1:][np.isfinite(rows[last + 1:])][:REJOIN_COLUMNS]
    return (float(np.median(before)) if before.size else np.nan, float(np.median(after)) if after.size else np.nan)


def rejoin(rows: np.ndarray, confidence: np.ndarray, pairs: Sequence[tuple[int, int]]) -> None:
    """Swap two curves' tails after a joint absence where each one's rows before it continue into the other's after.

    For each pair, left to right over its joint absences: with `B` the rows before and `A` those
    after (`side_rows`), the tails are swapped when |B_a - A_b| + |B_b - A_a| is less than
    `REJOIN_MARGIN` of |B_a - A_a| + |B_b - A_b|. A stretch with a curve unread on one side is left
    as it is. Swapping both tails keeps the sides of every later absence together, so one pass holds.

    Shape:
        rows, confidence: (K, W), changed in place.
    """
    for a, b in pairs:
        for first, last in joint_absences(rows[a], rows[b]):
            (before_a, after_a), (before_b, after_b) = side_rows(rows[a], first, last), side_rows(rows[b], first, last)
            as_read = abs(before_a - after_a) + abs(before_b - after_b)
            crossed = abs(before_a - after_b) + abs(before_b - after_a)
            if crossed < REJOIN_MARGIN * as_read:  # False where a side is NaN
                swap_tails(rows, confidence, a, b, last + 1)


def swap_tails(rows: np.ndarray, confidence: np.ndarray, a: int, b: int, start: int) -> None:
    """Exchange curves a and b's rows and confidences from column `start` on, in place. Shape: (K, W) both."""
    for array in (rows, confidence):
        array[[a, b], start:] = array[[b, a], start:]
