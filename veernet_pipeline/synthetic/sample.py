"""The embedded sample archive for `make demo` and the tests: a few scans as an operator would have them.

Valid scans are rendered like training instances but from their own seed stream (so they never
repeat a training instance) and sized within the validation bounds. They vary the way real archives
do: compression (zlib, LZW, PackBits), one stored portrait (ingest must rotate it back), one stored
1-bit MINISWHITE (ink = 1), and one without a sidecar (inference falls back to track units). Two
broken files exercise quarantine: `broken_truncated.tif` (a TIFF cut in half: header intact, pixel
data missing) and `wide_out_of_range.tiff` (a valid scan wider than the width bound).
"""

from __future__ import annotations

import io
import logging
from pathlib import Path

import numpy as np
import tifffile

from veernet_pipeline.config import Range, Settings
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
WIDE_NAME = "wide_out_of_range.tiff"
# How far past the width bound the out-of-range scan goes (a multiple of 32, like real widths).
WIDE_EXCESS_PX = 64


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
        settings: run settings; sizes come from `settings.validate_`, curves from `paths.las_source`.
        n_valid: number of valid scans; the variants in `VARIANTS` are cycled.

    Returns:
        Every file written (scans and sidecars), or [] when `raw_dir` already had scans.
    """
    raw_dir = Path(raw_dir)
    extensions = tuple(e.lower() for e in settings.ingest.extensions)
    if raw_dir.is_dir() and any(p.is_file() and p.suffix.lower() in extensions for p in raw_dir.rglob("*")):
        logger.info("%s already holds TIFF scans; the sample archive is not written", raw_dir)
        return []
    bounds = settings.validate_
    # Heights of the training strips that validation accepts: a demo archive of tall scans would
    # only slow inference down.
    heights = settings.synthesize.height
    height = Range(min=max(heights.min, bounds.height.min), max=min(heights.max, bounds.height.max))
    params = settings.synthesize.model_copy(update={"width": bounds.width, "height": height,
                                                    "tall": settings.synthesize.tall.model_copy(update={"share": 0.0})})
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

    wide_width = bounds.width.max + WIDE_EXCESS_PX
    wide_params = params.model_copy(update={"width": Range(min=wide_width, max=wide_width)})
    wide = render_instance(seed, n_valid + 1, wide_params, wells, n_curves=2)
    written += _write_scan(raw_dir / WIDE_NAME, wide, "zlib", "landscape", sidecar=True)
    logger.info("wrote the sample archive: %d files in %s", len(written), raw_dir)
    return written
