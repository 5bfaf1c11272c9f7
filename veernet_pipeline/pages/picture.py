"""A picture of a page with its layout drawn over it, for a person to check: tracks, depth column, bands.

This is a picture to look at, not data: a whole-log page (17,864 rows) is reduced by a whole
factor so it stays under `MAX_ROWS` rows, each output pixel the darkest of its block (so 1-px
lines stay visible). Nothing read from the page comes from this picture; cutting and reading use
the page's native pixels. Drawn: each track (green) and the depth column (blue) within each
section, with the skew, the depth-number rows found (red ticks), and the bands that are not log,
tinted and named (header orange, track headers violet, banners red, footer gray).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import matplotlib
import numpy as np
from PIL import Image, ImageDraw, ImageFont

from veernet_pipeline.io.atomic import atomic_path
from veernet_pipeline.pages.layout import Layout, Skew

MAX_ROWS = 4000
BAND_COLOURS = {"header": (255, 140, 0), "track_header": (148, 0, 211), "banner": (220, 20, 60),
                "footer": (120, 120, 120), "other": (0, 150, 150)}
TRACK, DEPTH, LABEL = (0, 160, 0), (0, 90, 255), (230, 0, 0)


@dataclass(frozen=True)
class Outline:
    """What to draw, in stored page pixels (columns at the skew's pivot row)."""

    tracks: list[tuple[str, int, int]]
    depth_column: tuple[int, int] | None
    sections: list[tuple[str, int, int]]
    bands: list[tuple[str, int, int]]
    label_rows: list[int] = field(default_factory=list)
    skew: Skew | None = None


def outline_of(layout: Layout) -> Outline:
    """The outline of a checked layout."""
    depth = None if layout.depth_column is None else (layout.depth_column.left, layout.depth_column.right)
    return Outline([(t.name, t.left, t.right) for t in layout.tracks], depth,
                   [(s.name, s.top_row, s.bottom_row) for s in layout.sections],
                   [(b.kind, b.top_row, b.bottom_row) for b in layout.skip],
                   [r for s in layout.sections for r in s.depth_label_rows], layout.skew)


def _font(size: int) -> ImageFont.FreeTypeFont:
    return ImageFont.truetype(str(Path(matplotlib.get_data_path()) / "fonts" / "ttf" / "DejaVuSans-Bold.ttf"), size)


def reduce_page(page: np.ndarray, factor: int) -> np.ndarray:
    """The page reduced by `factor` in both axes, each pixel the darkest of its block. Shape: (H // f, W // f)."""
    height, width = (page.shape[0] // factor) * factor, (page.shape[1] // factor) * factor
    return page[:height, :width].reshape(height // factor, factor, width // factor, factor).min(axis=(1, 3))


def draw_outline(page: np.ndarray, outline: Outline, title: str, max_rows: int = MAX_ROWS) -> Image.Image:
    """The reduced page with the outline drawn over it (see the module docstring). Shape: page (H, W) uint8."""
    factor = max(1, math.ceil(page.shape[0] / max_rows))
    base = Image.fromarray(reduce_page(page, factor)).convert("RGBA")
    layer = Image.new("RGBA", base.size, (0, 0, 0, 0))
    draw = ImageDraw.Draw(layer)
    font = _font(max(10, min(28, base.size[0] // 40)))

    def shift(row: float) -> float:
        return 0.0 if outline.skew is None else float(outline.skew.shifts(np.array([row]))[0])

    def column_box(left: int, right: int, top: int, bottom: int, colour: tuple[int, int, int]) -> None:
        corners = [(left + shift(top), top), (right + shift(top), top), (right + shift(bottom), bottom),
                   (left + shift(bottom), bottom)]
        draw.polygon([(x / factor, y / factor) for x, y in corners], outline=(*colour, 255), width=2)

    for kind, top, bottom in outline.bands:
        colour = BAND_COLOURS.get(kind, BAND_COLOURS["other"])
        draw.rectangle([0, top / factor, base.size[0], bottom / factor], fill=(*colour, 60))
        draw.text((4, top / factor + 2), kind, fill=(*colour, 255), font=font)
    for name, top, bottom in outline.sections:
        for track, left, right in outline.tracks:
            column_box(left, right, top, bottom, TRACK)
            draw.text(((left + shift(top)) / factor + 4, top / factor + 4), track, fill=(*TRACK, 255), font=font)
        if outline.depth_column is not None:
            column_box(*outline.depth_column, top, bottom, DEPTH)
        draw.text((4, (top + bottom) / 2 / factor), f"{name}\nrows {top}-{bottom}", fill=(*TRACK, 255), font=font)
    if outline.depth_column is not None:
        left, right = outline.depth_column
        for row in outline.label_rows:
            draw.line([((left + shift(row)) / factor, row / factor), ((right + shift(row)) / factor, row / factor)],
                      fill=(*LABEL, 255), width=2)
    picture = Image.alpha_composite(base, layer).convert("RGB")
    header = Image.new("RGB", (picture.size[0], font.size * 3), (255, 255, 255))
    ImageDraw.Draw(header).text((4, 4), f"{title}\nreduced 1:{factor} for viewing; not data", fill=(0, 0, 0),
                                font=font)
    sheet = Image.new("RGB", (picture.size[0], picture.size[1] + header.size[1]), (255, 255, 255))
    sheet.paste(header, (0, 0))
    sheet.paste(picture, (0, header.size[1]))
    return sheet


def write_outline_png(path: Path, page: np.ndarray, outline: Outline, title: str, max_rows: int = MAX_ROWS) -> None:
    """`draw_outline`, written atomically as PNG."""
    with atomic_path(Path(path)) as tmp:
        draw_outline(page, outline, title, max_rows).save(tmp, format="PNG")
