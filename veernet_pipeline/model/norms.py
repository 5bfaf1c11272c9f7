"""Normalisation for VeerNet: GroupNorm everywhere, never BatchNorm.

Training runs at physical batch 1 on wide logs, so batch statistics would come from one image
and be noise; GroupNorm normalises each image on its own. The group count is `min(16, C // 2)`
lowered until it divides C, so 32 channels get 16 groups and 8 channels get 4.

On CPU, for maps in channels_last, the backward pass is computed here rather than by torch: torch
2.13's CPU GroupNorm backward runs 2-7x slower in channels_last than in the default layout
(4 x 32 x 160 x 64: 3.1-3.4 ms against 0.45 ms), while the net keeps every map in channels_last
for its convolutions. The forward is torch's own kernel, so outputs are the same bits; the
gradients are the same formula to float rounding (`tests/unit/test_model.py`), and the training
step costs less (docs/model.md, "GroupNorm's backward in channels_last").
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

MAX_GROUPS = 16
# Below this many pixels per map torch's backward is the faster one (its fixed costs are lower): 4 maps of
# 64 x 40 x 16 take 0.34 ms in torch's and 0.41 ms here, of 64 x 80 x 32 0.92 ms against 0.56 ms.
MIN_PIXELS = 2048


def group_count(channels: int) -> int:
    """Number of GroupNorm groups for `channels` feature maps.

    Args:
        channels: feature maps to normalise (>= 1).

    Returns:
        `min(16, channels // 2)`, lowered until it divides `channels`; at least 1.

    Raises:
        ValueError: if `channels` is below 1.
    """
    if channels < 1:
        raise ValueError(f"group_count needs at least 1 channel, got {channels}")
    groups = max(1, min(MAX_GROUPS, channels // 2))
    while channels % groups:
        groups -= 1
    return groups


def _by_pixel(maps: torch.Tensor) -> torch.Tensor:
    """(N, C, H, W) maps in channels_last as their (N, H * W, C) memory, without a copy."""
    n, c, h, w = maps.shape
    return maps.permute(0, 2, 3, 1).reshape(n, h * w, c)


class _GroupNormChannelsLast(torch.autograd.Function):
    """GroupNorm with torch's forward and a backward made of per-channel sums over pixels.

    With xhat = (x - mean_g) * rstd_g, the input gradient is rstd_g * (dy * gamma - mean_g(dy * gamma)
    - xhat * mean_g(dy * gamma * xhat)), means over a group's channels and pixels. Both group means
    come from two per-channel sums, sum(dy) and sum(dy * x), which in channels_last are reductions
    over the outer axis of an (N, H * W, C) tensor; the gradient is then dy * a + x * k + m with a, k,
    m per image and channel: four passes over the maps.
    """

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, groups: int,
                eps: float) -> torch.Tensor:
        n, c, h, w = x.shape
        y, mean, rstd = torch.native_group_norm(x, weight, bias, n, c, h * w, groups, eps)
        ctx.save_for_backward(x, weight, mean, rstd)
        ctx.groups = groups
        return y

    @staticmethod
    def backward(ctx: Any, dy: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, None, None]:
        x, weight, mean, rstd = ctx.saved_tensors
        n, c, h, w = x.shape
        groups = ctx.groups
        count = c // groups * h * w
        xs, dys = _by_pixel(x), _by_pixel(dy.contiguous(memory_format=torch.channels_last))
        # Per image, group and channel (n, groups, c // groups); the product's buffer becomes the input gradient.
        buffer = dys * xs
        sum_dy_x, sum_dy = buffer.sum(1).view(n, groups, -1), dys.sum(1).view(n, groups, -1)
        mean, rstd, weight = mean[..., None], rstd[..., None], weight.view(groups, -1)
        centred = rstd * (sum_dy_x - mean * sum_dy)  # sum over pixels of dy * xhat
        mean_dxhat = (weight * sum_dy).sum(2, keepdim=True) / count
        slope = rstd * rstd * (weight * centred).sum(2, keepdim=True) / -count
        offset = -slope * mean - rstd * mean_dxhat
        torch.addcmul(offset.expand(-1, -1, weight.shape[1]).reshape(n, 1, c), xs,
                      slope.expand(-1, -1, weight.shape[1]).reshape(n, 1, c), out=buffer)
        buffer.addcmul_(dys, (rstd * weight).view(n, 1, c))
        grad_x = buffer.view(n, h, w, c).permute(0, 3, 1, 2)
        return grad_x, centred.sum(0).view(c), sum_dy.sum(0).view(c), None, None


class GroupNorm(nn.GroupNorm):
    """`nn.GroupNorm` (same parameters and state dict) whose CPU backward suits channels_last maps.

    Shape:
        input and output (B, C, H, W) or any shape `nn.GroupNorm` takes.
    """

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if (x.dim() == 4 and x.device.type == "cpu" and x.dtype == torch.float32 and self.affine
                and x.shape[2] * x.shape[3] >= MIN_PIXELS and x.is_contiguous(memory_format=torch.channels_last)
                and torch.is_grad_enabled()):
            return _GroupNormChannelsLast.apply(x, self.weight, self.bias, self.num_groups, self.eps)
        return super().forward(x)


def group_norm(channels: int) -> GroupNorm:
    """A `GroupNorm` over `channels` with `group_count(channels)` groups.

    Shape:
        input and output (B, channels, H, W).
    """
    return GroupNorm(group_count(channels), channels)
