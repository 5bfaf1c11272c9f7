"""VeerNet, the whole net top to bottom: residual encoder, attention bottleneck, U-Net decoder.

Input is one grayscale track strip (B, 1, H, W) in [0, 1], ink dark on light, at native
resolution. Five residual blocks each halve both sides, 32x in all. The first halving is
space-to-depth: every 2 x 2 cell of pixels becomes 4 channels of one position (lossless: each
pixel keeps its own channel), and a residual block works on them at half resolution; the other
four are stride-2 residual blocks. At H/32 x W/32 the last block's `channels[-1]` features (128
in the paper) are refined by transformer self-attention over every position, so a long thin curve
can be treated as one object. Four decoder stages come back up to H/2 with U-Net skips (the
encoder outputs at 1/16..1/2); between the third and the fourth, at 1/4 of the sides, optional
depth-context layers (`model.depth_context`, `DepthContext`) widen what each cell sees along depth
only. The fifth returns to full resolution by depth-to-space: a 1x1 conv over the half-resolution
features and the cell's own 4 pixels (the full-resolution skip) gives 4 logits per class and cell,
one for each of its pixels. One logit map per output channel comes
out at the input's size: 1 for the binary stage (sigmoid), `io.classes.NUM_CLASSES` for the
multiclass stage (softmax over background, other ink and the curve styles).

Why space-to-depth: a 3x3 convolution with 8-16 channels at full resolution runs at a small
fraction of the CPU's throughput with 32-128 channels (benchmarks/results/speed.md), and the
full-resolution stem and last decoder stage took two thirds of the old net's time. Nothing is
resized, and a one-pixel curve keeps its exact pixel in and out.

The net is kept in channels_last memory layout, which this CPU's convolutions run fastest in.
Sides must be multiples of 32: a floored halving is never recovered and the skips misalign.
Images are padded bottom/right with `pad_to_multiple`, never resized.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from veernet_pipeline.config import ModelParams
from veernet_pipeline.io.atomic import atomic_path, write_text_atomic
from veernet_pipeline.io.classes import CLASSES, NUM_CLASSES
from veernet_pipeline.model.blocks import AttentionBottleneck, DepthContext, ResidualBlock, UpStage

MULTIPLE = 32
CELL = 2  # space-to-depth: a CELL x CELL block of pixels becomes CELL**2 channels at the first level
WEIGHTS_FILE = "weights.pt"
MODEL_FILE = "model.json"
# veernet/2: line-style classes (io.classes) and the space-to-depth stem. veernet/1 models had 3 classes
# (background, curve A, curve B) and a full-resolution stem; their weights fit neither.
FORMAT = "veernet/2"
BINARY_OUTPUTS: tuple[str, ...] = ("curve",)


def output_names(num_classes: int) -> tuple[str, ...]:
    """What each logit map of a net with `num_classes` outputs is: ("curve",) or the mask classes.

    Raises:
        ValueError: any other count; the stages build 1 (binary) or `NUM_CLASSES` (multiclass).
    """
    if num_classes == 1:
        return BINARY_OUTPUTS
    if num_classes == NUM_CLASSES:
        return CLASSES
    raise ValueError(f"a VeerNet has 1 output (binary) or {NUM_CLASSES} (the classes {list(CLASSES)}), "
                     f"not {num_classes}")


def round_up(n: int, multiple: int = MULTIPLE) -> int:
    """Smallest multiple of `multiple` that is >= `n`."""
    return -(-n // multiple) * multiple


def pad_to_multiple(x: torch.Tensor, multiple: int = MULTIPLE, value: float = 1.0) -> tuple[torch.Tensor, torch.Tensor]:
    """Pad bottom/right to the next multiple of `multiple`; the default fill is blank paper.

    Args:
        x: image batch in [0, 1], ink dark.
        multiple: side multiple the net needs (32).
        value: fill for the padding; 1.0 is white paper.

    Returns:
        (padded, valid): padded image and a mask that is 1 on original pixels, 0 on padding.

    Shape:
        x: (B, C, H, W); padded: (B, C, H', W'); valid: (B, H', W') float, H' and W' the
        multiples of `multiple` at or above H and W.
    """
    if x.ndim != 4:
        raise ValueError(f"pad_to_multiple expects (B, C, H, W), got shape {tuple(x.shape)}")
    height, width = x.shape[-2:]
    pad_h, pad_w = round_up(height, multiple) - height, round_up(width, multiple) - width
    padded = F.pad(x, (0, pad_w, 0, pad_h), value=value)
    valid = torch.zeros(x.shape[0], height + pad_h, width + pad_w, dtype=x.dtype, device=x.device)
    valid[:, :height, :width] = 1.0
    return padded, valid


class VeerNet(nn.Module):
    """The segmentation net; see the module docstring.

    Attributes:
        params: the model section of params.yaml it was built from.
        num_classes: logit maps out: 1 = binary (sigmoid), `NUM_CLASSES` = the mask classes (softmax).
    """

    def __init__(self, params: ModelParams, num_classes: int) -> None:
        super().__init__()
        embed = params.channels[-1]
        if embed % 4 or embed % params.attention_heads:
            raise ValueError(
                f"model.channels[-1]={embed} must be divisible by 4 (2-D position code) and by "
                f"model.attention_heads={params.attention_heads}; change params.yaml `model:`"
            )
        self.params = params
        self.num_classes = num_classes
        widths, cell = params.channels, CELL * CELL
        self.stem = ResidualBlock(cell, widths[0], stride=1)
        self.encoder = nn.ModuleList(ResidualBlock(cin, cout, 2) for cin, cout in zip(widths[:-1], widths[1:],
                                                                                    strict=True))
        self.bottleneck = AttentionBottleneck(embed, params.attention_layers, params.attention_heads)
        # Decoder walks the widths back down: 1/32 -> 1/16 (skip channels[3]) ... -> 1/2 (skip = stem, plus the
        # cell's own pixels, so the last convolutions see exactly which pixels of each cell hold ink).
        self.decoder = nn.ModuleList(UpStage(widths[i + 1], widths[i], cell if i == 0 else 0)
                                     for i in reversed(range(len(widths) - 1)))
        # At 1/4 of the sides, after the decoder stage that returns there: rows 4 px apart, depth reached far.
        self.context = DepthContext(widths[1], params.depth_context)
        # Logit of class k for pixel (i, j) of its cell is channel k * CELL**2 + i * CELL + j (pixel_shuffle's order).
        self.head = nn.Conv2d(widths[0] + cell, num_classes * cell, 1)
        self.to(memory_format=torch.channels_last)

    def forward(self, x: torch.Tensor, valid: torch.Tensor | None = None,
                first_row: torch.Tensor | None = None, by_cell: bool = False) -> torch.Tensor:
        """Per-pixel logits.

        Args:
            x: image batch in [0, 1], ink dark, sides multiples of 32 (see `pad_to_multiple`).
            valid: 1 on real pixels, 0 on padding; padded bottleneck cells are not attended.
            first_row: per sample, the track row of the image's first row, a multiple of 32 (a training crop
                cut from the middle of a track); None = every image starts at the track's top.
            by_cell: return the same logits with each image's pixels in `cell_rows` order instead of the
                image's (for a loss, which sums over pixels whatever their order: training skips the
                depth-to-space copies, forward and backward).

        Returns:
            Logits, one map per output channel.

        Shape:
            x: (B, 1, H, W); valid: (B, H, W); first_row: (B,) int; returns (B, num_classes, H, W), with
            `by_cell` (B, num_classes, H * CELL, W // CELL): `cell_rows` of each map.
        """
        check_input(x)
        # Invert so ink is the signal and white padding is zero, the same value conv zero-padding assumes.
        # In channels_last like every feature map: the two concatenations that take `pixels` otherwise come out
        # in the default layout, and the convolutions after them copy the whole half-scale map back (docs/model.md).
        pixels = F.pixel_unshuffle(1.0 - x, CELL).contiguous(memory_format=torch.channels_last)
        if torch.is_autocast_enabled(x.device.type):
            # Every convolution would cast them down anyway (the same bits): cast once, so that the two concatenations
            # with the half-scale maps stay in bf16 rather than promote 36 and 20 channels to fp32 and back.
            pixels = pixels.to(torch.get_autocast_dtype(x.device.type))
        features = self.stem(pixels)
        skips = [features]
        for block in self.encoder:
            features = block(features)
            skips.append(features)
        cells = None if first_row is None else torch.div(first_row, MULTIPLE, rounding_mode="floor")
        features = self.bottleneck(skips.pop(), bottleneck_padding(valid, features.shape[-2:]), cells)
        for stage in self.decoder[:-1]:
            features = stage(features, skips.pop())
        features = self.context(features)
        features = self.decoder[-1](features, skips.pop(), pixels)
        features = torch.cat([features, pixels], dim=1)
        if by_cell:
            return head_by_cell(self.head, features, CELL)
        return depth_to_space(self.head(features), CELL)


def cell_rows(maps: torch.Tensor, cell: int = CELL) -> torch.Tensor:
    """Each image's pixels in the order `VeerNet(..., by_cell=True)` gives its logits: by place in the cell first.

    Row `(i * cell + j) * h + r` of the result, column c, is pixel (r * cell + i, c * cell + j) of the map.

    Shape:
        (B, H, W) -> (B, H * cell, W // cell), any dtype; H and W multiples of `cell`.
    """
    batch, height, width = maps.shape
    return (maps.reshape(batch, height // cell, cell, width // cell, cell).permute(0, 2, 4, 1, 3)
            .reshape(batch, height * cell, width // cell))


def head_by_cell(head: nn.Conv2d, features: torch.Tensor, cell: int) -> torch.Tensor:
    """The 1x1 `head` over channels_last `features`, its logits in `cell_rows` order: one matrix product, no copy.

    The head's CELL**2 logits per class (pixel_shuffle's channel order k * cell**2 + i * cell + j) come out
    of (weight @ features) as (B, K, cell**2, h, w) memory, which is the (B, K, cell**2 * h, w) map of
    `cell_rows` order.

    Shape:
        features (B, C, h, w) -> (B, K, cell**2 * h, w) where K * cell**2 = head's output channels.
    """
    batch, channels, height, width = features.shape
    rows = features.permute(0, 2, 3, 1).reshape(batch, height * width, channels)
    weight = head.weight.view(1, head.out_channels, channels).expand(batch, -1, -1)
    if head.bias is None:
        logits = torch.bmm(weight, rows.transpose(1, 2))
    else:
        logits = torch.baddbmm(head.bias[:, None], weight, rows.transpose(1, 2))
    return logits.view(batch, head.out_channels // (cell * cell), cell * cell * height, width)


def depth_to_space(x: torch.Tensor, cell: int) -> torch.Tensor:
    """`F.pixel_shuffle(x, cell)` by one permute of x's memory, returned in the default layout.

    On a channels_last map `F.pixel_shuffle` returns channels_last logits, whose classes sit next to each
    other in memory, so the softmax over them and the stitching of tiles (`reading.predict`) stride
    through memory. Reading channels_last memory (B, h, w, K, cell, cell) once into (B, K, h, cell, w, cell)
    costs about what pixel_shuffle does and is the default layout of the (B, K, h * cell, w * cell)
    result (half the time of `pixel_shuffle(x.contiguous())` on a tile). With `pixels` kept in channels_last,
    the `cpu` net's mirrored strip read 5.94 -> 4.45 s side by side (benchmarks/results/speed-2026-12-02-layout).
    Same bytes as pixel_shuffle (tests/unit/test_model.py).

    Shape:
        x (B, K * cell**2, h, w) -> (B, K, h * cell, w * cell).
    """
    return _DepthToSpace.apply(x, cell)


class _DepthToSpace(torch.autograd.Function):
    """`depth_to_space` whose backward is `F.pixel_unshuffle`, put in channels_last for the head's conv.

    Autograd's own backward of the permute copies the (B, K, H, W) gradient back through 2 x 2 inner
    strides: 28 ms of a `cpu` training step's (4, 7, 640, 256) logits, where pixel_unshuffle and one
    copy into channels_last take 11 ms (the head and depth-to-space, forward + backward, 40 -> 21-29 ms).
    The gradient is the same bytes either way: both only move values.
    """

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor, cell: int) -> torch.Tensor:
        ctx.cell = cell
        batch, channels, height, width = x.shape
        classes = channels // (cell * cell)
        return (x.permute(0, 2, 3, 1).reshape(batch, height, width, classes, cell, cell)
                .permute(0, 3, 1, 4, 2, 5).reshape(batch, classes, height * cell, width * cell))

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> tuple[torch.Tensor, None]:
        return F.pixel_unshuffle(grad, ctx.cell).contiguous(memory_format=torch.channels_last), None


def check_input(x: torch.Tensor) -> None:
    """Raise a ValueError that says how to fix an input the net cannot take.  Shape: x (B, 1, H, W)."""
    if x.ndim != 4 or x.shape[1] != 1:
        raise ValueError(f"VeerNet expects a (B, 1, H, W) grayscale batch, got shape {tuple(x.shape)}")
    height, width = x.shape[-2:]
    if height % MULTIPLE or width % MULTIPLE:
        good = (*x.shape[:2], round_up(height), round_up(width))
        raise ValueError(
            f"VeerNet input shape {tuple(x.shape)}: H and W must be multiples of {MULTIPLE}; the next valid "
            f"shape is {good}. Pad bottom/right with veernet_pipeline.model.veernet.pad_to_multiple(x) "
            f"(never resize) and pass its valid mask"
        )


def bottleneck_padding(valid: torch.Tensor | None, grid: torch.Size) -> torch.Tensor | None:
    """Key padding mask: True where a bottleneck cell holds no valid pixel.

    Shape:
        valid (B, H, W) -> (B, H/32 * W/32) bool, or None when `valid` is None.
    """
    if valid is None:
        return None
    cells = F.adaptive_max_pool2d(valid[:, None].float(), tuple(grid)).flatten(1)
    if bool((cells.amax(dim=1) <= 0).any()):
        raise ValueError("a sample in the batch has no valid pixel; its valid mask is all zero")
    return cells <= 0


def build_model(params: ModelParams, num_classes: int) -> VeerNet:
    """A freshly initialised VeerNet (seed torch first for reproducible weights)."""
    return VeerNet(params, num_classes)


def save_model(directory: Path, model: VeerNet, params: ModelParams, num_classes: int) -> None:
    """Write `weights.pt` (state_dict only) and `model.json` (everything needed to rebuild it) atomically.

    model.json names each output (`output_names`), so a reader knows which map is which style.
    """
    directory = Path(directory)
    classes = output_names(num_classes)
    # Through an open file, not the path: torch.save names the archive's root folder after a path it is
    # given, and the temporary name is random, so two runs' identical weights were different bytes.
    with atomic_path(directory / WEIGHTS_FILE) as tmp, tmp.open("wb") as fh:
        torch.save({k: v.detach().cpu() for k, v in model.state_dict().items()}, fh)
    meta = {"format": FORMAT, "num_classes": num_classes, "classes": list(classes),
            "model": params.model_dump(mode="json")}
    write_text_atomic(directory / MODEL_FILE, json.dumps(meta, indent=2) + "\n")


def load_model(directory: Path, map_location: str | torch.device = "cpu") -> VeerNet:
    """Rebuild the net saved by `save_model` in `directory`, in eval mode."""
    directory = Path(directory)
    for name in (MODEL_FILE, WEIGHTS_FILE):
        if not (directory / name).is_file():
            raise FileNotFoundError(
                f"{directory / name} not found: point at a model folder written by save_model (a train_stage output)"
            )
    meta = json.loads((directory / MODEL_FILE).read_text())
    if meta.get("format") != FORMAT:
        raise ValueError(
            f"{directory / MODEL_FILE}: format {meta.get('format')!r} is not {FORMAT!r}. A model saved before "
            f"{FORMAT} has 3 classes (background, curve A, curve B) and another architecture; it cannot read "
            f"line styles. Retrain it: `veernet train_binary` then `veernet train_multiclass`"
        )
    if tuple(meta.get("classes", ())) != output_names(int(meta["num_classes"])):
        raise ValueError(f"{directory / MODEL_FILE}: outputs {meta.get('classes')} are not this version's "
                         f"{list(output_names(int(meta['num_classes'])))}; retrain the model")
    model = build_model(ModelParams.model_validate(meta["model"]), int(meta["num_classes"]))
    state = torch.load(directory / WEIGHTS_FILE, map_location=map_location, weights_only=True)
    model.load_state_dict(state)
    return model.to(map_location).eval()
