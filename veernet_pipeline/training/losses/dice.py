"""Masked soft Dice loss.

Dice = 2 TP / (2 TP + FP + FN) on probabilities: the Tversky index with alpha = beta = 0.5, so it
weighs a missed curve pixel the same as a false alarm. In the seeds' comparison it scored well on
background and poorly on the thin curves; it stays here as a baseline for the loss ablation.
"""

from __future__ import annotations

import torch
from torch import nn

from veernet_pipeline.training.losses._inputs import (
    Mode,
    check_inputs,
    check_mode,
    overlap_sums,
    pixel_weight,
    present_class_mean,
)


class DiceLoss(nn.Module):
    """1 - soft Dice, per sample and class, averaged over the classes the sample shows, then the batch.

    Args:
        mode: "binary" (one logit map, sigmoid, target > 0 is curve) or "multiclass"
            (C logit maps, softmax, one-hot target).
        smooth: added to numerator and denominator (a class with few pixels is not all-or-nothing).

    A class with no true pixel in a sample is left out of that sample's mean (`present_class_mean`:
    with it, the 7-class net learned to predict no line style at all).
    """

    def __init__(self, mode: Mode, smooth: float = 1.0) -> None:
        super().__init__()
        check_mode("DiceLoss", mode)
        self.mode, self.smooth = mode, smooth

    def forward(self, logits: torch.Tensor, target: torch.Tensor, valid: torch.Tensor | None = None) -> torch.Tensor:
        """Scalar loss.

        Shape:
            logits: (B, 1, H, W) binary or (B, C, H, W) multiclass; target: (B, H, W) integer
            classes; valid: (B, H, W), 1 on real pixels, 0 on padding (None = all valid).
        """
        logits = check_inputs("DiceLoss", self.mode, logits, target, valid)
        # Each per-pixel term is masked before any sum (overlap_sums): padded pixels contribute exactly 0.
        overlap, total, count = overlap_sums(logits, target, pixel_weight(valid, logits), self.mode)
        dice = (2.0 * overlap + self.smooth) / (total + count + self.smooth)
        return present_class_mean(1.0 - dice, count)
