"""Masked cross-entropy with label smoothing.

With smoothing eps the target of every pixel becomes (1 - eps) on its class plus eps spread evenly
over all classes (binary: two classes, curve and background, so the curve target is 1 - eps / 2).
It keeps logits from growing without bound on the easy background. Per-pixel terms are multiplied
by the validity mask before the sum and divided by the valid pixel count, so padding adds exactly
zero loss and gradient.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from veernet_pipeline.training.losses._inputs import Mode, check_inputs, check_mode, masked_mean, pixel_weight


class SoftCrossEntropyLoss(nn.Module):
    """Label-smoothed cross-entropy, averaged over the valid pixels of the batch.

    Args:
        mode: "binary" (one logit map, sigmoid, target > 0 is curve) or "multiclass"
            (C logit maps, softmax over C, target class index).
        smoothing: share of the target spread over all classes, in [0, 1); 0 = plain cross-entropy.
    """

    def __init__(self, mode: Mode, smoothing: float = 0.0) -> None:
        super().__init__()
        check_mode("SoftCrossEntropyLoss", mode)
        if not 0.0 <= smoothing < 1.0:
            raise ValueError(f"SoftCrossEntropyLoss smoothing must be in [0, 1), got {smoothing}; "
                             "set params.yaml loss.smoothing accordingly")
        self.mode, self.smoothing = mode, smoothing

    def forward(self, logits: torch.Tensor, target: torch.Tensor, valid: torch.Tensor | None = None) -> torch.Tensor:
        """Scalar loss.

        Shape:
            logits: (B, 1, H, W) binary or (B, C, H, W) multiclass; target: (B, H, W) integer
            classes; valid: (B, H, W), 1 on real pixels, 0 on padding (None = all valid).
        """
        logits = check_inputs("SoftCrossEntropyLoss", self.mode, logits, target, valid)
        if self.mode == "binary":
            soft = (target > 0).to(logits.dtype) * (1.0 - self.smoothing) + self.smoothing / 2.0
            terms = F.binary_cross_entropy_with_logits(logits[:, 0], soft, reduction="none")
        else:
            log_prob = F.log_softmax(logits, dim=1)
            nll = -log_prob.gather(1, target.long()[:, None])[:, 0]
            terms = (1.0 - self.smoothing) * nll - self.smoothing * log_prob.mean(dim=1)
        return masked_mean(terms, pixel_weight(valid, terms))
