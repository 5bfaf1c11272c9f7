"""One whole-log page -> one LAS per log section: cut by its layout, each strip read, the tracks merged.

The per-strip reading is `digitize.digitize_scan`, unchanged: a page is only a way of producing
strips and their sidecars (`pages.cut`) and of putting the strips' curves back together
(`pages.assemble`). `digitize_page` works on pixels already in memory; `digitize_page_file` is
`veernet digitize PAGE --layout`. The pipeline's stages do the same in steps instead: ingest cuts
the strips (`pages.strips`), validation and `inference.archive` treat them as scans, and
`inference.pages_archive` merges their LAS files.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

import numpy as np
from torch import nn

from veernet_pipeline.config import ExtractParams
from veernet_pipeline.inference.digitize import DigitizedLog, digitize_scan, write_qc_png
from veernet_pipeline.io.resolution import AS_STORED, Resampling
from veernet_pipeline.io.tiff import decode_colour, read_header
from veernet_pipeline.pages.assemble import SectionLog, TrackReading, merge_section, write_section_las
from veernet_pipeline.pages.cut import Orientation, Strip, cut_page
from veernet_pipeline.pages.layout import Layout, LayoutError, find_layout, load_layout, read_layout
from veernet_pipeline.progress import progress

logger = logging.getLogger(__name__)

# Called with each strip and what was read from it (the QC pictures hook in here).
StripHook = Callable[[Strip, DigitizedLog], None]


def digitize_page(
    model: nn.Module,
    image: np.ndarray,
    layout: Layout,
    orientation: Orientation,
    tile_width: int,
    tile_overlap: int,
    extract: ExtractParams,
    device: str = "cpu",
    source: str = "page",
    on_strip: StripHook | None = None,
    scale: tuple[float, float] = (1.0, 1.0),
    rgb: np.ndarray | None = None,
) -> list[SectionLog]:
    """Read every (section, track) strip of a page and merge each section's tracks.

    Args:
        model: VeerNet on `device`, in eval mode.
        image: the page, stored (portrait) or as `io.tiff.decode_scan` returns it (see `orientation`).
        layout: the page's checked layout.
        orientation: "stored" or "decoded" (`pages.cut`).
        tile_width, tile_overlap, extract, device: as for `digitize_scan`.
        source: names the page in notes and errors.
        on_strip: called after each strip is read.
        scale: net pixels per strip pixel along (rows, columns), as for `digitize_scan`.
        rgb: a colour page's RGB, oriented as `image`: curves whose layout entry names a `colour` are read on
            their pen's ink (`reading.colour`).

    Returns:
        One `SectionLog` per layout section, in layout order.

    Shape:
        image: (H, W) stored or (W, H) decoded, uint8; rgb: the same with a trailing 3.
    """
    strips = cut_page(image, layout, orientation, source, rgb)
    readings: dict[str, list[TrackReading]] = {s.name: [] for s in layout.sections}
    for strip in progress(strips, desc=f"read {Path(source).name}", unit="strip"):
        result = digitize_scan(model, strip.image, strip.calibration, tile_width, tile_overlap, extract, device,
                               source=f"{source} {strip.describe()}", scale=scale, rgb=strip.rgb)
        classes = ", ".join(f"{c.mnemonic} class {k + 1}" for k, c in enumerate(strip.calibration.curves))
        readings[strip.section.name].append(
            TrackReading(strip.track.name, f"{strip.describe()} ({classes})", result.depth, result.curves,
                         result.notes))
        if on_strip is not None:
            on_strip(strip, result)
    return [merge_section(s, readings[s.name], s.depth.unit, layout.well_items(), source) for s in layout.sections]


def qc_name(stem: str, strip: Strip) -> str:
    """File name of one strip's QC picture."""
    return f"{stem}.{strip.section.name}.{strip.track.name}.qc.png"


def digitize_page_file(
    scan: Path,
    out_dir: Path,
    model: nn.Module,
    model_label: str,
    tile_width: int,
    tile_overlap: int,
    extract: ExtractParams,
    layout_path: Path | None = None,
    qc_dir: Path | None = None,
    resampling: Resampling = AS_STORED,
    low_confidence: float | None = None,
) -> list[Path]:
    """Digitise one whole-log page TIFF: `veernet digitize PAGE --layout [FILE] --out DIR`.

    Args:
        scan: the page TIFF (portrait, any compression ingest reads).
        out_dir: gets `<scan stem>.las` for the main section and `<scan stem>.<section>.las` for the others.
        model: VeerNet in eval mode, on the CPU.
        model_label: names the model in the LAS header.
        tile_width, tile_overlap, extract: the reading (params.yaml `infer:` and `extract:`).
        layout_path: the layout file; None = the scan's `<scan>.layout.json` over its folder's
            `tranche.layout.json`.
        qc_dir: if given, one QC picture per strip goes there, `<stem>.<section>.<track>.qc.png`.
        resampling: a page at another resolution than the net's has its strips read resampled to it
            (`io.resolution`); the default reads them as they are.
        low_confidence: the QC pictures mark the columns read below it (params.yaml `infer.low_confidence`).

    Returns:
        The LAS files written, one per section.

    Raises:
        LayoutError: no layout, or one that is malformed, has placeholders left or does not fit the page.
    """
    scan, out_dir = Path(scan), Path(out_dir)
    if layout_path is not None:
        layout, used = read_layout(layout_path), [Path(layout_path)]
    else:
        found = load_layout(scan)
        if found is None:
            raise LayoutError(f"{scan}: no layout; write {scan.name}.layout.json or tranche.layout.json beside it "
                              f"(`veernet layout {scan}` drafts one)")
        layout, used = found, find_layout(scan)
    # decode_scan turns a portrait page by np.rot90(k=1); the layout speaks of the page as stored.
    header = read_header(scan)
    orientation: Orientation = "decoded" if header.rotated else "stored"
    image, rgb = decode_colour(scan)  # a colour page's RGB too: its pens tell curves apart
    # A strip turns the stored page's rows into its columns (`pages.cut.cut_strip`): its rows run across the page.
    scale = resampling.scale(header.dpi)

    def write_qc(strip: Strip, result: DigitizedLog) -> None:
        write_qc_png(Path(qc_dir) / qc_name(scan.stem, strip), strip.image, result.rows, result.confidence,
                     names=result.names, low_confidence=low_confidence)

    sections = digitize_page(model, image, layout, orientation, tile_width, tile_overlap, extract, source=str(scan),
                             on_strip=write_qc if qc_dir is not None else None, scale=scale, rgb=rgb)
    notes = [f"source page {scan.name}", f"layout {' over '.join(p.name for p in reversed(used))}",
             f"model {model_label}", *resampling.notes(header.dpi)]
    written = [write_section_las(out_dir, scan.stem, log, notes) for log in sections]
    logger.info("%s: wrote %d LAS file(s) into %s", scan, len(written), out_dir)
    return written
