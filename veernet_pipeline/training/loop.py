"""One training epoch and one evaluation pass, as pure functions of their arguments.

Gradient accumulation: micro-batches are grouped `accumulation` at a time; each micro-batch's
loss is divided by its group's size (the last group of an epoch may be a shorter remainder) and
the optimiser steps once per group, so an optimiser step always averages its micro-batches. On
CUDA, `Amp` turns on autocast (bf16 where supported, else fp16 with a GradScaler); on CPU it is
off and every run with the same settings is bit-identical.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn
from torch.optim import Optimizer
from torch.optim.lr_scheduler import LRScheduler
from torch.utils.data import DataLoader

from veernet_pipeline.evaluation.metrics import MaskScores, predicted_classes
from veernet_pipeline.io.classes import CLASSES
from veernet_pipeline.model.veernet import cell_rows
from veernet_pipeline.progress import progress

BINARY_CLASSES = ("background", "curve")  # how a one-logit net's mask is scored: curve vs everything else


@dataclass
class Amp:
    """Mixed precision for one run: `dtype` None means full precision; `scaler` only for fp16."""

    dtype: torch.dtype | None = None
    scaler: torch.amp.GradScaler | None = None

    def autocast(self, device: torch.device) -> contextlib.AbstractContextManager[Any]:
        """Autocast context for the forward pass (a no-op when off)."""
        if self.dtype is None:
            return contextlib.nullcontext()
        return torch.autocast(device_type=device.type, dtype=self.dtype)


def select_amp(device: torch.device) -> Amp:
    """bf16 autocast on CUDA that supports it, fp16 + GradScaler on older CUDA, off on CPU."""
    if device.type != "cuda":
        return Amp()
    if torch.cuda.is_bf16_supported():
        return Amp(torch.bfloat16)
    return Amp(torch.float16, torch.amp.GradScaler("cuda"))


def to_device(batch: dict[str, torch.Tensor], device: torch.device) -> dict[str, torch.Tensor]:
    """Move a collated batch; non_blocking pairs with pin_memory on CUDA."""
    return {key: value.to(device, non_blocking=device.type == "cuda") for key, value in batch.items()}


def train_one_epoch(
    model: nn.Module,
    loader: DataLoader,
    loss_fn: nn.Module,
    optimizer: Optimizer,
    scheduler: LRScheduler,
    accumulation: int,
    device: torch.device,
    amp: Amp,
    start_step: int = 0,
    on_step: Callable[[dict[str, Any]], None] | None = None,
    by_cell: bool = False,
) -> dict[str, Any]:
    """Train over the rest of one epoch.

    Args:
        model: the net, moved to `device`.
        loader: yields collated batches (image, target, valid), already positioned at
            micro-batch `start_step` of the epoch (see `EpochSampler.set_epoch(epoch, start)`).
        loss_fn: masked loss(logits, target, valid).
        optimizer: stepped once per accumulation group.
        scheduler: stepped after every optimiser step; `scheduler.last_epoch` counts optimiser steps.
        accumulation: micro-batches per optimiser step.
        device: where the batches go.
        amp: mixed precision for this run (`select_amp`).
        start_step: micro-batches of this epoch already trained (a multiple of `accumulation`).
        on_step: called after every optimiser step with step_in_epoch (micro-batches done),
            global_step (optimiser steps overall), lr, loss_sum and batches (this call so far).
        by_cell: the model is a VeerNet: take its logits in `cell_rows` order (`VeerNet(..., by_cell=True)`)
            and put target and valid in that order too. Every loss here sums or averages over each image's
            pixels, so the order changes its value only by float rounding, and the step skips the
            depth-to-space copies (docs/model.md, "The loss in cell order").

    Returns:
        loss (mean micro-batch loss of this call), loss_sum, batches, optimizer_steps, lr (of the last step).
    """
    if start_step % accumulation:
        raise ValueError(f"start_step {start_step} is not a multiple of accumulation {accumulation}")
    total = start_step + len(loader)
    model.train()
    optimizer.zero_grad(set_to_none=True)
    loss_sum, batches, steps, lr = 0.0, 0, 0, math.nan
    bar = progress(loader, total=total, initial=start_step, desc="train", leave=False)
    for index, batch in enumerate(bar, start=start_step):
        batch = to_device(batch, device)
        group_start = index - index % accumulation
        group_size = min(accumulation, total - group_start)
        target, valid = batch["target"], batch["valid"]
        with amp.autocast(device):
            if by_cell:
                logits = model(batch["image"], valid, batch.get("first_row"), by_cell=True)
                target, valid = cell_rows(target), cell_rows(valid)
            else:
                logits = model(batch["image"], valid, batch.get("first_row"))
        loss = loss_fn(logits.float(), target, valid)
        scaled = loss / group_size
        (amp.scaler.scale(scaled) if amp.scaler else scaled).backward()
        value = loss.item()
        loss_sum += value
        batches += 1
        bar.set_postfix(loss=f"{value:.4f}", refresh=False)
        if index + 1 - group_start < group_size:
            continue
        lr = optimizer.param_groups[0]["lr"]
        if amp.scaler:
            amp.scaler.step(optimizer)
            amp.scaler.update()
        else:
            optimizer.step()
        scheduler.step()
        optimizer.zero_grad(set_to_none=True)
        steps += 1
        if on_step is not None:
            on_step({"step_in_epoch": index + 1, "global_step": scheduler.last_epoch, "lr": lr,
                     "loss_sum": loss_sum, "batches": batches})
    return {"loss": loss_sum / batches if batches else math.nan, "loss_sum": loss_sum, "batches": batches,
            "optimizer_steps": steps, "lr": lr}


def _batches(loader: DataLoader, device: torch.device) -> Iterator[dict[str, torch.Tensor]]:
    for batch in progress(loader, desc="val", leave=False):
        yield to_device(batch, device)


def evaluate(model: nn.Module, loader: DataLoader, loss_fn: nn.Module, device: torch.device) -> dict[str, Any]:
    """Validation loss and pixel IoU per class over the valid pixels of every batch.

    IoU comes from `evaluation.metrics.MaskScores`, the counts the evaluate stage pools too: a
    one-logit net is scored as curve vs background, padding is left out, pixels of all batches
    are pooled. The model's train/eval mode is restored afterwards.

    Returns:
        loss (mean batch loss), iou ({class name: IoU}: background and curve for a one-logit
        net, else `io.classes.CLASSES`; NaN for a class absent from both prediction and truth),
        miou (mean of the non-NaN IoUs).
    """
    was_training = model.training
    model.eval()
    loss_sum, batches = 0.0, 0
    scores: MaskScores | None = None
    with torch.inference_mode():
        for batch in _batches(loader, device):
            logits = model(batch["image"], batch["valid"], batch.get("first_row")).float()
            loss_sum += loss_fn(logits, batch["target"], batch["valid"]).item()
            batches += 1
            if scores is None:
                scores = MaskScores(max(2, logits.shape[1]))
            scores.update(predicted_classes(logits), batch["target"], batch["valid"])
    model.train(was_training)
    if scores is None:
        raise ValueError("evaluate got an empty loader; the validation split has no items")
    names = BINARY_CLASSES if scores.num_classes == 2 else CLASSES
    iou = {name: per_class["iou"] for name, per_class in zip(names, scores.compute().values(), strict=True)}
    present = [v for v in iou.values() if not math.isnan(v)]
    return {"loss": loss_sum / batches, "iou": iou, "miou": sum(present) / len(present) if present else math.nan}
