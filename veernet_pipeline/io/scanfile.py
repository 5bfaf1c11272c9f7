"""One archive file, as a worker process reads it: hash and header, then decode and write.

Ingest (`io.ingest`) runs these two steps in worker processes (`io.pool`), never in its own
process, so that a file which crashes a codec, exhausts memory or hangs costs only its own row.
Each step returns the manifest fields it fills; any exception a file causes (from tifffile,
imagecodecs, numpy or the OS, `MemoryError` included) becomes ``error_code``/``error_message``
instead of escaping (`failure_fields`).

The header step decides from the tags alone, before any pixel is decoded:

1. the file hashes and parses as a TIFF whose data lies inside it (``unreadable``, ``truncated``);
2. its pixels fit the budget, ``ingest.max_pixels`` (``too_large``);
3. its compression, photometric and sample format decode (``unsupported``);
4. its landscape size on the net's grid (`io.resolution`), bit depth and page count are within
   ``validate:`` (`ReadRules.declines`):
   otherwise it is not decoded, and validation quarantines it with the bound it missed.

Only a file passing all four is decoded, in the decode step.

This module is imported by every worker: it must not import torch, pandas or anything heavy.
"""

from __future__ import annotations

import logging
import resource
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from veernet_pipeline.io.resolution import Resampling, net_size
from veernet_pipeline.io.scan_errors import TOO_LARGE, UNREADABLE, UNSUPPORTED, ScanReadError
from veernet_pipeline.io.tiff import (
    TiffHeader,
    check_budget,
    decode_colour,
    read_header,
    unsupported_reason,
    write_tiff,
)
from veernet_pipeline.provenance import file_sha256

# Gray levels below this count as ink for `ink_share`: the middle of the 8-bit range.
INK_BELOW = 128


@dataclass(frozen=True)
class ReadRules:
    """What the header step decides with: the pixel budget and the `validate:` bounds a header can be held to.

    The size bounds apply on the net's grid (`io.resolution`): `resampling` holds ``infer.net_dpi`` and
    ``infer.untagged_dpi`` (the default: every scan is held at its own pixels).
    """

    max_pixels: int
    width_min: int
    width_max: int | None
    height_min: int
    height_max: int
    bits: tuple[int, ...]
    max_pages: int
    resampling: Resampling

    def declines(self, header: TiffHeader) -> bool:
        """True when validation will reject this scan for its size, depth or pages: it is then not decoded."""
        height, width = net_size(header.landscape_height, header.landscape_width,
                                 self.resampling.scale(header.landscape_dpi))
        return self.declines_size(width, height) or self.declines_format(header)

    def declines_format(self, header: TiffHeader) -> bool:
        """True when validation will reject this scan for its bit depth or page count."""
        return header.bits not in self.bits or not 1 <= header.pages <= self.max_pages

    def declines_size(self, width: int, height: int) -> bool:
        """True when a landscape image of `width` x `height` px on the net's grid misses the size bounds."""
        return (width < self.width_min or (self.width_max is not None and width > self.width_max)
                or not self.height_min <= height <= self.height_max)

    def net_fields(self, height: int, width: int, dpi: tuple[float, float] | None) -> dict[str, int]:
        """The manifest's ``net_height`` and ``net_width``: a landscape image's size on the net's grid.

        Args:
            height, width: the landscape image's size in its own pixels.
            dpi: its resolution along (rows, columns) (`TiffHeader.landscape_dpi`), None when not stated.
        """
        net_height, net_width = net_size(height, width, self.resampling.scale(dpi))
        return {"net_height": net_height, "net_width": net_width}


def init_worker(memory_mb: int) -> None:
    """Worker process start-up: cap its address space at `memory_mb` (0 = no cap) and quiet tifffile.

    With the cap, an allocation past it fails with `MemoryError` in this worker (or kills it),
    never the machine: the OOM killer would pick the largest process, possibly the parent.
    tifffile logs a warning per oddity of a file; the row's error message is what the operator reads.
    """
    if memory_mb:
        _, hard = resource.getrlimit(resource.RLIMIT_AS)
        limit = memory_mb * 2**20 if hard == resource.RLIM_INFINITY else min(memory_mb * 2**20, hard)
        resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    logging.getLogger("tifffile").setLevel(logging.CRITICAL)


def image_statistics(image: np.ndarray) -> dict[str, float]:
    """``paper_level`` and ``ink_share`` of a decoded scan.

    ``paper_level`` is the median gray of every 4th row and column: paper fills most of a strip, so
    a sixteenth of the pixels (the sample the synthetic label rule takes too) gives it at a
    sixteenth of the cost, a few ms on a full-size scan; the generator computes it for every
    candidate. ``ink_share``, the share of pixels darker than `INK_BELOW`, counts every pixel: thin
    lines on a regular grid could fall between or onto a regular sample's rows and columns.

    Shape:
        image: (H, W) uint8, ink dark on light paper (`tiff.decode_scan`'s convention).
    """
    if image.dtype != np.uint8 or image.size == 0:
        raise ValueError(f"image statistics need a non-empty uint8 image, got {image.dtype} of shape {image.shape}")
    ink = np.count_nonzero(image < INK_BELOW)
    return {"paper_level": float(np.median(image[::4, ::4])), "ink_share": float(ink / image.size)}


def failure_fields(rel: str, exc: Exception) -> dict[str, str]:
    """The error columns for an exception a file caused; the message starts with the file's relative path."""
    if isinstance(exc, ScanReadError):
        code, message = exc.code, exc.message
    elif isinstance(exc, MemoryError):
        code, message = TOO_LARGE, ("reading it needs more memory than one worker may use "
                                    "(ingest.worker_memory_mb); lower ingest.max_pixels or raise the limit")
    elif isinstance(exc, OSError):
        what = Path(exc.filename).name if exc.filename else "the file"
        code, message = UNREADABLE, f"cannot read {what} ({exc.strerror or exc}); check it exists and is readable"
    else:
        code, message = UNREADABLE, (f"the TIFF reader failed on it ({type(exc).__name__}: {exc}); "
                                     "re-export the scan")
    return {"error_code": code, "error_message": f"{rel}: {message}"}


def header_fields(header: TiffHeader) -> dict[str, Any]:
    """The manifest fields a header fills."""
    return {"width": header.landscape_width, "height": header.landscape_height, "stored_width": header.width,
            "stored_height": header.height, "rotated": header.rotated, "bits": header.bits,
            "samples": header.samples, "photometric": header.photometric, "compression": header.compression,
            "pages": header.pages, "page": header.page}


def header_step(path: str, rel: str, rules: ReadRules) -> dict[str, Any]:
    """Hash the file and apply the header rules (module docstring).

    Returns:
        Manifest fields (sha256, bytes, the header's, or the error columns) and ``decode``: True
        when the file goes on to `decode_step`.
    """
    fields: dict[str, Any] = {"decode": False}
    try:
        fields["sha256"], fields["bytes"] = file_sha256(path)
        header = read_header(path)
        fields.update(header_fields(header))
        fields.update(rules.net_fields(header.landscape_height, header.landscape_width, header.landscape_dpi))
        check_budget(header, path, rules.max_pixels)
        reason = unsupported_reason(header)
        if reason:
            raise ScanReadError(path, UNSUPPORTED, reason)
        fields["decode"] = not rules.declines(header)
    except Exception as exc:  # noqa: BLE001 - every failure of a file is a row, whatever raised it
        fields.update(failure_fields(rel, exc))
    return fields


def write_decoded(target: Path | str, image: np.ndarray, rgb: np.ndarray | None,
                  dpi: tuple[float, float] | None) -> None:
    """A decoded copy: the RGB of a colour page (its pens tell curves apart, `reading.colour`), else the gray.

    Shape:
        image: (H, W) uint8; rgb: (H, W, 3) uint8 or None.
    """
    if rgb is None:
        write_tiff(target, image, dpi=dpi)
    else:
        write_tiff(target, rgb, photometric="rgb", dpi=dpi)


def decode_step(path: str, rel: str, target: str, max_pixels: int) -> dict[str, Any]:
    """Decode the file to an 8-bit landscape TIFF at `target` (kept if already there) and measure it.

    A colour page is kept in colour (RGB), so the reading can take each curve's pen (`reading.colour`); it
    decodes to the same gray again (`io.gray`). Its statistics are its gray's.

    Returns:
        ``paper_level`` and ``ink_share``, or the error columns.
    """
    try:
        image, rgb = decode_colour(path, max_pixels)
        if not Path(target).is_file():  # content-addressed: the same bytes decode to the same image
            # The copy keeps the scan's resolution: inference resamples to the net's (reading/resolution.py).
            dpi = read_header(path).decoded_dpi
            write_decoded(target, image, rgb, dpi)
        return image_statistics(image)
    except Exception as exc:  # noqa: BLE001 - as in header_step
        return failure_fields(rel, exc)
