"""Scan TIFFs: header inspection, decoding to one landscape 8-bit gray image, and atomic writing.

A scan in the archive may be 1-bit CCITT G3/G4, LZW, Deflate, PackBits or JPEG compressed (new or
old style), stripped or tiled, classic or BigTIFF, gray, MINISWHITE, RGB, YCbCr, CMYK or palette,
of unsigned, signed or float samples, portrait or landscape. `decode_scan` turns any of them into
the one image convention the pipeline uses: a 2-D ``uint8`` array (H, W) with ink dark (0) on
light paper (255), the value axis down the rows and depth running left to right (`io.gray` maps
the samples). Nothing is resized; portrait scans are rotated by 90 degrees, which is lossless.

**What a page is.** A file's scan is its first full-resolution page. Reduced-resolution pages
(thumbnails, previews: NewSubfileType bit 0) and transparency masks (bit 2) are not pages: many
scanners write a preview after the image. ``pages`` counts the full-resolution pages; a file with
more than one is several scans (or one log cut into sections, each with its own depths), which the
``too_many_pages`` rule sets aside unless ``validate.max_pages`` allows it, and then only the first
is read. Splitting such files keeps one file = one scan = one sidecar = one manifest row.

Everything `read_header` needs comes from the tags: no pixel is decoded before the pixel budget
(`check_budget`) and the decodability rule (`unsupported_reason`) have passed. Failures raise
`ScanReadError` with a short ``code`` that matches a quarantine reason code.
"""

from __future__ import annotations

import enum
import struct
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import tifffile

from veernet_pipeline.io.atomic import atomic_path
from veernet_pipeline.io.gray import Layout, is_colour, to_gray, to_rgb
from veernet_pipeline.io.scan_errors import (
    TOO_LARGE,
    TRUNCATED,
    UNREADABLE,
    UNSUPPORTED,
    ScanReadError,
    structure_failure,
)

__all__ = ["TOO_LARGE", "TRUNCATED", "UNREADABLE", "UNSUPPORTED", "ScanReadError", "TiffHeader", "check_budget",
           "decode_colour", "decode_scan", "read_header", "unsupported_reason", "write_tiff"]

# Pages beyond this many directories are not examined: the count is then a lower bound, far past
# any `validate.max_pages`.
MAX_PAGES_COUNTED = 1024
_DECODED_PHOTOMETRICS = ("minisblack", "miniswhite", "rgb", "ycbcr", "separated", "palette")
_JPEG_COMPRESSIONS = ("jpeg", "ojpeg")


@dataclass(frozen=True)
class TiffHeader:
    """The scan page's layout, as stored (before any rotation to landscape)."""

    width: int
    height: int
    bits: int
    samples: int
    dtype: str  # of one sample, from bits and sample format as tifffile maps them; "" when it maps none
    photometric: str
    compression: str
    pages: int  # full-resolution pages in the file
    page: int = 0  # index of the scan page among the file's directories
    dpi: tuple[float, float] | None = None  # (across, down) the stored page, when its tags state it in inches or cm

    @property
    def landscape_dpi(self) -> tuple[float, float] | None:
        """Pixels per inch of the decoded (landscape) image: (down its columns, along its rows), that is
        (across the track, along depth)."""
        if self.dpi is None:
            return None
        across, down = self.dpi
        return (across, down) if self.rotated else (down, across)

    @property
    def decoded_dpi(self) -> tuple[float, float] | None:
        """The resolution tags (across, down) of the decoded image written as a TIFF of its own (`write_tiff`)."""
        return None if self.landscape_dpi is None else (self.landscape_dpi[1], self.landscape_dpi[0])

    @property
    def rotated(self) -> bool:
        """True when the stored scan is portrait and `decode_scan` turns it to landscape."""
        return self.height > self.width

    @property
    def landscape_width(self) -> int:
        """Width after rotation: the depth axis."""
        return self.height if self.rotated else self.width

    @property
    def landscape_height(self) -> int:
        """Height after rotation: the value axis."""
        return self.width if self.rotated else self.height

    @property
    def pixels(self) -> int:
        return self.width * self.height


@contextmanager
def _opened(path: Path) -> Iterator[tifffile.TiffFile]:
    """Open a TIFF, turning tifffile's and the OS's errors into `ScanReadError`."""
    try:
        tif = tifffile.TiffFile(path)
    except OSError as exc:
        raise ScanReadError(path, UNREADABLE, f"cannot open the file ({exc}); check it exists and is readable") from exc
    except (ValueError, struct.error, IndexError, KeyError, TypeError, OverflowError) as exc:
        # tifffile.TiffFileError is a ValueError; malformed tags surface as the others.
        raise structure_failure(path, str(exc)) from exc
    with tif:
        yield tif


def _tag_name(value: object, known: type[enum.IntEnum]) -> str:
    """An enum member's lower-case name (tifffile gives plain ints for some known values too), else ``code_<n>``."""
    try:
        return known(int(value)).name.lower()
    except (ValueError, TypeError):
        return f"code_{value}"


def _scan_page(tif: tifffile.TiffFile) -> tuple[tifffile.TiffPage, int, int]:
    """(the scan page, its index, the number of full-resolution pages), per the module docstring."""
    total = len(tif.pages)
    if total == 0:
        raise ValueError("no image page")
    chosen: tuple[tifffile.TiffPage, int] | None = None
    full = 0
    for index in range(min(total, MAX_PAGES_COUNTED)):
        page = tif.pages[index]
        if not isinstance(page, tifffile.TiffPage) or page.is_reduced or page.is_mask:
            continue
        full += 1
        chosen = chosen or (page, index)
    if chosen is None:  # only previews: read the first of them rather than nothing
        return tif.pages.first, 0, 1
    return chosen[0], chosen[1], full + max(0, total - MAX_PAGES_COUNTED)


def _check_data(page: tifffile.TiffPage, path: Path) -> None:
    """The page's strips or tiles lie inside the file, and there are as many byte counts as offsets."""
    offsets, counts = page.dataoffsets, page.databytecounts
    if len(offsets) != len(counts):
        raise ScanReadError(path, UNREADABLE, f"corrupted TIFF structure: {len(offsets)} strip or tile offsets but "
                            f"{len(counts)} byte counts; re-export the scan")
    size = path.stat().st_size
    data_end = max((int(o) + int(c) for o, c in zip(offsets, counts, strict=True)), default=0)
    if data_end > size:
        raise ScanReadError(path, TRUNCATED, f"file is {size} bytes but its image data runs to byte {data_end}; "
                            "the copy is incomplete, copy it again from the source")


def _header(tif: tifffile.TiffFile, path: Path) -> tuple[TiffHeader, tifffile.TiffPage]:
    """Read the scan page's tags and check its image data lies inside the file."""
    try:
        page, index, pages = _scan_page(tif)
    except (ValueError, struct.error, IndexError, KeyError, TypeError, OverflowError) as exc:
        raise structure_failure(path, str(exc)) from exc
    _check_data(page, path)
    if page.imagewidth == 0 or page.imagelength == 0:
        raise ScanReadError(path, UNREADABLE, "the scan page has no pixels (width or height 0); re-export the scan")
    if page.photometric == tifffile.PHOTOMETRIC.PALETTE and page.colormap is None:
        raise ScanReadError(path, UNREADABLE, "a palette page without a colormap; re-export the scan")
    bits = page.bitspersample
    header = TiffHeader(
        width=int(page.imagewidth),
        height=int(page.imagelength),
        bits=int(bits if isinstance(bits, int) else max(bits)),
        samples=int(page.samplesperpixel),
        dtype="" if page.dtype is None else str(page.dtype),
        photometric=_tag_name(page.photometric, tifffile.PHOTOMETRIC),
        compression=_tag_name(page.compression, tifffile.COMPRESSION),
        pages=pages,
        page=index,
        dpi=_resolution(page),
    )
    return header, page


def _resolution(page: tifffile.TiffPage) -> tuple[float, float] | None:
    """Pixels per inch (across, down) from the resolution tags; None unless stated in inches or centimetres.

    A unit of NONE (many writers' default, with 1/1 or 72/1) gives only an aspect ratio, not a resolution.
    """
    unit = page.tags.get("ResolutionUnit")
    per_inch = {2: 1.0, 3: 2.54}.get(int(unit.value) if unit is not None else 2)  # the TIFF default is inches
    values = [page.tags.get(name) for name in ("XResolution", "YResolution")]
    if per_inch is None or any(v is None for v in values):
        return None
    dpi = []
    for tag in values:
        numerator, denominator = tag.value if isinstance(tag.value, tuple) else (tag.value, 1)
        if not denominator or numerator <= 0:
            return None
        dpi.append(per_inch * numerator / denominator)
    return dpi[0], dpi[1]


def read_header(path: Path | str) -> TiffHeader:
    """Read a scan's layout from its tags without decoding any pixels.

    Args:
        path: the TIFF file.

    Returns:
        The scan page's header, as stored (no rotation applied).

    Raises:
        ScanReadError: the file is not a TIFF (``unreadable``) or is cut short (``truncated``).
    """
    path = Path(path)
    with _opened(path) as tif:
        return _header(tif, path)[0]


def check_budget(header: TiffHeader, path: Path | str, max_pixels: int) -> None:
    """Raise ``too_large`` when the header promises more pixels than `max_pixels` (nothing is decoded).

    Raises:
        ScanReadError: code ``too_large``.
    """
    if header.pixels > max_pixels:
        raise ScanReadError(path, TOO_LARGE, f"the header promises {header.width:,} x {header.height:,} px "
                            f"({header.pixels:,} px), over the budget of {max_pixels:,} (ingest.max_pixels); "
                            "cut the scan into tracks or pages, or raise ingest.max_pixels if it is genuine")


def _compression_code(name: str) -> int:
    """`TiffHeader.compression` back to its tag value: ``lzw`` -> 5, ``code_34712`` -> 34712."""
    return int(name.removeprefix("code_")) if name.startswith("code_") else int(tifffile.COMPRESSION[name.upper()])


def unsupported_reason(header: TiffHeader) -> str | None:
    """Why a page cannot be decoded, from its header alone; None when it can."""
    if _compression_code(header.compression) not in tifffile.TIFF.DECOMPRESSORS:
        return f"compression {header.compression} has no decoder here; re-save the scan as LZW, Deflate or CCITT G4"
    if header.photometric not in _DECODED_PHOTOMETRICS:
        return f"photometric {header.photometric} is not decoded; re-save the scan as grayscale or RGB"
    if header.photometric == "separated" and header.samples not in (1, 4, 5):
        return f"a separated (CMYK) page of {header.samples} samples is not decoded; re-save it as RGB"
    if not header.dtype or np.dtype(header.dtype).kind not in "buif":
        return f"samples of type {header.dtype or 'unknown'} are not decoded; re-save as 1-, 8- or 16-bit gray"
    return None


def _decode_page(page: tifffile.TiffPage, header: TiffHeader, path: Path) -> np.ndarray:
    """The page's samples as the codec returns them, sample axis last."""
    try:
        raw = page.asarray(maxworkers=1)  # one worker process per core already
    except MemoryError as exc:
        raise ScanReadError(path, TOO_LARGE, f"decoding {header.pixels:,} px needs more memory than this process "
                            "may use (ingest.worker_memory_mb); lower ingest.max_pixels or raise the limit") from exc
    except NotImplementedError as exc:
        raise ScanReadError(path, UNSUPPORTED, f"the {header.compression} page uses a feature the decoder lacks "
                            f"({exc}); re-save the scan as LZW or Deflate") from exc
    except Exception as exc:
        # Codec errors come from imagecodecs with many exception types; each one means the stored
        # pixels cannot be decoded, which is a property of this file, not of the batch.
        if header.compression == "ojpeg":
            raise ScanReadError(path, UNSUPPORTED, f"old-style JPEG (compression 6) of a kind the codec cannot read "
                                f"({exc}); re-save the scan as new-style JPEG, LZW or Deflate") from exc
        raise ScanReadError(path, UNREADABLE, f"image data cannot be decoded (compression {header.compression}: "
                            f"{exc}); re-export the scan") from exc
    if raw.ndim == 3 and raw.shape[:2] != (header.height, header.width) and raw.shape[1:] == (header.height,
                                                                                          header.width):
        raw = np.moveaxis(raw, 0, -1)  # samples first (separate planes): put them last, as a view
    if raw.ndim not in (2, 3) or raw.shape[:2] != (header.height, header.width):
        raise ScanReadError(path, UNSUPPORTED, f"the scan page decodes to shape {raw.shape}, not one 2-D image of "
                            f"{header.height} x {header.width} px; re-save it as a plain image")
    return raw


def decode_scan(path: Path | str, max_pixels: int | None = None) -> np.ndarray:
    """Decode a scan's page to the pipeline's image convention.

    A portrait scan (H > W) is rotated 90 degrees counter-clockwise with `np.rot90`, so depth,
    which runs down a portrait scan, then runs left to right.

    Args:
        path: the TIFF file.
        max_pixels: the pixel budget, checked from the header before decoding; None = no budget.

    Returns:
        ``uint8`` gray image, ink dark (0) on light (255).

    Shape:
        (H, W) landscape: H = value axis, W = depth axis, W >= H.

    Raises:
        ScanReadError: ``unreadable``, ``truncated``, ``unsupported`` or ``too_large`` (see the message).
    """
    return _decode(path, max_pixels, colour=False)[0]


def decode_colour(path: Path | str, max_pixels: int | None = None) -> tuple[np.ndarray, np.ndarray | None]:
    """A scan's gray (as `decode_scan` gives it) and, for a colour page, its RGB in the same orientation.

    Returns:
        ``(gray, rgb)``; rgb None for a gray or 1-bit page (`io.gray.is_colour`).

    Shape:
        gray (H, W) uint8; rgb (H, W, 3) uint8, both landscape.

    Raises:
        ScanReadError: as `decode_scan`.
    """
    return _decode(path, max_pixels, colour=True)


def _decode(path: Path | str, max_pixels: int | None, colour: bool) -> tuple[np.ndarray, np.ndarray | None]:
    path = Path(path)
    with _opened(path) as tif:
        header, page = _header(tif, path)
        if max_pixels is not None:
            check_budget(header, path, max_pixels)
        reason = unsupported_reason(header)
        if reason:
            raise ScanReadError(path, UNSUPPORTED, reason)
        raw = _decode_page(page, header, path)
        colormap = page.colormap if header.photometric == "palette" else None
        layout = Layout(header.photometric, header.bits, colormap, header.compression in _JPEG_COMPRESSIONS)
    rgb = to_rgb(raw, layout) if colour and is_colour(layout, raw) else None
    image = to_gray(raw, layout)
    if header.rotated:
        image = np.rot90(image, k=1)
        rgb = None if rgb is None else np.rot90(rgb, k=1)
    return np.ascontiguousarray(image), None if rgb is None else np.ascontiguousarray(rgb)


def write_tiff(
    path: Path | str, array: np.ndarray, compression: str | None = "zlib", photometric: str = "minisblack",
    dpi: tuple[float, float] | None = None,
) -> None:
    """Write a single-page TIFF atomically.

    Args:
        path: target file.
        array: the image; a bool array is stored 1-bit, an (H, W, 3) array with ``photometric="rgb"``
            as RGB.
        compression: a tifffile codec name (``zlib``, ``lzw``, ``packbits``, ``zstd``...) or
            None / ``"none"`` for uncompressed.
        photometric: ``minisblack``, ``miniswhite``, ``rgb`` or ``palette``; the values are stored
            as given, so a MINISWHITE file holds 0 for paper.
        dpi: pixels per inch (across, down) for the resolution tags; None writes none.

    Shape:
        array: (H, W) or (H, W, S).
    """
    codec = None if compression in (None, "none") else compression
    with atomic_path(path) as tmp:
        resolution = {} if dpi is None else {"resolution": dpi, "resolutionunit": "INCH"}
        tifffile.imwrite(tmp, array, compression=codec, photometric=photometric, metadata=None, **resolution)
