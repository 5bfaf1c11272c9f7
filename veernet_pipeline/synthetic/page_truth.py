"""The ground truth of a rendered page: its exact layout and each track's native curves on the page's depths.

Both are what a reader of the page should get back: `page_layout` is the layout `veernet layout`
should find, with every value an operator would fill in (curve names, edge values, depth points)
filled; `native_curves` moves each strip's native LAS samples onto the depth scale its section
prints, so they compare with what `veernet digitize --layout` writes. `write_page` puts a page on
disk as an archive would hold it: the TIFF (1-bit when bilevel), its layout beside it, and one
native LAS per (section, track).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from veernet_pipeline.io.atomic import write_text_atomic
from veernet_pipeline.io.las import LasCurve, write_las
from veernet_pipeline.io.tiff import write_tiff
from veernet_pipeline.pages.layout import LAYOUT_SUFFIX, Layout, Skew, parse_layout
from veernet_pipeline.synthetic.render import SyntheticLog


@dataclass(frozen=True)
class TrackTruth:
    """One (section, track)'s native curves on the page's depth scale. Shape: depth and each values (N,)."""

    section: str
    track: str
    depth: np.ndarray
    values: list[np.ndarray]
    mnemonics: tuple[str, ...]
    units: tuple[str, ...]


def page_layout(blocks: dict[str, tuple[int, int]], sections: list[str], tracks: list[tuple[int, int]],
            depth_cols: tuple[int, int], logs: list[SyntheticLog], names: list[str],
            depth_scales: dict[str, tuple[float, float]], skew: Skew | None, size: tuple[int, int],
            label_rows: dict[str, list[int]]) -> Layout:
    """The page's exact layout (every value filled in), parsed and checked like any layout file."""
    track_items, k = [], 0
    for t, ((left, right), log) in enumerate(zip(tracks, logs, strict=True)):
        curves = []
        for scale, style in zip(log.calibration.curves, log.styles, strict=True):
            curve = {"mnemonic": names[k], "unit": scale.unit, "left_value": scale.bottom_value,
                     "right_value": scale.top_value, "scale": scale.scale,
                     "style": "solid" if style == "thin_solid" else style}
            if scale.backup_wraps:
                curve["backup"] = {"mode": "wrap", "max_wraps": scale.backup_wraps}
            curves.append(curve)
            k += 1
        track_items.append({"name": f"T{t + 1}", "left": left, "right": right, "curves": curves})
    section_items = []
    for name in sections:
        top, bottom = blocks[name]
        start, ppf = depth_scales[name]
        points = [{"row": top, "depth": start}, {"row": bottom - 1, "depth": start + (bottom - 1 - top) / ppf}]
        section_items.append({"name": name, "kind": name, "top_row": top, "bottom_row": bottom,
                              "depth": {"unit": "FT", "points": points}, "depth_label_rows": label_rows[name]})
    kinds = {"header": "header", "track_header": "track_header", "banner": "banner", "repeat_header": "track_header",
             "footer": "footer"}
    skip = [{"kind": kind, "top_row": blocks[name][0], "bottom_row": blocks[name][1]}
            for name, kind in kinds.items() if name in blocks]
    data = {"page": {"width": size[0], "height": size[1]}, "tracks": track_items,
            "depth_column": {"left": depth_cols[0], "right": depth_cols[1]}, "sections": section_items,
            "skip": sorted(skip, key=lambda s: s["top_row"]), "well": {"WELL": "SYNTHETIC PAGE"}}
    if skew is not None:
        data["skew"] = skew.model_dump()
    return parse_layout(data, "rendered page")


def native_curves(sections: list[str], blocks: dict[str, tuple[int, int]], lengths: list[int], layout: Layout,
           logs: list[SyntheticLog], names: list[str]) -> list[TrackTruth]:
    """Each (section, track)'s native samples, their depths moved onto the section's depth scale."""
    out, offset = [], 0
    for name, length in zip(sections, lengths, strict=True):
        section = next(s for s in layout.sections if s.name == name)
        k = 0
        for track, log in zip(layout.tracks, logs, strict=True):
            # Native depth -> column of the whole rendered strip -> row of this section -> page depth.
            column = log.calibration.depth_to_column(log.depth, sum(lengths)) - offset
            # The samples inside the section and one more on each side, so interpolation covers every column.
            inside = np.flatnonzero((column >= 0.0) & (column <= length - 1.0))
            keep = slice(max(int(inside[0]) - 1, 0), int(inside[-1]) + 2) if inside.size else slice(0, 0)
            depth = section.depth.depth_at(section.top_row + column[keep])
            n = len(log.mnemonics)
            out.append(TrackTruth(name, track.name, depth, [v[keep] for v in log.values], tuple(names[k:k + n]),
                                  log.units))
            k += n
        offset += length
    return out


def native_name(stem: str, truth: TrackTruth) -> str:
    """File name of one (section, track)'s native LAS."""
    return f"{stem}.{truth.section}.{truth.track}.native.las"


def write_page(out_dir: Path, stem: str, image: np.ndarray, layout: Layout, truth: list[TrackTruth]) -> Path:
    """Write `<stem>.tif` (portrait as stored; PackBits 1-bit if the page is bilevel, else zlib gray), its
    `<stem>.tif.layout.json` and the native LAS files into `out_dir`; return the TIFF's path."""
    out_dir = Path(out_dir)
    scan = out_dir / f"{stem}.tif"
    if np.isin(image, (0, 255)).all():
        write_tiff(scan, image < 128, compression="packbits", photometric="miniswhite")
    else:
        write_tiff(scan, image, compression="zlib")
    write_text_atomic(out_dir / f"{scan.name}{LAYOUT_SUFFIX}", layout.model_dump_json(exclude_none=True, indent=1))
    for item in truth:
        curves = [LasCurve(m, u, v) for m, u, v in zip(item.mnemonics, item.units, item.values, strict=True)]
        write_las(out_dir / native_name(stem, item), item.depth, "FT", curves, layout.well_items(),
                  [f"native curves of section {item.section}, track {item.track} of {scan.name}"])
    return scan
