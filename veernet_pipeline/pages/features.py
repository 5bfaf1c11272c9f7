"""Pixel features of a whole-log page that layout detection reads: ink, skew, rules, grid lines, the rest.

All work on the page as stored (portrait, depth down the rows) and at full resolution: the track
bounds must come out within a few pixels.

- Ink: darker than the local paper. The paper level is the 95th percentile of each 64 x 64 block
  (a scan's lighting varies); `dark` is below 70 % of it (curves, text, rules), `faint` below
  88 % (also a light grid). A 1-bit page gives the same mask twice.
- Skew: the angle that lines the vertical rules up best. Columns of vertical-line ink summed per
  64-row block are shifted block by block for each trial angle and the sharpest column profile
  (largest sum of squares) wins: coarse over +-1.2 degrees in 0.05 steps, then 0.005 steps.
- After deskewing by whole-pixel row shifts (`cut.shift_rows`, the layout's own skew model):
  `vertical`, faint ink in vertical runs of at least `VERTICAL_RUN` rows (rules, light ones
  too; text strokes and curves rarely run that long straight down); `horizontal`, faint ink where a window of
  `LINE_WINDOW` columns is at least `LINE_DENSITY` inked (grid lines, also dotted ones);
  `residual`, dark ink that is neither (curves, text, specks).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import ndimage

from veernet_pipeline.pages.cut import shift_rows
from veernet_pipeline.pages.layout import Skew

PAPER_BLOCK = 64
DARK, FAINT = 0.70, 0.88
# A 1-px rule skewed by 1 degree stays in one column for 57 rows; 41 keeps it, and most glyph strokes out.
VERTICAL_RUN = 41
LINE_WINDOW, LINE_DENSITY = 41, 0.45
SKEW_BLOCK = 64
COARSE_DEG, FINE_DEG, MAX_SKEW_DEG = 0.05, 0.005, 1.2
BLOCK = 32  # rows per block of the column statistics


@dataclass(frozen=True)
class PageFeatures:
    """Deskewed masks and their per-block column statistics.

    Shape:
        dark, faint, vertical, horizontal, residual: (H, W) bool, deskewed.
        rule_blocks: (H // BLOCK, W) float, the share of each block's rows that are `vertical` ink
        in each column.
    """

    skew: Skew
    dark: np.ndarray
    faint: np.ndarray
    vertical: np.ndarray
    horizontal: np.ndarray
    residual: np.ndarray
    rule_blocks: np.ndarray


def ink_masks(page: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(dark, faint) ink against the local paper level. Shape: page (H, W) uint8; returns two (H, W) bool."""
    height, width = page.shape
    nb_r, nb_c = -(-height // PAPER_BLOCK), -(-width // PAPER_BLOCK)
    padded = np.pad(page, ((0, nb_r * PAPER_BLOCK - height), (0, nb_c * PAPER_BLOCK - width)), mode="edge")
    sample = padded[::4, ::4].reshape(nb_r, PAPER_BLOCK // 4, nb_c, PAPER_BLOCK // 4)
    paper = np.percentile(sample, 95, axis=(1, 3))
    # A block that is all ink (a black scanner border, a solid flag) borrows its neighbours' paper.
    paper = np.maximum(ndimage.maximum_filter(paper, size=3), 1.0)
    blocks = padded.reshape(nb_r, PAPER_BLOCK, nb_c, PAPER_BLOCK)
    masks = []
    for share in (DARK, FAINT):
        mask = blocks < (share * paper)[:, None, :, None]
        masks.append(mask.reshape(padded.shape)[:height, :width])
    return masks[0], masks[1]


def vertical_runs(mask: np.ndarray, length: int = VERTICAL_RUN) -> np.ndarray:
    """Pixels of `mask` in vertical runs of at least `length` rows (an opening along the columns)."""
    column_major = np.ascontiguousarray(mask.T).view(np.uint8)
    opened = ndimage.maximum_filter1d(ndimage.minimum_filter1d(column_major, length, axis=1), length, axis=1)
    return np.ascontiguousarray(opened.T).astype(bool)


def estimate_skew(vertical: np.ndarray) -> Skew:
    """The page's skew from its vertical-line ink (see the module docstring); pivot at the middle row."""
    height, width = vertical.shape
    pivot = height // 2
    n_blocks = height // SKEW_BLOCK
    if n_blocks < 2:
        return Skew(angle_deg=0.0, pivot_row=pivot)
    profile = vertical[:n_blocks * SKEW_BLOCK].reshape(n_blocks, SKEW_BLOCK, width).sum(axis=1, dtype=np.int64)
    centres = np.arange(n_blocks) * SKEW_BLOCK + SKEW_BLOCK / 2 - pivot
    room = int(math.ceil(math.tan(math.radians(MAX_SKEW_DEG + COARSE_DEG)) * height)) + 1

    def sharpness(angle: float) -> float:
        total = np.zeros(width + 2 * room, dtype=np.int64)
        shifts = np.floor(math.tan(math.radians(angle)) * centres + 0.5).astype(np.int64)
        for block, shift in zip(profile, shifts, strict=True):
            total[room - shift:room - shift + width] += block  # undo the skew: move the block back left
        return float(np.sum(total.astype(np.float64) ** 2))

    coarse = np.arange(-MAX_SKEW_DEG, MAX_SKEW_DEG + COARSE_DEG / 2, COARSE_DEG)
    best = float(coarse[int(np.argmax([sharpness(a) for a in coarse]))])
    fine = np.arange(best - COARSE_DEG, best + COARSE_DEG + FINE_DEG / 2, FINE_DEG)
    scores = [sharpness(a) for a in fine]
    angle = float(fine[int(np.argmax(scores))])
    # A straight page scores the same at every angle within a fraction of a pixel: call that zero.
    flat = [a for a, s in zip(fine, scores, strict=True) if s == max(scores)]
    return Skew(angle_deg=0.0 if min(flat) <= 0.0 <= max(flat) else round(angle, 4), pivot_row=pivot)


def page_features(page: np.ndarray) -> PageFeatures:
    """Everything `detect` reads, computed once. Shape: page (H, W) uint8 as stored."""
    dark, faint = ink_masks(page)
    skew = estimate_skew(vertical_runs(dark))
    if skew.angle_deg:
        back = -skew.shifts(np.arange(page.shape[0]))
        dark, faint = shift_rows(dark, back, False), shift_rows(faint, back, False)
    vertical = vertical_runs(faint)
    density = ndimage.uniform_filter1d(faint.view(np.uint8) * np.uint8(255), LINE_WINDOW, axis=1)
    horizontal = faint & (density >= round(LINE_DENSITY * 255))
    lines = ndimage.maximum_filter1d(vertical.view(np.uint8), 3, axis=1) | ndimage.maximum_filter1d(
        horizontal.view(np.uint8), 3, axis=0)
    residual = dark & ~lines.astype(bool)
    n_blocks = max(page.shape[0] // BLOCK, 1)
    usable = n_blocks * BLOCK if page.shape[0] >= BLOCK else page.shape[0]

    rule_blocks = vertical[:usable].reshape(n_blocks, -1, page.shape[1]).mean(axis=1, dtype=np.float32)
    return PageFeatures(skew, dark, faint, vertical, horizontal, residual, rule_blocks)
