"""VeerNet, the whole net top to bottom: residual encoder, attention bottleneck, U-Net decoder.

Input is one grayscale track strip (B, 1, H, W) in [0, 1], ink dark on light, at native
resolution. Five stride-2 residual blocks take it to H/32 x W/32, where the last block's
`channels[-1]` features (128 in the paper) are refined by transformer self-attention over every
position, so a long thin curve can be treated as one object. Five decoder stages come back up
with U-Net skips (encoder outputs at 1/16..1/2 and the full-resolution stem) to one logit map
per output channel: 1 for the binary stage (sigmoid), 3 for the multiclass stage (softmax).

Sides must be multiples of 32: a floored halving is never recovered and the skips misalign.
Images are padded bottom/right with `pad_to_multiple`, never resized.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn

from veernet_pipeline.config import ModelParams
from veernet_pipeline.io.atomic import atomic_path, write_text_atomic
from veernet_pipeline.model.norms import group_norm

MULTIPLE = 32
WEIGHTS_FILE = "weights.pt"
MODEL_FILE = "model.json"
FORMAT = "veernet/1"


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


class ConvNormAct(nn.Sequential):
    """3x3 conv -> GroupNorm -> SiLU.  Shape: (B, cin, H, W) -> (B, cout, H / stride, W / stride)."""

    def __init__(self, cin: int, cout: int, stride: int = 1) -> None:
        super().__init__(nn.Conv2d(cin, cout, 3, stride, 1, bias=False), group_norm(cout), nn.SiLU())


class ResidualDown(nn.Module):
    """Residual encoder block that halves both sides.

    Shape:
        (B, cin, H, W) -> (B, cout, H / 2, W / 2).
    """

    def __init__(self, cin: int, cout: int) -> None:
        super().__init__()
        self.conv1 = ConvNormAct(cin, cout, stride=2)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.norm2 = group_norm(cout)
        self.skip = nn.Sequential(nn.Conv2d(cin, cout, 1, 2, bias=False), group_norm(cout))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.silu(self.norm2(self.conv2(self.conv1(x))) + self.skip(x))


class UpStage(nn.Module):
    """Decoder stage: 2x transposed conv, concatenate the skip, two conv layers.

    Shape:
        x (B, cin, h, w), skip (B, cskip, 2h, 2w) -> (B, cskip, 2h, 2w).
    """

    def __init__(self, cin: int, cskip: int) -> None:
        super().__init__()
        self.up = nn.ConvTranspose2d(cin, cskip, 2, stride=2)
        self.fuse = nn.Sequential(ConvNormAct(2 * cskip, cskip), ConvNormAct(cskip, cskip))

    def forward(self, x: torch.Tensor, skip: torch.Tensor) -> torch.Tensor:
        return self.fuse(torch.cat([self.up(x), skip], dim=1))


def positional_encoding_2d(channels: int, height: int, width: int, device: torch.device) -> torch.Tensor:
    """Sinusoidal 2-D position code for any grid: a quarter of the channels each for sin/cos of row and column.

    Shape:
        returns (channels, height, width), float32.
    """
    quarter = channels // 4
    freq = torch.exp(-math.log(10000.0) * torch.arange(quarter, device=device, dtype=torch.float32) / quarter)
    rows = torch.arange(height, device=device, dtype=torch.float32)[:, None] * freq  # (h, q)
    cols = torch.arange(width, device=device, dtype=torch.float32)[:, None] * freq  # (w, q)
    row_code = torch.cat([rows.sin(), rows.cos()], dim=1).T[:, :, None].expand(-1, height, width)
    col_code = torch.cat([cols.sin(), cols.cos()], dim=1).T[:, None, :].expand(-1, height, width)
    return torch.cat([row_code, col_code], dim=0)


class AttentionBottleneck(nn.Module):
    """Transformer self-attention over the H/32 x W/32 bottleneck positions.

    Positions made only of padding are masked as keys, so they are never attended.

    Shape:
        x (B, C, h, w), key_padding (B, h * w) bool, True = ignore -> (B, C, h, w).
    """

    def __init__(self, channels: int, layers: int, heads: int) -> None:
        super().__init__()
        # Dropout 0: a deterministic net, and the residual conv trunk regularises enough at this size.
        layer = nn.TransformerEncoderLayer(
            channels, heads, dim_feedforward=4 * channels, dropout=0.0, activation="gelu",
            batch_first=True, norm_first=True,
        )
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)

    def forward(self, x: torch.Tensor, key_padding: torch.Tensor | None) -> torch.Tensor:
        b, c, h, w = x.shape
        tokens = (x + positional_encoding_2d(c, h, w, x.device).to(x.dtype)).flatten(2).transpose(1, 2)
        tokens = self.encoder(tokens, src_key_padding_mask=key_padding)
        return tokens.transpose(1, 2).reshape(b, c, h, w)


class VeerNet(nn.Module):
    """The segmentation net; see the module docstring.

    Attributes:
        params: the model section of params.yaml it was built from.
        num_classes: logit maps out: 1 = binary (sigmoid), 3 = background / curve A / curve B.
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
        self.stem = nn.Sequential(ConvNormAct(1, params.stem_channels), ConvNormAct(params.stem_channels,
                                                                                    params.stem_channels))
        widths = [params.stem_channels, *params.channels]
        self.encoder = nn.ModuleList(ResidualDown(cin, cout) for cin, cout in zip(widths[:-1], widths[1:], strict=True))
        self.bottleneck = AttentionBottleneck(embed, params.attention_layers, params.attention_heads)
        # Decoder walks the widths back down: 1/32 -> 1/16 (skip channels[3]) ... -> 1/1 (skip = stem).
        self.decoder = nn.ModuleList(UpStage(widths[i + 1], widths[i]) for i in reversed(range(len(widths) - 1)))
        self.head = nn.Conv2d(params.stem_channels, num_classes, 1)

    def forward(self, x: torch.Tensor, valid: torch.Tensor | None = None) -> torch.Tensor:
        """Per-pixel logits.

        Args:
            x: image batch in [0, 1], ink dark, sides multiples of 32 (see `pad_to_multiple`).
            valid: 1 on real pixels, 0 on padding; padded bottleneck cells are not attended.

        Returns:
            Logits, one map per output channel.

        Shape:
            x: (B, 1, H, W); valid: (B, H, W); returns (B, num_classes, H, W).
        """
        check_input(x)
        # Invert so ink is the signal and white padding is zero, the same value conv zero-padding assumes.
        features = self.stem(1.0 - x)
        skips = [features]
        for block in self.encoder:
            features = block(features)
            skips.append(features)
        features = self.bottleneck(skips.pop(), bottleneck_padding(valid, features.shape[-2:]))
        for stage in self.decoder:
            features = stage(features, skips.pop())
        return self.head(features)


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
    """Write `weights.pt` (state_dict only) and `model.json` (everything needed to rebuild it) atomically."""
    directory = Path(directory)
    with atomic_path(directory / WEIGHTS_FILE) as tmp:
        torch.save({k: v.detach().cpu() for k, v in model.state_dict().items()}, tmp)
    meta = {"format": FORMAT, "num_classes": num_classes, "model": params.model_dump(mode="json")}
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
        raise ValueError(f"{directory / MODEL_FILE}: format {meta.get('format')!r} is not {FORMAT!r}; retrain")
    model = build_model(ModelParams.model_validate(meta["model"]), int(meta["num_classes"]))
    state = torch.load(directory / WEIGHTS_FILE, map_location=map_location, weights_only=True)
    model.load_state_dict(state)
    return model.to(map_location).eval()
