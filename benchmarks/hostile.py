"""A seeded corpus of hostile ``.tif`` files, made in code (never committed): what real archives throw at ingest.

Used by `benchmarks/ingest.py` (a large corpus) and `tests/unit/test_ingest_hostile.py` (a small
one). `hostile_corpus(folder, seed, n_fuzz)` writes every crafted kind once and `n_fuzz` byte-wise
fuzzed copies of small valid TIFFs of many flavours, and returns file name -> kind. The same seed
writes the same bytes.

Crafted kinds: empty files, non-TIFFs named ``.tif`` (text, PNG, JPEG, PDF, random bytes, a bare
magic number), truncations at several points, a first-directory offset past the end, a directory
chain that loops, strip offsets past the end or at 0, fewer byte counts than strip offsets, an
unknown compression code, header bombs (100,000 x 100,000 px promised by a few hundred bytes, as
Deflate and as CCITT G4), nonsense bit depths and sample counts, a palette page without a colormap,
a tag whose count promises gigabytes, and zero rows per strip.
"""

from __future__ import annotations

import io
import struct
import zlib
from collections.abc import Callable
from pathlib import Path

import numpy as np
import tifffile
from PIL import Image

# TIFF field types: (code, struct format, size)
_SHORT, _LONG = (3, "H", 2), (4, "I", 4)
DATA = -1  # a tag value standing for the offset of the data block


def tiff_bytes(tags: dict[int, tuple[tuple[int, str, int], list[int]]], data: bytes, order: str = "<",
               next_ifd: int = 0) -> bytes:
    """A classic TIFF with one directory of `tags` (code -> (type, values)) and `data` after it.

    A value equal to `DATA` is replaced by the data block's offset. Values that do not fit the
    4-byte entry go right after the directory.
    """
    entries = [(code, *kind, values) for code, (kind, values) in sorted(tags.items())]
    ifd_at = 8
    extra_at = ifd_at + 2 + 12 * len(entries) + 4
    extra = b""
    packed_entries = []
    data_at = extra_at + sum(size * len(v) for _, _, _, size, v in entries if size * len(v) > 4)
    for code, type_code, fmt, _, values in entries:
        resolved = [data_at if v == DATA else v for v in values]
        raw = struct.pack(order + fmt * len(resolved), *resolved)
        if len(raw) <= 4:
            packed_entries.append(struct.pack(order + "HHI", code, type_code, len(values)) + raw.ljust(4, b"\0"))
        else:
            packed_entries.append(struct.pack(order + "HHII", code, type_code, len(values), extra_at + len(extra)))
            extra += raw
    magic = b"II*\0" if order == "<" else b"MM\0*"
    head = magic + struct.pack(order + "I", ifd_at) + struct.pack(order + "H", len(entries))
    return head + b"".join(packed_entries) + struct.pack(order + "I", next_ifd) + extra + data


def _strip_tags(width: int, height: int, compression: int, data_len: int, bits: int = 8, samples: int = 1,
                photometric: int = 1) -> dict[int, tuple[tuple[int, str, int], list[int]]]:
    return {256: (_LONG, [width]), 257: (_LONG, [height]), 258: (_SHORT, [bits] * max(1, min(samples, 8))),
            259: (_SHORT, [compression]), 262: (_SHORT, [photometric]), 273: (_LONG, [DATA]),
            277: (_SHORT, [samples]), 278: (_LONG, [height]), 279: (_LONG, [data_len])}


def _valid_flavours(rng: np.random.Generator) -> list[bytes]:
    """Small valid TIFFs of many flavours (the fuzz seeds and the truncation sources)."""
    image = np.full((48, 160), 255, np.uint8)
    image[rng.integers(0, 48, 160), np.arange(160)] = 0
    out = []
    for kwargs in ({"compression": "zlib"}, {"compression": "lzw"}, {"compression": "packbits"},
                   {"compression": None}, {"compression": "jpeg"}, {"tile": (32, 32), "compression": "lzw"},
                   {"bigtiff": True, "compression": "zlib"}, {"photometric": "miniswhite", "compression": "lzw"}):
        buffer = io.BytesIO()
        tifffile.imwrite(buffer, image, metadata=None, **kwargs)
        out.append(buffer.getvalue())
    for array, kwargs in ((image.astype(np.uint16) * 257, {"compression": "zlib"}),
                          (np.stack([image] * 3, -1), {"photometric": "rgb", "compression": "jpeg"}),
                          (image < 128, {"compression": "packbits"})):
        buffer = io.BytesIO()
        tifffile.imwrite(buffer, array, metadata=None, **kwargs)
        out.append(buffer.getvalue())
    for codec in ("group3", "group4"):
        buffer = io.BytesIO()
        Image.fromarray(image < 128).save(buffer, format="TIFF", compression=codec)
        out.append(buffer.getvalue())
    return out


def _patched(data: bytes, tag: int, value: int, field: str = "value") -> bytes:
    """`data` with the first page's `tag` entry changed in place: its inline value (SHORT or LONG) or its count."""
    with tifffile.TiffFile(io.BytesIO(data)) as tif:
        entry = tif.pages.first.tags[tag]
        if field == "count":
            offset, fmt = entry.offset + 4, tif.byteorder + "I"
        else:
            offset, fmt = entry.valueoffset, tif.byteorder + ("H" if entry.dtype == 3 else "I")
    patched = bytearray(data)
    patched[offset:offset + struct.calcsize(fmt)] = struct.pack(fmt, value)
    return bytes(patched)


def _crafted(rng: np.random.Generator, valid: list[bytes]) -> dict[str, Callable[[], bytes]]:
    base = valid[0]
    png, jpeg = io.BytesIO(), io.BytesIO()
    Image.fromarray(np.zeros((20, 20), np.uint8)).save(png, format="PNG")
    Image.fromarray(np.zeros((20, 20), np.uint8)).save(jpeg, format="JPEG")
    deflated_row = zlib.compress(bytes(100_000))
    kinds: dict[str, Callable[[], bytes]] = {
        "empty": lambda: b"",
        "text": lambda: b"scanned by hand, saved as text\n" * 8,
        "png": png.getvalue,
        "jpeg": jpeg.getvalue,
        "pdf": lambda: b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<<>>\nendobj\n",
        "random_bytes": lambda: rng.bytes(4096),
        "magic_only": lambda: b"II*\x00",
        "first_ifd_past_end": lambda: base[:4] + struct.pack("<I", 10**9) + base[8:],
        "ifd_loop": lambda: tiff_bytes(_strip_tags(16, 16, 1, 256), bytes(256), next_ifd=8),
        "strip_offset_past_end": lambda: _patched(base, 273, 10**9),
        "strip_offset_zero": lambda: _patched(base, 273, 0),
        "fewer_byte_counts": lambda: tiff_bytes({**_strip_tags(16, 16, 1, 0), 273: (_LONG, [DATA, DATA + 64, 0]),
                                                  278: (_LONG, [6]), 279: (_LONG, [96, 96])}, bytes(512)),
        "unknown_compression": lambda: _patched(base, 259, 0x7777),
        "bomb_deflate": lambda: tiff_bytes(_strip_tags(100_000, 100_000, 8, len(deflated_row)), deflated_row),
        "bomb_g4": lambda: tiff_bytes(_strip_tags(100_000, 100_000, 4, 64, bits=1, photometric=0), bytes(64)),
        "bits_zero": lambda: tiff_bytes(_strip_tags(16, 16, 1, 256, bits=0), bytes(256)),
        "bits_255": lambda: tiff_bytes(_strip_tags(16, 16, 1, 256, bits=255), bytes(256)),
        "samples_zero": lambda: tiff_bytes(_strip_tags(16, 16, 1, 256, samples=0), bytes(256)),
        "samples_200": lambda: tiff_bytes(_strip_tags(16, 16, 1, 256, samples=200), bytes(256)),
        "palette_without_colormap": lambda: tiff_bytes(_strip_tags(16, 16, 1, 256, photometric=3), bytes(256)),
        "count_promises_gigabytes": lambda: _patched(tiff_bytes(_strip_tags(16, 16, 1, 256), bytes(256)), 273,
                                                      2**30, field="count"),
        "rows_per_strip_zero": lambda: tiff_bytes({**_strip_tags(16, 16, 1, 256), 278: (_LONG, [0])}, bytes(256)),
    }
    for fraction in (0.05, 0.3, 0.6, 0.95):
        kinds[f"truncated_{int(fraction * 100):02d}"] = lambda f=fraction: valid[1][:int(len(valid[1]) * f)]
    return kinds


def _fuzzed(rng: np.random.Generator, seed_file: bytes) -> bytes:
    """A copy of `seed_file` with a few random bytes overwritten, a range zeroed or the tail cut."""
    data = bytearray(seed_file)
    how = rng.integers(0, 3)
    if how == 0:
        for at in rng.integers(0, len(data), rng.integers(1, 24)):
            data[at] = int(rng.integers(0, 256))
    elif how == 1:
        start, length = int(rng.integers(0, len(data))), int(rng.integers(1, 64))
        data[start:start + length] = bytes(len(data[start:start + length]))
    else:
        # Directory bytes are the likeliest to break a reader: hit the first 512 bytes hard.
        for at in rng.integers(0, min(512, len(data)), rng.integers(4, 40)):
            data[at] = int(rng.integers(0, 256))
    return bytes(data)


def hostile_corpus(folder: Path, seed: int, n_fuzz: int) -> dict[str, str]:
    """Write the crafted kinds and `n_fuzz` fuzzed TIFFs into `folder`; return file name -> kind.

    Every file is named ``.tif``; the same `seed` writes the same bytes.
    """
    rng = np.random.default_rng(seed)
    folder.mkdir(parents=True, exist_ok=True)
    valid = _valid_flavours(rng)
    written: dict[str, str] = {}
    for kind, make in _crafted(rng, valid).items():
        name = f"crafted_{kind}.tif"
        (folder / name).write_bytes(make())
        written[name] = kind
    for i in range(n_fuzz):
        name = f"fuzz_{i:04d}.tif"
        (folder / name).write_bytes(_fuzzed(rng, valid[i % len(valid)]))
        written[name] = "fuzz"
    return written
