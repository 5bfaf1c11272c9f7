"""Synthetic segmentation sets for training: native-resolution crops, padding collate, epoch order.

A set folder holds `index.parquet` (id, image, mask, calibration, las, width, height, well,
split, n_curves; paths relative to the folder) and single-page uint8 TIFFs. Nothing is ever
resized: long logs are cropped along depth (W) at native resolution, and a batch is padded
bottom/right to its widest and tallest member rounded up to 32, with a validity mask that the
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

from veernet_pipeline.io.sets import read_split
from veernet_pipeline.model.veernet import MULTIPLE, round_up


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
        binary: True maps every curve class to 1 (curve vs background).
        crop_width: 0 = full width; > 0 (multiple of 32) = a crop of that many columns when wider.
        seed: base seed; the crop of item i in epoch e comes from default_rng([seed, e, i]).
        max_items: 0 = every row of the split; > 0 = the first max_items rows in index order.
        crops_per_log: items per log and epoch; item i is a crop of log i // crops_per_log. With
            more than one, decoded logs stay in memory, so a log is read from disk once per run
            instead of once per crop (a full-size log is about 8 MB as uint8, twice with its mask).
    """

    def __init__(self, set_dir: Path, split: str, binary: bool, crop_width: int, seed: int, max_items: int,
                 crops_per_log: int = 1) -> None:
        self.set_dir = Path(set_dir)
        if crop_width < 0 or crop_width % MULTIPLE:
            raise ValueError(f"crop_width {crop_width} must be 0 or a positive multiple of {MULTIPLE}; fix params.yaml")
        rows = read_split(self.set_dir, split)
        self.rows = rows.head(max_items) if max_items > 0 else rows
        if crops_per_log < 1:
            raise ValueError(f"crops_per_log {crops_per_log} must be at least 1; fix params.yaml")
        self.binary, self.crop_width, self.seed, self.epoch = binary, crop_width, seed, 0
        self.crops_per_log = crops_per_log
        self._planes: dict[int, tuple[np.ndarray, np.ndarray]] = {}

    def set_epoch(self, epoch: int) -> None:
        """Choose the epoch whose crops `__getitem__` returns."""
        self.epoch = epoch

    def __len__(self) -> int:
        return len(self.rows) * self.crops_per_log

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
            image: (1, H, W) float32 in [0, 1], ink dark; target: (H, W) int64 class per pixel.
        """
        image, mask = self._read(index // self.crops_per_log)
        width = image.shape[1]
        if self.crop_width and width > self.crop_width:
            start = int(np.random.default_rng([self.seed, self.epoch, index]).integers(0, width - self.crop_width + 1))
            image, mask = image[:, start : start + self.crop_width], mask[:, start : start + self.crop_width]
        target = (mask > 0) if self.binary else mask
        return {
            "image": torch.from_numpy(np.ascontiguousarray(image)).float().div_(255.0)[None],
            "target": torch.from_numpy(np.ascontiguousarray(target)).long(),
        }


class EpochSampler(Sampler[int]):
    """Shuffled order that is a function of (seed, epoch), startable mid-epoch for a resume.

    Args:
        length: items in the dataset.
        seed: base seed; epoch e's order is default_rng([seed, e]).permutation(length).
    """

    def __init__(self, length: int, seed: int) -> None:
        self.length, self.seed, self.epoch, self.start = length, seed, 0, 0

    def set_epoch(self, epoch: int, start: int = 0) -> None:
        """Use epoch `epoch`'s order and skip its first `start` items (already trained on)."""
        self.epoch, self.start = epoch, start

    def __iter__(self) -> Iterator[int]:
        order = np.random.default_rng([self.seed, self.epoch]).permutation(self.length)
        return iter(order[self.start :].tolist())

    def __len__(self) -> int:
        return max(0, self.length - self.start)


def pad_collate(batch: Sequence[dict[str, torch.Tensor]]) -> dict[str, torch.Tensor]:
    """Stack items padded bottom/right to the batch's tallest and widest, rounded up to 32.

    Images pad with 1.0 (white paper), targets with 0 (background); `valid` is 1 on real pixels.

    Shape:
        items: image (1, H_i, W_i), target (H_i, W_i) -> image (B, 1, H, W), target (B, H, W)
        int64, valid (B, H, W) float32.
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
    return {"image": image, "target": target, "valid": valid}
