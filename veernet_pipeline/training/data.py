"""Synthetic segmentation sets for training: native-resolution crops, padding collate, epoch order.

A set folder holds `index.parquet` (id, image, mask, calibration, las, width, height, well,
split, n_curves; paths relative to the folder) and single-page uint8 TIFFs. Nothing is ever
resized: long logs are cropped along depth (W) at native resolution, optionally across the track
too (H, at a multiple of 32 rows, the crop's first row kept for the net's row code), and a batch is
padded bottom/right to its widest and tallest member rounded up to 32, with a validity mask that the
loss multiplies in before any reduction.

Every random choice is a function of (seed, epoch, index) or (seed, epoch), so a run resumed at
any batch sees exactly the batches an uninterrupted run would.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import tifffile
import torch
from torch.utils.data import Dataset, Sampler

from veernet_pipeline.io.classes import STYLES, style_class
from veernet_pipeline.io.sets import read_split
from veernet_pipeline.model.veernet import MULTIPLE, round_up

# The curve styles are the last classes (io.classes); other ink below them is not curve.
FIRST_CURVE_CLASS = min(style_class(style) for style in STYLES)


def read_plane(path: Path) -> np.ndarray:
    """One single-page uint8 (H, W) TIFF; a ValueError names the file otherwise."""
    array = tifffile.imread(path)
    if array.ndim != 2 or array.dtype != np.uint8:
        raise ValueError(
            f"{path}: expected a single-page uint8 (H, W) TIFF, got {array.dtype} {array.shape}; "
            "rewrite it with veernet_pipeline.io.tiff.write_tiff"
        )
    return array


class SegmentationSet(Dataset):
    """One split of a synthetic set as (image, target) pairs.

    Args:
        set_dir: folder holding index.parquet and the TIFFs.
        split: "train", "val" or "test".
        binary: True maps every curve-style class to 1 and the rest (background, other ink) to 0.
        crop_width: 0 = full width; > 0 (multiple of 32) = a crop of that many columns when wider.
        seed: base seed; the crop of item i in epoch e comes from default_rng([seed, e, i]).
        max_items: 0 = every row of the split; > 0 = the first max_items rows in index order.
        crops_per_log: items per log and epoch; item i is a crop of log i // crops_per_log. With
            more than one, decoded logs stay in memory, so a log is read from disk once per run
            instead of once per crop (a full-size log is about 8 MB as uint8, twice with its mask).
        crop_height: 0 = the whole track; > 0 (multiple of 32) = at most that many rows of a taller track,
            starting on a multiple of 32 rows (so the crop's bottleneck cells are the track's), drawn after
            the columns; the lowest start reaches the track's foot.
    """

    def __init__(self, set_dir: Path, split: str, binary: bool, crop_width: int, seed: int, max_items: int,
                 crops_per_log: int = 1, crop_height: int = 0) -> None:
        self.set_dir = Path(set_dir)
        for name, size in (("crop_width", crop_width), ("crop_height", crop_height)):
            if size < 0 or size % MULTIPLE:
                raise ValueError(f"{name} {size} must be 0 or a positive multiple of {MULTIPLE}; fix params.yaml")
        rows = read_split(self.set_dir, split)
        self.rows = rows.head(max_items) if max_items > 0 else rows
        if crops_per_log < 1:
            raise ValueError(f"crops_per_log {crops_per_log} must be at least 1; fix params.yaml")
        self.binary, self.crop_width, self.seed, self.epoch = binary, crop_width, seed, 0
        self.crops_per_log, self.crop_height = crops_per_log, crop_height
        self._planes: dict[int, tuple[np.ndarray, np.ndarray]] = {}

    def set_epoch(self, epoch: int) -> None:
        """Choose the epoch whose crops `__getitem__` returns."""
        self.epoch = epoch

    def __len__(self) -> int:
        return len(self.rows) * self.crops_per_log

    def heights(self) -> list[int]:
        """Each item's height in pixels (its log's `height`, or the crop's), for length-aware batching."""
        heights = [min(int(h), self.crop_height) if self.crop_height else int(h) for h in self.rows["height"]]
        return [h for h in heights for _ in range(self.crops_per_log)]

    def _read(self, log: int) -> tuple[np.ndarray, np.ndarray]:
        if log in self._planes:
            return self._planes[log]
        row = self.rows.iloc[log]
        image, mask = read_plane(self.set_dir / row["image"]), read_plane(self.set_dir / row["mask"])
        if image.shape != mask.shape:
            raise ValueError(f"{self.set_dir / row['mask']}: mask {mask.shape} does not match image {image.shape}")
        if self.crops_per_log > 1:
            self._planes[log] = (image, mask)
        return image, mask

    def __getitem__(self, index: int) -> dict[str, torch.Tensor]:
        """One item.

        Shape:
            image: (1, H, W) float32 in [0, 1], ink dark; target: (H, W) int64 class per pixel; first_row: ()
            int64, the track row of the item's first row (0 unless cropped across the track).
        """
        image, mask = self._read(index // self.crops_per_log)
        (height, width), first_row = image.shape, 0
        rng = np.random.default_rng([self.seed, self.epoch, index])
        if self.crop_width and width > self.crop_width:
            start = int(rng.integers(0, width - self.crop_width + 1))
            image, mask = image[:, start : start + self.crop_width], mask[:, start : start + self.crop_width]
        if self.crop_height and height > self.crop_height:
            # Whole cells only: the net sees the rows a cell holds in the whole track, and its row code fits. The
            # last start may leave the crop short of `crop_height` (padded by the collate, as inference pads the
            # track's foot), so the bottom rows and border are drawn as often as the top ones.
            first_row = MULTIPLE * int(rng.integers(0, -(-(height - self.crop_height) // MULTIPLE) + 1))
            rows = slice(first_row, first_row + self.crop_height)
            image, mask = image[rows], mask[rows]
        target = (mask >= FIRST_CURVE_CLASS) if self.binary else mask
        return {
            "image": torch.from_numpy(np.ascontiguousarray(image)).float().div_(255.0)[None],
            "target": torch.from_numpy(np.ascontiguousarray(target)).long(),
            "first_row": torch.tensor(first_row),
        }


BUCKET_BATCHES = 16  # batches per chunk that length-aware ordering sorts by height


class EpochSampler(Sampler[int]):
    """Shuffled order that is a function of (seed, epoch), startable mid-epoch for a resume.

    Length-aware when given the items' heights and a batch size above 1: the shuffled order is cut
    into chunks of `BUCKET_BATCHES` batches, each chunk is sorted by height and cut into batches,
    and the chunk's full batches are shuffled (a short last batch stays last). A batch then holds
    logs of about one height, so padding it to its tallest wastes little: with 15 % of tracks
    641-1,024 px tall among 480-640 px ones, batches of 4 pad 23 % more pixels than they hold in
    random order and 5 % in this one (docs/model.md). Items, crops and their order stay a function
    of (seed, epoch), so a resume sees the same batches.

    Args:
        length: items in the dataset.
        seed: base seed; epoch e's order starts from default_rng([seed, e]).permutation(length).
        heights: each item's height in pixels; None = plain shuffled order.
        batch_size: the loader's batch size (the batches the order is made for).
    """

    def __init__(self, length: int, seed: int, heights: Sequence[int] | None = None, batch_size: int = 1) -> None:
        if heights is not None and len(heights) != length:
            raise ValueError(f"EpochSampler got {len(heights)} heights for {length} items")
        self.length, self.seed, self.epoch, self.start = length, seed, 0, 0
        self.heights = None if heights is None or batch_size < 2 else np.asarray(heights)
        self.batch_size = batch_size

    def set_epoch(self, epoch: int, start: int = 0) -> None:
        """Use epoch `epoch`'s order and skip its first `start` items (already trained on)."""
        self.epoch, self.start = epoch, start

    def order(self) -> np.ndarray:
        """The whole epoch's item order."""
        rng = np.random.default_rng([self.seed, self.epoch])
        order = rng.permutation(self.length)
        if self.heights is None:
            return order
        size, chunks = self.batch_size, []
        for first in range(0, self.length, BUCKET_BATCHES * size):
            chunk = order[first:first + BUCKET_BATCHES * size]
            chunk = chunk[np.argsort(self.heights[chunk], kind="stable")]
            batches = [chunk[i:i + size] for i in range(0, len(chunk), size)]
            full = [batches[i] for i in rng.permutation(len(batches) - (len(batches[-1]) < size))]
            chunks.extend([*full, *batches[len(full):]])
        return np.concatenate(chunks)

    def __iter__(self) -> Iterator[int]:
        return iter(self.order()[self.start :].tolist())

    def __len__(self) -> int:
        return max(0, self.length - self.start)


def pad_collate(batch: Sequence[dict[str, torch.Tensor]]) -> dict[str, torch.Tensor]:
    """Stack items padded bottom/right to the batch's tallest and widest, rounded up to 32.

    Images pad with 1.0 (white paper), targets with 0 (background); `valid` is 1 on real pixels.

    Shape:
        items: image (1, H_i, W_i), target (H_i, W_i), first_row () -> image (B, 1, H, W), target (B, H, W)
        int64, valid (B, H, W) float32, first_row (B,) int64.
    """
    height = round_up(max(item["image"].shape[-2] for item in batch))
    width = round_up(max(item["image"].shape[-1] for item in batch))
    size = len(batch)
    image = torch.ones(size, 1, height, width, dtype=torch.float32)
    target = torch.zeros(size, height, width, dtype=torch.int64)
    valid = torch.zeros(size, height, width, dtype=torch.float32)
    for i, item in enumerate(batch):
        h, w = item["image"].shape[-2:]
        image[i, :, :h, :w] = item["image"]
        target[i, :h, :w] = item["target"]
        valid[i, :h, :w] = 1.0
    first_row = torch.stack([item["first_row"] for item in batch])
    return {"image": image, "target": target, "valid": valid, "first_row": first_row}
