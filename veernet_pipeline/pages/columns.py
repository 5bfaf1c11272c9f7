"""Track and depth-column bounds across a page, from its deskewed features (`features`).

1. Boundaries: vertical rules (columns where `vertical` ink covers at least half the rows of the
   typical block) and the columns where horizontal grid lines start or end (a histogram of the
   ends of long runs of line ink: a grid line spans its track from border to border, so its ends
   pile up on the track edges, whatever the line weight).
2. Cells, the column ranges between neighbouring boundaries, are classed by what they hold: the
   depth column (printed numbers at regular rows, `numbers.depth_labels`, few rows with other
   ink), track (a grid, or other ink in at least `CURVE_ROWS` of the rows: curves), or gap.
3. Tracks are runs of track cells. A boundary inside a run splits it only where grid lines end
   on its left and start on its right (two tracks with grids of their own side by side; also a
   start a few pixels left of an end, where the two grids overrun their shared border) or where
   it is a rule much heavier than the run's value divisions that no grid line crosses; otherwise
   it is a value division.

A track's bounds are the outer edges of its border rules. Between two tracks sharing a double
rule the split is its middle.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import ndimage

from veernet_pipeline.pages.features import PageFeatures
from veernet_pipeline.pages.numbers import depth_labels

RULE_COVER = 0.5
DOTTED_RULE = 0.3
MAX_RULE_PX = 12  # wider "rules" are black borders or flags
MIN_GRID_RUN = 100  # px: the shortest line ink run counted as a track's grid line
MIN_FRAMED_TRACK_PX = 150
MIN_GRID_COVER = 0.003  # a cell is gridded where grid lines cover it in this share of the rows (one in 330)
# A column marks a boundary where at least this many grid lines start (end), and this share of the most any
# column has: a light grid's track has fewer lines reaching its edges than a heavy grid's.
MIN_END_COUNT, END_PEAK = 20, 0.05
MERGE_PX = 3
CROSSED_PX = 8
CURVE_ROWS = 0.25
CROSSED_ROWS = 0.02
DEPTH_MAX_PX = 400
SIDE_REACH_PX = 300  # how far beyond the outermost tracks a depth column is looked for


@dataclass(frozen=True)
class Boundary:
    start: int
    end: int
    rule_px: int  # thickness of the rule in it (0: a grid-line end without a rule)
    starts: bool  # grid lines start here (on its right)
    ends: bool  # grid lines end here (on its left)


@dataclass(frozen=True)
class Cell:
    left: int
    right: int
    kind: str  # "track", "depth" or "gap"
    labels: tuple[int, ...] = ()
    label_span: tuple[int, int] = (0, 0)  # columns the labels cover
    gridded: bool = False
    curve_rows: float = 0.0  # share of the examined rows with other ink (curves, text) in the cell


def _groups(flags: np.ndarray) -> list[tuple[int, int]]:
    padded = np.concatenate(([False], flags, [False]))
    edges = np.flatnonzero(np.diff(padded.astype(np.int8)))
    return list(zip(edges[0::2].tolist(), edges[1::2].tolist(), strict=True))


@dataclass(frozen=True)
class GridRuns:
    """Where the long runs of line ink (the tracks' grid lines) start, end and lie, per column.

    Shape:
        starts, ends: (W + 1,) int, runs starting at / ending just before each column.
        cover: (W,) float, the share of the examined rows in which a long run covers the column.
    """

    starts: np.ndarray
    ends: np.ndarray
    cover: np.ndarray


def grid_runs(features: PageFeatures, rows: np.ndarray) -> GridRuns:
    """The long runs of line ink in the examined `rows`. Shape: rows (H,) bool."""
    line = features.faint[rows]
    # Close one- and two-pixel breaks (a speck of paper, a thin white backing) without moving the ends.
    line = ndimage.minimum_filter1d(ndimage.maximum_filter1d(line.view(np.uint8), 3, axis=1), 3, axis=1)
    edges = np.diff(np.pad(line.astype(np.int8), ((0, 0), (1, 1))), axis=1)
    _, c_start = np.nonzero(edges == 1)
    _, c_end = np.nonzero(edges == -1)
    # Both come row by row, left to right, so the k-th start and the k-th end bound one run.
    long = (c_end - c_start) >= MIN_GRID_RUN
    width = line.shape[1]
    starts = np.bincount(c_start[long], minlength=width + 1)
    ends = np.bincount(c_end[long], minlength=width + 1)
    cover = np.cumsum(starts - ends)[:width] / max(int(rows.sum()), 1)
    return GridRuns(starts, ends, cover)


def boundaries(features: PageFeatures, blocks: np.ndarray, rows: np.ndarray, runs: GridRuns) -> list[Boundary]:
    """Rules and grid-line ends, merged when within `MERGE_PX`, left to right.

    A rule is a column of vertical-run ink in most blocks, or (a rule the scan broke into dots or dashes)
    a column inked in `DOTTED_RULE` of the examined rows.
    """
    cover = np.median(features.rule_blocks[blocks], axis=0)
    dotted = features.faint[rows].mean(axis=0) >= DOTTED_RULE
    spans = [(a, b, b - a) for a, b in _groups((cover >= RULE_COVER) | dotted) if b - a <= MAX_RULE_PX]
    starts, ends = runs.starts, runs.ends
    marks: list[tuple[int, int, int, bool, bool]] = [(a, b, px, False, False) for a, b, px in spans]
    for counts, is_start in ((starts, True), (ends, False)):
        if counts.max() == 0:
            continue
        for a, b in _groups(counts >= max(MIN_END_COUNT, END_PEAK * counts.max())):
            x = a + int(np.argmax(counts[a:b]))
            marks.append((x, x + 1, 0, is_start, not is_start) if is_start else (x - 1, x, 0, False, True))
    marks.sort()
    merged: list[Boundary] = []
    for a, b, px, s, e in marks:
        if merged and a <= merged[-1].end + MERGE_PX:
            last = merged[-1]
            merged[-1] = Boundary(last.start, max(last.end, b), max(last.rule_px, px), last.starts or s, last.ends or e)
        else:
            merged.append(Boundary(a, b, px, s, e))
    return _crossed_ends(merged)


def _crossed_ends(bounds: list[Boundary]) -> list[Boundary]:
    """Join a grid start followed closely (`CROSSED_PX`) by a grid end, neither on a rule: two grids side by side
    whose lines overrun their shared border by a few pixels each (a blurred or bilevel scan), one boundary."""
    out: list[Boundary] = []
    for bound in bounds:
        last = out[-1] if out else None
        if (last is not None and last.starts and not last.ends and bound.ends and not bound.starts
                and last.rule_px == 0 and bound.rule_px == 0 and bound.start - last.end <= CROSSED_PX):
            out[-1] = Boundary(last.start, bound.end, 0, True, True)
        else:
            out.append(bound)
    return out


def classify_cells(features: PageFeatures, bounds: list[Boundary], rows: np.ndarray, runs: GridRuns) -> list[Cell]:
    """Class the cells around the boundaries: cell i lies between bounds[i - 1] and bounds[i] (page edges at ends)."""
    width = features.dark.shape[1]
    grid = runs.cover
    reference = float(np.percentile(grid, 95))
    gridded = max(MIN_GRID_COVER, 0.1 * reference)
    edges = [0] + [x for b in bounds for x in (b.start, b.end)] + [width]
    cells = []
    for i, (left, right) in enumerate(zip(edges[0::2], edges[1::2], strict=True)):
        if right - left < 2:
            cells.append(Cell(left, right, "gap"))
            continue
        band = features.residual[:, left:right][rows]
        curve_rows = float(np.mean(band.sum(axis=1) >= 2)) if band.size else 0.0
        has_grid = float(grid[left:right].mean()) >= gridded
        # A wide column framed by rules on both sides is a track even when nothing in it printed or survived
        # the scan (a lost light grid, a curve absent over the interval).
        inner = 0 < i < len(bounds)
        framed = inner and bounds[i - 1].rule_px > 0 and bounds[i].rule_px > 0 and right - left >= MIN_FRAMED_TRACK_PX
        # Ink alone makes a track only between two boundaries: a page of text reaching the page edges is no track.
        kind = "track" if has_grid or framed or (inner and curve_rows >= CURVE_ROWS) else "gap"
        labels: list[int] = []
        span = (0, 0)
        # A gridded cell wider than any depth column is a track with a few numbers printed in it.
        if curve_rows < CURVE_ROWS and right - left <= (DEPTH_MAX_PX if has_grid else 2 * DEPTH_MAX_PX):
            labels, span = depth_labels(features.residual[:, left:right], rows)
            if labels:
                kind = "depth"
        cells.append(Cell(left, right, kind, tuple(labels), (left + span[0], left + span[1]), has_grid, curve_rows))
    return _grid_continues(_grid_spans(cells, bounds), bounds)


def _grid_spans(cells: list[Cell], bounds: list[Boundary]) -> list[Cell]:
    """Cells where grid lines run across are track; cells they stop short of on both sides are not.

    Between a boundary where grid lines start and the next one where they end, the lines span one track:
    every blank cell between is part of it, however faint its own grid or rare its curves (a cell with
    depth numbers keeps them: a depth column may carry depth lines of its own). A cell at whose left
    edge lines end and at whose right edge lines start lies between two grids: a gutter or the depth column.
    """
    out = list(cells)
    open_at: int | None = None
    for k, bound in enumerate(bounds):
        if bound.ends and open_at is not None:
            for i in range(open_at + 1, k + 1):
                if cells[i].kind == "gap":
                    out[i] = Cell(**{**cells[i].__dict__, "kind": "track"})
            open_at = None
        if bound.starts:
            open_at = k
    for i in range(1, len(bounds)):
        if (bounds[i - 1].ends and bounds[i].starts and out[i].kind == "track" and not bounds[i - 1].starts
                and out[i].curve_rows < CURVE_ROWS):
            out[i] = Cell(**{**out[i].__dict__, "kind": "depth" if out[i].labels else "gap"})
    return out


def _grid_continues(cells: list[Cell], bounds: list[Boundary]) -> list[Cell]:
    """A gridded cell with numbers in it is part of a neighbouring track when that track's grid lines run on
    into it (no line ends at the boundary between them): numbers printed inside a track, not a depth column."""
    out = list(cells)
    for i, cell in enumerate(cells):
        if cell.kind != "depth" or not cell.gridded:
            continue
        left_open = i > 0 and cells[i - 1].kind == "track" and not bounds[i - 1].ends
        right_open = i + 1 < len(cells) and cells[i + 1].kind == "track" and not bounds[i].starts
        if left_open or right_open:
            out[i] = Cell(cell.left, cell.right, "track", gridded=True)
    return out


def _splits(boundary: Boundary, typical_rule: float) -> bool:
    # Grid lines end on its left and start on its right, or a rule much heavier than the value divisions.
    return (boundary.starts and boundary.ends) or boundary.rule_px >= max(4.0, 2.0 * typical_rule)


def _grid_crosses(left: Cell, right: Cell, boundary: Boundary) -> bool:
    """Grid lines run on through the boundary (both sides gridded, none ending or starting there): one track,
    however heavy the line there (a curve running straight down for a while, thickened by blur)."""
    return left.gridded and right.gridded and not boundary.starts and not boundary.ends


def _inside(cells: list[Cell], bounds: list[Boundary]) -> set[int]:
    """Indices of non-track cells that lie inside a track: a run of them between two track cells with no grid
    line ending on its left and none starting on its right, which a curve enters now and then (a stretch of a
    track without a visible grid that the curves seldom reach, a box of text printed in the track)."""
    inside: set[int] = set()
    i = 1
    while i < len(cells):
        if cells[i].kind == "track" or cells[i - 1].kind != "track":
            i += 1
            continue
        j = i
        while j < len(cells) and cells[j].kind != "track":
            j += 1
        # A curve crosses into such a stretch now and then; a gutter between two tracks stays blank.
        crossed = all(c.curve_rows >= CROSSED_ROWS for c in cells[i:j])
        if j < len(cells) and crossed and not bounds[i - 1].ends and not bounds[j - 1].starts:
            inside.update(range(i, j))
        i = j
    return inside


def tracks_from_cells(cells: list[Cell], bounds: list[Boundary]) -> list[tuple[int, int]]:
    """Track column ranges: runs of track cells, split at boundaries that separate two tracks."""
    rules = [b.rule_px for b in bounds if b.rule_px]
    typical = float(np.median(rules)) if rules else 1.0
    tracks: list[list[int]] = []
    current: list[int] | None = None
    absorbed = _inside(cells, bounds)
    for i, cell in enumerate(cells):
        if i in absorbed and current is not None:
            current[1] = bounds[i].end
            continue
        if cell.kind != "track":
            current = None
            continue
        left_bound = bounds[i - 1] if i > 0 else None
        right_edge = bounds[i].end if i < len(bounds) else cell.right
        if current is None or left_bound is None:
            current = [left_bound.start if left_bound is not None else cell.left, right_edge]
            tracks.append(current)
        elif _splits(left_bound, typical) and not _grid_crosses(cells[i - 1], cell, left_bound):
            middle = (left_bound.start + left_bound.end + 1) // 2
            current[1] = middle
            current = [middle, right_edge]
            tracks.append(current)
        else:
            current[1] = right_edge
    return [(a, b) for a, b in tracks]


def depth_column(cells: list[Cell], tracks: list[tuple[int, int]]) -> Cell | None:
    """The depth cell with the most labels: between two tracks, or right beside the outermost ones."""
    if not tracks:
        return None
    first, last = tracks[0][0], tracks[-1][1]
    candidates = [c for c in cells if c.kind == "depth" and (first <= c.left and c.right <= last
                                                             or c.right == first or c.left == last)]
    if not candidates:
        return None
    best = max(candidates, key=lambda c: len(c.labels))
    if first <= best.left and best.right <= last:
        return best
    # Beside the tracks the cell may run to the page edge: take the labels' span, mirrored about its centre
    # so the column is as wide beyond the labels as between them and the track.
    low, high = best.label_span
    if best.right == first:
        return Cell(max(best.left, low - (best.right - high)), best.right, "depth", best.labels, best.label_span)
    return Cell(best.left, min(best.right, high + (low - best.left)), "depth", best.labels, best.label_span)
