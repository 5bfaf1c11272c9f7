"""Which page rows are log, once the tracks are known: log sections and the bands between them.

A row is log where the tracks' border rules run (`RULE_SHARE` of the track edges carry vertical
rule ink, averaged over `SMOOTH_ROWS` rows) and, on a page with a grid, where the grid runs: a
track's grid runs between two of its grid lines (rows where line ink spans `LINE_SPAN` of the
track) no farther apart than `GRID_GAP` times its usual line spacing, and at least half the
gridded tracks must agree. Short breaks are closed, short log runs dropped; each log run is a
section, grown to where the rules stop (at most one grid gap).

The rest is not log. Each band is cut to its inked rows; the rows right above a section where the
track rules still run (boxes over the tracks) are its track headers; what lies before the first
section is the header, after the last the footer, between two sections a banner.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import ndimage

from veernet_pipeline.pages.features import PageFeatures

RULE_SHARE = 0.6
RELIABLE_RULE = 0.85  # an edge votes when its rule runs through this share of the gridded rows
SMOOTH_ROWS = 15
LINE_SPAN = 0.7
GRID_GAP = 2.1
MIN_GRID_LINES = 5
PROBE = (3, 9)  # columns beyond a track's edge looked at for a line running on
MIN_SECTION_ROWS = 150
TEXT_RUNS, TEXT_HEIGHT = 8, 6  # a row of text has this many ink runs per track, in a stack this tall
JOIN_SHARE, SHORT_GAP = 0.9, 60
MIN_BAND_ROWS = 20
INK_SHARE = 0.005  # a row with less ink than this across the tracks is blank (specks stay below it)
MIN_SKIP_ROWS = 8


@dataclass(frozen=True)
class Band:
    kind: str  # "section" or a skip kind: header, footer, banner, track_header
    top: int
    bottom: int


def _runs(flags: np.ndarray) -> list[tuple[int, int]]:
    padded = np.concatenate(([False], flags, [False]))
    edges = np.flatnonzero(np.diff(padded.astype(np.int8)))
    return list(zip(edges[0::2].tolist(), edges[1::2].tolist(), strict=True))


def rule_presence(features: PageFeatures, tracks: list[tuple[int, int]],
                  gridded: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Share of the track edges with vertical rule ink in each row, smoothed over `SMOOTH_ROWS`: over every edge,
    and over the reliable edges only. Shape: two (H,).

    Reliable edges are those whose rule runs through `RELIABLE_RULE` of the gridded rows: a border printed
    so light that the scan lost it says nothing about where the log stops. With no reliable edge the
    second is all ones.
    """
    edges = [features.vertical[:, a:a + 3].any(axis=1) for a, _ in tracks]
    edges += [features.vertical[:, max(b - 3, 0):b].any(axis=1) for _, b in tracks]
    every = ndimage.uniform_filter1d(np.mean(edges, axis=0), SMOOTH_ROWS)
    kept = [e for e in edges if e[gridded].mean() >= RELIABLE_RULE]
    if not kept:
        return every, np.ones(features.dark.shape[0])
    return every, ndimage.uniform_filter1d(np.mean(kept, axis=0), SMOOTH_ROWS)


def grid_rows(features: PageFeatures, tracks: list[tuple[int, int]]) -> tuple[np.ndarray, float]:
    """Rows inside a running grid (by the gridded tracks' vote), and the typical line spacing (0 without a grid)."""
    height, width = features.dark.shape
    votes, voters, spacings = np.zeros(height), 0, []
    for a, b in tracks:
        line = features.horizontal[:, a:b].mean(axis=1) >= LINE_SPAN
        # A track's grid line stops at its borders; a line that runs on into a gap or the depth column
        # beside the track belongs to a box or table drawn across the page.
        for lo, hi in ((a - PROBE[1], a - PROBE[0]), (b + PROBE[0], b + PROBE[1])):
            beside = slice(max(lo, 0), min(hi, width))
            if beside.stop - beside.start > 0 and not any(x < beside.stop and beside.start < y for x, y in tracks):
                line &= features.horizontal[:, beside].mean(axis=1) < 0.5
        centres = np.array([(s + e - 1) / 2 for s, e in _runs(line)])
        if centres.size < 10:
            continue
        gaps = np.diff(centres)
        spacing = float(np.median(gaps))
        spacings.append(spacing)
        inside = np.zeros(height + 1)
        # A grid is a run of at least MIN_GRID_LINES lines at most GRID_GAP spacings apart; the few
        # lines of a box over the tracks (a track header, a banner's frame) are not.
        for first, last in _runs(gaps <= max(GRID_GAP * spacing, 12.0)):
            if last - first + 1 >= MIN_GRID_LINES:
                inside[int(np.floor(centres[first]))] += 1
                inside[int(np.ceil(centres[last])) + 1] -= 1
        votes += np.cumsum(inside)[:height] > 0
        voters += 1
    if voters == 0:
        return np.ones(height, dtype=bool), 0.0
    return votes >= voters / 2.0, float(np.median(spacings))


def log_like(features: PageFeatures, tracks: list[tuple[int, int]], rules: np.ndarray) -> np.ndarray:
    """Rows that look like log where the grid test cannot tell (a grid the scan broke up, rows near a section's
    edge): the track rules run, no text stands there, and most tracks hold other ink (curves) within
    `SMOOTH_ROWS` rows. Shape: (H,) bool.

    Text is a row with `TEXT_RUNS` ink runs per track in a stack at least `TEXT_HEIGHT` rows tall (a grid
    line broken into dashes is a row or two).
    """
    runs = np.zeros(features.dark.shape[0], dtype=np.int64)
    curvy = []
    for a, b in tracks:
        ink = features.residual[:, a:b]
        runs += (np.diff(ink.view(np.int8), axis=1) == 1).sum(axis=1)
        curvy.append(ndimage.maximum_filter1d(ink.sum(axis=1) >= 2, SMOOTH_ROWS))
    text = np.zeros(runs.size, dtype=bool)
    for a, b in _runs(runs >= TEXT_RUNS * len(tracks)):
        if b - a >= TEXT_HEIGHT:
            text[a:b] = True
    return (rules >= RULE_SHARE) & ~ndimage.maximum_filter1d(text, SMOOTH_ROWS) & (np.mean(curvy, axis=0) >= 0.5)


def row_bands(features: PageFeatures, tracks: list[tuple[int, int]]) -> list[Band]:
    """Sections and skip bands, top to bottom (see the module docstring)."""
    height = features.dark.shape[0]
    gridded, spacing = grid_rows(features, tracks)
    boxed, rules = rule_presence(features, tracks, gridded)
    log = (rules >= RULE_SHARE) & gridded
    # Breaks shorter than one grid gap (a box over one track, a faded stretch) stay log.
    gap = int(max(GRID_GAP * spacing, 20))
    log = ndimage.binary_closing(np.pad(log, gap), np.ones(gap, dtype=bool))[gap:-gap]
    seeds = [(a, b) for a, b in _runs(log) if b - a >= MIN_SECTION_ROWS]
    sections = _grow(seeds, log_like(features, tracks, rules), rules)
    columns = slice(min(a for a, _ in tracks), max(b for _, b in tracks))
    inked = features.dark[:, columns].mean(axis=1) >= INK_SHARE
    bands: list[Band] = []
    edges = [0] + [x for s in sections for x in s] + [height]
    for i, (top, bottom) in enumerate(zip(edges[0::2], edges[1::2], strict=True)):
        bands += _skip_bands(top, bottom, inked, boxed, before_first=i == 0, after_last=i == len(sections))
        if i < len(sections):
            bands.append(Band("section", *sections[i]))
    return bands


def _grow(seeds: list[tuple[int, int]], like: np.ndarray, rules: np.ndarray) -> list[tuple[int, int]]:
    """Grow each grid-found section over the log-like rows next to it, and join two whose gap is all but
    log-like (`JOIN_SHARE` of its rows), or short (`SHORT_GAP` rows: a box of text in one track) with the track
    rules running through: the grid test misses rows near the edges and where a scan broke the grid."""
    joined: list[tuple[int, int]] = []
    for top, bottom in seeds:
        while top > 0 and like[top - 1]:
            top -= 1
        while bottom < like.size and like[bottom]:
            bottom += 1
        gap = slice(joined[-1][1], top) if joined else slice(0, 0)
        short = top - gap.start <= SHORT_GAP and bool(np.all(rules[gap] >= RULE_SHARE))
        if joined and (top <= joined[-1][1] or short or like[gap].mean() >= JOIN_SHARE):
            joined[-1] = (joined[-1][0], max(bottom, joined[-1][1]))
        else:
            joined.append((top, bottom))
    return joined


def _skip_bands(top: int, bottom: int, inked: np.ndarray, boxed: np.ndarray, before_first: bool,
                after_last: bool) -> list[Band]:
    out = []
    header_top = bottom
    if not after_last:  # boxes over the tracks right above the next section: their edges are on the track edges
        while header_top > top and boxed[header_top - 1] >= RULE_SHARE:
            header_top -= 1
        if bottom - header_top >= MIN_BAND_ROWS:
            out.append(Band("track_header", header_top, bottom))
        else:
            header_top = bottom
    rows = np.flatnonzero(inked[top:header_top])
    if rows.size and rows[-1] + 1 - rows[0] >= MIN_SKIP_ROWS:
        kind = "header" if before_first else "footer" if after_last else "banner"
        out.insert(0, Band(kind, top + int(rows[0]), top + int(rows[-1]) + 1))
    return out
