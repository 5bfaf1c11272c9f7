"""Printed text on a track: depth numbers and header boxes, and the block helpers flags and banners use.

Glyphs are rendered with Pillow's FreeType from the DejaVu fonts matplotlib ships (no downloads),
once per (character, font, size) per process (`functools.lru_cache`), set side by side on a
common baseline by their advance widths, and turned 90 degrees counter-clockwise: a landscape strip
is a portrait log turned that way, so text printed across the log reads bottom to top here. A stamp
darkens the canvas by the glyphs' coverage and labels it other ink (`canvas.Canvas.print_other`).

- Depth numbers sit on their numbered depth line near one track edge (or mid-track), on a small
  white backing that interrupts the grid (curves are drawn over them later).
- Header boxes are white, bordered boxes of a few text lines (log names, scales, remarks). They are
  drawn after the curves and blank them: no curve ink there, so no curve label there.

Positions are track rows; the skew moves every stamp by `top[x]` in its column.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import matplotlib
import numpy as np
from PIL import Image, ImageDraw, ImageFont

from veernet_pipeline.synthetic.canvas import Canvas

FONT_FILES = ("DejaVuSans.ttf", "DejaVuSans-Bold.ttf", "DejaVuSansMono.ttf", "DejaVuSansMono-Bold.ttf",
              "DejaVuSerif.ttf")
REMARKS = ("REPEAT SECTION", "MAIN PASS", "CASING SHOE", "RUN ONE", "RUN TWO", "LOGGED INTERVAL", "TOOL ZERO",
           "BHC SONIC", "DUAL INDUCTION", "GAMMA RAY", "COMPENSATED DENSITY", "NEUTRON POROSITY", "CALIPER",
           "SCALE 1:240", "SCALE 1:600", "TD", "LOG DATE", "FIELD PRINT", "CORRELATION", "OPEN HOLE")
BACKING_PAD = 2


@lru_cache(maxsize=32)
def _font(font: int, size: int) -> ImageFont.FreeTypeFont:
    path = Path(matplotlib.get_data_path()) / "fonts" / "ttf" / FONT_FILES[font % len(FONT_FILES)]
    return ImageFont.truetype(str(path), size)


@lru_cache(maxsize=1024)
def glyph(char: str, font: int, size: int) -> np.ndarray:
    """Coverage (0..255) of one character in a cell of the font's line height and its advance width."""
    face = _font(font, size)
    ascent, descent = face.getmetrics()
    canvas = Image.new("L", (max(1, round(face.getlength(char))), ascent + descent), 0)
    ImageDraw.Draw(canvas).text((0, ascent), char, fill=255, font=face, anchor="ls")
    cell = np.asarray(canvas).copy()
    cell.flags.writeable = False
    return cell


@lru_cache(maxsize=4096)
def text_alpha(text: str, font: int, size: int) -> np.ndarray:
    """Coverage (0..255) of `text` turned to read bottom to top. Shape: (text length px, line height px)."""
    line = np.concatenate([glyph(c, font, size) for c in text], axis=1)
    rows = np.flatnonzero(line.max(axis=1))
    alpha = np.ascontiguousarray(np.rot90(line[rows[0] : rows[-1] + 1] if rows.size else line, 1))
    alpha.flags.writeable = False
    return alpha


def region(row0: int, col0: int, rows: int, cols: int, top: np.ndarray,
           height: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Pixel indices (ys, xs) of a track-aligned block under the skew, and which lie inside the image.

    Shape:
        ys, xs, inside: (rows, cols).
    """
    width = top.size
    ys = np.arange(rows)[:, None] + row0
    xs = np.broadcast_to(np.arange(cols)[None, :] + col0, (rows, cols))
    ys = ys + top[np.clip(xs, 0, width - 1)]
    return ys, xs, (ys >= 0) & (ys < height) & (xs >= 0) & (xs < width)


def _flat_block(row0: int, col0: int, rows: int, cols: int, top: np.ndarray,
                height: int) -> tuple[slice, slice, slice, slice] | None:
    # When the skew moves every column of the block alike (always without skew), the block is a
    # pair of slices: (image rows, image cols, block rows, block cols). None otherwise.
    width = top.size
    c0, c1 = max(col0, 0), min(col0 + cols, width)
    if c0 >= c1:
        return slice(0, 0), slice(0, 0), slice(0, 0), slice(0, 0)
    shift = int(top[c0])
    if top[c1 - 1] != shift or top[c0:c1].min() != shift:
        return None
    r0, r1 = max(row0 + shift, 0), min(row0 + shift + rows, height)
    r1 = max(r0, r1)
    return (slice(r0, r1), slice(c0, c1), slice(r0 - row0 - shift, r1 - row0 - shift), slice(c0 - col0, c1 - col0))


def blank(canvas: Canvas, row0: int, col0: int, rows: int, cols: int, top: np.ndarray) -> None:
    """Remove ink and labels from a track-aligned block (top-left at track row `row0`, column `col0`)."""
    flat = _flat_block(row0, col0, rows, cols, top, canvas.shape[0])
    if flat is not None:
        canvas.blank((flat[0], flat[1]), None)
        return
    ys, xs, ok = region(row0, col0, rows, cols, top, canvas.shape[0])
    canvas.blank(ys[ok], xs[ok])


def fill(canvas: Canvas, row0: int, col0: int, rows: int, cols: int, top: np.ndarray, gray: float) -> None:
    """Print a solid track-aligned block of other ink (rules, box borders)."""
    ys, xs, ok = region(row0, col0, rows, cols, top, canvas.shape[0])
    canvas.print_other(ys[ok], xs[ok], gray)


def stamp(canvas: Canvas, alpha: np.ndarray, row0: int, col0: int, gray: float, top: np.ndarray) -> None:
    """Print coverage `alpha` (0..255) as other ink with its top-left at track row `row0`, column `col0`."""
    flat = _flat_block(row0, col0, alpha.shape[0], alpha.shape[1], top, canvas.shape[0])
    if flat is not None:
        canvas.print_other((flat[0], flat[1]), None, gray, alpha[flat[2], flat[3]].astype(np.float32) / 255.0)
        return
    ys, xs, ok = region(row0, col0, alpha.shape[0], alpha.shape[1], top, canvas.shape[0])
    canvas.print_other(ys[ok], xs[ok], gray, alpha[ok].astype(np.float32) / 255.0)


def draw_depth_numbers(canvas: Canvas, numbered: list[tuple[int, str]], top: np.ndarray, size: int, font: int,
                       gray: float, rng: np.random.Generator) -> None:
    """Depth labels centred on their lines, all at one distance from a track edge drawn per instance."""
    height = canvas.shape[0]
    place = rng.choice(3, p=[0.45, 0.45, 0.1])
    margin = int(rng.integers(3, 25))
    for column, label in numbered:
        alpha = text_alpha(label, font, size)
        rows, cols = alpha.shape
        row0 = (margin, height - margin - rows, (height - rows) // 2)[place]
        col0 = column - cols // 2
        blank(canvas, row0 - BACKING_PAD, col0 - BACKING_PAD, rows + 2 * BACKING_PAD, cols + 2 * BACKING_PAD, top)
        stamp(canvas, alpha, row0, col0, gray, top)


def header_lines(mnemonics: tuple[str, ...], units: tuple[str, ...], scales: list[tuple[float, float]],
                 rng: np.random.Generator) -> list[str]:
    """One to three lines for a header box: a curve's name and scale, or a remark."""
    lines = []
    for _ in range(int(rng.integers(1, 4))):
        k = int(rng.integers(len(mnemonics)))
        if rng.random() < 0.5:
            lines.append(f"{scales[k][0]:g}   {mnemonics[k]}  {units[k]}   {scales[k][1]:g}")
        else:
            lines.append(REMARKS[int(rng.integers(len(REMARKS)))])
    return lines


def draw_header_box(canvas: Canvas, lines: list[str], top: np.ndarray, size: int, font: int, gray: float,
                    rng: np.random.Generator) -> tuple[int, int, int, int] | None:
    """A white bordered box of text lines (each turned; lines run left to right).

    Returns:
        The box as (track row, column, rows, columns), or None when the track has no room for it.
    """
    height, width = canvas.shape
    alphas = [text_alpha(line, font, size) for line in lines]
    pad, border = int(rng.integers(3, 9)), int(rng.integers(1, 3))
    rows = min(height - 2, max(a.shape[0] for a in alphas) + 2 * (pad + border))
    cols = sum(a.shape[1] for a in alphas) + (len(alphas) - 1) * pad + 2 * (pad + border)
    if rows <= 2 * (pad + border) or cols >= width:
        return None
    row0 = int(rng.integers(0, max(1, height - rows)))
    col0 = int(rng.integers(0, max(1, width - cols)))
    blank(canvas, row0, col0, rows, cols, top)
    for r0, c0, r, c in ((row0, col0, border, cols), (row0 + rows - border, col0, border, cols),
                         (row0, col0, rows, border), (row0, col0 + cols - border, rows, border)):
        fill(canvas, r0, c0, r, c, top, gray)
    x = col0 + border + pad
    for alpha in alphas:
        stamp(canvas, alpha[: max(0, rows - 2 * (pad + border))], row0 + border + pad, x, gray, top)
        x += alpha.shape[1] + pad
    return row0, col0, rows, cols
