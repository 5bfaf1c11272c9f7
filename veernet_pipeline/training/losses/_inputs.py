"""The loss mode, input checks and the validity weight shared by all five losses.

Every loss takes `forward(logits, target, valid)`; these helpers turn the three into per-pixel
tensors (or, for the overlap losses, per-class sums) so that each loss can multiply (or, for Lovasz,
select) by the validity mask before any reduction.
"""

from __future__ import annotations

from typing import Literal

import torch

Mode = Literal["binary", "multiclass"]


def check_mode(loss: str, mode: str) -> None:
    """Raise a ValueError unless `mode` is one the losses know."""
    if mode not in ("binary", "multiclass"):
        raise ValueError(f"{loss} mode must be 'binary' or 'multiclass', got {mode!r}")


def check_inputs(loss: str, mode: Mode, logits: torch.Tensor, target: torch.Tensor,
                 valid: torch.Tensor | None) -> torch.Tensor:
    """Validate shapes and classes; return the logits in at least fp32.

    Shape:
        logits: (B, 1, H, W) binary or (B, C, H, W) multiclass; target: (B, H, W) integer classes;
        valid: (B, H, W) or None. Returns logits unchanged in shape.
    """
    if logits.dim() != 4:
        raise ValueError(f"{loss} expects logits (B, C, H, W), got {tuple(logits.shape)}; "
                         "add the batch/channel axis with logits[None] or logits[:, None]")
    batch, channels, height, width = logits.shape
    if tuple(target.shape) != (batch, height, width):
        raise ValueError(f"{loss} expects target (B, H, W) = {(batch, height, width)} to match logits "
                         f"{tuple(logits.shape)}, got {tuple(target.shape)}; drop the channel axis of the mask")
    if valid is not None and tuple(valid.shape) != (batch, height, width):
        raise ValueError(f"{loss} expects valid (B, H, W) = {(batch, height, width)}, got {tuple(valid.shape)}; "
                         "pass the `valid` tensor that pad_collate returns")
    if mode == "binary" and channels != 1:
        raise ValueError(f"binary {loss} expects logits (B, 1, H, W), got {tuple(logits.shape)}; build the model "
                         "with num_classes=1 or use mode='multiclass'")
    if mode == "multiclass" and target.numel() and int(target.max()) >= channels:
        raise ValueError(f"multiclass {loss}: target holds class {int(target.max())} but logits have {channels} "
                         f"channels; build the model with num_classes > {int(target.max())} or remap the mask")
    # Sums over whole images need at least fp32 (AMP hands over half-precision logits).
    return logits.to(torch.promote_types(logits.dtype, torch.float32))


def overlap_sums(logits: torch.Tensor, target: torch.Tensor, weight: torch.Tensor,
                 mode: Mode) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Per sample and class, the three sums the overlap losses (Dice, Tversky) are made of.

    With p the class probabilities, t the one-hot truth and w the validity weight, each summed over
    the pixels: TP = sum p t w, P = sum p w and T = sum t w, so FP = P - TP and FN = T - TP.
    No one-hot tensor is made: TP gathers each pixel's probability of its own class and adds it to
    that class (in float64, so adding 10^5 pixels one by one loses nothing a pairwise sum keeps);
    P is one product with w; T a weighted count. Each pixel's term is multiplied by w before
    any sum, so padding adds exactly zero. Why: the one-hot products cost 60 ms of a 0.3 s `cpu`
    training step (six passes over a (B, 7, H, W) tensor and their backward), these 17 ms
    (fwd + bwd on 4 x 7 x 640 x 256 logits, 2 threads; docs/model.md).

    Shape:
        logits: (B, 1, H, W) binary (sigmoid; target > 0 is curve) or (B, C, H, W) multiclass
        (softmax); target, weight: (B, H, W). Returns TP, P, T, each (B, C) in the logits' dtype
        (C = 1 for binary).
    """
    batch = logits.shape[0]
    if mode == "binary":
        prob = torch.sigmoid(logits[:, 0]) * weight
        truth = (target > 0).to(prob.dtype)
        return ((prob * truth).sum(dim=(1, 2))[:, None], prob.sum(dim=(1, 2))[:, None],
                (truth * weight).sum(dim=(1, 2))[:, None])
    prob = torch.softmax(logits, dim=1)
    classes = prob.shape[1]
    total = (prob * weight[:, None]).sum(dim=(2, 3))
    index = target.long().reshape(batch, -1)
    own = (prob.gather(1, target.long()[:, None]).squeeze(1) * weight).reshape(batch, -1)
    tp = own.new_zeros(batch, classes, dtype=torch.float64).scatter_add(1, index, own.double()).to(prob.dtype)
    # The true counts need no gradient: one weighted bincount over (sample, class) pairs, in float64.
    pairs = (index + classes * torch.arange(batch, device=index.device)[:, None]).reshape(-1)
    count = torch.bincount(pairs, weights=weight.reshape(-1).double(), minlength=batch * classes)
    return tp, total, count.reshape(batch, classes).to(prob.dtype)


def pixel_weight(valid: torch.Tensor | None, like: torch.Tensor) -> torch.Tensor:
    """The validity mask as a per-pixel weight in `like`'s dtype (all ones when `valid` is None).

    Shape:
        valid: (B, H, W) or None; like: (B, ..., H, W). Output: (B, H, W).
    """
    if valid is None:
        return torch.ones(like.shape[0], *like.shape[-2:], dtype=like.dtype, device=like.device)
    return valid.to(like.dtype)


def present_class_mean(per_class: torch.Tensor, count: torch.Tensor) -> torch.Tensor:
    """Mean of per-sample, per-class overlap losses over the classes each sample's truth shows, then over the batch.

    Why not over every class: a 256-column crop shows two or three of the five line styles, and a
    smoothed overlap score charges an absent class for every bit of probability put on it
    (1 - 1 / (alpha * FP + 1)). With seven classes that charge drowned the present ones: the `cpu`
    recipe's first multiclass epoch ended with every style's validation IoU at 0 and a loss equal
    to "present styles all missed" (0.44). segmentation_models_pytorch's Dice and Tversky leave a
    class with no true pixel out the same way (docs/libraries.md). False alarms on an absent class
    still cost: those pixels are missed background or other ink, whose own terms count them.
    Per sample rather than pooled over the batch keeps the loss of a batch the mean of its samples',
    so gradient accumulation over micro-batches equals one large batch.

    Shape:
        per_class: (B, C) loss per sample and class; count: (B, C) valid true pixels of each class
        (`overlap_sums`' T). Output: scalar (0, with zero gradient, for a batch with no valid pixel).
    """
    present = (count > 0).to(per_class.dtype)
    per_sample = (per_class * present).sum(dim=1) / present.sum(dim=1).clamp_min(1.0)
    return per_sample.mean()


def masked_mean(terms: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    """Mean of per-pixel terms over the valid pixels of the whole batch.

    The weight multiplies each term before the sum, so padding adds exactly zero loss and gradient;
    dividing by the valid count (not H x W) makes a padded batch score the same as the unpadded one.

    Shape:
        terms, weight: (B, H, W). Output: scalar.
    """
    return (terms * weight).sum() / weight.sum().clamp_min(1.0)
