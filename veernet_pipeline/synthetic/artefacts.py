"""Scan artefacts: paper, lighting, blur, noise, speckle, JPEG and bilevel thresholding.

The ink layer (uint8, 255 = no ink) is laid on paper: gray = paper x ink / 255, where the paper is a
level in 225..250, times an uneven illumination field, plus a fibre texture. Then, in this order:
blur, Gaussian noise, speckle (dust and dropouts), quantisation to uint8, and either JPEG or a
bilevel threshold (0/255, as fax-compressed archive scans are; such scans are never JPEG). Every
artefact is applied with its `share` and draws its strength from its range (`synthesize.artefacts`;
`noise_std` for the noise) from its own random stream, so switching one on or off leaves the others
and the geometry unchanged. Nothing is resized or resampled: the geometry, and with it the mask,
is final before any artefact runs.

Noise and texture come from banks built once per process from a fixed seed (`functools.lru_cache`)
and are read at offsets drawn per instance: drawing 8 million Gaussians per instance would take
half the time budget of a full-size render.
"""

from __future__ import annotations

import io
from functools import lru_cache

import numpy as np
from PIL import Image
from scipy import ndimage

from veernet_pipeline.config import Artefact

BANK_SEED = 20261122
NOISE_BANK = 1 << 24
TEXTURE_BANK = (704, 13312)
# Bank values are N(0, 1) x BANK_UNIT as int8 (clipped at +-5.3 sigma).
BANK_UNIT = 24.0
PAPER_LEVEL = (225.0, 250.0)


@lru_cache(maxsize=1)
def noise_bank() -> np.ndarray:
    """White Gaussian noise, int8 in units of 1 / BANK_UNIT sigma. Shape: (NOISE_BANK,)."""
    values = np.random.default_rng([BANK_SEED, 1]).standard_normal(NOISE_BANK, dtype=np.float32) * BANK_UNIT
    bank = np.clip(np.rint(values), -127, 127).astype(np.int8)
    bank.flags.writeable = False
    return bank


@lru_cache(maxsize=1)
def texture_bank() -> np.ndarray:
    """Paper texture: fine grain plus soft mottling, int8 with std BANK_UNIT. Shape: TEXTURE_BANK."""
    rng = np.random.default_rng([BANK_SEED, 2])
    grain = ndimage.gaussian_filter(rng.standard_normal(TEXTURE_BANK, dtype=np.float32), (0.7, 1.1))
    coarse = rng.standard_normal((TEXTURE_BANK[0] // 16 + 2, TEXTURE_BANK[1] // 16 + 2), dtype=np.float32)
    mottle = ndimage.zoom(ndimage.gaussian_filter(coarse, 1.0), 16, order=1)[: TEXTURE_BANK[0], : TEXTURE_BANK[1]]
    texture = grain / grain.std() + 0.8 * mottle / mottle.std()
    bank = np.clip(np.rint(texture * (BANK_UNIT / texture.std())), -127, 127).astype(np.int8)
    bank.flags.writeable = False
    return bank


def decide(artefact: Artefact, rng: np.random.Generator) -> float | None:
    """The artefact's strength for this instance, or None when it does not apply."""
    applies = rng.random() < artefact.share
    strength = float(rng.uniform(artefact.strength.min, artefact.strength.max))
    return strength if applies else None


def _bank_window(bank: np.ndarray, shape: tuple[int, int], rng: np.random.Generator) -> np.ndarray:
    height, width = shape
    if bank.ndim == 1:
        start = int(rng.integers(0, max(1, bank.size - height * width)))
        flat = bank[start : start + height * width]
        return np.resize(flat, height * width).reshape(shape) if flat.size < height * width else flat.reshape(shape)
    y0 = int(rng.integers(0, max(1, bank.shape[0] - height)))
    x0 = int(rng.integers(0, max(1, bank.shape[1] - width)))
    window = bank[y0 : y0 + height, x0 : x0 + width]
    if window.shape != shape:
        window = np.pad(window, ((0, height - window.shape[0]), (0, width - window.shape[1])), mode="reflect")
    flips = rng.integers(2, size=2)
    return window[:: 1 - 2 * int(flips[0]), :: 1 - 2 * int(flips[1])]


def _illumination(shape: tuple[int, int], depth: float, rng: np.random.Generator) -> np.ndarray:
    # Dim towards one track edge (a page lifting off the glass) and in slow waves along the strip.
    height, width = shape
    y = np.linspace(0.0, 1.0, height, dtype=np.float32)
    across = (y if rng.random() < 0.5 else 1.0 - y) ** rng.uniform(1.0, 3.0)
    x = np.linspace(0.0, 2.0 * np.pi, width, dtype=np.float32)
    along = 0.6 + 0.4 * np.sin(x * rng.uniform(0.5, 4.0) + rng.uniform(0.0, 2.0 * np.pi))
    return np.multiply.outer(-depth * across, along.astype(np.float32))


def paper_and_ink(ink: np.ndarray, paper: Artefact, illumination: Artefact,
                  rngs: list[np.random.Generator]) -> tuple[np.ndarray, list[str]]:
    """Lay the ink layer on paper. Returns the float32 image (H, W) and the artefacts applied."""
    applied = []
    # In units of 1/255, so that multiplying by the ink layer gives gray levels.
    level = np.float32((rngs[0].uniform(*PAPER_LEVEL) + 0.5) / 255.0)
    dim, texture = decide(illumination, rngs[1]), decide(paper, rngs[0])
    if dim is not None:
        image = _illumination(ink.shape, dim, rngs[1])
        image += np.float32(1.0)
        image *= level
        applied.append("illumination")
    else:
        image = np.full(ink.shape, level, dtype=np.float32)
    if texture is not None:
        image += _bank_window(texture_bank(), ink.shape, rngs[0]) * np.float32(texture / BANK_UNIT / 255.0)
        applied.append("paper")
    image *= ink
    return image, applied


def blur(image: np.ndarray, side: float) -> None:
    """3-tap blur [side, 1 - 2 side, side] along both axes, in place (edges keep their values)."""
    for axis in (0, 1):
        inner = (slice(1, -1), slice(None)) if axis == 0 else (slice(None), slice(1, -1))
        before = (slice(None, -2), slice(None)) if axis == 0 else (slice(None), slice(None, -2))
        after = (slice(2, None), slice(None)) if axis == 0 else (slice(None), slice(2, None))
        # The neighbours' sum is taken before the centre changes.
        sides = image[before] + image[after]
        sides *= np.float32(side)
        image[inner] *= np.float32(1.0 - 2.0 * side)
        image[inner] += sides


def add_noise(image: np.ndarray, std: float, rng: np.random.Generator) -> None:
    """Add white Gaussian noise of standard deviation `std` gray levels, in place."""
    image += _bank_window(noise_bank(), image.shape, rng) * np.float32(std / BANK_UNIT)


def speckle(image: np.ndarray, density: float, rng: np.random.Generator) -> None:
    """Dark dust specks and light dropouts on `density` of the pixels (a quarter of them 2 x 2), in place."""
    height, width = image.shape
    count = int(rng.poisson(density * height * width))
    ys, xs = rng.integers(0, height - 1, count), rng.integers(0, width - 1, count)
    dark = rng.random(count) < 0.7
    values = np.where(dark, rng.uniform(0.0, 90.0, count), rng.uniform(215.0, 255.0, count)).astype(np.float32)
    big = rng.random(count) < 0.25
    for dy, dx in ((0, 0), (0, 1), (1, 0), (1, 1)):
        pick = big if (dy, dx) != (0, 0) else np.ones(count, dtype=bool)
        image[ys[pick] + dy, xs[pick] + dx] = values[pick]


def quantise(image: np.ndarray) -> np.ndarray:
    """Float image -> uint8, clipped to 0..255 (values carry +0.5 from the paper level, so this rounds)."""
    np.clip(image, 0.0, 255.0, out=image)
    return image.astype(np.uint8)


def jpeg(image: np.ndarray, quality: int) -> np.ndarray:
    """Encode and decode with Pillow's JPEG at `quality` (4:2:0 does not apply to one channel)."""
    buffer = io.BytesIO()
    Image.fromarray(image).save(buffer, format="JPEG", quality=int(quality))
    buffer.seek(0)
    with Image.open(buffer) as decoded:
        return np.asarray(decoded.convert("L")).copy()


def bilevel(image: np.ndarray, threshold: float) -> np.ndarray:
    """0 where the gray level is below `threshold`, else 255."""
    return (image >= threshold).view(np.uint8) * np.uint8(255)
