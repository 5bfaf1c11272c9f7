"""Training recipes: the binary stage, then the multiclass stage seeded from it.

`train_stage` wires data, model, masked Tversky loss, AdamW, linear warmup then cosine decay,
gradient accumulation, an optional moving average of the weights (`ema_decay`, torch's
`AveragedModel`) and checkpoints together. A checkpoint (`out_dir/checkpoints/last.pt`) is
written at every epoch end, and every `checkpoint_every_steps` optimiser steps if > 0, with the
data position; `resume=True` continues from it and, on CPU, ends with weights bit-identical to
an uninterrupted run (the data order and crops depend only on (seed, epoch, index)).
"""

from __future__ import annotations

import json
import logging
import math
import random
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

import numpy as np
import torch
from torch.optim import AdamW, Optimizer
from torch.optim.lr_scheduler import CosineAnnealingLR, LinearLR, LRScheduler, SequentialLR
from torch.optim.swa_utils import AveragedModel, get_ema_multi_avg_fn
from torch.utils.data import DataLoader

from veernet_pipeline.allocator import keep_freed_memory
from veernet_pipeline.config import Settings, TrainParams
from veernet_pipeline.io.atomic import write_text_atomic
from veernet_pipeline.io.classes import CLASSES, NUM_CLASSES, STYLES
from veernet_pipeline.model.veernet import WEIGHTS_FILE, VeerNet, build_model, save_model
from veernet_pipeline.training.checkpoint import load_checkpoint, restore_rng_state, rng_state, save_checkpoint
from veernet_pipeline.training.data import EpochSampler, SegmentationSet, pad_collate
from veernet_pipeline.training.loop import evaluate, select_amp, train_one_epoch
from veernet_pipeline.training.losses import build_loss

logger = logging.getLogger(__name__)

Stage = Literal["binary", "multiclass"]
OUTPUTS: dict[str, int] = {"binary": 1, "multiclass": NUM_CLASSES}
CHECKPOINT = Path("checkpoints") / "last.pt"
HISTORY_FILE = "history.json"  # one record per epoch, written beside the weights
HEAD_PREFIX = "head."


def warmup_cosine(optimizer: Optimizer, warmup_steps: int, total_steps: int) -> LRScheduler:
    """Torch's schedulers for a linear rise over `warmup_steps`, then a cosine down to 0 at `total_steps`.

    The factor on the base LR at optimiser step s is (s + 1) / (warmup_steps + 1) while
    s < warmup_steps (`LinearLR`), then 0.5 * (1 + cos(pi * (s - warmup_steps) / (total_steps -
    warmup_steps))) (`CosineAnnealingLR`, reached through `SequentialLR` at the milestone). Torch
    updates the LR step by step rather than from the closed form, so it differs from the formula in
    the last bits only (below 5e-12 relative over every profile's schedule, up to 66,000 steps:
    benchmarks/results/libraries.md), and its `state_dict` resumes bit-identically.

    Args:
        optimizer: the optimiser whose base LR the factor scales.
        warmup_steps: optimiser steps of linear warmup; 0 starts on the cosine.
        total_steps: optimiser steps of the whole run; the LR reaches 0 there.
    """
    cosine = CosineAnnealingLR(optimizer, T_max=max(1, total_steps - warmup_steps), eta_min=0.0)
    if warmup_steps == 0:
        return cosine
    warmup = LinearLR(optimizer, start_factor=1.0 / (warmup_steps + 1), end_factor=1.0, total_iters=warmup_steps)
    return SequentialLR(optimizer, [warmup, cosine], milestones=[warmup_steps])


def load_matching_weights(model: VeerNet, weights: Path) -> list[str]:
    """Copy every tensor of `weights` whose name and shape match `model` (all but the head).

    Args:
        model: the net to initialise in place.
        weights: a `weights.pt` file or the model folder that holds one.

    Returns:
        Names of the tensors copied.

    Raises:
        ValueError: if a tensor outside the head does not match: the weights come from a net
            built with other `model:` params.
    """
    path = Path(weights)
    path = path / WEIGHTS_FILE if path.is_dir() else path
    source = torch.load(path, map_location="cpu", weights_only=True)
    target = model.state_dict()
    loaded = [name for name, tensor in source.items() if name in target and target[name].shape == tensor.shape]
    skipped = sorted(set(target) - set(loaded))
    foreign = [name for name in skipped if not name.startswith(HEAD_PREFIX)]
    if foreign:
        raise ValueError(f"{path}: tensors {foreign[:5]} do not match this net; retrain the binary stage with "
                         "the same params.yaml `model:` section")
    state = {name: source[name] for name in loaded}
    state.update(_head_from_binary(source, target))
    model.load_state_dict(state, strict=False)
    logger.info("initialised %d tensors from %s; head seeded from the binary head: %s", len(loaded), path,
                sorted(set(state) - set(loaded)))
    return sorted(state)


def _head_from_binary(source: dict[str, torch.Tensor], target: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """Seed the multiclass head from the binary head so the softmax reproduces the binary curve probability.

    The binary net's one logit z says "curve" (any curve style) against everything else, other ink
    included. Each of the S curve-style classes gets z - log(S), and background and other ink,
    the "everything else", get -log(2) each: then P(any curve style) = e^z / (e^z + 1) = sigmoid(z)
    exactly, and the two non-curve classes share the rest equally. The multiclass net starts out
    finding curves where the binary one did and only has to learn which style is which and what
    other ink is, instead of relearning detection from a random head. The head has one logit per
    class and pixel of a space-to-depth cell (channel k * cell + pixel), so each class copies the
    binary head's logits pixel for pixel.
    """
    weight, bias = f"{HEAD_PREFIX}weight", f"{HEAD_PREFIX}bias"
    binary_w, binary_b, fresh_w = source.get(weight), source.get(bias), target[weight]
    if binary_w is None or binary_b is None or fresh_w.shape[0] != NUM_CLASSES * binary_w.shape[0]:
        return {}
    cell = binary_w.shape[0]
    head_w, head_b = torch.zeros_like(fresh_w), torch.zeros_like(target[bias])
    for k, name in enumerate(CLASSES):
        rows = slice(k * cell, (k + 1) * cell)
        if name in STYLES:
            head_w[rows] = binary_w
            head_b[rows] = binary_b - math.log(len(STYLES))
        else:
            head_b[rows] = -math.log(len(CLASSES) - len(STYLES))
    return {weight: head_w, bias: head_b}


def epoch_time(seconds: list[float]) -> float:
    """The seconds an epoch takes, for projecting the rest of a stage: the median of the epochs so far.

    The median, not the mean: one epoch slowed by something beside it (732-1,152 s an epoch on one
    machine on 2026-11-27) would otherwise move every later projection.
    """
    return float(np.median(seconds))


def _clean(value: Any) -> Any:
    # NaN (an IoU with no pixels of that class) is not JSON; store None instead.
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, dict):
        return {key: _clean(v) for key, v in value.items()}
    return [_clean(v) for v in value] if isinstance(value, list) else value


def _fingerprint(settings: Settings, stage: str, params: TrainParams, train_items: int) -> str:
    # A resume is only bit-identical under the same settings, so a checkpoint remembers them.
    return json.dumps({"stage": stage, "seed": settings.seed, "train": params.model_dump(mode="json"),
                       "model": settings.model.model_dump(mode="json"), "train_items": train_items}, sort_keys=True)


def train_stage(
    settings: Settings,
    stage: Stage,
    set_dir: Path,
    out_dir: Path,
    init_weights: Path | None = None,
    resume: bool = False,
    on_epoch_end: Callable[[int, dict], None] | None = None,
    on_step: Callable[[dict], None] | None = None,
) -> dict[str, Any]:
    """Train one stage on a synthetic set and save the model in `out_dir`.

    Args:
        settings: loaded params; uses `seed`, `model` and `train_<stage>`.
        stage: "binary" (1 logit map: curve) or "multiclass" (one per class of `io.classes`).
        set_dir: synthetic set folder with index.parquet (train and val splits).
        out_dir: gets weights.pt, model.json, history.json and checkpoints/last.pt.
        init_weights: weights (file or model folder) to start from; every matching tensor is loaded.
        resume: continue from `out_dir/checkpoints/last.pt` if it exists.
        on_epoch_end: called with (epoch number from 1, epoch record) after each epoch's checkpoint.
        on_step: called after every optimiser step (and its checkpoint) with the step info of
            `train_one_epoch` plus `epoch` (from 1).

    Returns:
        weights (path of weights.pt), epochs, final (last epoch record), wall_clock_s (this call's),
        training_s (the epochs' own seconds summed, those of the calls a resumed run continues included:
        what the training took), history.
    """
    if stage not in OUTPUTS:
        raise ValueError(f"stage {stage!r} is not one of {sorted(OUTPUTS)}")
    started = time.perf_counter()
    params = settings.train_binary if stage == "binary" else settings.train_multiclass
    set_dir, out_dir = Path(set_dir), Path(out_dir)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    # Each step frees what the next allocates: keep it (a `cpu` step 1.20x, benchmarks/results/allocator.md).
    keep_freed_memory()
    random.seed(settings.seed)
    np.random.seed(settings.seed % 2**32)
    torch.manual_seed(settings.seed)

    model = build_model(settings.model, OUTPUTS[stage])
    if init_weights is not None:
        load_matching_weights(model, init_weights)
    model.to(device)
    binary = stage == "binary"
    train_set = SegmentationSet(set_dir, "train", binary, params.crop_width, settings.seed, params.max_train,
                                params.crops_per_log, params.crop_height)
    # Validated on whole-height crops whatever the training crops are: the figures compare across recipes.
    val_set = SegmentationSet(set_dir, "val", binary, params.crop_width, settings.seed, 0)
    if not len(train_set):
        raise ValueError(f"{set_dir / 'index.parquet'} has no train rows; regenerate the set with more instances")
    sampler = EpochSampler(len(train_set), settings.seed, train_set.heights(), params.batch_size)
    loader_args: dict[str, Any] = {"batch_size": params.batch_size, "collate_fn": pad_collate,
                                   "num_workers": params.num_workers, "pin_memory": device.type == "cuda"}
    # DataLoader draws its workers' seeds from this generator as each epoch's pass starts; it is re-seeded
    # from (seed, epoch) every epoch, so a resumed run's workers get the seeds an uninterrupted run's got,
    # and this loader leaves the global torch RNG alone.
    worker_seeds = torch.Generator()
    train_loader = DataLoader(train_set, sampler=sampler, generator=worker_seeds, **loader_args)
    val_loader = DataLoader(val_set, shuffle=False, **loader_args)
    batches_per_epoch = math.ceil(len(train_set) / params.batch_size)
    total_steps = params.epochs * math.ceil(batches_per_epoch / params.accumulation)
    optimizer = AdamW(model.parameters(), lr=params.lr, weight_decay=params.weight_decay)
    # The average starts as a copy of the weights at the first optimiser step (n_averaged 0), then decays towards them.
    average = (AveragedModel(model, multi_avg_fn=get_ema_multi_avg_fn(params.ema_decay), use_buffers=True)
               if params.ema_decay else None)
    shipped = model if average is None else average.module
    scheduler = warmup_cosine(optimizer, params.warmup_steps, total_steps)
    amp = select_amp(device)
    loss_fn = build_loss(params.loss, stage)
    fingerprint = _fingerprint(settings, stage, params, len(train_set))

    checkpoint_path = out_dir / CHECKPOINT
    first_epoch, start_step, history = 0, 0, []
    partial = {"loss_sum": 0.0, "batches": 0, "seconds": 0.0}
    if resume and checkpoint_path.is_file():
        state = load_checkpoint(checkpoint_path)
        if state.get("fingerprint") != fingerprint:
            raise ValueError(f"{checkpoint_path} was written with other settings; resume with the same params "
                             "or delete the checkpoint to start fresh")
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        scheduler.load_state_dict(state["scheduler"])
        if amp.scaler is not None and state.get("scaler") is not None:
            amp.scaler.load_state_dict(state["scaler"])
        if average is not None:
            average.load_state_dict(state["average"])
        restore_rng_state(state["rng"])
        first_epoch, start_step, history, partial = (state["epoch"], state["step_in_epoch"], state["history"],
                                                     state["partial"])
        logger.info("resuming %s from %s at epoch %d, batch %d", stage, checkpoint_path, first_epoch + 1, start_step)
    elif resume:
        logger.info("no checkpoint at %s; starting %s from scratch", checkpoint_path, stage)

    def snapshot(epoch: int, step_in_epoch: int, part: dict[str, Any]) -> dict[str, Any]:
        return {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "scheduler": scheduler.state_dict(),
                "scaler": amp.scaler.state_dict() if amp.scaler else None,
                "average": average.state_dict() if average is not None else None, "epoch": epoch,
                "step_in_epoch": step_in_epoch, "global_step": scheduler.last_epoch, "rng": rng_state(),
                "history": history, "partial": part, "fingerprint": fingerprint}

    for epoch in range(first_epoch, params.epochs):
        epoch_started = time.perf_counter()
        base = partial

        def step_hook(info: dict[str, Any], epoch: int = epoch, base: dict[str, Any] = base,
                      epoch_started: float = epoch_started) -> None:
            if average is not None:
                average.update_parameters(model)
            every = params.checkpoint_every_steps
            # The last step of an epoch is covered by the epoch-end checkpoint that follows it.
            if every > 0 and info["global_step"] % every == 0 and info["step_in_epoch"] < batches_per_epoch:
                part = {"loss_sum": base["loss_sum"] + info["loss_sum"], "batches": base["batches"] + info["batches"],
                        "seconds": base["seconds"] + time.perf_counter() - epoch_started}
                save_checkpoint(checkpoint_path, snapshot(epoch, info["step_in_epoch"], part))
            if on_step is not None:
                on_step({**info, "epoch": epoch + 1})

        train_set.set_epoch(epoch)
        worker_seeds.manual_seed(int(np.random.SeedSequence([settings.seed, epoch]).generate_state(1)[0]))
        sampler.set_epoch(epoch, start=start_step * params.batch_size)
        result = train_one_epoch(model, train_loader, loss_fn, optimizer, scheduler, params.accumulation, device,
                                 amp, start_step=start_step, on_step=step_hook, by_cell=True)
        val = evaluate(shipped, val_loader, loss_fn, device) if len(val_set) else None
        if val is None:
            logger.warning("%s has no val rows; epoch %d has no validation metrics", set_dir, epoch + 1)
        record = {
            "epoch": epoch + 1,
            "train_loss": (base["loss_sum"] + result["loss_sum"]) / (base["batches"] + result["batches"]),
            "val_loss": val["loss"] if val else None,
            "val_iou": val["iou"] if val else None,
            "lr": result["lr"],
            "seconds": base["seconds"] + time.perf_counter() - epoch_started,
        }
        record = {key: _clean(value) for key, value in record.items()}
        history.append(record)
        start_step, partial = 0, {"loss_sum": 0.0, "batches": 0, "seconds": 0.0}
        save_checkpoint(checkpoint_path, snapshot(epoch + 1, 0, partial))
        logger.info("%s epoch %d/%d: train_loss %.4f val_loss %s val_iou %s lr %.3g %.1fs", stage, epoch + 1,
                    params.epochs, record["train_loss"], record["val_loss"], record["val_iou"], record["lr"],
                    record["seconds"])
        left = params.epochs - (epoch + 1)
        if left:
            # Said after every epoch, so whoever watches sees at once whether the stage fits its time budget
            # (a slow machine shows after the first: docs/runbooks/train-and-promote.md).
            per_epoch = epoch_time([r["seconds"] for r in history])
            logger.info("%s: %d of %d epochs left, about %.0f min more at %.0f s an epoch", stage, left, params.epochs,
                        left * per_epoch / 60, per_epoch)
        if on_epoch_end is not None:
            on_epoch_end(epoch + 1, record)

    save_model(out_dir, shipped, settings.model, OUTPUTS[stage])
    write_text_atomic(out_dir / HISTORY_FILE, json.dumps(history, indent=2) + "\n")
    return {"weights": str(out_dir / WEIGHTS_FILE), "epochs": params.epochs, "final": history[-1] if history else {},
            "wall_clock_s": time.perf_counter() - started, "training_s": sum(r["seconds"] for r in history),
            "history": history}
