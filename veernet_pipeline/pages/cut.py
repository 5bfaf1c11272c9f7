"""Cut a whole-log page into track strips, losslessly, each with its calibration sidecar.

A strip is one (section, track): the page rows `[top_row, bottom_row)` of the section and the
columns `[left, right)` of the track, turned 90 degrees counter-clockwise (`np.rot90(k=1)`, the
turn `io.tiff.decode_scan` gives a portrait page) so depth runs left to right. Pixels are only
moved, never resampled: strip pixel ``(i, j)`` is stored page pixel ``(top_row + j, right - 1 - i)``.
So the strip's top edge is the track's right edge, and the strip's calibration has
``top_value = right_value`` and ``bottom_value = left_value``; its depths are those of the
section's depth line at the strip's edges, ``depth(top_row - 0.5)`` and ``depth(bottom_row - 0.5)``,
which puts column j at ``depth(top_row + j)`` under the sidecar contract.

A skewed page (layout `skew`) is cut row by row: row y takes the track's columns shifted by the
layout's whole-pixel shift for y, so the track stays inside its strip over a long page. Pixels still
only move (by whole pixels); a curve gets a one-row step where the shift changes.

The image may come as stored (`orientation="stored"`) or as `decode_scan` returns a portrait page
(`orientation="decoded"`, i.e. stored turned by `np.rot90(k=1)`); the layout's coordinates are
always the stored page's. A colour page's RGB (`io.tiff.decode_colour`) is cut beside its gray, pixel
for pixel, so the reading can take each curve's pen (`reading.colour`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from veernet_pipeline.io.calibration import Calibration, CurveScale
from veernet_pipeline.pages.layout import Layout, LayoutError, Section, Track

Orientation = Literal["stored", "decoded"]


@dataclass(frozen=True)
class Strip:
    """One (section, track) of a page, ready for `inference.digitize.digitize_scan`.

    Attributes:
        curve_order: indices into `track.curves` in class order (class 1 first): the layout's
            order, except that a curve whose legend style is solid comes first, since the net's
            class 1 is the solid curve.

    Shape:
        image: (track width, section rows) uint8, depth left to right; rgb: the same (..., 3) or None.
    """

    section: Section
    track: Track
    image: np.ndarray
    calibration: Calibration
    curve_order: tuple[int, ...]
    rgb: np.ndarray | None = None  # the strip in colour, cut from a colour page

    def describe(self) -> str:
        """Where the strip sits on the page, for provenance notes."""
        return (f"section {self.section.name} ({self.section.kind}) page rows {self.section.top_row}-"
                f"{self.section.bottom_row}, track {self.track.name} page columns {self.track.left}-{self.track.right}")


def stored_view(image: np.ndarray, orientation: Orientation) -> np.ndarray:
    """The page as stored (a view, nothing copied): a decoded portrait page is turned back by `np.rot90(k=-1)`.

    Shape:
        image: (H, W) stored or (W, H) decoded, or either with a trailing 3 (RGB); returns (H, W) or (H, W, 3).
    """
    if image.dtype != np.uint8 or not (image.ndim == 2 or (image.ndim == 3 and image.shape[2] == 3)):
        raise ValueError(f"a page must be a 2-D uint8 image (or RGB), got {image.dtype} shape {image.shape}")
    if orientation == "stored":
        return image
    if orientation == "decoded":
        return np.rot90(image, k=-1)
    raise ValueError(f"orientation must be 'stored' or 'decoded', not {orientation!r}")


def curve_order(track: Track) -> tuple[int, ...]:
    """Class order of a track's curves: solid-styled curves first, otherwise as listed."""
    indices = range(len(track.curves))
    if not any(c.style for c in track.curves):
        return tuple(indices)
    return tuple(sorted(indices, key=lambda i: track.curves[i].style != "solid"))


def strip_calibration(layout: Layout, section: Section, track: Track) -> Calibration:
    """The sidecar of one strip (see the module docstring for the edges).

    Each curve keeps the legend's style and pen the layout names: they are what tells the curves of
    a track apart (`reading`), beyond the seeds' convention an unstyled sidecar is read by.
    """
    top, bottom = section.depth.depth_at([section.top_row - 0.5, section.bottom_row - 0.5])
    curves = tuple(
        CurveScale(c.mnemonic, c.unit, top_value=c.right_value, bottom_value=c.left_value, scale=c.scale,
                   backup_wraps=c.backup.max_wraps if c.backup else 0, style=c.style, colour=c.colour)
        for c in (track.curves[i] for i in curve_order(track)))
    calibration = Calibration(float(top), float(bottom), section.depth.unit, curves, layout.well_items())
    # Through the sidecar's own field-by-field check (`io.sidecar`): the strip's sidecar is what validate reads.
    return Calibration.from_dict(calibration.to_dict(), f"section {section.name}, track {track.name}")


def check_fits(page: np.ndarray, layout: Layout, source: str) -> None:
    """The layout's page size, tracks and sections fit this stored page, else `LayoutError`."""
    height, width = page.shape[:2]
    if layout.page is not None and (layout.page.height, layout.page.width) != (height, width):
        raise LayoutError(f"{source}: page is {width} x {height} px (width x height, as stored) but the layout's "
                          f"page says {layout.page.width} x {layout.page.height}; is it the right layout?")
    shifts = layout.skew.shifts(np.array([0, height - 1])) if layout.skew else np.zeros(2, dtype=np.int64)
    for i, track in enumerate(layout.tracks):
        if track.left + shifts.min() < 0 or track.right + shifts.max() > width:
            raise LayoutError(f"{source}: tracks[{i}] ({track.name}) columns {track.left}-{track.right} "
                              f"(with the skew's shift) leave the page, which is {width} px wide")
    for i, section in enumerate(layout.sections):
        if section.bottom_row > height:
            raise LayoutError(f"{source}: sections[{i}] ({section.name}) ends at row {section.bottom_row}, "
                              f"past the page's {height} rows")


def shift_rows(image: np.ndarray, shifts: np.ndarray, fill: int) -> np.ndarray:
    """A copy of `image` with row y moved right by `shifts[y]` whole pixels (left if negative), `fill` where emptied.

    Rows sharing a shift move as one block, so a page costs one slice per distinct shift.

    Shape:
        image: (H, W); shifts: (H,) int. Returns (H, W).
    """
    out = np.full_like(image, fill)
    height, width = image.shape
    starts = np.flatnonzero(np.diff(shifts, prepend=shifts[0] - 1))
    for r0, r1 in zip(starts, [*starts[1:], height], strict=True):
        s = int(shifts[r0])
        out[r0:r1, max(s, 0):width + min(s, 0)] = image[r0:r1, max(-s, 0):width - max(s, 0)]
    return out


def cut_strip(page: np.ndarray, layout: Layout, section: Section, track: Track) -> np.ndarray:
    """One strip's pixels from the stored page (a new array).

    Shape:
        page: (H, W) stored, or (H, W, 3). Returns (track.right - track.left, section.bottom_row - section.top_row),
        with the page's trailing 3 if it has one.
    """
    rows = np.arange(section.top_row, section.bottom_row)
    if layout.skew is None:
        block = page[section.top_row:section.bottom_row, track.left:track.right]
    else:
        columns = track.left + layout.skew.shifts(rows)[:, None] + np.arange(track.right - track.left)[None, :]
        block = page[rows[:, None], columns]
    return np.ascontiguousarray(np.rot90(block, k=1))


def cut_page(image: np.ndarray, layout: Layout, orientation: Orientation, source: str = "page",
             rgb: np.ndarray | None = None) -> list[Strip]:
    """Every (section, track) strip of a page, sections in layout order, tracks in layout order within each.

    Args:
        image: the page's gray.
        layout, orientation, source: the page's layout, how `image` is turned, its name in errors.
        rgb: a colour page's RGB in the same orientation (`io.tiff.decode_colour`), cut into each strip's `rgb`.

    Raises:
        LayoutError: the layout does not fit the image (size, bounds).
        ValueError: the image is not 2-D uint8, `rgb` is not its colour, or `orientation` is neither "stored"
            nor "decoded".
    """
    page = stored_view(image, orientation)
    colour = None if rgb is None else stored_view(rgb, orientation)
    if colour is not None and colour.shape != (*page.shape, 3):
        raise ValueError(f"{source}: the colour page is {colour.shape[:2]} px but its gray {page.shape}")
    check_fits(page, layout, source)
    return [Strip(section, track, cut_strip(page, layout, section, track), strip_calibration(layout, section, track),
                  curve_order(track), None if colour is None else cut_strip(colour, layout, section, track))
            for section in layout.sections for track in layout.tracks]
