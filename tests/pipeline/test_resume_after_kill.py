"""`veernet train_binary --resume` after a SIGKILL mid-epoch ends with the weights of a run never killed."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import torch

from tests.conftest import make_project
from tests.kill import sigkill_when
from veernet_pipeline.config import load_settings
from veernet_pipeline.training.checkpoint import load_checkpoint

# The cpu profile's data settings (batches of 4, 256-px crops, 2 loader workers) on the test profile's tiny
# set and net; a checkpoint after every optimiser step, and enough crops per log for several steps an epoch.
TRAIN = ["train_binary.epochs=2", "train_binary.batch_size=4", "train_binary.crop_width=256",
         "train_binary.crops_per_log=12", "train_binary.num_workers=2", "train_binary.warmup_steps=3",
         "train_binary.checkpoint_every_steps=1"]
VEERNET = [sys.executable, "-m", "veernet_pipeline.cli"]
DEADLINE_S = 180.0


def _env(params: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("VEERNET_PROFILE", "MLFLOW_TRACKING_URI")}
    # One intra-op thread: on 2 cores shared with other processes, 2 OpenMP threads made these runs several
    # times slower. Every run here uses the same count, so the bit-identity checked is unaffected.
    env.update(VEERNET_PARAMS=str(params), OMP_NUM_THREADS="1")
    return env


def _veernet(project: Path, log: Path, *args: str) -> str:
    """Run one `veernet` command to the end; its stderr (the log) is returned, a failure shows it."""
    with log.open("w") as err:
        done = subprocess.run([*VEERNET, *args], cwd=project, env=_env(project / "params.yaml"),
                              stdout=subprocess.DEVNULL, stderr=err, timeout=DEADLINE_S)
    text = log.read_text()
    assert done.returncode == 0, f"veernet {' '.join(args)} failed:\n{text[-3000:]}"
    return text


def _weights(folder: Path) -> dict[str, torch.Tensor]:
    return torch.load(folder / "weights.pt", map_location="cpu", weights_only=True)


def test_sigkill_mid_epoch_then_resume_gives_the_uninterrupted_weights(tmp_path: Path) -> None:
    project = tmp_path / "project"
    params = make_project(project)
    overrides = [arg for item in TRAIN for arg in ("--set", item)]
    _veernet(project, tmp_path / "synthesize.log", "synthesize")
    settings = load_settings(params, overrides=TRAIN)
    models = settings.path("models") / "binary"
    index = pd.read_parquet(settings.path("synthetic") / "binary" / "index.parquet")
    batches = math.ceil(int((index["split"] == "train").sum()) * 12 / 4)
    assert batches >= 4, "too few batches an epoch for a kill to land mid-epoch; raise crops_per_log"

    # The reference: the same command never interrupted, then set aside.
    reference_log = _veernet(project, tmp_path / "reference.log", *overrides, "train_binary")
    reference = models.with_name("binary-uninterrupted")
    models.rename(reference)
    # After the first of two epochs the log projects the rest from that epoch's time (history.json).
    first = json.loads((reference / "history.json").read_text())[0]["seconds"]
    assert f"binary: 1 of 2 epochs left, about {first / 60:.0f} min more at {first:.0f} s an epoch" in reference_log

    # Killed with SIGKILL (no handler, no clean-up) as soon as a mid-epoch checkpoint is on disk.
    checkpoint = models / "checkpoints" / "last.pt"
    sigkill_when([*VEERNET, *overrides, "train_binary", "--resume"], project, _env(params), tmp_path / "killed.log",
                 checkpoint.is_file, "checkpoint", DEADLINE_S)
    assert not (models / "weights.pt").exists()  # the run did not get to its end
    position = load_checkpoint(checkpoint)
    assert position["epoch"] == 0 and 0 < position["step_in_epoch"] < batches, "the kill did not land mid-epoch"

    resumed_log = _veernet(project, tmp_path / "resumed.log", *overrides, "train_binary", "--resume")
    assert f"resuming binary from {checkpoint} at epoch 1, batch {position['step_in_epoch']}" in resumed_log

    a, b = _weights(reference), _weights(models)
    assert a.keys() == b.keys()
    assert all(torch.equal(a[name], b[name]) for name in a)
    history = [json.loads((folder / "history.json").read_text()) for folder in (reference, models)]
    for left, right in zip(*history, strict=True):
        assert left["val_iou"] == right["val_iou"] and left["val_loss"] == right["val_loss"]
        assert left["lr"] == right["lr"]
        assert math.isclose(left["train_loss"], right["train_loss"], rel_tol=1e-12)
