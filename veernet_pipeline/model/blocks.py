"""VeerNet's building blocks: residual encoder blocks, decoder stages and the attention bottleneck.

Every normalisation is GroupNorm with `group_count` groups (`norms.py`), never BatchNorm.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from veernet_pipeline.model.norms import group_norm


class ConvNormAct(nn.Sequential):
    """3x3 conv -> GroupNorm -> SiLU.  Shape: (B, cin, H, W) -> (B, cout, H / stride, W / stride)."""

    def __init__(self, cin: int, cout: int, stride: int = 1) -> None:
        super().__init__(nn.Conv2d(cin, cout, 3, stride, 1, bias=False), group_norm(cout), nn.SiLU())


class ResidualBlock(nn.Module):
    """Two 3x3 convolutions with a shortcut; `stride=2` halves both sides.

    The shortcut of a halving block averages each 2 x 2 cell before its 1x1 conv (ResNet-D) rather
    than taking every other pixel with a strided 1x1 conv: a strided shortcut drops three pixels in
    four, so a one-pixel curve on an odd row or column never reaches it. (The strided 1x1 conv
    also crashes torch 2.13's oneDNN backward in channels_last at 6 to 12 input channels:
    tests/unit/test_model_speed.py runs that case.)

    Shape:
        (B, cin, H, W) -> (B, cout, H / stride, W / stride).
    """

    def __init__(self, cin: int, cout: int, stride: int) -> None:
        super().__init__()
        if stride not in (1, 2):
            raise ValueError(f"ResidualBlock stride must be 1 or 2, got {stride}")
        self.conv1 = ConvNormAct(cin, cout, stride=stride)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.norm2 = group_norm(cout)
        pool: list[nn.Module] = [nn.AvgPool2d(2)] if stride == 2 else []
        self.skip = nn.Sequential(*pool, nn.Conv2d(cin, cout, 1, bias=False), group_norm(cout))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.silu(self.norm2(self.conv2(self.conv1(x))) + self.skip(x))


class UpStage(nn.Module):
    """Decoder stage: 2x transposed conv, concatenate the skip (and `extra` more maps), two conv layers.

    Shape:
        x (B, cin, h, w), skip (B, cskip, 2h, 2w), extra maps (B, extra, 2h, 2w) -> (B, cskip, 2h, 2w).
    """

    def __init__(self, cin: int, cskip: int, extra: int = 0) -> None:
        super().__init__()
        self.up = nn.ConvTranspose2d(cin, cskip, 2, stride=2)
        self.fuse = nn.Sequential(ConvNormAct(2 * cskip + extra, cskip), ConvNormAct(cskip, cskip))

    def forward(self, x: torch.Tensor, skip: torch.Tensor, *extra: torch.Tensor) -> torch.Tensor:
        return self.fuse(torch.cat([self.up(x), skip, *extra], dim=1))


class DepthContext(nn.Module):
    """Context along depth at a fine scale: residual 3x3 convolutions dilated along the columns only.

    A broken style is told by its pattern along the curve (dashes of 5-90 columns and the gaps between),
    but the bottleneck's attention sees 32 x 32-pixel cells, so two curves within 20 rows of each other
    share one context, and the decoder's 3x3 convolutions see a few columns. Here each layer is a 3x3
    convolution with dilation (1, d), GroupNorm and SiLU, added back to its input: its rows stay one cell
    apart (curves a few cells apart keep their own context) while its columns reach d cells, so the
    stack reaches 1 + 2 * sum(dilations) cells along depth.

    Shape:
        (B, C, H, W) -> (B, C, H, W).
    """

    def __init__(self, channels: int, dilations: list[int]) -> None:
        super().__init__()
        self.layers = nn.ModuleList(
            nn.Sequential(nn.Conv2d(channels, channels, 3, padding=(1, d), dilation=(1, d), bias=False),
                          group_norm(channels), nn.SiLU())
            for d in dilations
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for layer in self.layers:
            x = x + layer(x)
        return x


def positional_encoding_2d(channels: int, height: int, width: int, device: torch.device,
                           first_row: torch.Tensor | None = None) -> torch.Tensor:
    """Sinusoidal 2-D position code for any grid: a quarter of the channels each for sin/cos of row and column.

    Args:
        first_row: per sample, the track row (in grid cells) of the grid's first row: a training crop cut
            from the middle of a track keeps the row code the whole track gives that place. None = 0.

    Shape:
        first_row: (B,). Returns (channels, height, width), or (B, channels, height, width) with `first_row`;
        float32.
    """
    quarter = channels // 4
    freq = torch.exp(-math.log(10000.0) * torch.arange(quarter, device=device, dtype=torch.float32) / quarter)
    cols = torch.arange(width, device=device, dtype=torch.float32)[:, None] * freq  # (w, q)
    col_code = torch.cat([cols.sin(), cols.cos()], dim=1).T[:, None, :].expand(-1, height, width)
    row_index = torch.arange(height, device=device, dtype=torch.float32)
    if first_row is None:
        rows = row_index[:, None] * freq  # (h, q)
        row_code = torch.cat([rows.sin(), rows.cos()], dim=1).T[:, :, None].expand(-1, height, width)
        return torch.cat([row_code, col_code], dim=0)
    rows = (first_row.to(device, torch.float32)[:, None] + row_index)[..., None] * freq  # (B, h, q)
    row_code = torch.cat([rows.sin(), rows.cos()], dim=2).transpose(1, 2)[..., None].expand(-1, -1, -1, width)
    return torch.cat([row_code, col_code.expand(len(first_row), -1, -1, -1)], dim=1)


class AttentionBottleneck(nn.Module):
    """Transformer self-attention over the H/32 x W/32 bottleneck positions.

    Positions made only of padding are masked as keys, so they are never attended. `first_row` gives each
    sample's first grid row in the track (a crop's offset in cells), so the row code stays the track's.

    Shape:
        x (B, C, h, w), key_padding (B, h * w) bool, True = ignore, first_row (B,) -> (B, C, h, w).
    """

    def __init__(self, channels: int, layers: int, heads: int) -> None:
        super().__init__()
        # Dropout 0: a deterministic net, and the residual conv trunk regularises enough at this size.
        layer = nn.TransformerEncoderLayer(
            channels, heads, dim_feedforward=4 * channels, dropout=0.0, activation="gelu",
            batch_first=True, norm_first=True,
        )
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)

    def forward(self, x: torch.Tensor, key_padding: torch.Tensor | None,
                first_row: torch.Tensor | None = None) -> torch.Tensor:
        b, c, h, w = x.shape
        tokens = (x + positional_encoding_2d(c, h, w, x.device, first_row).to(x.dtype)).flatten(2).transpose(1, 2)
        tokens = self.encoder(tokens, src_key_padding_mask=key_padding)
        # A view of the (B, h * w, C) tokens: already in channels_last, the layout of the convolutions around it.
        return tokens.transpose(1, 2).reshape(b, c, h, w)
