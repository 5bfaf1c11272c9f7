"""Scan TIFF headers, decoding and failure codes, on real files written to tmp_path."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import tifffile

from veernet_pipeline.io.tiff import ScanReadError, TiffHeader, decode_scan, read_header, write_tiff


def _scan(height: int = 48, width: int = 160) -> np.ndarray:
    """Paper with a grid line and a sloping one-pixel curve: ink 0 on 255, uint8 (H, W)."""
    image = np.full((height, width), 255, dtype=np.uint8)
    image[:, ::10] = 200
    cols = np.arange(width)
    image[(cols * (height - 1)) // (width - 1), cols] = 0
    return image


@pytest.mark.parametrize(
    ("compression", "tag"),
    [("none", "none"), ("zlib", "adobe_deflate"), ("lzw", "lzw"), ("packbits", "packbits"), ("zstd", "zstd")],
)
def test_compressions_round_trip(tmp_path: Path, compression: str, tag: str) -> None:
    image = _scan()
    path = tmp_path / f"scan_{compression}.tif"
    write_tiff(path, image, compression=compression)
    header = read_header(path)
    assert header == TiffHeader(width=160, height=48, bits=8, samples=1, dtype="uint8", photometric="minisblack",
                                compression=tag, pages=1, page=0)
    np.testing.assert_array_equal(decode_scan(path), image)


def test_one_bit_both_photometrics(tmp_path: Path) -> None:
    image = _scan()
    ink = image == 0
    # MINISWHITE 1-bit (the usual CCITT scan layout): bit 1 is black.
    write_tiff(tmp_path / "white.tif", ink, compression="packbits", photometric="miniswhite")
    # MINISBLACK 1-bit: bit 1 is white.
    write_tiff(tmp_path / "black.tif", ~ink, compression="none", photometric="minisblack")
    expected = np.where(ink, 0, 255).astype(np.uint8)
    for name, photometric in (("white.tif", "miniswhite"), ("black.tif", "minisblack")):
        header = read_header(tmp_path / name)
        assert (header.bits, header.photometric) == (1, photometric)
        np.testing.assert_array_equal(decode_scan(tmp_path / name), expected)


def test_miniswhite_8bit_is_inverted(tmp_path: Path) -> None:
    image = _scan()
    write_tiff(tmp_path / "mw.tif", 255 - image, compression="lzw", photometric="miniswhite")
    np.testing.assert_array_equal(decode_scan(tmp_path / "mw.tif"), image)


def test_sixteen_bit_scales_to_uint8(tmp_path: Path) -> None:
    image = _scan()
    write_tiff(tmp_path / "deep.tif", image.astype(np.uint16) * 257, compression="zstd")
    assert read_header(tmp_path / "deep.tif").bits == 16
    decoded = decode_scan(tmp_path / "deep.tif")
    assert decoded.dtype == np.uint8
    np.testing.assert_array_equal(decoded, image)


def test_rgb_and_palette_to_gray(tmp_path: Path) -> None:
    image = _scan()
    write_tiff(tmp_path / "rgb.tif", np.stack([image] * 3, axis=-1), compression="zlib", photometric="rgb")
    header = read_header(tmp_path / "rgb.tif")
    assert (header.samples, header.photometric) == (3, "rgb")
    np.testing.assert_array_equal(decode_scan(tmp_path / "rgb.tif"), image)
    ramp = (np.arange(256, dtype=np.uint16) * 257)[None, :].repeat(3, axis=0)
    tifffile.imwrite(tmp_path / "pal.tif", image, photometric="palette", colormap=ramp)
    assert read_header(tmp_path / "pal.tif").photometric == "palette"
    np.testing.assert_array_equal(decode_scan(tmp_path / "pal.tif"), image)


def test_portrait_is_rotated_so_depth_runs_left_to_right(tmp_path: Path) -> None:
    # Portrait scan: depth runs down the rows. Mark the shallowest row and a row 30 px deeper.
    portrait = np.full((200, 60), 255, dtype=np.uint8)
    portrait[0, 5] = 0
    portrait[30, 5] = 10
    write_tiff(tmp_path / "portrait.tif", portrait, compression="lzw")
    header = read_header(tmp_path / "portrait.tif")
    assert (header.width, header.height, header.rotated) == (60, 200, True)
    assert (header.landscape_width, header.landscape_height) == (200, 60)
    decoded = decode_scan(tmp_path / "portrait.tif")
    assert decoded.shape == (60, 200)
    np.testing.assert_array_equal(decoded, np.rot90(portrait))
    # Depth order is kept left to right: the shallow mark is at column 0, the deeper one at 30.
    assert np.argwhere(decoded == 0)[:, 1].tolist() == [0]
    assert np.argwhere(decoded == 10)[:, 1].tolist() == [30]


def test_multipage_reports_pages_and_decodes_first(tmp_path: Path) -> None:
    image = _scan()
    tifffile.imwrite(tmp_path / "multi.tif", np.stack([image, 255 - image]), photometric="minisblack")
    assert (read_header(tmp_path / "multi.tif").pages, read_header(tmp_path / "multi.tif").page) == (2, 0)
    np.testing.assert_array_equal(decode_scan(tmp_path / "multi.tif"), image)


def test_thumbnails_and_masks_are_not_pages(tmp_path: Path) -> None:
    image = _scan()
    with tifffile.TiffWriter(tmp_path / "preview_first.tif") as tif:
        tif.write(np.zeros((12, 40), np.uint8), subfiletype=1)  # a reduced-resolution preview before the scan
        tif.write(image)
        tif.write(np.ones((48, 160), bool), subfiletype=4)  # a transparency mask
    header = read_header(tmp_path / "preview_first.tif")
    assert (header.pages, header.page, header.width, header.height) == (1, 1, 160, 48)
    np.testing.assert_array_equal(decode_scan(tmp_path / "preview_first.tif"), image)


def test_truncated_file_is_reported_by_header(tmp_path: Path) -> None:
    write_tiff(tmp_path / "whole.tif", _scan(), compression="none")
    data = (tmp_path / "whole.tif").read_bytes()
    cut = tmp_path / "broken_truncated.tif"
    cut.write_bytes(data[: len(data) // 2])
    for reader in (read_header, decode_scan):
        with pytest.raises(ScanReadError) as err:
            reader(cut)
        assert err.value.code == "truncated"
        assert "broken_truncated.tif" in str(err.value) and "copy it again" in str(err.value)
    # Cut inside the image directory itself: tifffile cannot open it at all.
    stub = tmp_path / "stub.tif"
    stub.write_bytes(data[:20])
    with pytest.raises(ScanReadError) as err:
        read_header(stub)
    assert err.value.code == "truncated"


@pytest.mark.parametrize("content", [b"", b"not a tiff at all, just text\n" * 4, b"\x89PNG\r\n\x1a\n" + bytes(64)])
def test_non_tiff_is_unreadable(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "fake.TIF"
    path.write_bytes(content)
    with pytest.raises(ScanReadError) as err:
        read_header(path)
    assert err.value.code == "unreadable"
    assert err.value.path == path
    assert str(err.value).startswith(f"{path}: ")


def test_header_reads_tags_without_decoding_pixels(tmp_path: Path) -> None:
    path = tmp_path / "garbled.tif"
    write_tiff(path, _scan(), compression="zlib")
    with tifffile.TiffFile(path) as tif:
        offset = tif.pages.first.dataoffsets[0]
    data = bytearray(path.read_bytes())
    data[offset : offset + 8] = bytes(8)  # destroy the zlib stream header, keep the tags intact
    path.write_bytes(bytes(data))
    assert read_header(path).width == 160
    with pytest.raises(ScanReadError) as err:
        decode_scan(path)
    assert err.value.code == "unreadable"
    assert "adobe_deflate" in err.value.message


def test_unsupported_layouts_are_refused_from_the_header(tmp_path: Path) -> None:
    tifffile.imwrite(tmp_path / "complex.tif", np.ones((20, 40), dtype=np.complex64))
    tifffile.imwrite(tmp_path / "lab.tif", np.zeros((20, 40, 3), dtype=np.uint8), photometric="cielab")
    for name, words in (("complex.tif", "complex64"), ("lab.tif", "photometric cielab")):
        with pytest.raises(ScanReadError) as err:
            decode_scan(tmp_path / name)
        assert err.value.code == "unsupported" and words in err.value.message


def test_pixel_budget_is_checked_before_decoding(tmp_path: Path) -> None:
    write_tiff(tmp_path / "scan.tif", _scan(), compression="zlib")
    assert decode_scan(tmp_path / "scan.tif", max_pixels=48 * 160).shape == (48, 160)
    with pytest.raises(ScanReadError) as err:
        decode_scan(tmp_path / "scan.tif", max_pixels=48 * 160 - 1)
    assert err.value.code == "too_large"
    assert "160 x 48 px (7,680 px), over the budget of 7,679 (ingest.max_pixels)" in err.value.message


def test_write_tiff_is_atomic_and_creates_folders(tmp_path: Path) -> None:
    target = tmp_path / "deep" / "folder" / "mask.tif"
    mask = np.zeros((32, 64), dtype=np.uint8)
    mask[10, :] = 1
    mask[20, :] = 2
    write_tiff(target, mask)
    assert sorted(p.name for p in target.parent.iterdir()) == ["mask.tif"]
    np.testing.assert_array_equal(tifffile.imread(target), mask)
