"""Render one synthetic track strip: image, exact mask, calibration and the native curve samples.

Geometry follows the calibration contract exactly. The depth window runs from the first to the last
native sample of the window, so column x sits at depth ``top + (x + 0.5) * (bottom - top) / W``
and the curve value there is the linear interpolation of the native samples; its subpixel row is
``calibration.value_to_row(value)``. Rows outside the track are clipped to the edge row (the LAS
keeps the true value; wrap-around backup scales come later).

Ink and mask come from one boolean layer per curve, so the mask labels exactly the drawn ink:
the per-column rows are rounded, each column gets the vertical run from its row halfway towards
both neighbours' rows (steep stretches stay 8-connected), curve B is cut into dashes along its arc
length (a dash is decided per column, so a one-column jump is inked or skipped whole), then the
runs are thickened to the line width over neighbouring columns and rows. The image
is darkened where a layer is set and the mask gets the class id there; curves are drawn in order,
so at a crossing the later curve (B, class 2) owns the shared pixels. Noise is added to the image
only, after the mask is fixed.

Everything is drawn at native size; nothing is resized.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from veernet_pipeline.config import SynthesizeParams
from veernet_pipeline.io.calibration import Calibration
from veernet_pipeline.synthetic.curves import Well, choose_scale, procedural_window, window

MINOR_GRID_PX = (8.0, 12.0)
MAJOR_EVERY = 5


@dataclass(frozen=True)
class SyntheticLog:
    """One rendered instance.

    Shape:
        image, mask: (H, W) uint8; image ink dark on light, mask 0 background, 1 curve A, 2 curve B.
        depth and each entry of values: (N,) native LAS samples of the window.
    """

    image: np.ndarray
    mask: np.ndarray
    calibration: Calibration
    depth: np.ndarray
    values: list[np.ndarray]
    well: str
    mnemonics: tuple[str, ...]
    units: tuple[str, ...]
    line_widths: tuple[int, ...]


def curve_rows(calibration: Calibration, depth: np.ndarray, values: np.ndarray, width: int, height: int,
               curve: int) -> np.ndarray:
    """Integer row of a curve in each column, clipped to the track. Shape: (W,) int64.

    The same computation a reader of the LAS and the sidecar would do: interpolate the native
    samples at the column depths, map through the curve's scale, clip, round to the nearest row.
    """
    at_columns = np.interp(calibration.column_depths(width), depth, values)
    rows = calibration.value_to_row(at_columns, height, curve)
    return np.rint(np.clip(rows, 0.0, height - 1.0)).astype(np.int64)


def curve_layer(rows: np.ndarray, height: int, line_width: int, dash: tuple[int, int] | None = None,
                dash_phase: float = 0.0) -> np.ndarray:
    """Boolean ink layer of one curve.

    Args:
        rows: integer row per column, within [0, height).
        height: image height H.
        line_width: ink thickness in px (>= 1).
        dash: (ink, gap) lengths in px along the curve, or None for a solid line.
        dash_phase: offset into the dash pattern, px.

    Returns:
        (H, W) bool, True where the curve puts ink.
    """
    rows = rows.astype(np.int64)
    prev = np.concatenate((rows[:1], rows[:-1]))
    nxt = np.concatenate((rows[1:], rows[-1:]))
    mid_prev, mid_next = (rows + prev) / 2.0, (rows + nxt) / 2.0
    low = np.minimum(rows, np.ceil(np.minimum(mid_prev, mid_next))).astype(np.int64)
    high = np.maximum(rows, np.floor(np.maximum(mid_prev, mid_next))).astype(np.int64)
    if dash is not None:
        arc = np.concatenate(([0.0], np.cumsum(np.hypot(1.0, np.diff(rows)))))
        off = np.mod(arc + dash_phase, dash[0] + dash[1]) >= dash[0]
        low[off], high[off] = height, -1
    # A pixel thickens to columns x-before..x+after and rows y-before..y+after.
    before, after = (line_width - 1) // 2, line_width // 2
    width = rows.size
    thick_low, thick_high = low.copy(), high.copy()
    for dx in range(-after, before + 1):
        if dx == 0:
            continue
        src = slice(max(dx, 0), width + min(dx, 0))
        dst = slice(max(-dx, 0), width - max(dx, 0))
        thick_low[dst] = np.minimum(thick_low[dst], low[src])
        thick_high[dst] = np.maximum(thick_high[dst], high[src])
    empty = thick_low > thick_high
    thick_low = np.clip(thick_low - before, 0, height - 1)
    thick_high = np.clip(thick_high + after, 0, height - 1)
    thick_low[empty], thick_high[empty] = height, -1
    y = np.arange(height)[:, None]
    return (y >= thick_low[None, :]) & (y <= thick_high[None, :])


def _draw_grid(image: np.ndarray, rng: np.random.Generator) -> None:
    height, width = image.shape
    spacing = rng.uniform(*MINOR_GRID_PX)
    columns = np.rint(np.arange(rng.uniform(0.0, spacing), width, spacing)).astype(np.int64)
    columns = columns[columns < width]
    major = columns[int(rng.integers(MAJOR_EVERY)) :: MAJOR_EVERY]
    minor_gray, major_gray, value_gray = rng.uniform(195, 225), rng.uniform(130, 175), rng.uniform(160, 200)
    image[:, columns] = np.minimum(image[:, columns], minor_gray)
    image[:, major] = np.minimum(image[:, major], major_gray)
    divisions = int(rng.integers(4, 11))
    value_rows = np.rint(np.arange(1, divisions) * height / divisions).astype(np.int64)
    image[value_rows, :] = np.minimum(image[value_rows, :], value_gray)
    image[[0, height - 1], :] = np.minimum(image[[0, height - 1], :], major_gray)


def render_instance(seed: int, index: int, params: SynthesizeParams, wells: list[Well], n_curves: int) -> SyntheticLog:
    """Render instance `index` of the stream `seed`; the same arguments give the same bytes.

    Args:
        seed: stream seed (the set's seed).
        index: instance index within the stream.
        params: synthesize parameters (sizes, shares, line width, noise, dash).
        wells: source wells; empty means every instance is procedural.
        n_curves: 1 or 2 curves in the track (curve A solid, curve B dashed).

    Returns:
        The instance; `values` are the window's native samples, the ground truth for its LAS.
    """
    if n_curves not in (1, 2):
        raise ValueError(f"n_curves must be 1 or 2, got {n_curves}")
    rng = np.random.default_rng([seed, index])
    height = int(rng.integers(params.height.min, params.height.max + 1))
    width = int(rng.integers(params.width.min, params.width.max + 1))
    procedural = not wells or rng.random() < params.procedural_share
    picked = None if procedural else window(wells, n_curves, width, rng)
    if picked is None:
        picked = procedural_window(n_curves, width, rng)
    curves = zip(picked.mnemonics, picked.units, picked.values, strict=True)
    scales = tuple(choose_scale(m, u, v, rng, params) for m, u, v in curves)
    calibration = Calibration(float(picked.depth[0]), float(picked.depth[-1]), picked.depth_unit, scales,
                              dict(picked.header))

    image = np.full((height, width), rng.uniform(235.0, 255.0), dtype=np.float32)
    _draw_grid(image, rng)
    mask = np.zeros((height, width), dtype=np.uint8)
    line_widths = []
    for curve, values in enumerate(picked.values):
        line_width = int(rng.integers(params.line_width.min, params.line_width.max + 1))
        dash = (params.dash.ink, params.dash.gap) if curve == 1 else None
        rows = curve_rows(calibration, picked.depth, values, width, height, curve)
        layer = curve_layer(rows, height, line_width, dash, float(rng.uniform(0, params.dash.ink + params.dash.gap)))
        np.minimum(image, rng.uniform(0.0, 50.0), out=image, where=layer)
        mask[layer] = curve + 1
        line_widths.append(line_width)
    image += rng.standard_normal((height, width), dtype=np.float32) * np.float32(params.noise_std)
    return SyntheticLog(
        image=np.clip(np.rint(image), 0, 255).astype(np.uint8),
        mask=mask,
        calibration=calibration,
        depth=picked.depth,
        values=list(picked.values),
        well=picked.well,
        mnemonics=picked.mnemonics,
        units=picked.units,
        line_widths=tuple(line_widths),
    )
