"""Masked Tversky loss for sparse, thin curves.

Tversky index TI = TP / (TP + alpha * FP + beta * FN): beta > alpha charges a missed curve pixel
more than a false alarm, which carried recall on one-pixel traces in the seeds' comparison. Every
per-pixel term is multiplied by the validity mask before any sum, so collate padding adds exactly
zero loss and zero gradient.
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


class TverskyLoss(nn.Module):
    """1 - Tversky index, per sample and class, averaged over the classes the sample shows, then the batch.

    Args:
        alpha: weight of false positives.
        beta: weight of false negatives.
        mode: "binary" (one logit map, sigmoid, target > 0 is curve) or "multiclass"
            (C logit maps, softmax, one-hot target).
        smooth: added to numerator and denominator (a class with few pixels is not all-or-nothing).

    A class with no true pixel in a sample is left out of that sample's mean (`present_class_mean`:
    with it, the 7-class net learned to predict no line style at all).
    """

    def __init__(self, alpha: float, beta: float, mode: Mode, smooth: float = 1.0) -> None:
        super().__init__()
        check_mode("TverskyLoss", mode)
        self.alpha, self.beta, self.mode, self.smooth = alpha, beta, mode, smooth

    def forward(self, logits: torch.Tensor, target: torch.Tensor, valid: torch.Tensor | None = None) -> torch.Tensor:
        """Scalar loss.

        Shape:
            logits: (B, 1, H, W) binary or (B, C, H, W) multiclass; target: (B, H, W) integer
            classes; valid: (B, H, W), 1 on real pixels, 0 on padding (None = all valid).
        """
        logits = check_inputs("TverskyLoss", self.mode, logits, target, valid)
        # Each per-pixel term is masked before any sum (overlap_sums): padded pixels contribute exactly 0.
        tp, total, count = overlap_sums(logits, target, pixel_weight(valid, logits), self.mode)
        fp, fn = total - tp, count - tp
        index = (tp + self.smooth) / (tp + self.alpha * fp + self.beta * fn + self.smooth)
        return present_class_mean(1.0 - index, count)
