"""Every TIFF flavour an archive holds decodes to the expected gray, written by tifffile or Pillow.

Lossless codecs must give back the source exactly; the expected gray of deeper or colour samples is
computed here with float formulas (BT.601 luma and ink gray, v * 255 / (2**bits - 1)), not by the decoder's
integer code. JPEG is lossy: its tolerance is a mean absolute error of at most 3 gray levels, at
most 40 anywhere, and the curve's row unchanged in every column.
"""

from __future__ import annotations

import struct
from pathlib import Path

import imagecodecs
import numpy as np
import pytest
import tifffile
from PIL import Image

from benchmarks.hostile import _LONG, _SHORT, DATA, tiff_bytes
from veernet_pipeline.io.tiff import decode_scan, read_header


def _scan(height: int = 64, width: int = 200) -> np.ndarray:
    """Light paper, a grid every 10 columns and a sloping dark curve, uint8 (H, W)."""
    image = np.full((height, width), 235, dtype=np.uint8)
    image[:, ::10] = 190
    cols = np.arange(width)
    image[(cols * (height - 1)) // (width - 1), cols] = 20
    return image


def _ink_gray(rgb: np.ndarray) -> np.ndarray:
    """Ink gray of 0..255 RGB (float formula): BT.601 luma, darkened to 255 - (saturation - 64) * 255 / 191 where
    the colour is that saturated (max - min channel); each rounded half up, as uint8."""
    rgb = rgb.astype(np.float64)
    luma = np.floor(0.299 * rgb[..., 0] + 0.587 * rgb[..., 1] + 0.114 * rgb[..., 2] + 0.5)
    darkness = np.floor(np.clip(rgb.max(axis=-1) - rgb.min(axis=-1) - 64.0, 0.0, None) * 255.0 / 191.0 + 0.5)
    return np.minimum(luma, 255.0 - darkness).astype(np.uint8)


def _within_jpeg_tolerance(decoded: np.ndarray, expected: np.ndarray) -> None:
    error = np.abs(decoded.astype(int) - expected.astype(int))
    assert error.mean() <= 3.0 and error.max() <= 40, (error.mean(), error.max())
    np.testing.assert_array_equal(decoded.argmin(axis=0), expected.argmin(axis=0))


@pytest.mark.parametrize("codec", ["group3", "group4", "tiff_ccitt"])
def test_ccitt_fax_one_bit(tmp_path: Path, codec: str) -> None:
    ink = _scan() < 128
    Image.fromarray(~ink).save(tmp_path / "fax.tif", compression=codec)  # Pillow's "1" mode: True is white
    header = read_header(tmp_path / "fax.tif")
    assert header.bits == 1 and header.compression == {"group3": "ccittfax3", "group4": "ccittfax4",
                                                       "tiff_ccitt": "ccittrle"}[codec]
    np.testing.assert_array_equal(decode_scan(tmp_path / "fax.tif"), np.where(ink, 0, 255).astype(np.uint8))


@pytest.mark.parametrize("kwargs", [
    {"compression": "lzw", "predictor": True}, {"compression": "zlib", "predictor": True},
    {"compression": "packbits"}, {"compression": "lzw", "tile": (32, 32)},
    {"compression": "zlib", "bigtiff": True}, {"compression": "zlib", "tile": (16, 64), "bigtiff": True},
])
def test_lossless_gray_8_bit(tmp_path: Path, kwargs: dict) -> None:
    image = _scan()
    tifffile.imwrite(tmp_path / "scan.tif", image, metadata=None, **kwargs)
    np.testing.assert_array_equal(decode_scan(tmp_path / "scan.tif"), image)


def test_deep_unsigned_samples_scale_by_their_depth(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    deep = rng.integers(0, 65536, (64, 200)).astype(np.uint16)
    tifffile.imwrite(tmp_path / "sixteen.tif", deep, compression="zlib")
    expected = np.rint(deep.astype(np.float64) * 255 / 65535)
    np.testing.assert_array_equal(decode_scan(tmp_path / "sixteen.tif"), expected)
    tifffile.imwrite(tmp_path / "white16.tif", deep, compression="lzw", photometric="miniswhite")
    np.testing.assert_array_equal(decode_scan(tmp_path / "white16.tif"), 255 - expected)
    twelve = (deep >> 4).astype(np.uint16)
    tifffile.imwrite(tmp_path / "twelve.tif", twelve, bitspersample=12)
    assert read_header(tmp_path / "twelve.tif").bits == 12
    np.testing.assert_array_equal(decode_scan(tmp_path / "twelve.tif"), np.rint(twelve.astype(float) * 255 / 4095))


def test_signed_and_float_samples_map_by_their_range(tmp_path: Path) -> None:
    signed = (_scan().astype(np.int16) - 128) * 8  # -864 .. 856
    tifffile.imwrite(tmp_path / "signed.tif", signed)
    expected = np.rint(np.interp(signed, [signed.min(), signed.max()], [0, 255]))
    np.testing.assert_array_equal(decode_scan(tmp_path / "signed.tif"), expected)
    unit = _scan().astype(np.float32) / 255  # within 0..1: read as 0..1
    tifffile.imwrite(tmp_path / "unit.tif", unit)
    np.testing.assert_array_equal(decode_scan(tmp_path / "unit.tif"), _scan())
    wide = _scan().astype(np.float64) * 40.0 - 3000.0  # outside 0..1: its own range
    wide[0, 0] = np.nan  # no value: paper
    tifffile.imwrite(tmp_path / "wide.tif", wide)
    expected = np.rint(np.interp(wide, [np.nanmin(wide), np.nanmax(wide)], [0, 255]))
    expected[0, 0] = 255
    np.testing.assert_array_equal(decode_scan(tmp_path / "wide.tif"), expected)
    tifffile.imwrite(tmp_path / "flat.tif", np.full((20, 40), -5, np.int8))
    np.testing.assert_array_equal(decode_scan(tmp_path / "flat.tif"), np.full((20, 40), 255))


def test_rgb_planar_alpha_and_raw_ycbcr(tmp_path: Path) -> None:
    gray = _scan()
    rgb = np.stack([gray, (gray * 0.8).astype(np.uint8), 255 - gray // 3], axis=-1)
    tifffile.imwrite(tmp_path / "contig.tif", rgb, photometric="rgb", compression="lzw")
    tifffile.imwrite(tmp_path / "planar.tif", np.moveaxis(rgb, -1, 0), photometric="rgb", planarconfig="separate")
    for name in ("contig.tif", "planar.tif"):
        np.testing.assert_array_equal(decode_scan(tmp_path / name), _ink_gray(rgb))
    deep = rgb.astype(np.uint16) * 257
    tifffile.imwrite(tmp_path / "rgb16.tif", deep, photometric="rgb")
    np.testing.assert_array_equal(decode_scan(tmp_path / "rgb16.tif"), _ink_gray(rgb))
    alpha = np.stack([gray, np.full_like(gray, 7)], axis=-1)
    tifffile.imwrite(tmp_path / "alpha.tif", alpha, photometric="minisblack", extrasamples=[2])
    np.testing.assert_array_equal(decode_scan(tmp_path / "alpha.tif"), gray)
    tifffile.imwrite(tmp_path / "ycbcr.tif", rgb, photometric="ycbcr", subsampling=(1, 1))
    np.testing.assert_array_equal(decode_scan(tmp_path / "ycbcr.tif"), rgb[..., 0])  # Y is the luma


def test_a_coloured_pen_is_ink_and_gray_paper_keeps_its_ink_gray(tmp_path: Path) -> None:
    # By hand: yellow and orange (saturation 255) -> 0; red (220, 0, 0): luma 65.8, darkness 156 * 255 / 191 = 208.3,
    # so 255 - 208 = 47; cyan (0, 170, 220) likewise 47 (its luma 124.9); aged paper (240, 230, 200), saturation 40,
    # keeps its luma 229.6 -> 230; gray 128, black and white are their own levels.
    colours = np.array([[[255, 255, 0], [255, 140, 0], [220, 0, 0], [0, 170, 220], [240, 230, 200], [128, 128, 128],
                         [0, 0, 0], [255, 255, 255]]], np.uint8)
    tifffile.imwrite(tmp_path / "pens.tif", colours, photometric="rgb")
    np.testing.assert_array_equal(decode_scan(tmp_path / "pens.tif"), [[0, 0, 47, 47, 230, 128, 0, 255]])


def test_cmyk_goes_through_rgb_to_ink_gray(tmp_path: Path) -> None:
    levels = np.arange(256, dtype=np.uint8)
    cmyk = np.zeros((2, 256, 4), np.uint8)
    cmyk[0, :, 3] = levels  # black ink only: gray = 255 - K
    cmyk[1, :, 0] = levels  # cyan only: red falls, green and blue stay
    tifffile.imwrite(tmp_path / "cmyk.tif", cmyk, photometric="separated")
    rgb = np.stack([255.0 - cmyk[..., 0], np.full((2, 256), 255.0), np.full((2, 256), 255.0)], axis=-1)
    rgb[0] = (255 - levels)[:, None]
    np.testing.assert_array_equal(decode_scan(tmp_path / "cmyk.tif"), _ink_gray(rgb))


def test_palettes_read_through_their_colours(tmp_path: Path) -> None:
    indices = (np.arange(64 * 200).reshape(64, 200) % 7).astype(np.uint8)
    colours = np.array([[255, 255, 255], [0, 0, 0], [200, 30, 30], [30, 160, 30], [20, 20, 220], [250, 240, 200],
                        [128, 128, 128]], dtype=np.uint16)
    cmap = np.zeros((3, 256), np.uint16)
    cmap[:, :7] = colours.T * 257  # 16-bit colormap entries, as the TIFF spec stores them
    tifffile.imwrite(tmp_path / "palette.tif", indices, photometric="palette", colormap=cmap, compression="lzw")
    np.testing.assert_array_equal(decode_scan(tmp_path / "palette.tif"), _ink_gray(colours.astype(float))[indices])


@pytest.mark.parametrize("writer", ["tifffile", "pillow"])
def test_jpeg_in_tiff_gray_and_ycbcr(tmp_path: Path, writer: str) -> None:
    gray = _scan()
    rgb = np.stack([gray, gray, (gray * 0.9).astype(np.uint8)], axis=-1)
    if writer == "tifffile":  # colour stored as YCbCr, chroma subsampled 2 x 2
        tifffile.imwrite(tmp_path / "gray.tif", gray, compression="jpeg")
        tifffile.imwrite(tmp_path / "colour.tif", rgb, photometric="rgb", compression="jpeg")
        assert read_header(tmp_path / "colour.tif").photometric == "ycbcr"
    else:  # libtiff, default quality 75; colour stored as RGB
        Image.fromarray(gray).save(tmp_path / "gray.tif", compression="jpeg")
        Image.fromarray(rgb).save(tmp_path / "colour.tif", compression="jpeg")
    _within_jpeg_tolerance(decode_scan(tmp_path / "gray.tif"), gray)
    _within_jpeg_tolerance(decode_scan(tmp_path / "colour.tif"), _ink_gray(rgb))


def _old_style_jpeg(image: np.ndarray) -> bytes:
    """An old-style JPEG TIFF (compression 6): one whole JPEG stream named by JPEGInterchangeFormat."""
    stream = imagecodecs.jpeg8_encode(image, level=95)
    height, width = image.shape[:2]
    samples, photometric = (3, 6) if image.ndim == 3 else (1, 1)
    tags = {256: (_LONG, [width]), 257: (_LONG, [height]), 258: (_SHORT, [8] * samples), 259: (_SHORT, [6]),
            262: (_SHORT, [photometric]), 273: (_LONG, [DATA]), 277: (_SHORT, [samples]), 278: (_LONG, [height]),
            279: (_LONG, [len(stream)]), 513: (_LONG, [DATA]), 514: (_LONG, [len(stream)])}
    return tiff_bytes(tags, stream)


def test_old_style_jpeg_where_the_codec_can(tmp_path: Path) -> None:
    gray = _scan()
    rgb = np.stack([gray, gray, (gray * 0.9).astype(np.uint8)], axis=-1)
    (tmp_path / "ojpeg_gray.tif").write_bytes(_old_style_jpeg(gray))
    (tmp_path / "ojpeg_colour.tif").write_bytes(_old_style_jpeg(rgb))
    assert read_header(tmp_path / "ojpeg_gray.tif").compression == "ojpeg"
    _within_jpeg_tolerance(decode_scan(tmp_path / "ojpeg_gray.tif"), gray)
    _within_jpeg_tolerance(decode_scan(tmp_path / "ojpeg_colour.tif"), _ink_gray(rgb))
    # Tables-only old-style JPEG (no whole stream): the codec cannot, and says so.
    broken = bytearray(_old_style_jpeg(gray))
    start = broken.index(b"\xff\xd8")
    broken[start:start + 2] = b"\x00\x00"
    (tmp_path / "ojpeg_broken.tif").write_bytes(bytes(broken))
    with pytest.raises(Exception) as err:
        decode_scan(tmp_path / "ojpeg_broken.tif")
    assert getattr(err.value, "code", None) == "unsupported" and "old-style JPEG" in str(err.value)


def test_portrait_scans_rotate_losslessly_in_every_flavour(tmp_path: Path) -> None:
    landscape = _scan(48, 160)
    portrait = np.ascontiguousarray(np.rot90(landscape, k=-1))
    Image.fromarray(portrait >= 128).save(tmp_path / "fax.tif", compression="group4")
    tifffile.imwrite(tmp_path / "tiled.tif", portrait, tile=(32, 32), compression="zlib", bigtiff=True)
    np.testing.assert_array_equal(decode_scan(tmp_path / "fax.tif"), np.where(landscape >= 128, 255, 0))
    np.testing.assert_array_equal(decode_scan(tmp_path / "tiled.tif"), landscape)
    assert struct.unpack("<H", (tmp_path / "tiled.tif").read_bytes()[2:4])[0] == 43  # BigTIFF
