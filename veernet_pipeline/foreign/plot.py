"""Draw a foreign scan's layers with matplotlib, each alone, at exactly one figure pixel per image pixel.

The figure is W / 64 x H / 64 inches at 64 dpi (a power of two, so the size in pixels is exact) with
one axes filling it: x runs from the depth of the left edge to that of the right edge, y from track
fraction 0 (top) to 1 (bottom). So pixel column c's centre is at depth
``top + (c + 0.5) * (bottom - top) / W`` and a value drawn at fraction f sits at row ``f * H - 0.5``:
the calibration contract, with no resampling of the output.

Every element is drawn in black into one of these layers, and each layer is rasterised alone (the
other layers hidden), so its darkness is its antialiased coverage of each pixel (`scan.compose`
lays them on paper and derives the mask from them):

- `grid`: depth lines (minor every 1, 2 or 5 m by print scale, heavier every fifth), value lines
  (linear: 4, 5 or 10 divisions; log: the first log curve's cycles) and the track borders;
- one layer per curve: its values at every column's depth through its sidecar scale, wrapped onto
  its backup scale (leaving through one edge at the crossing depth, re-entering through the other),
  in its dash pattern, width and caps; antialiased, never snapped to the pixel grid;
- `shade`: gray tint blocks (8-bit scans only: a bilevel scan prints shading as hatching);
- `flags`: hatched blocks (matplotlib hatches), at an edge or across the curves;
- `eraser`: white boxes behind depth numbers and curve tags, and banners across the whole track;
- `print`: the text (fonts matplotlib ships that the generator never uses), banner rules and the
  legend's line-style samples, printed over the eraser.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import matplotlib
import numpy as np
from matplotlib.artist import Artist
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle
from matplotlib.transforms import IdentityTransform

from veernet_pipeline.foreign.logs import ForeignCurve, ForeignLog

DPI = 64
PT = 72.0 / DPI  # points per pixel
FONTS = ("STIXGeneral", "cmss10", "cmtt10", "cmr10")
HATCHES = ("////", "\\\\\\\\", "xxx", "...", "+++", "||||")
# Banners per scan: a Poisson count of mean BANNERS_PER_SCAN + width / BANNER_EVERY_PX.
BANNERS_PER_SCAN, BANNER_EVERY_PX = 0.1, 40000.0
FLAG_EVERY_PX = 4000.0  # flags and shading: a Poisson count of mean width / FLAG_EVERY_PX
BANNER_TITLES = ("REPEAT SECTION", "MAIN LOG", "REPEAT PASS 2", "SECTION B", "LOG RESUMED")
# Minor depth-line step by print scale, in metres (feet wells use the values in FEET).
METRES = {200: 1.0, 500: 2.0, 1000: 5.0}
FEET = {200: 2.0, 500: 5.0, 1000: 10.0}
RC = {"lines.scale_dashes": False, "axes.unicode_minus": False, "hatch.linewidth": 0.8 * PT,
      "path.snap": False, "text.antialiased": True}


@dataclass
class Layers:
    """Each layer's darkness (0 = nothing, 255 = full black coverage) and what was drawn.

    Shape:
        grid, each of curves, shade, flags, eraser, print: (H, W) uint8.
    """

    grid: np.ndarray
    curves: list[np.ndarray]
    shade: np.ndarray
    flags: np.ndarray
    eraser: np.ndarray
    print: np.ndarray
    shade_gray: float
    features: list[str] = field(default_factory=list)


def curve_xy(log: ForeignLog, curve: ForeignCurve) -> tuple[np.ndarray, np.ndarray]:
    """The polyline of a curve in (depth, track fraction): one point per column, NaN-broken where it wraps.

    Shape:
        Returns two (M,) arrays, M >= W.
    """
    height, width = log.height, log.width
    x = log.top + (np.arange(width) + 0.5) * (log.bottom - log.top) / width
    values = np.interp(x, log.depth, curve.values)
    unwrapped = curve.scale.value_to_fraction(values)
    fraction, wraps = curve.scale.wrap(unwrapped)
    # Beyond the last backup the curve rides the edge, on the centre of the edge row as the contract says.
    y = np.clip(fraction, 0.5 / height, 1.0 - 0.5 / height)
    xs, ys, start = [], [], 0
    for i in np.flatnonzero(np.diff(wraps) != 0):
        boundary = float(max(wraps[i], wraps[i + 1]))
        t = (boundary - unwrapped[i]) / (unwrapped[i + 1] - unwrapped[i])
        crossing = x[i] + t * (x[i + 1] - x[i])
        down = wraps[i + 1] > wraps[i]
        xs += [x[start : i + 1], [crossing, np.nan, crossing]]
        ys += [y[start : i + 1], [1.0 if down else 0.0, np.nan, 0.0 if down else 1.0]]
        start = i + 1
    xs.append(x[start:])
    ys.append(y[start:])
    return np.concatenate(xs), np.concatenate(ys)


def _line_style(curve: ForeignCurve, phase: float) -> dict[str, object]:
    lw = curve.width_px * PT
    dotted = curve.scale.style == "dotted"
    style: dict[str, object] = {"color": "black", "linewidth": lw, "solid_capstyle": "butt",
                                "dash_capstyle": "round" if dotted else "butt", "solid_joinstyle": "round"}
    if curve.pattern:
        # Round caps add half the width at each end of a dot: the gaps grow by the width to stay open.
        grow = curve.width_px if dotted else 0.0
        pattern = tuple(length + grow * (k % 2) for k, length in enumerate(curve.pattern))
        style["linestyle"] = (phase * PT, tuple(length * PT for length in pattern))
    return style


def _grid(ax: Axes, log: ForeignLog, rng: np.random.Generator) -> list[Artist]:
    step = (FEET if log.depth_unit.startswith("F") else METRES)[log.print_scale]
    depths = np.arange(np.ceil(log.top / step), np.floor(log.bottom / step) + 1) * step
    major = np.isclose(np.mod(depths / step, 5), 0)
    minor_gray, major_gray = rng.uniform(0.45, 0.75), rng.uniform(0.0, 0.4)
    artists: list[Artist] = [
        ax.vlines(depths[~major], 0, 1, colors=str(minor_gray), linewidths=rng.uniform(0.6, 1.1) * PT),
        ax.vlines(depths[major], 0, 1, colors=str(major_gray), linewidths=rng.uniform(1.2, 2.2) * PT),
    ]
    logs = [c.scale for c in log.curves if c.scale.scale == "log"]
    if logs:
        low, high = sorted((logs[0].top_value, logs[0].bottom_value))
        decades = np.arange(np.floor(np.log10(low)), np.ceil(np.log10(high)) + 1)
        values = (np.arange(1, 10)[None, :] * 10.0 ** decades[:, None]).ravel()
        values = values[(values >= low) & (values <= high)]
        fractions, heavy = logs[0].value_to_fraction(values), np.isclose(np.log10(values) % 1, 0)
    else:
        divisions = int(rng.choice((4, 5, 10)))
        fractions = np.arange(1, divisions) / divisions
        heavy = np.isclose(fractions, 0.5)
    artists.append(ax.hlines(fractions[~heavy], log.top, log.bottom, colors=str(minor_gray), linewidths=0.8 * PT))
    artists.append(ax.hlines(fractions[heavy], log.top, log.bottom, colors=str(major_gray), linewidths=1.6 * PT))
    artists.append(ax.hlines([0.0, 1.0], log.top, log.bottom, colors="black", linewidths=rng.uniform(2.0, 5.0) * PT))
    return artists


def _boxed(ax: Axes, text: Artist, eraser: list[Artist], pad: float) -> None:
    """A white box `pad` px (of a 200-dpi scan) around `text`, in display pixels of the figure's own dpi."""
    box = text.get_window_extent(ax.figure.canvas.get_renderer())
    pad *= ax.figure.dpi / DPI
    eraser.append(ax.add_patch(Rectangle((box.x0 - pad, box.y0 - pad), box.width + 2 * pad, box.height + 2 * pad,
                                         transform=IdentityTransform(), color="black", linewidth=0)))


def _annotations(ax: Axes, log: ForeignLog, bilevel: bool, rng: np.random.Generator,
                 groups: dict[str, list[Artist]]) -> list[str]:
    span, width = log.bottom - log.top, log.width
    font, size = FONTS[int(rng.integers(len(FONTS)))], rng.uniform(9.0, 15.0) * PT
    step = (FEET if log.depth_unit.startswith("F") else METRES)[log.print_scale] * 10
    near_top = rng.random() < 0.5
    for depth in np.arange(np.ceil(log.top / step), np.floor(log.bottom / step) + 1) * step:
        text = ax.text(depth, 0.02 if near_top else 0.98, f"{depth:.0f}", rotation=90, ha="center",
                       va="top" if near_top else "bottom", fontsize=size, family=font)
        groups["print"].append(text)
        _boxed(ax, text, groups["eraser"], 2.0)
    for curve in log.curves:
        if rng.random() < 0.5:
            continue
        x, y = curve_xy(log, curve)
        for column in rng.integers(0, width, max(1, width // 3000)):
            if np.isfinite(y[column]):
                text = ax.text(x[column], y[column], curve.scale.mnemonic, ha="center", va="center", fontsize=size,
                               family=font)
                groups["print"].append(text)
                _boxed(ax, text, groups["eraser"], 1.0)
    features = []
    for _ in range(int(rng.poisson(width / FLAG_EVERY_PX))):
        cols, rows = rng.uniform(30, 250) * span / width, rng.uniform(0.1, 0.5)
        x0, y0 = log.top + rng.uniform(0, 1) * (span - cols), rng.uniform(0, 1 - rows)
        if not bilevel and rng.random() < 0.4:
            groups["shade"].append(ax.add_patch(Rectangle((x0, y0), cols, rows, color="black", linewidth=0)))
            features.append("shade")
        else:
            hatch = HATCHES[int(rng.integers(len(HATCHES)))]
            groups["flags"].append(ax.add_patch(Rectangle((x0, y0), cols, rows, fill=False, hatch=hatch,
                                                          edgecolor="black", linewidth=0.8 * PT)))
            features.append("flags")
    for _ in range(int(rng.poisson(BANNERS_PER_SCAN + width / BANNER_EVERY_PX))):
        features.append("banner")
        _banner(ax, log, font, size, rng, groups)
    return sorted(set(features))


def _banner(ax: Axes, log: ForeignLog, font: str, size: float, rng: np.random.Generator,
            groups: dict[str, list[Artist]]) -> None:
    per_px = (log.bottom - log.top) / log.width
    cols = rng.uniform(150, 400) * per_px
    x0 = log.top + rng.uniform(0, 1) * (log.bottom - log.top - cols)
    groups["eraser"].append(ax.add_patch(Rectangle((x0, 0), cols, 1, color="black", linewidth=0)))
    groups["print"].append(ax.vlines([x0, x0 + cols], 0, 1, colors="black", linewidths=1.5 * PT))
    x = x0 + 14 * per_px
    groups["print"].append(ax.text(x, 0.5, BANNER_TITLES[int(rng.integers(len(BANNER_TITLES)))], rotation=90,
                                   ha="center", va="center", fontsize=size * 1.3, family=font))
    for curve in log.curves:
        x += 3 * size / PT * per_px
        if x > x0 + cols - 10 * per_px:
            break
        scale = curve.scale
        groups["print"].append(ax.text(x, 0.5, f"{scale.top_value:g}   {scale.mnemonic} {scale.unit}   "
                                                f"{scale.bottom_value:g}", rotation=90, ha="center", va="center",
                                       fontsize=size, family=font))
        x += 1.5 * size / PT * per_px
        groups["print"].extend(ax.plot([x, x], [0.06, 0.94], **_line_style(curve, 0.0)))


def draw_layers(log: ForeignLog, bilevel: bool, rng: np.random.Generator, scale: float = 1.0) -> Layers:
    """Rasterise each layer of the scan alone; see the module docstring.

    Args:
        log, bilevel, rng: what to draw, and its random choices.
        scale: pixels per pixel of the log's 200-dpi size: 1.5 draws the same print scanned at 300 dpi,
            every pen, dash, font and hatch in points as before and rasterised at its own grid
            (`benchmarks/resolution.py`). The layers are then (round(H x scale), round(W x scale)).

    Raises:
        RuntimeError: the canvas is not exactly that size.
    """
    size = (round(log.height * scale), round(log.width * scale))
    with matplotlib.rc_context(RC):
        fig = Figure(figsize=(size[1] / (DPI * scale), size[0] / (DPI * scale)), dpi=DPI * scale)
        canvas = FigureCanvasAgg(fig)
        ax = fig.add_axes((0.0, 0.0, 1.0, 1.0))
        ax.set_axis_off()
        ax.set_xlim(log.top, log.bottom)
        ax.set_ylim(1.0, 0.0)
        groups: dict[str, list[Artist]] = {"grid": _grid(ax, log, rng), "shade": [], "flags": [], "eraser": [],
                                           "print": []}
        for k, curve in enumerate(log.curves):
            x, y = curve_xy(log, curve)
            groups[f"curve{k}"] = ax.plot(x, y, **_line_style(curve, rng.uniform(0.0, sum(curve.pattern) or 1.0)))
        features = _annotations(ax, log, bilevel, rng, groups)
        darkness = {}
        for name, artists in groups.items():
            for other in (a for g in groups.values() for a in g):
                other.set_visible(False)
            for artist in artists:
                artist.set_visible(True)
            canvas.draw()
            rgba = np.asarray(canvas.buffer_rgba())
            if rgba.shape[:2] != size:
                raise RuntimeError(f"canvas is {rgba.shape[:2]}, not {size}: figure size is inexact")
            darkness[name] = 255 - rgba[..., 0]
    return Layers(grid=darkness["grid"], curves=[darkness[f"curve{k}"] for k in range(len(log.curves))],
                  shade=darkness["shade"], flags=darkness["flags"], eraser=darkness["eraser"], print=darkness["print"],
                  shade_gray=float(rng.uniform(0.6, 0.85)), features=features)
