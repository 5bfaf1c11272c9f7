"""Printed depth numbers in a column band: the rows where a depth column's numbers sit.

Numbers are clusters of glyph-sized ink blobs on one text line, of one text height and lined up
on their left edges, centres or right edges; a depth column's numbers also come at regular rows
(one of any three in a row equally spaced, within 15 %) and run a quarter of the log at least, which
a few lines of text in one box do not.
"""

from __future__ import annotations

import numpy as np
from scipy import ndimage

MIN_LABELS = 3
LABEL_REACH = 0.25  # share of the examined rows the labels must span
ALIGN_PX = 6  # how well the numbers of a depth column line up


def depth_labels(residual: np.ndarray, rows: np.ndarray) -> tuple[list[int], tuple[int, int]]:
    """Rows of printed numbers in a column band: clusters of glyph-sized ink blobs on one text line.

    Returns:
        The label centre rows (regular ones only) and the column span the labels cover (band coordinates).

    Shape:
        residual: (H, w) bool; rows: (H,) bool, where to look.
    """
    labelled, _ = ndimage.label(residual & rows[:, None])
    found = []
    for sl in ndimage.find_objects(labelled):
        if sl is None:
            continue
        h, w = sl[0].stop - sl[0].start, sl[1].stop - sl[1].start
        if 5 <= h <= 90 and 2 <= w <= 120 and h * w >= 12:
            found.append((sl[0].start, sl[0].stop, sl[1].start, sl[1].stop))
    found.sort()
    clusters: list[list[int]] = []  # [top, bottom, left, right, count]
    for top, bottom, left, right in found:
        if clusters and top <= clusters[-1][1] + 2:
            c = clusters[-1]
            c[1], c[2], c[3], c[4] = max(c[1], bottom), min(c[2], left), max(c[3], right), c[4] + 1
        else:
            clusters.append([top, bottom, left, right, 1])
    text = _aligned([c for c in clusters if c[4] >= 2 and c[1] - c[0] <= 100 and c[3] - c[2] >= 10])
    centres = np.array([(c[0] + c[1]) // 2 for c in text])
    if centres.size < MIN_LABELS:
        return [], (0, 0)
    # Regular: one of three labels in a row spaced equally (within 15 %). Locally, since the sections of
    # one page may have other depth scales.
    gaps = np.diff(centres).astype(np.float64)
    even = np.abs(gaps[1:] - gaps[:-1]) <= 0.15 * np.maximum(gaps[1:], gaps[:-1])
    regular = np.zeros(centres.size, dtype=bool)
    for offset in range(3):
        regular[offset:offset + even.size] |= even
    kept = [c for c, ok in zip(text, regular, strict=True) if ok]
    # Depth numbers run the length of the log; a few lines of text in one box do not.
    if len(kept) < MIN_LABELS or kept[-1][1] - kept[0][0] < LABEL_REACH * rows.sum():
        return [], (0, 0)
    return [(c[0] + c[1]) // 2 for c in kept], (min(c[2] for c in kept), max(c[3] for c in kept))


def _aligned(clusters: list[list[int]]) -> list[list[int]]:
    """The clusters printed like one column of numbers: of one text height (within a third) and lined up
    on their left edges, centres or right edges (within `ALIGN_PX`), whichever holds the most."""
    if not clusters:
        return []
    heights = np.array([c[1] - c[0] for c in clusters], dtype=np.float64)
    same_font = np.abs(np.log(heights / np.median(heights))) <= np.log(4 / 3)
    best: np.ndarray = np.zeros(len(clusters), dtype=bool)
    for x in (np.array([c[2] for c in clusters]), np.array([(c[2] + c[3]) / 2 for c in clusters]),
              np.array([c[3] for c in clusters])):
        lined = same_font & (np.abs(x - np.median(x[same_font] if same_font.any() else x)) <= ALIGN_PX)
        if lined.sum() > best.sum():
            best = lined
    return [c for c, ok in zip(clusters, best, strict=True) if ok]
