"""Lay a foreign scan's layers on paper, scan it (8-bit gray or 1-bit fax), and label it.

Composition, per pixel, with each layer's coverage c in 0..1 (`plot.draw_layers`):

    under = grid x prod over curves (1 - c_k (1 - g_k)) x (1 - c_shade (1 - g_shade)) x (1 - c_flags)
    image = paper x ((1 - c_eraser) under + c_eraser) x (1 - c_print)

(ink multiplies: overprinted ink is darker; the eraser's white boxes hide what lies under them.)
Then the scan: paper 232-252 with a slow uneven shading; **8-bit**: a Gaussian blur of 0.3-0.8 px
(Pillow) and Gaussian noise of 1.5-6 gray levels; **1-bit**: a threshold at 120-170 after the blur
and a fax's errors (isolated black specks on paper, a few ink pixels dropped), stored CCITT G4.

The mask (`io.classes`), from the same coverages, so it is exact to the rasteriser's antialiasing:

- a curve owns a pixel where its coverage, not erased, is at least half the pixel; where two
  curves do, the one covering more (the later one on a tie);
- other ink where text, rules or legend samples cover half the pixel, or flags or shading do
  outside an eraser, and no curve owns it; everything else (paper, grid) is background;
- **1-bit**: no label on a white pixel; a black pixel no rule labelled takes the curve covering it
  most if any covers a fifth of it (`BILEVEL_COVER`), else other ink if other ink touches it.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from PIL import Image, ImageFilter

from veernet_pipeline.foreign.logs import ForeignLog
from veernet_pipeline.foreign.plot import Layers
from veernet_pipeline.io.classes import BACKGROUND, OTHER_INK, style_class

HALF = 128  # half coverage, in 0..255 darkness
BILEVEL_COVER = 51  # a fifth of a pixel


def _paper(shape: tuple[int, int], rng: np.random.Generator) -> np.ndarray:
    height, width = shape
    level = rng.uniform(232.0, 252.0)
    along = np.cos(np.linspace(0.0, rng.uniform(1.0, 6.0) * np.pi, width) + rng.uniform(0, 2 * np.pi))
    across = np.linspace(-1.0, 1.0, height) * rng.uniform(-1.0, 1.0)
    shading = 1.0 - rng.uniform(0.0, 0.05) * (0.5 + 0.25 * along[None, :] + 0.25 * across[:, None])
    return (level * shading).astype(np.float32)


def compose(layers: Layers, log: ForeignLog, rng: np.random.Generator) -> np.ndarray:
    """The printed page as float32 gray levels (paper white, ink dark). Shape: (H, W)."""
    under = 1.0 - layers.grid.astype(np.float32) / 255.0
    for coverage, curve in zip(layers.curves, log.curves, strict=True):
        under *= 1.0 - coverage.astype(np.float32) / 255.0 * (1.0 - curve.gray)
    under *= 1.0 - layers.shade.astype(np.float32) / 255.0 * (1.0 - layers.shade_gray)
    under *= 1.0 - layers.flags.astype(np.float32) / 255.0
    erased = layers.eraser.astype(np.float32) / 255.0
    page = (1.0 - erased) * under + erased
    page *= 1.0 - layers.print.astype(np.float32) / 255.0
    return page * _paper(page.shape, rng)


def compose_colour(layers: Layers, log: ForeignLog, pens: Sequence[tuple[int, int, int]],
                   rng: np.random.Generator) -> np.ndarray:
    """A vendor's colour print: the layers of `compose`, each curve in its pen's RGB, on white; no scanner.

    Per channel, as `compose` per gray level: a curve of coverage c multiplies the channel by
    1 - c (1 - pen / 255). Paper is one even white (246-255): the print was rasterised, not scanned.

    Shape:
        Returns (H, W, 3) uint8.
    """
    under = np.repeat((1.0 - layers.grid.astype(np.float32) / 255.0)[..., None], 3, axis=2)
    for coverage, pen in zip(layers.curves, pens, strict=True):
        tint = 1.0 - np.asarray(pen, dtype=np.float32) / 255.0
        under *= 1.0 - coverage.astype(np.float32)[..., None] / 255.0 * tint
    under *= (1.0 - layers.shade.astype(np.float32) / 255.0 * (1.0 - layers.shade_gray))[..., None]
    under *= (1.0 - layers.flags.astype(np.float32) / 255.0)[..., None]
    erased = (layers.eraser.astype(np.float32) / 255.0)[..., None]
    page = ((1.0 - erased) * under + erased) * (1.0 - layers.print.astype(np.float32) / 255.0)[..., None]
    return np.clip(np.rint(page * rng.uniform(246.0, 255.0)), 0, 255).astype(np.uint8)


def scan(page: np.ndarray, bilevel: bool, rng: np.random.Generator) -> np.ndarray:
    """Scan the page: 8-bit gray with blur and noise, or 1-bit with a threshold and fax errors (0/255).

    Shape:
        page: (H, W) float32; returns (H, W) uint8.
    """
    gray = Image.fromarray(np.clip(np.rint(page), 0, 255).astype(np.uint8))
    gray = np.asarray(gray.filter(ImageFilter.GaussianBlur(rng.uniform(0.3, 0.8))), dtype=np.float32)
    if not bilevel:
        gray += rng.standard_normal(gray.shape, dtype=np.float32) * np.float32(rng.uniform(1.5, 6.0))
        return np.clip(np.rint(gray), 0, 255).astype(np.uint8)
    black = gray < rng.uniform(120.0, 170.0)
    flat = black.reshape(-1)
    specks = rng.integers(0, flat.size, int(flat.size * rng.uniform(1e-5, 5e-5)))
    inked = np.flatnonzero(flat)
    dropped = inked[rng.random(inked.size) < rng.uniform(0.0, 0.01)]
    flat[specks], flat[dropped] = True, False
    return np.where(black, 0, 255).astype(np.uint8)


def label(layers: Layers, log: ForeignLog, image: np.ndarray, bilevel: bool) -> tuple[np.ndarray, np.ndarray]:
    """The mask classes and which curve owns each pixel (0 none, k + 1 curve k).

    Shape:
        image: (H, W) uint8; returns two (H, W) uint8 arrays.
    """
    shown = 255 - layers.eraser.astype(np.uint16)
    visible = np.stack([(c.astype(np.uint16) * shown // 255).astype(np.uint8) for c in layers.curves])
    # argmax over the curves in reverse: on a tie the later curve wins.
    best = len(layers.curves) - 1 - np.argmax(visible[::-1], axis=0)
    cover = np.take_along_axis(visible, best[None], axis=0)[0]
    owner = np.where(cover >= HALF, best + 1, 0).astype(np.uint8)
    not_erased = layers.eraser < HALF
    other = (layers.print >= HALF) | (((layers.flags >= HALF) | (layers.shade >= HALF)) & not_erased)
    if bilevel:
        black = image == 0
        owner[~black] = 0
        owner[black & (owner == 0) & (cover >= BILEVEL_COVER)] = (best + 1)[black & (owner == 0)
                                                                           & (cover >= BILEVEL_COVER)]
        touched = (layers.print > 0) | (((layers.flags > 0) | (layers.shade > 0)) & not_erased)
        other = black & (other | touched)
    classes = np.array([BACKGROUND] + [style_class(c.scale.style) for c in log.curves], dtype=np.uint8)
    mask = classes[owner]
    mask[(owner == 0) & other] = OTHER_INK
    return mask, owner
