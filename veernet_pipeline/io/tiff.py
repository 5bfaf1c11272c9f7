"""Scan TIFFs: header inspection, decoding to one landscape 8-bit gray image, and atomic writing.

A scan in the archive may be 1-bit CCITT, 8- or 16-bit gray, MINISWHITE, RGB or palette, and
portrait or landscape. `decode_scan` turns any of them into the one image convention the pipeline
uses: a 2-D ``uint8`` array (H, W) with ink dark (0) on light paper (255), the value axis down
the rows and depth running left to right. Nothing is resized; portrait scans are rotated by
90 degrees, which is lossless.

Failures raise `ScanReadError` with a short ``code`` that matches a quarantine reason code
(``unreadable``, ``truncated``, ``unsupported``), so ingest can record it and move on.
"""

from __future__ import annotations

import logging
import struct
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import numpy as np
import tifffile

from veernet_pipeline.io.atomic import atomic_path

logger = logging.getLogger(__name__)

# These strings equal the matching `validation.quarantine.ReasonCode` values; they are spelt out
# here because the validation package imports io, not the other way round.
UNREADABLE = "unreadable"
TRUNCATED = "truncated"
UNSUPPORTED = "unsupported"

_CLASSIC_MAGIC = (b"II*\x00", b"MM\x00*")
_BIG_MAGIC = (b"II+\x00", b"MM\x00+")
# ITU-R BT.601 luma weights: the usual gray conversion for scanned paper.
_LUMA = np.array([0.299, 0.587, 0.114], dtype=np.float32)


class ScanReadError(Exception):
    """A scan that cannot be read; ``str()`` names the file and the reason.

    Attributes:
        path: the file that failed.
        code: ``unreadable``, ``truncated`` or ``unsupported``.
        message: what is wrong and, where possible, how to fix the file.
    """

    def __init__(self, path: Path | str, code: str, message: str) -> None:
        self.path = Path(path)
        self.code = code
        self.message = message
        super().__init__(f"{self.path}: {message}")


@dataclass(frozen=True)
class TiffHeader:
    """The first page's layout, as stored (before any rotation to landscape)."""

    width: int
    height: int
    bits: int
    samples: int
    dtype: str  # of one sample, from bits and sample format as tifffile maps them; "" when it maps none
    photometric: str
    compression: str
    pages: int

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


def _ifd_end(fh: BinaryIO, magic: bytes, head: bytes) -> int:
    """Byte just past the first image directory, from the raw header (no tifffile involved)."""
    order = "<" if magic[:2] == b"II" else ">"
    big = magic in _BIG_MAGIC
    offset_fmt, count_fmt, entry_size = ("Q", "Q", 20) if big else ("I", "H", 12)
    offset_at = 8 if big else 4
    offset_bytes = head[offset_at:offset_at + struct.calcsize(offset_fmt)]
    if len(offset_bytes) < struct.calcsize(offset_fmt):
        return offset_at + struct.calcsize(offset_fmt)
    first_ifd = struct.unpack(order + offset_fmt, offset_bytes)[0]
    fh.seek(first_ifd)
    count_bytes = fh.read(struct.calcsize(count_fmt))
    if len(count_bytes) < struct.calcsize(count_fmt):
        return first_ifd + struct.calcsize(count_fmt)
    count = struct.unpack(order + count_fmt, count_bytes)[0]
    return first_ifd + struct.calcsize(count_fmt) + count * entry_size + struct.calcsize(offset_fmt)


def _structure_failure(path: Path, detail: str) -> ScanReadError:
    """Tell a cut-off TIFF from a file that is not a TIFF at all, by its first bytes."""
    size = path.stat().st_size
    if size == 0:
        return ScanReadError(path, UNREADABLE, "file is empty; copy it again from the source")
    with path.open("rb") as fh:
        head = fh.read(16)
        magic = head[:4]
        if magic not in _CLASSIC_MAGIC + _BIG_MAGIC:
            return ScanReadError(
                path, UNREADABLE, f"not a TIFF file (starts with {head[:8]!r}); re-export it as TIFF or remove it"
            )
        ifd_end = _ifd_end(fh, magic, head)
    if ifd_end > size:
        return ScanReadError(
            path, TRUNCATED, f"file is {size} bytes but its first directory runs to byte {ifd_end}; "
            "the copy is incomplete, copy it again from the source"
        )
    return ScanReadError(path, UNREADABLE, f"corrupted TIFF structure ({detail}); re-export the scan")


@contextmanager
def _opened(path: Path) -> Iterator[tifffile.TiffFile]:
    """Open a TIFF, turning tifffile's and the OS's errors into `ScanReadError`."""
    try:
        tif = tifffile.TiffFile(path)
    except OSError as exc:
        raise ScanReadError(path, UNREADABLE, f"cannot open the file ({exc}); check it exists and is readable") from exc
    except (ValueError, struct.error, IndexError, KeyError) as exc:
        # tifffile.TiffFileError is a ValueError; malformed tags surface as the others.
        raise _structure_failure(path, str(exc)) from exc
    with tif:
        yield tif


def _tag_name(value: object) -> str:
    """tifffile gives enums for known tag values and plain ints for unknown ones."""
    name = getattr(value, "name", None)
    return name.lower() if isinstance(name, str) else f"code_{value}"


def _header(tif: tifffile.TiffFile, path: Path) -> TiffHeader:
    """Read the first page's tags and check its image data lies inside the file."""
    if len(tif.pages) == 0:
        raise _structure_failure(path, "no image page")
    page = tif.pages.first
    size = path.stat().st_size
    data_end = max((o + c for o, c in zip(page.dataoffsets, page.databytecounts, strict=True)), default=0)
    if data_end > size:
        raise ScanReadError(
            path, TRUNCATED, f"file is {size} bytes but its image data runs to byte {data_end}; "
            "the copy is incomplete, copy it again from the source"
        )
    if page.imagewidth == 0 or page.imagelength == 0:
        raise ScanReadError(path, UNREADABLE, "first page has no pixels (width or height 0); re-export the scan")
    return TiffHeader(
        width=int(page.imagewidth),
        height=int(page.imagelength),
        bits=int(page.bitspersample),
        samples=int(page.samplesperpixel),
        dtype="" if page.dtype is None else str(page.dtype),
        photometric=_tag_name(page.photometric),
        compression=_tag_name(page.compression),
        pages=len(tif.pages),
    )


def read_header(path: Path | str) -> TiffHeader:
    """Read a scan's layout from its tags without decoding any pixels.

    Args:
        path: the TIFF file.

    Returns:
        The first page's header, as stored (no rotation applied).

    Raises:
        ScanReadError: the file is not a TIFF (``unreadable``) or is cut short (``truncated``).
    """
    path = Path(path)
    with _opened(path) as tif:
        return _header(tif, path)


def _to_unit_gray(raw: np.ndarray, page: tifffile.TiffPage, header: TiffHeader, path: Path) -> np.ndarray:
    """Any supported page layout -> float32 (H, W) in [0, 1], 0 = black ink, 1 = white paper."""
    if "S" in page.axes and raw.ndim == 3:
        raw = np.moveaxis(raw, page.axes.index("S"), -1)
    if raw.dtype == np.bool_:
        raw = raw.astype(np.uint8)
    if raw.dtype.kind != "u":
        raise ScanReadError(
            path, UNSUPPORTED, f"samples of type {raw.dtype} are not decoded; re-save as unsigned 1-, 8- or 16-bit"
        )
    photometric = header.photometric
    if photometric == "palette":
        cmap = np.asarray(page.colormap, dtype=np.float32)
        # Some writers put 8-bit entries in the 16-bit colormap field.
        cmap /= 65535.0 if cmap.max() > 255 else 255.0
        rgb = cmap[:, raw].transpose(1, 2, 0)
        return rgb @ _LUMA
    unit = raw.astype(np.float32) / float(2**header.bits - 1)
    if photometric == "rgb" and unit.ndim == 3 and unit.shape[-1] >= 3:
        gray = unit[..., :3] @ _LUMA
    elif photometric in ("minisblack", "miniswhite"):
        # Extra samples (alpha) follow the gray one; the gray one is all we need.
        gray = unit[..., 0] if unit.ndim == 3 else unit
        if photometric == "miniswhite":
            gray = 1.0 - gray
    else:
        raise ScanReadError(
            path, UNSUPPORTED, f"photometric {photometric} is not decoded; re-save the scan as grayscale or RGB"
        )
    if gray.ndim != 2:
        raise ScanReadError(path, UNSUPPORTED, f"first page has shape {raw.shape}, not a 2-D image; re-save it")
    return gray


def decode_scan(path: Path | str) -> np.ndarray:
    """Decode a scan's first page to the pipeline's image convention.

    Handles MINISWHITE, 1-bit, 16-bit (any unsigned depth), RGB and palette images. A portrait
    scan (H > W) is rotated 90 degrees counter-clockwise with `np.rot90`, so depth, which runs
    down a portrait scan, then runs left to right.

    Args:
        path: the TIFF file.

    Returns:
        ``uint8`` gray image, ink dark (0) on light (255).

    Shape:
        (H, W) landscape: H = value axis, W = depth axis, W >= H.

    Raises:
        ScanReadError: ``unreadable``, ``truncated`` or ``unsupported`` (see the message).
    """
    path = Path(path)
    with _opened(path) as tif:
        header = _header(tif, path)
        page = tif.pages.first
        try:
            raw = page.asarray()
        except MemoryError:
            raise
        except Exception as exc:
            # Codec errors come from imagecodecs with many exception types; each one means the
            # stored pixels cannot be decoded, which is a property of this file, not of the batch.
            raise ScanReadError(
                path, UNREADABLE, f"image data cannot be decoded (compression {header.compression}: {exc}); "
                "re-export the scan"
            ) from exc
        gray = _to_unit_gray(raw, page, header, path)
    image = np.rint(gray * 255.0).clip(0, 255).astype(np.uint8)
    if header.rotated:
        image = np.rot90(image, k=1)
    return np.ascontiguousarray(image)


def write_tiff(
    path: Path | str, array: np.ndarray, compression: str | None = "zlib", photometric: str = "minisblack"
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

    Shape:
        array: (H, W) or (H, W, S).
    """
    codec = None if compression in (None, "none") else compression
    with atomic_path(path) as tmp:
        tifffile.imwrite(tmp, array, compression=codec, photometric=photometric, metadata=None)
