"""Normalisation for VeerNet: GroupNorm everywhere, never BatchNorm.

Training runs at physical batch 1 on wide logs, so batch statistics would come from one image
and be noise; GroupNorm normalises each image on its own. The group count is `min(16, C // 2)`
lowered until it divides C, so 32 channels get 16 groups and 8 channels get 4.
"""

from __future__ import annotations

from torch import nn

MAX_GROUPS = 16


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


def group_norm(channels: int) -> nn.GroupNorm:
    """A `nn.GroupNorm` over `channels` with `group_count(channels)` groups.

    Shape:
        input and output (B, channels, H, W).
    """
    return nn.GroupNorm(group_count(channels), channels)
