"""Masked Tversky loss for sparse, thin curves.

Tversky index TI = TP / (TP + alpha * FP + beta * FN): beta > alpha charges a missed curve pixel
more than a false alarm, which carried recall on one-pixel traces in the seeds' comparison. Every
per-pixel term is multiplied by the validity mask before any sum, so collate padding adds exactly
zero loss and zero gradient.
"""

from __future__ import annotations

from typing import Literal

import torch
import torch.nn.functional as F
from torch import nn

Mode = Literal["binary", "multiclass"]


class TverskyLoss(nn.Module):
    """1 - Tversky index, per sample and class, averaged over classes then batch.

    Args:
        alpha: weight of false positives.
        beta: weight of false negatives.
        mode: "binary" (one logit map, sigmoid, target > 0 is curve) or "multiclass"
            (C logit maps, softmax, one-hot target, mean over all C classes).
        smooth: added to numerator and denominator so an empty class scores 1, not 0/0.
    """

    def __init__(self, alpha: float, beta: float, mode: Mode, smooth: float = 1.0) -> None:
        super().__init__()
        if mode not in ("binary", "multiclass"):
            raise ValueError(f"TverskyLoss mode must be 'binary' or 'multiclass', got {mode!r}")
        self.alpha, self.beta, self.mode, self.smooth = alpha, beta, mode, smooth

    def forward(self, logits: torch.Tensor, target: torch.Tensor, valid: torch.Tensor | None = None) -> torch.Tensor:
        """Scalar loss.

        Shape:
            logits: (B, 1, H, W) binary or (B, C, H, W) multiclass; target: (B, H, W) integer
            classes; valid: (B, H, W), 1 on real pixels, 0 on padding (None = all valid).
        """
        # Sums over whole images need at least fp32 (AMP hands over half-precision logits).
        logits = logits.to(torch.promote_types(logits.dtype, torch.float32))
        if self.mode == "binary":
            if logits.shape[1] != 1:
                raise ValueError(f"binary Tversky expects logits (B, 1, H, W), got {tuple(logits.shape)}")
            prob = torch.sigmoid(logits)
            truth = (target > 0).to(prob.dtype)[:, None]
        else:
            prob = torch.softmax(logits, dim=1)
            truth = F.one_hot(target.long(), logits.shape[1]).permute(0, 3, 1, 2).to(prob.dtype)
        weight = torch.ones_like(prob[:, :1]) if valid is None else valid.to(prob.dtype)[:, None]
        # Mask each per-pixel term before any reduction: padded pixels contribute exactly 0.
        tp = (prob * truth * weight).sum(dim=(2, 3))
        fp = (prob * (1.0 - truth) * weight).sum(dim=(2, 3))
        fn = ((1.0 - prob) * truth * weight).sum(dim=(2, 3))
        index = (tp + self.smooth) / (tp + self.alpha * fp + self.beta * fn + self.smooth)
        return (1.0 - index).mean()
