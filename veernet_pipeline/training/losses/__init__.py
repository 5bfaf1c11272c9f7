"""Training losses, chosen by name from params.yaml (`train_*.loss`)."""

from __future__ import annotations

from veernet_pipeline.config import LossParams
from veernet_pipeline.training.losses.tversky import Mode, TverskyLoss

LOSSES = ("tversky",)


def build_loss(params: LossParams, mode: Mode) -> TverskyLoss:
    """The loss named in `params`, set up for `mode` ("binary" or "multiclass").

    Raises:
        ValueError: for an unknown loss name; the message lists the supported ones.
    """
    if params.name != "tversky":
        raise ValueError(f"params.yaml loss.name {params.name!r} is not supported; use one of {list(LOSSES)}")
    return TverskyLoss(params.alpha, params.beta, mode)


__all__ = ["LOSSES", "TverskyLoss", "build_loss"]
