"""Propose a page layout from the pixels alone: `veernet layout SCAN` writes it as a draft for a person to finish.

Found from the page (see `features`, `columns`, `rows` for how): the skew, each track's column
range (border rules and where the grid lines end), the depth column (the band between or beside
the tracks where printed numbers sit at regular rows and no curves run), the log sections (rows
where the track rules and grid run) and the bands that are not log (header, track headers,
banners, footer). Two passes: the columns are found over every row, then again over the log rows
the first pass found, so a header full of boxes cannot pose as a track.

Not found, because reading them needs OCR: the depth values of the numbers, the curves' names,
units and edge values. The draft holds JSON nulls there (and the rows of the depth numbers it
found), and `layout.parse_layout` refuses it until they are filled in.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from veernet_pipeline.pages import columns as col
from veernet_pipeline.pages.features import BLOCK, PageFeatures, page_features
from veernet_pipeline.pages.layout import Skew
from veernet_pipeline.pages.picture import Outline
from veernet_pipeline.pages.rows import Band, row_bands

logger = logging.getLogger(__name__)

# Of the blocks the second pass reads, this share of rows must be log.
LOG_BLOCK_SHARE = 0.8


@dataclass(frozen=True)
class Detected:
    """A proposed layout in stored page pixels; columns are at the skew's pivot row."""

    height: int
    width: int
    skew_deg: float
    pivot_row: int
    tracks: list[tuple[int, int]]
    depth_column: tuple[int, int] | None
    bands: list[Band]
    label_rows: list[list[int]]  # per section, in `sections` order
    notes: list[str] = field(default_factory=list)

    @property
    def sections(self) -> list[Band]:
        return [b for b in self.bands if b.kind == "section"]

    def section_names(self) -> list[tuple[str, str]]:
        """(name, kind) per section: the longest is main, the others repeat, repeat_2..."""
        sections = self.sections
        if not sections:
            return []
        longest = int(np.argmax([s.bottom - s.top for s in sections]))
        names, k = [], 0
        for i in range(len(sections)):
            if i == longest:
                names.append(("main", "main"))
            else:
                k += 1
                names.append(("repeat" if k == 1 else f"repeat_{k}", "repeat"))
        return names

    def outline(self) -> Outline:
        """What to draw over the page for a person to check (`picture`)."""
        return Outline([(f"T{i + 1}", a, b) for i, (a, b) in enumerate(self.tracks)], self.depth_column,
                       [(name, s.top, s.bottom)
                        for (name, _), s in zip(self.section_names(), self.sections, strict=True)],
                       [(b.kind, b.top, b.bottom) for b in self.bands if b.kind != "section"],
                       [r for rows in self.label_rows for r in rows],
                       Skew(angle_deg=self.skew_deg, pivot_row=self.pivot_row) if self.skew_deg else None)

    def draft(self) -> dict[str, Any]:
        """The layout JSON with nulls where a person must read the page (see the module docstring)."""
        sections = []
        for (name, kind), band, labels in zip(self.section_names(), self.sections, self.label_rows, strict=True):
            rows = [labels[0], labels[-1]] if len(labels) >= 2 else [None, None]
            sections.append({"name": name, "kind": kind, "top_row": band.top, "bottom_row": band.bottom,
                             "depth": {"unit": None, "points": [{"row": r, "depth": None} for r in rows]},
                             "depth_label_rows": labels})
        # The style is asked for, not left out: it is what tells a track's curves apart (docs/pages.md), and an
        # operator who never sees the key reads every track by the seeds' convention.
        placeholder = {"mnemonic": None, "unit": None, "left_value": None, "right_value": None, "scale": None,
                       "style": None}
        data: dict[str, Any] = {
            "notes": [*self.notes, "DRAFT by veernet layout: fill in every null (docs/runbooks/whole-log-pages.md); "
                      "add one curve entry per curve the track header names; a curve's style as the legend draws "
                      "it (solid, dashed, dotted, dash_dot, long_dash), or delete the key if it shows none; on a "
                      "colour print add its \"colour\""],
            "page": {"width": self.width, "height": self.height},
            "tracks": [{"name": f"T{i + 1}", "left": a, "right": b, "curves": [dict(placeholder)]}
                       for i, (a, b) in enumerate(self.tracks)],
            "sections": sections,
            "skip": [{"kind": b.kind, "top_row": b.top, "bottom_row": b.bottom} for b in self.bands
                     if b.kind != "section"],
            "well": {"WELL": None},
        }
        if self.depth_column is not None:
            data["depth_column"] = {"left": self.depth_column[0], "right": self.depth_column[1]}
        if self.skew_deg:
            data["skew"] = {"angle_deg": self.skew_deg, "pivot_row": self.pivot_row}
        return data


def _columns(features: PageFeatures, rows: np.ndarray,
             blocks: np.ndarray) -> tuple[list[tuple[int, int]], list[col.Cell]]:
    runs = col.grid_runs(features, rows)
    bounds = col.boundaries(features, blocks, rows, runs)
    cells = col.classify_cells(features, bounds, rows, runs)
    return col.tracks_from_cells(cells, bounds), cells


def detect_layout(page: np.ndarray) -> Detected:
    """Propose the layout of a whole-log page.

    Args:
        page: the page as stored (portrait, depth down the rows), ink dark on light; 1-bit pages
            as 0/255.

    Returns:
        The proposal; empty lists (and a note saying so) where nothing was found.

    Shape:
        page: (H, W) uint8.
    """
    if page.ndim != 2 or page.dtype != np.uint8:
        raise ValueError(f"a page must be a 2-D uint8 image, got {page.dtype} shape {page.shape}")
    height, width = page.shape
    features = page_features(page)
    n_blocks = features.rule_blocks.shape[0]
    tracks, cells = _columns(features, np.ones(height, dtype=bool), np.ones(n_blocks, dtype=bool))
    notes = []
    bands = row_bands(features, tracks) if tracks else []
    log = np.zeros(height, dtype=bool)
    for band in bands:
        if band.kind == "section":
            log[band.top:band.bottom] = True
    usable = n_blocks * BLOCK
    log_blocks = log[:usable].reshape(n_blocks, -1).mean(axis=1) >= LOG_BLOCK_SHARE if usable else log[:0]
    if log_blocks.any():
        tracks, cells = _columns(features, log, log_blocks)
        bands = row_bands(features, tracks) if tracks else []
    if not tracks:
        notes.append("no tracks found: no long vertical rules or grid lines; lay this page out by hand")
    depth = col.depth_column(cells, tracks)
    if depth is None and tracks:
        notes.append("no depth column found: no band of regularly spaced printed numbers beside or between the tracks")
    sections = [b for b in bands if b.kind == "section"]
    if tracks and not sections:
        notes.append("no log section found: the track rules and grid never run together for long")
    labels = [[r for r in (depth.labels if depth else ()) if s.top <= r < s.bottom] for s in sections]
    detected = Detected(height, width, features.skew.angle_deg, features.skew.pivot_row, tracks,
                        None if depth is None else (depth.left, depth.right), bands, labels, notes)
    logger.info("detected %d tracks, %s depth column, %d sections, %d skip bands, skew %.3f deg", len(tracks),
                "a" if depth else "no", len(sections), len(bands) - len(sections), features.skew.angle_deg)
    return detected
