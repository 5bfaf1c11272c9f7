"""Training checkpoints: everything needed to continue a run bit-identically.

A checkpoint holds model, optimiser, scheduler (and AMP scaler) state, the data position
(epoch, micro-batches done in it, optimiser steps overall), the RNG states (python, numpy,
torch) and the history so far. It is written atomically, so a crash during the write leaves
the previous checkpoint intact. Every value is a tensor or plain Python data, so it loads with
`torch.load(weights_only=True)`: no pickled code runs on load.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import numpy as np
import torch

from veernet_pipeline.io.atomic import atomic_path

REQUIRED_KEYS = ("model", "optimizer", "scheduler", "epoch", "step_in_epoch", "global_step", "rng", "history")


def save_checkpoint(path: Path, state: dict[str, Any]) -> None:
    """Write `state` to `path` atomically (torch.save to a temporary sibling, then rename).

    Raises:
        ValueError: if a key of `REQUIRED_KEYS` is missing (a checkpoint that could not resume).
    """
    missing = [key for key in REQUIRED_KEYS if key not in state]
    if missing:
        raise ValueError(f"checkpoint for {path} lacks {missing}")
    with atomic_path(path) as tmp, tmp.open("wb") as fh:  # an open file: the bytes do not name the temporary file
        torch.save(state, fh)


def load_checkpoint(path: Path) -> dict[str, Any]:
    """Read a checkpoint written by `save_checkpoint`, tensors on CPU."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path} not found: nothing to resume; run without resume to start fresh")
    state = torch.load(path, map_location="cpu", weights_only=True)
    missing = [key for key in REQUIRED_KEYS if key not in state]
    if missing:
        raise ValueError(f"{path}: not a training checkpoint (missing {missing}); delete it to start fresh")
    return state


def rng_state() -> dict[str, Any]:
    """Python, numpy (global) and torch RNG states as plain data and tensors."""
    kind, key, pos, has_gauss, cached = np.random.get_state()
    state: dict[str, Any] = {
        "python": random.getstate(),
        "numpy": {"kind": kind, "key": key.tolist(), "pos": pos, "has_gauss": has_gauss, "cached": cached},
        "torch": torch.get_rng_state(),
    }
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def restore_rng_state(state: dict[str, Any]) -> None:
    """Inverse of `rng_state`."""
    random.setstate(state["python"])
    numpy_state = state["numpy"]
    np.random.set_state(
        (numpy_state["kind"], np.asarray(numpy_state["key"], dtype=np.uint32), numpy_state["pos"],
         numpy_state["has_gauss"], numpy_state["cached"])
    )
    torch.set_rng_state(state["torch"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])

