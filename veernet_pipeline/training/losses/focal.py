"""Masked focal loss.

Focal loss = (1 - p_t)^gamma * CE: the factor shrinks the loss of pixels the model already gets
right, so the few curve pixels are not drowned by the mass of easy background (gamma = 0 is plain
cross-entropy). Per-pixel terms are multiplied by the validity mask before the sum and divided by
the valid pixel count, so padding adds exactly zero loss and gradient.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from veernet_pipeline.training.losses._inputs import Mode, check_inputs, check_mode, masked_mean, pixel_weight


class FocalLoss(nn.Module):
    """Focal loss, averaged over the valid pixels of the batch.

    Args:
        mode: "binary" (one logit map, sigmoid, target > 0 is curve) or "multiclass"
            (C logit maps, softmax over C, target class index).
        gamma: focusing exponent, >= 0.
    """

    def __init__(self, mode: Mode, gamma: float = 2.0) -> None:
        super().__init__()
        check_mode("FocalLoss", mode)
        if gamma < 0:
            raise ValueError(f"FocalLoss gamma must be >= 0, got {gamma}; set params.yaml loss.gamma to 0 or more")
        self.mode, self.gamma = mode, gamma

    def forward(self, logits: torch.Tensor, target: torch.Tensor, valid: torch.Tensor | None = None) -> torch.Tensor:
        """Scalar loss.

        Shape:
            logits: (B, 1, H, W) binary or (B, C, H, W) multiclass; target: (B, H, W) integer
            classes; valid: (B, H, W), 1 on real pixels, 0 on padding (None = all valid).
        """
        logits = check_inputs("FocalLoss", self.mode, logits, target, valid)
        if self.mode == "binary":
            truth = (target > 0).to(logits.dtype)
            ce = F.binary_cross_entropy_with_logits(logits[:, 0], truth, reduction="none")
        else:
            ce = F.cross_entropy(logits, target.long(), reduction="none")
        # 1 - p_t = 1 - exp(-CE), computed with expm1 for accuracy near p_t = 1; the floor keeps the
        # gradient of x^gamma finite at x = 0 when gamma < 1.
        miss = (-torch.expm1(-ce)).clamp_min(torch.finfo(ce.dtype).tiny)
        return masked_mean(miss**self.gamma * ce, pixel_weight(valid, ce))
