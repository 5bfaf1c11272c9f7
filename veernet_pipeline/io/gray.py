"""Decoded TIFF samples -> the pipeline's gray: ``uint8``, ink dark (0) on light paper (255).

`to_gray` maps whatever a page holds to one gray level per pixel, in blocks of `BLOCK_ROWS` rows,
so no full-size float copy is ever made: a scan near the pixel budget costs its decoded samples
plus one ``uint8`` image. 8-bit gray is returned as decoded (MINISWHITE inverted in place), 1-bit
is widened in place, and deeper or multi-sample layouts are reduced block by block with integer
arithmetic.

How samples become levels (0..255):

- unsigned integers of ``bits`` bits (1, 2, 4, 8, 12, 16, ...): ``round(v * 255 / (2**bits - 1))``;
  a value above ``2**bits - 1`` (a file that lies about its depth) is clipped;
- signed integers: by the range of the values present (lowest -> 0, highest -> 255), since the
  sample format says nothing about where black and white sit;
- floats: ``0..1`` when every finite value lies in it (the usual convention), else the range of
  the values present; NaN and infinities become paper (255);
- an image whose values are all equal is blank paper (255).

Then per photometric interpretation: MINISBLACK keeps the first sample (extra samples such as alpha
are ignored), MINISWHITE inverts it, RGB (and YCbCr the JPEG codec returned as RGB) becomes ink gray
(below), raw YCbCr keeps Y (already luma), CMYK goes through RGB to ink gray, a palette through a
256-entry ink-gray table of its colormap.

**Ink gray: a coloured pen is ink.** A vendor print tells its curves apart by colour, and luma alone
would hand the net a yellow curve at 226 and an orange one at 173, paler than the grid; the net
learnt ink at 0-70 and faded ink to 150. So a colour is also as dark as it is saturated: gray =
min(BT.601 luma, 255 - darkness), darkness rising from 0 at a saturation (max - min channel) of
`PAPER_SATURATION` to 255 at full saturation. Gray, black and white pixels keep their luma exactly,
and so do paper yellowed with age and a scanner's chroma noise, which stay below that saturation
(aged paper (240, 230, 200): 40); yellow (255, 255, 0) becomes 0, red (220, 0, 0) 47 instead of 66.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# Rows converted at a time: bounds the temporaries (uint32 or float64) of a block to a few MB per
# 1,000 px of width, whatever the image's height.
BLOCK_ROWS = 256
# ITU-R BT.601 luma weights, in thousandths, for integer arithmetic.
_LUMA = (299, 587, 114)
# Saturation (max - min channel, 0..255) up to which a colour is paper or chroma noise, not a pen (module docstring).
PAPER_SATURATION = 64


@dataclass(frozen=True)
class Layout:
    """How a page's decoded samples read as gray.

    Attributes:
        photometric: ``minisblack``, ``miniswhite``, ``rgb``, ``ycbcr``, ``separated`` or ``palette``.
        bits: bits per sample as stored (unsigned samples are scaled by ``2**bits - 1``).
        colormap: the palette, (3, N) as stored (8- or 16-bit entries), for ``palette`` only.
        ycbcr_as_rgb: the codec (JPEG) already turned YCbCr into RGB.
    """

    photometric: str
    bits: int
    colormap: np.ndarray | None = None
    ycbcr_as_rgb: bool = False


def _value_range(samples: np.ndarray) -> tuple[float, float]:
    """(low, high) that signed or float samples are stretched over; block by block, NaN and inf skipped."""
    low, high = np.inf, -np.inf
    for start in range(0, samples.shape[0], BLOCK_ROWS):
        block = samples[start:start + BLOCK_ROWS]
        if block.dtype.kind == "f":
            block = block[np.isfinite(block)]
        if block.size:
            low, high = min(low, float(block.min())), max(high, float(block.max()))
    if samples.dtype.kind == "f" and low >= 0.0 and high <= 1.0:
        return 0.0, 1.0
    return low, high


def _levels(block: np.ndarray, bits: int, value_range: tuple[float, float] | None) -> np.ndarray:
    """One block of samples -> uint8 levels (module docstring)."""
    if value_range is not None:
        low, high = value_range
        if not high > low:
            return np.full(block.shape, 255, dtype=np.uint8)
        scaled = np.rint((block.astype(np.float64) - low) * (255.0 / (high - low)))
        return np.nan_to_num(scaled, nan=255.0, posinf=255.0, neginf=255.0).clip(0, 255).astype(np.uint8)
    if block.dtype == np.uint8 and bits == 8:
        return block
    top = (1 << bits) - 1
    if block.dtype.itemsize <= 2:
        wide = np.minimum(block.astype(np.uint32), top)
        return ((wide * 255 + top // 2) // top).astype(np.uint8)
    return np.rint(np.minimum(block, top).astype(np.float64) * (255.0 / top)).astype(np.uint8)


def _ink_gray(red: np.ndarray, green: np.ndarray, blue: np.ndarray, scale: int = 1) -> np.ndarray:
    """Integer ink gray (module docstring) of three uint32 channels that each run to ``255 * scale``; rounded."""
    total = _LUMA[0] * red + _LUMA[1] * green + _LUMA[2] * blue
    luma = (total + 500 * scale) // (1000 * scale)
    saturation = np.maximum(np.maximum(red, green), blue) - np.minimum(np.minimum(red, green), blue)
    over = np.maximum(saturation.astype(np.int64) - PAPER_SATURATION * scale, 0)
    span = (255 - PAPER_SATURATION) * scale
    darkness = (over * 255 + span // 2) // span
    return np.minimum(luma, 255 - darkness).astype(np.uint8)


def _combine(levels: np.ndarray, layout: Layout) -> np.ndarray:
    """uint8 levels of one block, (h, W) or (h, W, S) -> gray (h, W)."""
    first = levels[..., 0] if levels.ndim == 3 else levels
    kind = layout.photometric
    if kind == "minisblack" or (kind == "ycbcr" and not layout.ycbcr_as_rgb):
        return first  # Y of raw YCbCr is the luma already
    if kind == "miniswhite" or (kind == "separated" and levels.ndim == 2):
        return 255 - first  # a single separated sample is ink density
    wide = levels[..., :4].astype(np.uint32)
    if kind == "separated":
        cyan, magenta, yellow, black = (wide[..., i] for i in range(4))
        return _ink_gray((255 - cyan) * (255 - black), (255 - magenta) * (255 - black),
                         (255 - yellow) * (255 - black), scale=255)
    return _ink_gray(wide[..., 0], wide[..., 1], wide[..., 2])


def _palette_rgb(colormap: np.ndarray) -> np.ndarray:
    """A colormap as 0..255 RGB entries. Shape: (3, N) as stored -> (3, N) uint32."""
    cmap = np.asarray(colormap, dtype=np.uint32)
    if cmap.max(initial=0) > 255:
        cmap = (cmap * 255 + 32767) // 65535  # 16-bit entries, as the TIFF spec stores them
    # Some writers put 8-bit entries in the 16-bit field: then they are used as they are.
    return cmap


def _palette(indices: np.ndarray, colormap: np.ndarray) -> np.ndarray:
    """Palette indices -> gray through an ink-gray table of the colormap; an index past its end reads the last."""
    cmap = _palette_rgb(colormap)
    table = _ink_gray(cmap[0], cmap[1], cmap[2])
    return np.take(table, indices, mode="clip")


def to_gray(samples: np.ndarray, layout: Layout) -> np.ndarray:
    """Decoded samples -> gray, ink dark on light paper (module docstring for the mapping).

    Args:
        samples: as the codec returned them, sample axis last; bool for 1-bit.
        layout: how to read them.

    Returns:
        ``uint8`` gray; may be `samples` itself, modified in place (8-bit and 1-bit gray).

    Shape:
        samples: (H, W) or (H, W, S). Returns (H, W).
    """
    if layout.photometric == "palette":
        return _palette(samples[..., 0] if samples.ndim == 3 else samples, layout.colormap)
    gray_kinds = ("minisblack", "miniswhite")
    if samples.ndim == 2 and layout.photometric in gray_kinds and samples.dtype in (np.bool_, np.uint8):
        out = samples.view(np.uint8)
        if samples.dtype == np.bool_:
            out *= 255
        elif layout.bits != 8:
            out[:] = _levels(out, layout.bits, None)
        if layout.photometric == "miniswhite":
            np.subtract(255, out, out=out)
        return out
    value_range = _value_range(samples) if samples.dtype.kind in "if" else None
    bits = 1 if samples.dtype == np.bool_ else layout.bits
    out = np.empty(samples.shape[:2], dtype=np.uint8)
    for start in range(0, samples.shape[0], BLOCK_ROWS):
        block = samples[start:start + BLOCK_ROWS]
        out[start:start + BLOCK_ROWS] = _combine(_levels(block, bits, value_range), layout)
    return out


def is_colour(layout: Layout, samples: np.ndarray) -> bool:
    """Whether a page holds colour `to_rgb` can give: RGB (or JPEG's YCbCr as RGB), CMYK or a palette."""
    kind = layout.photometric
    return (kind in ("rgb", "palette") or (kind == "ycbcr" and layout.ycbcr_as_rgb)
            or (kind == "separated" and samples.ndim == 3))


def to_rgb(samples: np.ndarray, layout: Layout) -> np.ndarray:
    """Decoded samples of a colour page (`is_colour`) -> RGB, for the reading's pens (`reading.colour`).

    Levels are read as `to_gray` reads them; CMYK goes to RGB as `to_gray` takes it, a palette through its
    colormap. Raw YCbCr is not colour here: its Y is read, as a gray page.

    Raises:
        ValueError: the page is not colour.

    Shape:
        samples: (H, W) or (H, W, S). Returns (H, W, 3) uint8.
    """
    if not is_colour(layout, samples):
        raise ValueError(f"a {layout.photometric} page with samples {samples.shape} holds no colour to read")
    if layout.photometric == "palette":
        cmap = _palette_rgb(layout.colormap).T.astype(np.uint8)
        return np.take(cmap, samples[..., 0] if samples.ndim == 3 else samples, axis=0, mode="clip")
    value_range = _value_range(samples) if samples.dtype.kind in "if" else None
    out = np.empty((*samples.shape[:2], 3), dtype=np.uint8)
    for start in range(0, samples.shape[0], BLOCK_ROWS):
        levels = _levels(samples[start:start + BLOCK_ROWS], layout.bits, value_range)
        if layout.photometric == "separated":
            wide = levels[..., :4].astype(np.uint32)
            levels = ((255 - wide[..., :3]) * (255 - wide[..., 3:4]) + 127) // 255
        out[start:start + BLOCK_ROWS] = levels[..., :3]
    return out
