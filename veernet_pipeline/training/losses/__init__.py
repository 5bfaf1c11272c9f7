"""Training losses, chosen by name from params.yaml (`train_*.loss`).

All five share one call, `loss(logits, target, valid)`, with mode "binary" (logits (B, 1, H, W),
sigmoid, target > 0 is curve) or "multiclass" (softmax over C); the validity mask keeps collate
padding out of the loss and its gradient.
"""

from __future__ import annotations

from collections.abc import Callable

from torch import nn

from veernet_pipeline.config import LossParams
from veernet_pipeline.training.losses._inputs import Mode
from veernet_pipeline.training.losses.dice import DiceLoss
from veernet_pipeline.training.losses.focal import FocalLoss
from veernet_pipeline.training.losses.lovasz import LovaszLoss
from veernet_pipeline.training.losses.soft_ce import SoftCrossEntropyLoss
from veernet_pipeline.training.losses.tversky import TverskyLoss

_BUILDERS: dict[str, Callable[[LossParams, Mode], nn.Module]] = {
    "dice": lambda p, mode: DiceLoss(mode),
    "focal": lambda p, mode: FocalLoss(mode, gamma=p.gamma),
    "lovasz": lambda p, mode: LovaszLoss(mode),
    "soft_ce": lambda p, mode: SoftCrossEntropyLoss(mode, smoothing=p.smoothing),
    "tversky": lambda p, mode: TverskyLoss(p.alpha, p.beta, mode),
}
LOSSES = tuple(_BUILDERS)


def build_loss(params: LossParams, mode: Mode) -> nn.Module:
    """The loss named in `params`, set up for `mode` ("binary" or "multiclass").

    Raises:
        ValueError: for an unknown loss name; the message lists the supported ones.
    """
    if params.name not in _BUILDERS:
        raise ValueError(f"params.yaml loss.name {params.name!r} is not supported; use one of {list(LOSSES)}")
    return _BUILDERS[params.name](params, mode)


__all__ = ["LOSSES", "DiceLoss", "FocalLoss", "LovaszLoss", "Mode", "SoftCrossEntropyLoss", "TverskyLoss",
           "build_loss"]
