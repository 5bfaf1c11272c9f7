"""One LAS per log section: the curves read from every track of a section on one depth index.

The tracks of a section share its page rows, so their strips share one depth per column
(`cut.strip_calibration`); the merge checks that instead of assuming it. Each section is its own
LAS: `main` -> `<scan>.las`, any other section `<scan>.<name>.las` (a repeat section is a second
pass over the same depths and must not be mixed into the main curves). The ~Other section records
where every curve came from: page, section rows, track columns, class.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from veernet_pipeline.io.las import LasCurve, write_las
from veernet_pipeline.pages.layout import Section

MAIN_SECTION = "main"


@dataclass(frozen=True)
class TrackReading:
    """The curves read from one strip, on the strip's depth index.

    Attributes:
        track: the track's name.
        where: the strip's place on the page (`cut.Strip.describe`).
        notes: the reading's own notes (calibration state, backup scales...).

    Shape:
        depth: (W,); each curve's values (W,).
    """

    track: str
    where: str
    depth: np.ndarray
    curves: list[LasCurve]
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class SectionLog:
    """What one section's LAS holds. Shape: depth (N,); each curve's values (N,)."""

    section: Section
    depth: np.ndarray
    depth_unit: str
    curves: list[LasCurve]
    well: dict[str, str]
    notes: list[str]


def las_name(stem: str, section: Section) -> str:
    """File name of a section's LAS: `<stem>.las` for the section named main, else `<stem>.<name>.las`."""
    return f"{stem}.las" if section.name == MAIN_SECTION else f"{stem}.{section.name}.las"


def merge_section(section: Section, readings: list[TrackReading], depth_unit: str, well: dict[str, str],
                  page: str) -> SectionLog:
    """Put every track's curves of one section on the section's depth index.

    Raises:
        ValueError: no readings, tracks on different depths, or one curve name twice.
    """
    if not readings:
        raise ValueError(f"{page}: section {section.name} has no track readings to merge")
    depth = np.asarray(readings[0].depth, dtype=np.float64)
    tolerance = 1e-9 * max(1.0, float(np.abs(depth).max(initial=0.0)))
    for reading in readings[1:]:
        other = np.asarray(reading.depth, dtype=np.float64)
        if other.shape != depth.shape or not np.allclose(other, depth, rtol=0.0, atol=tolerance):
            raise ValueError(f"{page}: section {section.name}: track {reading.track} is on other depths than track "
                             f"{readings[0].track}; the tracks of one section must share its rows")
    curves = [curve for reading in readings for curve in reading.curves]
    names = [c.mnemonic.upper() for c in curves]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ValueError(f"{page}: section {section.name}: curves {', '.join(twice)} are read from more than one "
                         "track; give each curve its own mnemonic in the layout")
    notes = [f"page {page}, section {section.name} ({section.kind}), page rows {section.top_row}-{section.bottom_row}"]
    for reading in readings:
        read = ", ".join(c.mnemonic for c in reading.curves)
        notes.append(f"{reading.where}: {read}")
    notes += _track_notes(readings)
    return SectionLog(section, depth, depth_unit, curves, dict(well), notes)


def _track_notes(readings: list[TrackReading]) -> list[str]:
    # A note every track carries is said once; the others are prefixed with their track.
    common = [n for n in readings[0].notes if all(n in r.notes for r in readings)]
    own = [f"track {r.track}: {n}" for r in readings for n in r.notes if n not in common]
    return common + own


def write_section_las(out_dir: Path, stem: str, log: SectionLog, notes: list[str]) -> Path:
    """Write one section's LAS into `out_dir` (atomically); return its path."""
    path = Path(out_dir) / las_name(stem, log.section)
    write_las(path, log.depth, log.depth_unit, log.curves, log.well, [*log.notes, *notes])
    return path
