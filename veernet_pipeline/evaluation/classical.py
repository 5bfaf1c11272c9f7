"""The honest baseline: a classical tracer with no learning (grid suppression, then darkest-run tracking).

What a digitiser without a network does, so VeerNet's margin is measured against something real:

1. Ink. Darkness relative to the paper: `p = (paper - gray) / paper`, clipped to 0..1, where the
   paper level is the median gray of each block of `PAPER_BLOCK` columns (paper dominates every
   block, and a block-wise level follows uneven lighting along the depth axis).
2. Grid suppression. A grid line is a long straight run of ink. A grayscale opening of `p` with
   a long horizontal element (`max(MIN_LINE_PX, W // 8)` columns, at most W) keeps exactly the
   ink that lies on some fully dark horizontal run of that length; one with a vertical element of
   `H // 2` rows does the same for depth lines. Both openings run on `p` after a short closing
   along the line (`GAP_TOLERANCE_PX`), so a line broken by a dropout or by noise still counts as
   one line. The line ink (the larger of the two openings, never above `p`) is subtracted, so a
   curve darker than the grid line it crosses keeps its excess ink; where it is no darker (bilevel
   scans) the crossing pixels go, and a short closing across the line, from the curve's ink on
   both sides and on line pixels only, puts them back.
   Curves that stay flat on one pixel row for W/8 columns, or vertical for H/2 rows, are taken for
   grid too: that is this method's known blind spot.
3. Darkest-run tracking. The cleaned ink becomes a binary pseudo-probability map (C = 2:
   background `1 - ink`, curve ink), and every curve of the track is read from it as one group of
   curves drawn alike, since a classical tracer has no way to tell solid from dashed. They go
   through `trace_curves`, the very same path search (same `extract:` parameters, the same joint
   reading of curves that share their evidence) that reads VeerNet's probabilities. So the two
   methods differ only in the per-pixel evidence, which is the comparison we want: the shared
   search rewards dark runs (-log peak), connected strokes and gap bridging equally for both.
   Every curve's share of the ink is 1, so the class evidence's weight plays no part; curve
   identity rests on continuity alone. The identities that come out are therefore arbitrary;
   evaluation scores them as it scores any curves drawn alike, under whichever assignment of
   traced to true curves fits best (`identity.best_assignment`).
"""

from __future__ import annotations

import numpy as np
from scipy import ndimage

from veernet_pipeline.config import ExtractParams
from veernet_pipeline.reading.extract import trace_curves

PAPER_BLOCK = 256  # columns per paper-level estimate
MIN_LINE_PX = 64  # shortest horizontal element; W // 8 on real widths (400-1600 px)
GAP_TOLERANCE_PX = 3  # breaks in a grid line up to this long are closed before the opening
CROSSING_PX = 5  # a curve's hole where it crossed a line up to 4 px thick is closed from both sides


def _check_image(image: np.ndarray) -> np.ndarray:
    image = np.asarray(image)
    if image.ndim != 2 or image.dtype != np.uint8:
        raise ValueError(f"image must be a 2-D uint8 array (H, W), ink dark on light, got {image.dtype} shape "
                         f"{image.shape}; decode scans with veernet_pipeline.io.tiff.decode_scan")
    if image.size == 0:
        raise ValueError(f"image has no pixels (shape {image.shape})")
    return image


def ink_map(image: np.ndarray) -> np.ndarray:
    """Darkness relative to the local paper level, 0 (paper) .. 1 (black).

    Shape:
        image: (H, W) uint8. Returns (H, W) float64.
    """
    image = _check_image(image).astype(np.float64)
    width = image.shape[1]
    paper = np.empty(width)
    for start in range(0, width, PAPER_BLOCK):
        paper[start:start + PAPER_BLOCK] = np.median(image[:, start:start + PAPER_BLOCK])
    paper = np.maximum(paper, 1.0)[None, :]
    return np.clip((paper - image) / paper, 0.0, 1.0)


def _closing(values: np.ndarray, length: int, axis: int) -> np.ndarray:
    """Grayscale closing along `axis`: fills light breaks shorter than `length` between dark pixels."""
    grown = ndimage.maximum_filter1d(values, length, axis=axis, mode="nearest")
    return ndimage.minimum_filter1d(grown, length, axis=axis, mode="nearest")


def _line_ink(ink: np.ndarray, length: int, axis: int) -> np.ndarray:
    """Ink lying on a straight run at least `length` long along `axis` (a grayscale opening)."""
    if length < 2:
        return np.zeros_like(ink)
    closed = _closing(ink, GAP_TOLERANCE_PX, axis)
    # Paper beyond the image edge: a run touching the edge must fit inside the image to be a line
    # (the default reflection would double a short curve stretch at the edge into a "line").
    eroded = ndimage.minimum_filter1d(closed, length, axis=axis, mode="constant", cval=0.0)
    opened = ndimage.maximum_filter1d(eroded, length, axis=axis, mode="constant", cval=0.0)
    # The closing may lift a gap pixel above its own ink; line ink never exceeds the pixel's ink.
    return np.minimum(opened, ink)


def suppress_grid(ink: np.ndarray) -> np.ndarray:
    """Ink with long horizontal and vertical lines removed.

    Shape:
        ink: (H, W) float in 0..1. Returns (H, W) float64.
    """
    ink = np.asarray(ink, dtype=np.float64)
    if ink.ndim != 2:
        raise ValueError(f"ink must be a 2-D (H, W) map, got shape {ink.shape}")
    height, width = ink.shape
    horizontal = _line_ink(ink, min(width, max(MIN_LINE_PX, width // 8)), axis=1)
    vertical = _line_ink(ink, height // 2, axis=0)
    line = np.maximum(horizontal, vertical)
    clean = np.clip(ink - line, 0.0, 1.0)
    # Where a curve crossed a line as dark as itself it now has a hole as wide as the line; every
    # depth line would cut the trace, and the path search loses a curve's place across each cut.
    # Close the hole across the line, from the curve's ink on both sides, on line pixels only.
    across_depth_line = _closing(clean, CROSSING_PX, axis=1)
    across = np.where(vertical >= horizontal, across_depth_line, _closing(clean, CROSSING_PX, axis=0))
    return np.where(line > 0, np.maximum(clean, np.minimum(across, ink)), clean)


def classical_probs(image: np.ndarray) -> np.ndarray:
    """Pseudo class probabilities of a scan: background and the cleaned ink.

    Args:
        image: the scan, ink dark (0) on light (255).

    Returns:
        Channel 0 = 1 - cleaned ink, channel 1 = cleaned ink (they sum to 1 per pixel).

    Shape:
        image: (H, W) uint8. Returns (2, H, W) float32.
    """
    clean = suppress_grid(ink_map(image))
    return np.stack([1.0 - clean, clean]).astype(np.float32)


def trace_classical(image: np.ndarray, extract: ExtractParams, n_curves: int = 2) -> tuple[np.ndarray, np.ndarray]:
    """`n_curves` curves traced without learning, through the shared path search.

    Args:
        image: the scan, ink dark (0) on light (255).
        extract: path-search knobs (params.yaml `extract:`), the same VeerNet is read with.
        n_curves: curves the track holds (the sidecar's count).

    Returns:
        `(rows, confidence)` as `trace_curves` returns them; the order of the curves is arbitrary.

    Shape:
        image: (H, W) uint8. rows, confidence: (n_curves, W).
    """
    return trace_curves(classical_probs(image), extract, [(1,)] * n_curves)
