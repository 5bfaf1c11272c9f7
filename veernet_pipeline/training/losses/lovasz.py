"""Masked Lovasz losses: Lovasz hinge (binary) and Lovasz-softmax (multiclass).

Both are convex surrogates of 1 - IoU (Berman et al., 2018): per-pixel errors are sorted in
decreasing order and weighted by the gradient of the Jaccard loss along that order. Because the
sort couples every pixel to every other, padding cannot simply be multiplied away after the fact:
padded pixels are left out of the sort altogether (only pixels with valid > 0 are selected), so
they add exactly zero loss and gradient. Pixels of the whole batch are pooled into one ranking
(segmentation_models_pytorch's default, `per_image=False`).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from veernet_pipeline.training.losses._inputs import Mode, check_inputs, check_mode


def lovasz_grad(truth_sorted: torch.Tensor) -> torch.Tensor:
    """Gradient of the Lovasz extension of the Jaccard loss along sorted errors.

    Shape:
        truth_sorted: (P,) 0/1 truth in order of decreasing error. Output: (P,).
    """
    positives = truth_sorted.sum()
    intersection = positives - truth_sorted.cumsum(0)
    union = positives + (1.0 - truth_sorted).cumsum(0)  # >= 1 everywhere, so no division by zero
    jaccard = 1.0 - intersection / union
    return torch.cat([jaccard[:1], jaccard[1:] - jaccard[:-1]])


def lovasz_hinge(scores: torch.Tensor, truth: torch.Tensor) -> torch.Tensor:
    """Lovasz hinge over a flat set of pixels.

    Shape:
        scores: (P,) logits; truth: (P,) 0/1. Output: scalar.
    """
    errors = 1.0 - scores * (2.0 * truth - 1.0)
    # A stable sort keeps ties in pixel order, so the same pixels give the same ranking padded or not.
    errors_sorted, order = torch.sort(errors, descending=True, stable=True)
    return torch.dot(F.relu(errors_sorted), lovasz_grad(truth[order]))


def lovasz_softmax(prob: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """Lovasz-softmax over a flat set of pixels, averaged over the classes present in `labels`.

    Shape:
        prob: (P, C) class probabilities; labels: (P,) class indices. Output: scalar.
    """
    losses = []
    for cls in labels.unique(sorted=True).tolist():
        truth = (labels == cls).to(prob.dtype)
        errors_sorted, order = torch.sort((truth - prob[:, cls]).abs(), descending=True, stable=True)
        losses.append(torch.dot(errors_sorted, lovasz_grad(truth[order])))
    return torch.stack(losses).mean()


class LovaszLoss(nn.Module):
    """Lovasz hinge (binary) or Lovasz-softmax (multiclass) over the valid pixels of the batch.

    Args:
        mode: "binary" (one logit map, hinge on the logits, target > 0 is curve) or "multiclass"
            (C logit maps, softmax over C, mean over the classes present among valid pixels).
    """

    def __init__(self, mode: Mode) -> None:
        super().__init__()
        check_mode("LovaszLoss", mode)
        self.mode = mode

    def forward(self, logits: torch.Tensor, target: torch.Tensor, valid: torch.Tensor | None = None) -> torch.Tensor:
        """Scalar loss; 0 (still attached to the graph) when no pixel is valid.

        Shape:
            logits: (B, 1, H, W) binary or (B, C, H, W) multiclass; target: (B, H, W) integer
            classes; valid: (B, H, W), > 0 on real pixels, 0 on padding (None = all valid).
        """
        logits = check_inputs("LovaszLoss", self.mode, logits, target, valid)
        keep = torch.ones_like(target, dtype=torch.bool) if valid is None else valid > 0
        if not bool(keep.any()):
            return logits.sum() * 0.0
        # Select real pixels before the sort: boolean indexing routes zero gradient to the rest.
        if self.mode == "binary":
            return lovasz_hinge(logits[:, 0][keep], (target[keep] > 0).to(logits.dtype))
        prob = torch.softmax(logits, dim=1).permute(0, 2, 3, 1)[keep]
        return lovasz_softmax(prob, target[keep].long())
