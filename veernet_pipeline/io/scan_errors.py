"""Why a scan file cannot be read: `ScanReadError`, its codes, and telling a cut-off TIFF from a non-TIFF.

The codes equal the matching `validation.quarantine.ReasonCode` values; they are spelt out here
because the validation package imports io, not the other way round.
"""

from __future__ import annotations

import struct
from pathlib import Path
from typing import BinaryIO

UNREADABLE = "unreadable"
TRUNCATED = "truncated"
UNSUPPORTED = "unsupported"
TOO_LARGE = "too_large"
# When the worker reading a file did not come back with its row (`io.pool`).
DECODE_CRASHED = "decode_crashed"
DECODE_TIMEOUT = "decode_timeout"
INGEST_ERROR = "ingest_error"
# A whole-log page whose layout cannot be used (`pages.layout`, `pages.strips`): one row for the page.
BAD_LAYOUT = "bad_layout"

_CLASSIC_MAGIC = (b"II*\x00", b"MM\x00*")
_BIG_MAGIC = (b"II+\x00", b"MM\x00+")


class ScanReadError(Exception):
    """A scan that cannot be read; ``str()`` names the file and the reason.

    Attributes:
        path: the file that failed.
        code: ``unreadable``, ``truncated``, ``unsupported`` or ``too_large``.
        message: what is wrong and, where possible, how to fix the file.
    """

    def __init__(self, path: Path | str, code: str, message: str) -> None:
        self.path = Path(path)
        self.code = code
        self.message = message
        super().__init__(f"{self.path}: {message}")

    def __reduce__(self) -> tuple[type, tuple[Path, str, str]]:
        # Pickled across ingest's worker processes with its three fields, not the formatted text.
        return type(self), (self.path, self.code, self.message)


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


def structure_failure(path: Path, detail: str) -> ScanReadError:
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
