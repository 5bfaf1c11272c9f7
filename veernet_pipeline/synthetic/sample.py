"""The embedded sample archive for `make demo` and the tests: a few scans as an operator would have them.

Valid scans are rendered like training instances but from their own seed stream (so they never
repeat a training instance) and sized like them (``synthesize.width/height``, which lie within the
validation bounds). They vary the way real archives do: compression (zlib, LZW, PackBits), one
stored portrait (ingest must rotate it back), one stored 1-bit MINISWHITE (ink = 1), and one without
a sidecar (inference falls back to track units). Two files exercise quarantine:
`broken_truncated.tif` (a TIFF cut in half: header intact, pixel data missing) and
`whole_page_portrait.tif`, a portrait scan taller (across the value axis) than one track may be,
as a whole-log page is: it is quarantined ``height_out_of_range`` with a message that points the
operator at a page layout (`veernet layout`).
"""

from __future__ import annotations

import io
import logging
from pathlib import Path

import numpy as np
import tifffile

from veernet_pipeline.config import Settings
from veernet_pipeline.io.atomic import write_bytes_atomic
from veernet_pipeline.io.calibration import SIDECAR_SUFFIX
from veernet_pipeline.io.tiff import write_tiff
from veernet_pipeline.synthetic.curves import load_wells
from veernet_pipeline.synthetic.render import SyntheticLog, render_instance

logger = logging.getLogger(__name__)

SAMPLE_SEED_OFFSET = 1000
# (file name tag, compression, layout, has sidecar), cycled over the valid scans.
VARIANTS = (
    ("zlib", "zlib", "landscape", True),
    ("lzw_portrait", "lzw", "portrait", True),
    ("packbits_1bit", "packbits", "bilevel", True),
    ("lzw_nocalib", "lzw", "landscape", False),
)
TRUNCATED_NAME = "broken_truncated.tif"
PAGE_NAME = "whole_page_portrait.tif"
# The page is this much taller than `validate.height.max` (1,280 px in the base params -> 1,664 px, the
# width of a real 200-dpi whole-log page), rounded up to a multiple of 32.
PAGE_HEIGHT_FACTOR = 1.3


def _write_scan(path: Path, log: SyntheticLog, compression: str, layout: str, sidecar: bool) -> list[Path]:
    if layout == "portrait":
        # Clockwise, so that decoding (a counter-clockwise turn of portrait scans) restores it.
        write_tiff(path, np.ascontiguousarray(np.rot90(log.image, k=-1)), compression=compression)
    elif layout == "bilevel":
        write_tiff(path, log.image < 128, compression=compression, photometric="miniswhite")
    else:
        write_tiff(path, log.image, compression=compression)
    if not sidecar:
        return [path]
    calib = path.with_name(path.name + SIDECAR_SUFFIX)
    log.calibration.write(calib)
    return [path, calib]


def build_sample_archive(raw_dir: Path, settings: Settings, n_valid: int = 4) -> list[Path]:
    """Write the sample archive into `raw_dir`, unless it already holds TIFF scans.

    Args:
        raw_dir: the archive folder (created if missing).
        settings: run settings; sizes come from `settings.synthesize` (the page's from `settings.validate_`),
            curves from `paths.las_source`.
        n_valid: number of valid scans; the variants in `VARIANTS` are cycled.

    Returns:
        Every file written (scans and sidecars), or [] when `raw_dir` already had scans.
    """
    raw_dir = Path(raw_dir)
    extensions = tuple(e.lower() for e in settings.ingest.extensions)
    if raw_dir.is_dir() and any(p.is_file() and p.suffix.lower() in extensions for p in raw_dir.rglob("*")):
        logger.info("%s already holds TIFF scans; the sample archive is not written", raw_dir)
        return []
    params = settings.synthesize
    wells = load_wells(str(settings.path("las_source")) if settings.paths.las_source else "")
    seed = settings.seed + SAMPLE_SEED_OFFSET
    written: list[Path] = []
    for i in range(n_valid):
        tag, compression, layout, sidecar = VARIANTS[i % len(VARIANTS)]
        log = render_instance(seed, i, params, wells, n_curves=2)
        written += _write_scan(raw_dir / f"sample_{i:02d}_{tag}.tif", log, compression, layout, sidecar)

    broken = render_instance(seed, n_valid, params, wells, n_curves=2)
    buffer = io.BytesIO()
    tifffile.imwrite(buffer, broken.image, compression="zlib", photometric="minisblack", metadata=None)
    data = buffer.getvalue()
    # tifffile puts the IFD right after the 8-byte header, so half the bytes keep a readable header.
    write_bytes_atomic(raw_dir / TRUNCATED_NAME, data[: len(data) // 2])
    written.append(raw_dir / TRUNCATED_NAME)

    page_height = -(-int(settings.validate_.height.max * PAGE_HEIGHT_FACTOR) // 32) * 32
    # Depth runs the long way, as on a real page: at least twice the page's height.
    page_length = max(params.width.min, 2 * page_height)
    page = render_instance(seed, n_valid + 1, params, wells, n_curves=2, size=(page_height, page_length))
    written += _write_scan(raw_dir / PAGE_NAME, page, "lzw", "portrait", sidecar=False)
    logger.info("wrote the sample archive: %d files in %s", len(written), raw_dir)
    return written
