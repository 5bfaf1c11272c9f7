"""Render whole-log pages: portrait, tracks side by side, depth column, header, banners, with their exact layout.

A page is drawn the way a logging print is laid out, top to bottom: a header block, the track
headers, the main log section, optionally a banner, the repeated track headers and a repeat
section, and a footer. Each track's content is one `render.render_instance` strip (grid, curves,
flags, header boxes; no depth numbers and no scan artefacts of its own), long enough for every
section, turned clockwise into the page; the main section takes its first columns and the repeat
section the next ones, so both sections of a track share its curves and scales, as a repeat pass
does. The depth column between (or beside) the tracks carries the page's depth numbers. Then the
whole page gets one set of scan artefacts (paper, lighting, blur, noise, speckle, bilevel) and,
on a share of pages, a skew: row y moves by the layout's whole-pixel shift
(`pages.layout.Skew.shifts`), a shear that keeps the exact ground truth (a real scanner rotates,
which also tilts the depth lines by the same small angle).

The ground truth is the page's `Layout` (what `veernet layout` should find, with every value
filled in), the class mask (the strip classes of `io.classes`: paper, other ink, one class per
line style), the rows of the printed depth numbers, and each (section, track)'s native curve
samples on the page's depth scale. Everything follows from (seed, index).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from pydantic import BaseModel, ConfigDict

from veernet_pipeline.config import Artefact, ArtefactParams, FloatRange, Range, SynthesizeParams
from veernet_pipeline.pages.cut import shift_rows
from veernet_pipeline.pages.layout import Layout, Skew
from veernet_pipeline.synthetic import artefacts as art
from veernet_pipeline.synthetic import page_print as prt
from veernet_pipeline.synthetic.curves import Well
from veernet_pipeline.synthetic.grid import depth_label
from veernet_pipeline.synthetic.page_truth import TrackTruth, native_curves, page_layout
from veernet_pipeline.synthetic.render import SyntheticLog, render_instance
from veernet_pipeline.synthetic.text import FONT_FILES

# Sub-streams of np.random.default_rng([seed, index, id]).
TRACK_STREAM, PRINT_STREAM, SCAN_STREAM = 11, 12, 13
_OFF = Artefact(share=0.0, strength=FloatRange(min=0.0, max=0.0))


class PageParams(BaseModel):
    """The shape of rendered pages; the defaults follow real whole-log scans at 200 dpi."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    tracks: Range = Range(min=2, max=3)
    curves: Range = Range(min=1, max=2)  # per track
    track_width: Range = Range(min=450, max=1000)
    main_rows: Range = Range(min=4000, max=12000)
    repeat_share: float = 0.6
    repeat_rows: Range = Range(min=1000, max=2500)
    depth_width: Range = Range(min=70, max=150)
    # Where the depth column sits: between two tracks, left of the first, right of the last.
    depth_between: float = 0.7
    gutter: Range = Range(min=0, max=40)  # between tracks without the depth column
    margin: Range = Range(min=20, max=120)
    header_rows: Range = Range(min=600, max=2000)
    track_header_rows: Range = Range(min=150, max=320)
    banner_rows: Range = Range(min=120, max=300)
    footer_rows: Range = Range(min=0, max=900)
    gap_rows: Range = Range(min=0, max=80)  # blank rows between printed blocks
    px_per_foot: tuple[float, ...] = (2.0, 4.0, 5.0, 10.0)
    depth_font_px: Range = Range(min=16, max=28)
    gridded_depth_column: float = 0.3  # share of pages whose depth column carries depth lines
    light_grid: float = 0.5  # share of pages with a light grid (else heavy)
    grid: bool = True  # False: tracks without grid lines or borders (clean tracks for exact tests)
    artefacts: ArtefactParams = ArtefactParams(
        paper=Artefact(share=0.8, strength=FloatRange(min=2.0, max=9.0)),
        illumination=Artefact(share=0.3, strength=FloatRange(min=0.03, max=0.15)),
        blur=Artefact(share=0.3, strength=FloatRange(min=0.08, max=0.25)),
        speckle=Artefact(share=0.5, strength=FloatRange(min=0.00001, max=0.0003)),
        jpeg=_OFF,
        skew=Artefact(share=0.4, strength=FloatRange(min=0.05, max=1.0)),
        bilevel=Artefact(share=0.6, strength=FloatRange(min=110, max=175)),
    )
    noise_std: float = 5.0


@dataclass(frozen=True)
class SyntheticPage:
    """A rendered page and its ground truth. Shape: image, mask (H, W) uint8 as stored (portrait)."""

    image: np.ndarray
    mask: np.ndarray
    layout: Layout
    truth: list[TrackTruth]
    label_rows: dict[str, list[int]]
    artefacts: tuple[str, ...]


def track_params(params: SynthesizeParams, light: bool, grid_lines: bool = True) -> SynthesizeParams:
    """The strip renderer's params for a page's tracks: no scan artefacts, depth numbers or banners of their own.

    A page prints its section banners and repeat headers across the whole page (`render_page`'s rows);
    the strip renderer's banners would cross one track only, which no printed log does.

    `light` picks a light or a heavy grid; without `grid_lines` the grid (borders included) is printed
    at the paper's white, so a track holds only its curves, flags and boxes.
    """
    found = params.artefacts
    quiet = found.model_copy(update={name: _OFF for name in type(found).model_fields})
    # A light grid's minor lines may vanish in a bilevel scan, as on real light-grid logs; its heavy lines
    # and the borders (major gray - 20) stay dark enough to print, as a real log's heavier lines are.
    minor, major = (Range(min=150, max=215), Range(min=60, max=120)) if light else (
        Range(min=20, max=120), Range(min=0, max=70))
    if not grid_lines:
        # Borders print at major_gray - 20 (`synthetic.grid`): 275 clips to white like the lines.
        minor, major = Range(min=255, max=255), Range(min=275, max=275)
    grid = params.grid.model_copy(update={"minor_gray": minor, "major_gray": major})
    return params.model_copy(update={"artefacts": quiet, "noise_std": 0.0, "grid": grid,
                                     "text": params.text.model_copy(update={"depth_numbers": 0.0}),
                                     "banners": params.banners.model_copy(update={"per_10k": 0.0})})


def _draw(rng: np.random.Generator, bounds: Range) -> int:
    return int(rng.integers(bounds.min, bounds.max + 1))


def _columns(params: PageParams, rng: np.random.Generator) -> tuple[list[tuple[int, int]], tuple[int, int], int]:
    """Track column ranges, the depth column's, and the page width (without the skew's room)."""
    widths = [_draw(rng, params.track_width) for _ in range(_draw(rng, params.tracks))]
    depth_width = _draw(rng, params.depth_width)
    place = int(rng.integers(len(widths) - 1)) + 1 if rng.random() < params.depth_between else (
        0 if rng.random() < 0.5 else len(widths))
    x = _draw(rng, params.margin)
    tracks, depth = [], (0, 0)
    for i, width in enumerate(widths):
        if i == place:
            depth, x = (x, x + depth_width), x + depth_width
        elif i > 0:
            x += _draw(rng, params.gutter)
        tracks.append((x, x + width))
        x += width
    if place == len(widths):
        depth, x = (x, x + depth_width), x + depth_width
    return tracks, depth, x + _draw(rng, params.margin)


def _unique_names(names: list[str]) -> list[str]:
    out: list[str] = []
    for name in names:
        out.append(name if name.upper() not in {n.upper() for n in out} else f"{name}_{len(out) + 1}")
    return out


def render_page(seed: int, index: int, params: PageParams, strip_params: SynthesizeParams,
                wells: list[Well]) -> SyntheticPage:
    """Render page `index` of stream `seed`; the same arguments give the same bytes.

    Args:
        seed: stream seed.
        index: page index within the stream.
        params: page shape and artefacts.
        strip_params: the strip renderer's params (`synthesize:`); `track_params` quiets them.
        wells: source wells for the curves (empty: procedural curves only).
    """
    rng = np.random.default_rng([seed, index])
    tracks, depth_cols, width = _columns(params, rng)
    blocks = _rows(params, rng)
    height = blocks["bottom"][0]
    light = bool(rng.random() < params.light_grid)
    strip_set = track_params(strip_params, light, params.grid)
    sections = [s for s in ("main", "repeat") if s in blocks]
    lengths = [blocks[s][1] - blocks[s][0] for s in sections]
    track_seed = int(np.random.default_rng([seed, index, TRACK_STREAM]).integers(2**31))
    logs = [render_instance(track_seed, t, strip_set, wells, _draw(rng, params.curves), size=(r - lft, sum(lengths)))
            for t, (lft, r) in enumerate(tracks)]
    names = _unique_names([m for log in logs for m in log.mnemonics])

    skew_rng = np.random.default_rng([seed, index, SCAN_STREAM, 0])
    angle = art.decide(params.artefacts.skew, skew_rng)
    skew = None if angle is None else Skew(angle_deg=round(angle * (1 if skew_rng.random() < 0.5 else -1), 4),
                                           pivot_row=height // 2)
    room = 0 if skew is None else int(np.abs(skew.shifts(np.array([0, height - 1]))).max()) + 2
    tracks = [(lft + room, r + room) for lft, r in tracks]
    depth_cols = (depth_cols[0] + room, depth_cols[1] + room)
    width += 2 * room

    ink = np.full((height, width), 255, dtype=np.uint8)
    mask = np.zeros((height, width), dtype=np.uint8)
    depth_scales = _depth_scales(sections, blocks, params, rng)
    offset = 0
    for name, length in zip(sections, lengths, strict=True):
        top = blocks[name][0]
        for (lft, r), log in zip(tracks, logs, strict=True):
            ink[top:top + length, lft:r] = np.rot90(_ink_layer(log.image[:, offset:offset + length]), k=-1)
            mask[top:top + length, lft:r] = np.rot90(log.mask[:, offset:offset + length], k=-1)
        offset += length
    print_rng = np.random.default_rng([seed, index, PRINT_STREAM])
    label_rows = _print(ink, blocks, tracks, depth_cols, logs, names, depth_scales, params, print_rng)
    if skew is not None:
        shifts = skew.shifts(np.arange(height))
        ink, mask = shift_rows(ink, shifts, 255), shift_rows(mask, shifts, 0)
    image, applied = _scan(ink, mask, params, seed, index)
    layout = page_layout(blocks, sections, tracks, depth_cols, logs, names, depth_scales, skew, (width, height),
                         label_rows)
    truth = native_curves(sections, blocks, lengths, layout, logs, names)
    return SyntheticPage(image, mask, layout, truth, label_rows, tuple(applied) + (("skew",) if skew else ()))


def _rows(params: PageParams, rng: np.random.Generator) -> dict[str, tuple[int, int]]:
    """Row ranges of the printed blocks, top to bottom; "bottom" is the page height (as (height, height))."""
    blocks: dict[str, tuple[int, int]] = {}
    y = _draw(rng, params.margin)
    order = ["header", "track_header", "main"]
    if rng.random() < params.repeat_share:
        order += ["banner", "repeat_header", "repeat"]
    order += ["footer"]
    sizes = {"header": params.header_rows, "track_header": params.track_header_rows, "main": params.main_rows,
             "banner": params.banner_rows, "repeat_header": params.track_header_rows, "repeat": params.repeat_rows,
             "footer": params.footer_rows}
    for name in order:
        rows = _draw(rng, sizes[name])
        if rows == 0:
            continue
        # A track header sits right on its section; other blocks leave a gap.
        y += 0 if name in ("main", "repeat") else _draw(rng, params.gap_rows)
        blocks[name] = (y, y + rows)
        y += rows
    end = y + _draw(rng, params.margin)
    blocks["bottom"] = (end, end)
    return blocks


def _depth_scales(sections: list[str], blocks: dict[str, tuple[int, int]], params: PageParams,
                  rng: np.random.Generator) -> dict[str, tuple[float, float]]:
    """(depth at the section's first row, px per foot) per section; a repeat section re-logs part of the main one."""
    scales: dict[str, tuple[float, float]] = {}
    for name in sections:
        ppf = float(params.px_per_foot[int(rng.integers(len(params.px_per_foot)))])
        if name == "main":
            scales[name] = (float(round(rng.uniform(500.0, 8000.0), -1)), ppf)
        else:
            start, main_ppf = scales["main"]
            main_rows = blocks["main"][1] - blocks["main"][0]
            scales[name] = (float(round(start + rng.uniform(0.2, 0.6) * main_rows / main_ppf, -1)), ppf)
    return scales


def _ink_layer(image: np.ndarray) -> np.ndarray:
    # A strip rendered without artefacts is ink x a flat paper level; dividing the level out gives its ink layer.
    paper = max(int(image.max()), 1)
    return np.clip(np.rint(image.astype(np.float32) * (255.0 / paper)), 0, 255).astype(np.uint8)


def _print(ink: np.ndarray, blocks: dict[str, tuple[int, int]], tracks: list[tuple[int, int]],
           depth_cols: tuple[int, int], logs: list[SyntheticLog], names: list[str],
           depth_scales: dict[str, tuple[float, float]], params: PageParams,
           rng: np.random.Generator) -> dict[str, list[int]]:
    """Header, track headers, banner, footer and depth numbers; returns each section's depth number rows."""
    span = (min(tracks[0][0], depth_cols[0]), max(tracks[-1][1], depth_cols[1]))
    prt.header_block(ink, blocks["header"], span, rng)
    if "footer" in blocks:
        prt.footer(ink, blocks["footer"], span, rng)
    if "banner" in blocks:
        prt.banner(ink, blocks["banner"], span, rng)
    legends, k = [], 0
    for (left, right), log in zip(tracks, logs, strict=True):
        lines = []
        for c, (scale, style) in enumerate(zip(log.calibration.curves, log.styles, strict=True)):
            lines.append((f"{scale.bottom_value:g}   {names[k + c]} ({scale.unit})   {scale.top_value:g}", style))
        legends.append((left, right, lines))
        k += len(log.mnemonics)
    for name in ("track_header", "repeat_header"):
        if name in blocks:
            prt.track_headers(ink, blocks[name], legends, depth_cols, rng)
    font, gray = int(rng.integers(len(FONT_FILES))), float(rng.uniform(0, 60))
    size = _draw(rng, params.depth_font_px)
    gridded = rng.random() < params.gridded_depth_column
    label_rows: dict[str, list[int]] = {}
    for name, (start, ppf) in depth_scales.items():
        top, bottom = blocks[name]
        if gridded:  # depth lines every 10 ft across the depth column
            feet = np.arange(np.ceil(start / 10.0) * 10.0, start + (bottom - top) / ppf, 10.0)
            ink[np.floor(top + (feet - start) * ppf + 0.5).astype(int), depth_cols[0]:depth_cols[1]] = np.uint8(gray)
        step = 50.0 if 50.0 * ppf >= 200.0 else 100.0
        first = np.ceil(start / step) * step
        depths = np.arange(first, start + (bottom - top - size) / ppf, step)
        labels = [(top + (d - start) * ppf, depth_label(d)) for d in depths if top + (d - start) * ppf >= top + size]
        label_rows[name] = prt.depth_numbers(ink, labels, depth_cols, size, font, gray)
    return label_rows


def _scan(ink: np.ndarray, mask: np.ndarray, params: PageParams, seed: int, index: int) -> tuple[np.ndarray, list[str]]:
    """One set of scan artefacts over the whole page (as `render` does for a strip)."""
    rngs = [np.random.default_rng([seed, index, SCAN_STREAM, k]) for k in range(1, 7)]
    found = params.artefacts
    image, applied = art.paper_and_ink(ink, found.paper, found.illumination, rngs[0:2])
    side = art.decide(found.blur, rngs[2])
    if side is not None:
        art.blur(image, side)
        applied.append("blur")
    if params.noise_std > 0:
        art.add_noise(image, params.noise_std * float(rngs[3].uniform(0.25, 1.0)), rngs[3])
        applied.append("noise")
    density = art.decide(found.speckle, rngs[4])
    if density is not None:
        art.speckle(image, density, rngs[4])
        applied.append("speckle")
    gray = art.quantise(image)
    threshold = art.decide(found.bilevel, rngs[5])
    if threshold is not None:
        gray = art.bilevel(gray, threshold)
        mask[(mask > 0) & (gray > 0)] = 0
        applied.append("bilevel")
    return gray, applied
