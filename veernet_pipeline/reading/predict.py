"""Class probabilities for a whole scan, tiled along depth at native resolution.

A 12,800-px strip does not fit one forward pass on every machine, so the scan is cut into
overlapping tiles along W (the depth axis). Each tile is padded bottom/right with paper (1.0)
to a multiple of 32 and the validity mask goes with it, so the attention never looks at the pad.
Stitching is by centre crop: every column takes its probabilities from the one tile in which it
lies farthest from a cut edge (an edge that is not the scan's own edge), which is the tile whose
context around that column is the most complete. No blending, so no seams of averaged logits.

On a CPU with more than one torch thread the tiles go through the net side by side, one Python
thread per torch thread, each tile on one torch thread. A convolution's sums are split by the thread
count, so the bytes of a scan read on every core would depend on how many cores there are; read so,
they equal those of a reading on one thread (as the evaluate stage's and the archive's workers
read), on any core count. And no slower: a mirrored 640 x 12,800 strip in 2.96 s against 3.01 s
with every thread on each tile, 5.07 s on one thread, on 2 cores; the read holds a tile per thread,
644 MB at its peak against 476 (benchmarks/results/tile_threads.md).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Literal

import numpy as np
import torch
from torch import nn

from veernet_pipeline.allocator import keep_freed_memory
from veernet_pipeline.model.veernet import MULTIPLE, pad_to_multiple

# Tiles stacked into one forward pass, by device type. On CPU a stack costs more per tile than tiles
# one at a time (benchmarks/results/speed.md: 0.197 s against 0.118 s per 640 x 2,048 tile on 2
# threads); a GPU fills its cores with the stack (about 1 GB of activations per 4 tiles).
TILES_PER_FORWARD = {"cpu": 1, "cuda": 4}


# CPU instruction sets that compute bf16 (dot products into fp32) rather than emulate it: names of
# `torch.cpu.get_capabilities()`. AVX512-BF16 measured on this project's AMD EPYC machine
# (benchmarks/results/speed-2026-12-06-bf16); AMX-BF16 is Intel's matrix unit for the same products.
CPU_BF16_FEATURES = ("avx512_bf16", "amx_bf16")


def tiles_per_forward(device: str | torch.device) -> int:
    """Tiles stacked into one forward pass on `device` (`TILES_PER_FORWARD`; 1 for a device not listed)."""
    return TILES_PER_FORWARD.get(torch.device(device).type, 1)


def inference_dtype(device: str | torch.device) -> torch.dtype | None:
    """The autocast precision of the forward passes on `device`: bf16 where the hardware computes it, else None (fp32).

    bf16 on CUDA that supports it, and on CPUs with bf16 instructions (`CPU_BF16_FEATURES`); fp32
    elsewhere. With AVX512-BF16 the `cpu` profile's net reads a mirrored 640 x 12,800 strip in 3.90 s
    against fp32's 6.25 s (side by side, 2 threads; benchmarks/results/speed-2026-12-06-bf16), and 80
    val logs in 199 s of net time against 309 s, reading them as well within noise (the model of
    2026-12-06, benchmarks/results/precision-2026-12-06-80: median R² 0.923 against 0.926, median
    MAE 0.00846 against 0.00841; 36 of 252 curves moved by more than 0.01 R², 17 up and 19 down:
    paths that cost nearly the same either way, which the last bits decide). Without bf16
    instructions oneDNN emulates bf16: not measured here, so those CPUs keep fp32. A run is
    bit-identical to another on the same machine either way; `predict_probs(dtype=None)` reads in
    fp32 anywhere (docs/model.md).
    """
    device = torch.device(device)
    if device.type == "cuda":
        return torch.bfloat16 if torch.cuda.is_bf16_supported() else None
    if device.type == "cpu":
        capabilities = torch.cpu.get_capabilities()
        return torch.bfloat16 if any(capabilities.get(name) for name in CPU_BF16_FEATURES) else None
    return None


@dataclass(frozen=True)
class Tile:
    """Columns `[start, stop)` go through the net; columns `[keep_start, keep_stop)` are kept."""

    start: int
    stop: int
    keep_start: int
    keep_stop: int


def plan_tiles(width: int, tile_width: int, tile_overlap: int) -> list[Tile]:
    """Tiles covering `width` columns; their kept ranges partition `[0, width)` in order.

    Tiles start every `tile_width - tile_overlap` columns and the last one is flush with the right
    edge, so every tile but a lone one is exactly `tile_width` wide. Between two neighbours the
    cut sits in the middle of their overlap: on each side of it a column is farther from the
    other tile's cut edge than it would be in that tile.
    """
    if tile_width <= 0 or tile_width % MULTIPLE:
        raise ValueError(f"tile_width {tile_width} must be a positive multiple of {MULTIPLE}; "
                         f"set evaluate/infer tile_width in params.yaml to e.g. {max(MULTIPLE, tile_width // 32 * 32)}")
    if not 0 <= tile_overlap < tile_width:
        raise ValueError(f"tile_overlap {tile_overlap} must be in [0, tile_width={tile_width}); fix params.yaml")
    if width <= tile_width:
        return [Tile(0, width, 0, width)]
    starts = [*range(0, width - tile_width, tile_width - tile_overlap), width - tile_width]
    stops = [s + tile_width for s in starts]
    cuts = [0] + [(stops[i] + starts[i + 1] + 1) // 2 for i in range(len(starts) - 1)] + [width]
    return [Tile(s, e, cuts[i], cuts[i + 1]) for i, (s, e) in enumerate(zip(starts, stops, strict=True))]


def logits_to_probs(logits: torch.Tensor) -> torch.Tensor:
    """Class probabilities from logits; one channel (binary) becomes `[1 - p, p]`.

    Shape:
        logits: (B, C, H, W). Returns (B, max(C, 2), H, W).
    """
    if logits.shape[1] == 1:
        curve = torch.sigmoid(logits)
        return torch.cat([1.0 - curve, curve], dim=1)
    return torch.softmax(logits, dim=1)


def predict_probs(
    model: nn.Module, image: np.ndarray, tile_width: int, tile_overlap: int, device: str | torch.device = "cpu",
    mirror: bool = False, stack: int | None = None, dtype: torch.dtype | Literal["device"] | None = "device",
) -> np.ndarray:
    """Class probabilities for every pixel of a scan.

    Args:
        model: a VeerNet already on `device` and in eval mode (`load_model` returns it so).
        image: the scan, ink dark (0) on light (255).
        tile_width: columns per tile, a multiple of 32.
        tile_overlap: columns shared by neighbouring tiles; the cut sits in its middle.
        device: where the tiles are sent.
        mirror: also predict the scan mirrored along depth and mirrored across the track, mirror
            those back and return the mean of the three (test-time mirroring, as nnU-Net does):
            a net unsure of a stretch is rarely unsure the same way in its mirror image.
        stack: tiles per forward pass; None = the device's (`tiles_per_forward`). Only speed depends on it.
        dtype: autocast precision of the forward passes: "device" = the device's (`inference_dtype`),
            None = fp32.

    Returns:
        Probabilities; channel 0 is background, channel k the k-th curve.

    Shape:
        image: (H, W) uint8. Returns (C, H, W) float32, C = 2 for a one-logit binary model.
    """
    if image.ndim != 2 or image.dtype != np.uint8:
        raise ValueError(f"image must be a 2-D uint8 array (H, W), got {image.dtype} shape {image.shape}")
    height, width = image.shape
    if width == 0 or height == 0:
        raise ValueError(f"image has no pixels (shape {image.shape})")
    stack = tiles_per_forward(device) if stack is None else stack
    if stack < 1:
        raise ValueError(f"stack must be at least 1 tile per forward pass, got {stack}")
    dtype = inference_dtype(device) if dtype == "device" else dtype
    # Each tile frees what the next allocates: keep it (a mirrored strip 1.29x, benchmarks/results/allocator.md).
    keep_freed_memory()
    threads = torch.get_num_threads() if torch.device(device).type == "cpu" else 1
    with _unfused_masked_attention(), _side_by_side(threads) as pool:
        probs = _tiled_probs(model, image, tile_width, tile_overlap, device, stack, dtype, pool)
        if mirror:
            for axis in (1, 0):  # along depth (columns), then across the track (rows)
                flipped = np.ascontiguousarray(np.flip(image, axis=axis))
                # Added through a flipped view: the mirrored pass's probabilities land on their own pixels.
                _tiled_probs(model, flipped, tile_width, tile_overlap, device, stack, dtype, pool,
                             add_to=np.flip(probs, axis=axis + 1))
            probs /= 3.0
    return probs


@contextlib.contextmanager
def _unfused_masked_attention() -> Iterator[None]:
    """Turn torch's fused inference path of `nn.TransformerEncoderLayer` off for the passes, then back.

    That path runs a key padding mask through a masked softmax that cost a 640 x 2,048 tile of the
    `cpu` net 0.319 s against 0.252 s through scaled-dot-product attention (a tile with padded rows,
    2 threads, docs/model.md); the two agree to 6e-7 in probability.
    """
    enabled = torch.backends.mha.get_fastpath_enabled()
    torch.backends.mha.set_fastpath_enabled(False)
    try:
        yield
    finally:
        torch.backends.mha.set_fastpath_enabled(enabled)


@contextlib.contextmanager
def _side_by_side(threads: int) -> Iterator[ThreadPoolExecutor | None]:
    """`threads` Python threads that each run torch on one thread (None for one), and the caller's count back after.

    A thread's torch thread count is its own (OpenMP's), but setting it also sets the count new threads
    start with and MKL's, process-wide: hence the count given back here once the threads are done.
    """
    if threads <= 1:
        yield None
        return
    pool = ThreadPoolExecutor(threads, thread_name_prefix="tile", initializer=torch.set_num_threads, initargs=(1,))
    try:
        yield pool
    finally:
        pool.shutdown(cancel_futures=True)
        torch.set_num_threads(threads)


def _tiled_probs(
    model: nn.Module, image: np.ndarray, tile_width: int, tile_overlap: int, device: str | torch.device, stack: int,
    dtype: torch.dtype | None, pool: ThreadPoolExecutor | None, add_to: np.ndarray | None = None,
) -> np.ndarray:
    """One pass of the net over the scan's tiles, stitched. Shape: image (H, W); returns (C, H, W) float32.

    Tiles go through the net `stack` at a time: every tile but a lone one is `tile_width` wide,
    so they stack into one batch (benchmarks/results/speed.md measures both ways), in `pool`'s
    threads side by side when there is one. Each tile's kept columns are written straight into one
    (C, H, W) array, or added into `add_to` (which is then returned), in the tiles' order, so a
    640 x 12,800 strip's 230 MB of probabilities is never concatenated or copied whole. A tile that
    needs no padding goes in without a valid mask (every pixel real): the attention then needs no
    mask at all (0.218 s a tile against 0.250 s with an all-real one).
    """
    height, width = image.shape
    tiles = plan_tiles(width, tile_width, tile_overlap)
    batches = [tiles[first:first + stack] for first in range(0, len(tiles), stack)]

    def forward(batch: list[Tile]) -> np.ndarray:
        # Autocast and inference mode are per thread: entered in the thread that runs the batch.
        precision = (torch.autocast(torch.device(device).type, dtype=dtype) if dtype is not None
                     else contextlib.nullcontext())
        with precision, torch.inference_mode():
            x = torch.from_numpy(np.stack([image[:, tile.start:tile.stop] for tile in batch])).to(device)
            x = x.to(torch.float32).div_(255.0)[:, None]
            padded, valid = pad_to_multiple(x, MULTIPLE, value=1.0)
            mask = valid if padded.shape != x.shape else None
            return logits_to_probs(model(padded, mask).float())[:, :, :height].cpu().numpy()

    out = add_to
    for batch, probs in zip(batches, pool.map(forward, batches) if pool is not None else map(forward, batches),
                            strict=True):
        if out is None:
            out = np.empty((probs.shape[1], height, width), dtype=np.float32)
        for i, tile in enumerate(batch):
            lo, hi = tile.keep_start - tile.start, tile.keep_stop - tile.start
            piece = probs[i, :, :, lo:hi]
            if add_to is None:
                out[:, :, tile.keep_start:tile.keep_stop] = piece
            else:
                out[:, :, tile.keep_start:tile.keep_stop] += piece
    return out
