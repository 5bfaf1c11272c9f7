"""Printed text on a track: depth numbers, header boxes and shaded flags.

Glyphs are rendered with Pillow's FreeType from the DejaVu fonts matplotlib ships (no downloads),
once per (character, font, size) per process (`functools.lru_cache`), set side by side on a
common baseline by their advance widths, and turned 90 degrees counter-clockwise: a landscape strip
is a portrait log turned that way, so text printed across the log reads bottom to top here. A stamp
darkens the ink layer by the glyphs' coverage.

- Depth numbers sit on their numbered depth line near one track edge (or mid-track), on a small
  white backing that interrupts the grid (curves are drawn over them later).
- Header boxes are white, bordered boxes of a few text lines (log names, scales, remarks). They are
  drawn after the curves and blank them: no ink there, so no label there.
- Shaded flags are hatched or solid blocks at a track edge, drawn before the curves (which stay on top).

Positions are track rows; the skew moves every stamp by `top[x]` in its column.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import matplotlib
import numpy as np
from PIL import Image, ImageDraw, ImageFont

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


def _region(row0: int, col0: int, rows: int, cols: int, top: np.ndarray,
            height: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    # Pixel indices of a track-aligned block, skewed; keep mask for those inside the image.
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


def blank(ink: np.ndarray, row0: int, col0: int, rows: int, cols: int, top: np.ndarray) -> tuple[np.ndarray,
                                                                                                  np.ndarray]:
    """Set a block to no ink; return its image pixel indices (ys, xs)."""
    flat = _flat_block(row0, col0, rows, cols, top, ink.shape[0])
    if flat is not None:
        ink[flat[0], flat[1]] = 255
        ys, xs = np.mgrid[flat[0], flat[1]]
        return ys.ravel(), xs.ravel()
    ys, xs, ok = _region(row0, col0, rows, cols, top, ink.shape[0])
    ink[ys[ok], xs[ok]] = 255
    return ys[ok], xs[ok]


def stamp(ink: np.ndarray, alpha: np.ndarray, row0: int, col0: int, gray: float, top: np.ndarray) -> None:
    """Darken `ink` by coverage `alpha` placed with its top-left at track row `row0`, column `col0`."""
    flat = _flat_block(row0, col0, alpha.shape[0], alpha.shape[1], top, ink.shape[0])
    if flat is not None:
        cover = alpha[flat[2], flat[3]].astype(np.float32) / 255.0
        printed = np.rint(255.0 - cover * (255.0 - gray)).astype(np.uint8)
        np.minimum(ink[flat[0], flat[1]], printed, out=ink[flat[0], flat[1]])
        return
    ys, xs, ok = _region(row0, col0, alpha.shape[0], alpha.shape[1], top, ink.shape[0])
    cover = alpha[ok].astype(np.float32) / 255.0
    ys, xs = ys[ok], xs[ok]
    ink[ys, xs] = np.minimum(ink[ys, xs], np.rint(255.0 - cover * (255.0 - gray)).astype(np.uint8))


def draw_depth_numbers(ink: np.ndarray, numbered: list[tuple[int, str]], top: np.ndarray, size: int, font: int,
                       gray: float, rng: np.random.Generator) -> None:
    """Depth labels centred on their lines, all at one distance from a track edge drawn per instance."""
    height = ink.shape[0]
    place = rng.choice(3, p=[0.45, 0.45, 0.1])
    margin = int(rng.integers(3, 25))
    for column, label in numbered:
        alpha = text_alpha(label, font, size)
        rows, cols = alpha.shape
        row0 = (margin, height - margin - rows, (height - rows) // 2)[place]
        col0 = column - cols // 2
        blank(ink, row0 - BACKING_PAD, col0 - BACKING_PAD, rows + 2 * BACKING_PAD, cols + 2 * BACKING_PAD, top)
        stamp(ink, alpha, row0, col0, gray, top)


def draw_flags(ink: np.ndarray, count: int, top: np.ndarray, gray: float, rng: np.random.Generator) -> None:
    """Hatched or solid blocks reaching in from a track edge."""
    height, width = ink.shape
    for _ in range(count):
        cols = int(rng.integers(8, 60))
        rows = int(rng.integers(max(2, height // 20), max(3, height // 4)))
        col0 = int(rng.integers(0, max(1, width - cols)))
        row0 = 0 if rng.random() < 0.5 else height - rows
        kind, period = int(rng.integers(3)), int(rng.integers(3, 7))
        ys, xs, ok = _region(row0, col0, rows, cols, top, height)
        local_y, local_x = np.nonzero(ok)
        ys, xs = ys[ok], xs[ok]
        if kind == 0:
            on = (local_y + local_x) % period == 0
        elif kind == 1:
            on = (local_y % 2 == 0) & (local_x % 2 == 0)
        else:
            on = np.ones(ys.size, dtype=bool)
        ink[ys[on], xs[on]] = np.minimum(ink[ys[on], xs[on]], np.uint8(gray))


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


def draw_header_box(ink: np.ndarray, lines: list[str], top: np.ndarray, size: int, font: int, gray: float,
                    rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """A white bordered box of text lines (each turned; lines run left to right); return its pixels."""
    height, width = ink.shape
    alphas = [text_alpha(line, font, size) for line in lines]
    pad, border = int(rng.integers(3, 9)), int(rng.integers(1, 3))
    rows = min(height - 2, max(a.shape[0] for a in alphas) + 2 * (pad + border))
    cols = sum(a.shape[1] for a in alphas) + (len(alphas) - 1) * pad + 2 * (pad + border)
    if rows <= 2 * (pad + border) or cols >= width:
        # No room for a box on so small a track: print none.
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    row0 = int(rng.integers(0, max(1, height - rows)))
    col0 = int(rng.integers(0, max(1, width - cols)))
    pixels = blank(ink, row0, col0, rows, cols, top)
    for r0, c0, r, c in ((row0, col0, border, cols), (row0 + rows - border, col0, border, cols),
                         (row0, col0, rows, border), (row0, col0 + cols - border, rows, border)):
        ys, xs, ok = _region(r0, c0, r, c, top, height)
        ink[ys[ok], xs[ok]] = np.minimum(ink[ys[ok], xs[ok]], np.uint8(gray))
    x = col0 + border + pad
    for alpha in alphas:
        stamp(ink, alpha[: max(0, rows - 2 * (pad + border))], row0 + border + pad, x, gray, top)
        x += alpha.shape[1] + pad
    return pixels
