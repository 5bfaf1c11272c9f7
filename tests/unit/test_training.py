"""Training: masked Tversky, padding collate, data order, accumulation, resume, binary -> multiclass."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import tifffile
import torch
from torch.optim.lr_scheduler import LRScheduler
from torch.utils.data import DataLoader

from veernet_pipeline.config import ModelParams, Settings, load_settings
from veernet_pipeline.io.classes import CLASSES, NUM_CLASSES, OTHER_INK, STYLES, style_class
from veernet_pipeline.model import build_model, load_model, save_model
from veernet_pipeline.training.checkpoint import load_checkpoint, restore_rng_state, rng_state, save_checkpoint
from veernet_pipeline.training.data import EpochSampler, SegmentationSet, pad_collate
from veernet_pipeline.training.loop import Amp, evaluate, train_one_epoch
from veernet_pipeline.training.losses import TverskyLoss, build_loss
from veernet_pipeline.training.recipes import epoch_time, load_matching_weights, train_stage, warmup_cosine

PARAMS_YAML = Path(__file__).parents[2] / "params.yaml"
TINY_MODEL = ["model.channels=[4,8,8,16,32]", "model.attention_heads=2"]


# What write_set draws, in the mask classes of io.classes: a label box (other ink), then curves in these styles.
SET_STYLES = ("solid", "dashed", "dotted")


def write_set(folder: Path, sizes: list[tuple[int, int, str]], n_curves: int) -> Path:
    """A tiny set in the synthetic layout: a block of other ink, then sine curves in `SET_STYLES` order.

    Each image has a 6 x 12 px filled box near its top left (class other_ink) and `n_curves`
    one-pixel sine curves: solid (class solid), then dashed (8 px on, 8 off), then dotted (1 on, 2 off).
    """
    rows = []
    for i, (height, width, split) in enumerate(sizes):
        rng = np.random.default_rng([7, i])
        image = np.full((height, width), 255, np.uint8)
        mask = np.zeros((height, width), np.uint8)
        image[2:8, 4:16], mask[2:8, 4:16] = 0, OTHER_INK
        cols = np.arange(width)
        for style in SET_STYLES[:n_curves]:
            phase, period = rng.uniform(0, 6), rng.uniform(20, 60)
            rows_px = (height / 2 + height / 3 * np.sin(cols / period + phase)).astype(int)
            drawn = {"solid": cols, "dashed": cols[(cols // 8) % 2 == 0], "dotted": cols[cols % 3 == 0]}[style]
            image[rows_px[drawn], drawn] = 0
            mask[rows_px[drawn], drawn] = style_class(style)
        name = f"s{i:03d}"
        tifffile.imwrite(folder / f"{name}.tif", image)
        tifffile.imwrite(folder / f"{name}.mask.tif", mask)
        rows.append({"id": name, "image": f"{name}.tif", "mask": f"{name}.mask.tif",
                     "calibration": f"{name}.calib.json", "las": f"{name}.las", "width": width, "height": height,
                     "well": f"W{i % 3}", "split": split, "n_curves": n_curves})
    pd.DataFrame(rows).to_parquet(folder / "index.parquet")
    return folder


@pytest.fixture
def binary_set(tmp_path: Path) -> Path:
    sizes = [(64, 300, "train"), (64, 200, "train"), (96, 260, "train"), (64, 160, "train"), (64, 320, "train"),
             (64, 300, "val"), (96, 150, "val"), (64, 220, "test")]
    (tmp_path / "binary").mkdir()
    return write_set(tmp_path / "binary", sizes, 1)


@pytest.fixture
def multiclass_set(tmp_path: Path) -> Path:
    (tmp_path / "multiclass").mkdir()
    sizes = [(64, 300, "train"), (96, 200, "train"), (64, 260, "train"), (64, 280, "val")]
    return write_set(tmp_path / "multiclass", sizes, 3)


def settings(*overrides: str) -> Settings:
    return load_settings(PARAMS_YAML, profile="test", overrides=[*TINY_MODEL, *overrides])


def test_tversky_perfect_prediction_is_near_zero_and_build_loss_checks_name() -> None:
    target = torch.zeros(1, 32, 32, dtype=torch.long)
    target[:, 10, :] = 2
    logits = torch.nn.functional.one_hot(target, 3).permute(0, 3, 1, 2).float() * 50
    params = load_settings(PARAMS_YAML, profile="test").train_multiclass.loss
    assert float(build_loss(params, "multiclass")(logits, target)) < 1e-6
    with pytest.raises(ValueError, match="not supported"):
        build_loss(params.model_copy(update={"name": "hinge"}), "binary")


def test_the_projection_takes_the_median_epoch_so_one_slow_epoch_does_not_move_it() -> None:
    # 100, 1,000 and 110 s: the middle value is 110 s; the mean, 403.3 s, would triple the projection.
    assert epoch_time([100.0, 1000.0, 110.0]) == 110.0
    assert epoch_time([100.0, 120.0]) == 110.0  # an even count: the mean of the middle two
    assert epoch_time([340.0]) == 340.0


def test_pad_collate_pads_to_multiple_of_32() -> None:
    items = [{"image": torch.rand(1, 50, 70), "target": torch.ones(50, 70, dtype=torch.long),
              "first_row": torch.tensor(0)},
             {"image": torch.rand(1, 64, 100), "target": torch.full((64, 100), 2, dtype=torch.long),
              "first_row": torch.tensor(96)}]
    batch = pad_collate(items)
    assert batch["first_row"].tolist() == [0, 96]
    assert batch["image"].shape == (2, 1, 64, 128)
    assert batch["target"].shape == batch["valid"].shape == (2, 64, 128)
    assert batch["target"].dtype == torch.int64
    assert torch.equal(batch["image"][0, :, :50, :70], items[0]["image"])
    assert bool((batch["image"][0, :, 50:] == 1.0).all()) and bool((batch["image"][1, :, :, 100:] == 1.0).all())
    assert int(batch["target"][0, 50:].sum()) == 0 and int(batch["target"][1, :, 100:].sum()) == 0
    assert batch["valid"][0].sum() == 50 * 70 and batch["valid"][1].sum() == 64 * 100
    assert batch["valid"][0, :50, :70].min() == 1.0


def test_segmentation_set_crops_deterministically(binary_set: Path) -> None:
    data = SegmentationSet(binary_set, "train", binary=True, crop_width=128, seed=5, max_items=3)
    assert len(data) == 3
    first = data[0]
    assert first["image"].shape == (1, 64, 128) and first["target"].shape == (64, 128)
    assert float(first["image"].min()) >= 0.0 and float(first["image"].max()) <= 1.0
    assert set(first["target"].unique().tolist()) <= {0, 1}
    # Binary: curve styles are 1; other ink is not curve. The whole log (no crop) holds both.
    whole = SegmentationSet(binary_set, "train", binary=True, crop_width=0, seed=5, max_items=1)[0]["target"]
    mask = torch.from_numpy(tifffile.imread(binary_set / "s000.mask.tif")).long()
    assert int((mask == OTHER_INK).sum()) == 72 and int((mask == style_class("solid")).sum()) > 0
    assert torch.equal(whole, (mask >= style_class("solid")).long())
    assert torch.equal(SegmentationSet(binary_set, "train", binary=False, crop_width=0, seed=5,
                                       max_items=1)[0]["target"], mask)
    assert torch.equal(first["image"], data[0]["image"])
    data.set_epoch(1)
    assert not torch.equal(first["image"], data[0]["image"])
    assert data[2]["image"].shape == (1, 96, 128)
    with pytest.raises(ValueError, match="multiple of 32"):
        SegmentationSet(binary_set, "train", binary=True, crop_width=100, seed=5, max_items=0)



def test_crop_height_cuts_whole_cells_and_reaches_the_track_foot(tmp_path: Path) -> None:
    # One log 150 rows tall: 64-row crops may start at rows 0, 32, 64 and 96 (ceil((150 - 64) / 32) = 3 steps);
    # the one at 96 holds rows 96-149, the foot, 54 rows (the collate pads it as inference pads the foot).
    write_set(tmp_path, [(150, 64, "train")], n_curves=2)
    data = SegmentationSet(tmp_path, "train", binary=False, crop_width=0, seed=3, max_items=0, crop_height=64)
    whole = torch.from_numpy(tifffile.imread(tmp_path / "s000.mask.tif")).long()
    starts = set()
    for epoch in range(40):
        data.set_epoch(epoch)
        item = data[0]
        first = int(item["first_row"])
        starts.add(first)
        assert item["target"].shape == (min(64, 150 - first), 64)
        assert torch.equal(item["target"], whole[first:first + 64])
    assert starts == {0, 32, 64, 96}
    assert data.heights() == [64]
    flat = SegmentationSet(tmp_path, "train", binary=False, crop_width=0, seed=3, max_items=0)[0]
    assert int(flat["first_row"]) == 0 and torch.equal(flat["target"], whole)
    with pytest.raises(ValueError, match="crop_height 40 must be"):
        SegmentationSet(tmp_path, "train", binary=False, crop_width=0, seed=3, max_items=0, crop_height=40)


def test_crop_height_leaves_the_column_crops_as_they_were(binary_set: Path) -> None:
    # The column start is drawn first from the same generator, so a recipe without row crops trains on the same bytes.
    cut = SegmentationSet(binary_set, "train", binary=True, crop_width=128, seed=5, max_items=3, crop_height=32)
    plain = SegmentationSet(binary_set, "train", binary=True, crop_width=128, seed=5, max_items=3)
    for i in range(3):
        first = int(cut[i]["first_row"])
        assert torch.equal(cut[i]["image"], plain[i]["image"][:, first:first + 32])


def test_crops_per_log_reads_each_log_once(binary_set: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = SegmentationSet(binary_set, "train", binary=True, crop_width=128, seed=5, max_items=3, crops_per_log=2)
    assert len(data) == 6
    reads: list[str] = []
    original = tifffile.imread
    monkeypatch.setattr(tifffile, "imread", lambda path, *a, **k: reads.append(str(path)) or original(path, *a, **k))
    items = [data[i] for i in range(6)]
    assert len(reads) == 6 and len(set(reads)) == 6  # image + mask of each of the 3 logs, once
    # Item i is a crop of log i // 2 (logs 64, 64 and 96 rows tall), each at its own start.
    assert [item["image"].shape[-2] for item in items] == [64, 64, 64, 64, 96, 96]
    assert not torch.equal(items[0]["image"], items[1]["image"])
    assert torch.equal(items[0]["image"], data[0]["image"]) and len(reads) == 6
    with pytest.raises(ValueError, match="crops_per_log"):
        SegmentationSet(binary_set, "train", binary=True, crop_width=128, seed=5, max_items=0, crops_per_log=0)


def test_epoch_sampler_order_and_resume_position() -> None:
    sampler = EpochSampler(10, seed=1)
    sampler.set_epoch(2)
    full = list(sampler)
    assert sorted(full) == list(range(10))
    sampler.set_epoch(2, start=4)
    assert list(sampler) == full[4:] and len(sampler) == 6
    sampler.set_epoch(3)
    assert list(sampler) != full


def test_length_aware_order_batches_logs_of_one_height(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("veernet_pipeline.training.data.BUCKET_BATCHES", 2)  # chunks of 2 batches of 2: 4 items
    heights = [480, 1024, 512, 960, 640, 544, 1000, 600, 700, 500, 520]
    plain, aware = EpochSampler(11, seed=4), EpochSampler(11, seed=4, heights=heights, batch_size=2)
    for epoch in (0, 1):
        plain.set_epoch(epoch)
        aware.set_epoch(epoch)
        shuffled, order = list(plain), list(aware)
        assert sorted(order) == list(range(11))
        for first in (0, 4, 8):  # each chunk holds the items the plain order puts there
            assert set(order[first:first + 4]) == set(shuffled[first:first + 4])
        for first in (0, 4):  # and pairs its two shortest and its two tallest
            ranked = sorted(order[first:first + 4], key=lambda i: heights[i])
            pairs = {frozenset(order[first:first + 2]), frozenset(order[first + 2:first + 4])}
            assert pairs == {frozenset(ranked[:2]), frozenset(ranked[2:])}
        # The last chunk has 3 items: its full batch is the two shortest, the short last batch the tallest, last.
        assert set(order[8:10]) == set(sorted(shuffled[8:], key=lambda i: heights[i])[:2])
        assert heights[order[10]] == max(heights[i] for i in shuffled[8:])
    aware.set_epoch(1, start=4)
    assert list(aware) == order[4:] and len(aware) == 7
    with pytest.raises(ValueError, match="3 heights for 11 items"):
        EpochSampler(11, seed=4, heights=[1, 2, 3], batch_size=2)


def lr_by_hand(step: int, warmup: int, total: int, base: float) -> float:
    """Linear warmup, then cosine to 0, written out independently of torch's schedulers."""
    if step < warmup:
        return base * (step + 1) / (warmup + 1)
    return base * 0.5 * (1.0 + math.cos(math.pi * min(1.0, (step - warmup) / max(1, total - warmup))))


def schedule(warmup: int, total: int, base: float = 0.002) -> tuple[torch.optim.Optimizer, LRScheduler]:
    optimizer = torch.optim.AdamW([torch.nn.Parameter(torch.zeros(2))], lr=base)
    return optimizer, warmup_cosine(optimizer, warmup, total)


def lrs(optimizer: torch.optim.Optimizer, scheduler: LRScheduler, steps: int) -> list[float]:
    """The LR each of the next `steps` optimiser steps uses, stepping the scheduler after each as training does."""
    seen = []
    for _ in range(steps):
        seen.append(optimizer.param_groups[0]["lr"])
        optimizer.step()
        scheduler.step()
    return seen


@pytest.mark.parametrize(("warmup", "total"), [(3, 13), (0, 10), (1, 7), (20, 12), (50, 2940)])
def test_warmup_then_cosine_matches_the_formula(warmup: int, total: int) -> None:
    optimizer, scheduler = schedule(warmup, total)
    got = lrs(optimizer, scheduler, total + 1)
    expected = [lr_by_hand(step, warmup, total, 0.002) for step in range(total + 1)]
    assert got == pytest.approx(expected, rel=1e-12, abs=1e-18)
    if (warmup, total) == (3, 13):  # the figures themselves: 1/4, 2/4, 3/4 of the base LR, the peak, half-way, 0
        assert got[:4] == pytest.approx([0.0005, 0.001, 0.0015, 0.002], rel=1e-15)
        assert got[8] == pytest.approx(0.001, rel=1e-12)
    if warmup == 0:
        assert got[0] == 0.002  # no warmup: the first step runs at the full base LR
    if total > warmup:
        decay = got[warmup : total + 1]
        assert decay[-1] == 0.0 and all(a > b for a, b in zip(decay[:-1], decay[1:], strict=True))


@pytest.mark.parametrize(("warmup", "stop"), [(4, 2), (4, 4), (4, 9), (0, 5)])
def test_schedule_resumes_bit_identically_from_its_state(warmup: int, stop: int, tmp_path: Path) -> None:
    total = 16
    uninterrupted = lrs(*schedule(warmup, total), total)
    optimizer, scheduler = schedule(warmup, total)
    before = lrs(optimizer, scheduler, stop)
    torch.save({"optimizer": optimizer.state_dict(), "scheduler": scheduler.state_dict()}, tmp_path / "state.pt")
    state = torch.load(tmp_path / "state.pt", weights_only=True)
    # A fresh process's order: build both, then load the optimiser and the scheduler state as train_stage does.
    optimizer, scheduler = schedule(warmup, total)
    optimizer.load_state_dict(state["optimizer"])
    scheduler.load_state_dict(state["scheduler"])
    assert scheduler.last_epoch == stop
    after = lrs(optimizer, scheduler, total - stop)
    assert before + after == uninterrupted  # exact float equality, step for step
    assert after == pytest.approx([lr_by_hand(s, warmup, total, 0.002) for s in range(stop, total)], rel=1e-12)


def test_accumulation_matches_one_big_batch(binary_set: Path) -> None:
    data = SegmentationSet(binary_set, "train", binary=True, crop_width=128, seed=0, max_items=2)
    data.rows = data.rows.iloc[[0, 1]]  # both 64 rows tall after the crop: no padding difference
    loss_fn = TverskyLoss(0.3, 0.7, "binary")
    weights = []
    for batch_size, accumulation in [(2, 1), (1, 2)]:
        torch.manual_seed(0)
        model = build_model(ModelParams(channels=[4, 8, 8, 16, 32], attention_layers=1,
                                        attention_heads=2), 1)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: 1.0)
        loader = DataLoader(data, batch_size=batch_size, collate_fn=pad_collate)
        out = train_one_epoch(model, loader, loss_fn, optimizer, scheduler, accumulation, torch.device("cpu"), Amp())
        assert out["optimizer_steps"] == 1 and scheduler.last_epoch == 1
        weights.append(torch.cat([p.detach().flatten() for p in model.parameters()]))
    torch.testing.assert_close(weights[0], weights[1], rtol=1e-5, atol=1e-6)


def iou_by_hand(pred: np.ndarray, truth: np.ndarray, valid: np.ndarray, classes: int) -> list[float]:
    """Per-class IoU over the valid pixels, counted with numpy set operations (NaN for an empty union)."""
    ious = []
    for k in range(classes):
        is_pred, is_true = (pred == k) & valid, (truth == k) & valid
        union = int((is_pred | is_true).sum())
        ious.append(int((is_pred & is_true).sum()) / union if union else math.nan)
    return ious


@pytest.mark.parametrize("classes", [1, NUM_CLASSES])
def test_evaluate_reports_pooled_iou_of_valid_pixels(multiclass_set: Path, binary_set: Path, classes: int) -> None:
    # Three logs of different sizes in batches of 2: the smaller of a batch is padded, and padding must not count.
    data = SegmentationSet(binary_set if classes == 1 else multiclass_set, "train", binary=classes == 1,
                           crop_width=0, seed=0, max_items=3)
    torch.manual_seed(3)
    model = build_model(ModelParams(channels=[4, 8, 8, 16, 32], attention_layers=1,
                                    attention_heads=2), classes).train()
    loader = DataLoader(data, batch_size=2, collate_fn=pad_collate)
    result = evaluate(model, loader, TverskyLoss(0.3, 0.7, "binary" if classes == 1 else "multiclass"),
                      torch.device("cpu"))
    assert model.training

    # The expected IoU from the same net's logits, counted here over the valid pixels of all batches together.
    model.eval()
    preds, truths, valids = [], [], []
    with torch.no_grad():
        for batch in loader:
            logits = model(batch["image"], batch["valid"]).numpy()
            preds.append((logits[:, 0] > 0).ravel() if classes == 1 else logits.argmax(axis=1).ravel())
            truths.append((batch["target"].numpy() > 0).ravel() if classes == 1 else batch["target"].numpy().ravel())
            valids.append(batch["valid"].numpy().ravel() > 0)
    pred, truth, valid = (np.concatenate(parts).astype(np.int64) for parts in (preds, truths, valids))
    valid = valid.astype(bool)
    expected = iou_by_hand(pred, truth, valid, max(2, classes))
    assert not valid.all()  # some padding was there to leave out
    assert expected != iou_by_hand(pred, truth, np.ones_like(valid), max(2, classes))  # and counting it would show
    assert list(result["iou"]) == (["background", "curve"] if classes == 1 else list(CLASSES))
    for got, want in zip(result["iou"].values(), expected, strict=True):
        assert (math.isnan(got) and math.isnan(want)) or got == pytest.approx(want, rel=1e-12)
    present = [v for v in expected if not math.isnan(v)]
    assert result["miou"] == pytest.approx(sum(present) / len(present), rel=1e-12)
    assert result["loss"] > 0


def test_checkpoint_round_trip_restores_rng(tmp_path: Path) -> None:
    state = {"model": {"w": torch.arange(3.0)}, "optimizer": {}, "scheduler": {}, "epoch": 1, "step_in_epoch": 2,
             "global_step": 3, "rng": rng_state(), "history": [{"epoch": 1, "val_iou": [0.5, None]}]}
    expected = (np.random.random(), torch.rand(1))
    save_checkpoint(tmp_path / "c" / "last.pt", state)
    loaded = load_checkpoint(tmp_path / "c" / "last.pt")
    restore_rng_state(loaded["rng"])
    assert (np.random.random(), torch.rand(1)) == expected
    assert loaded["history"] == state["history"] and torch.equal(loaded["model"]["w"], state["model"]["w"])
    with pytest.raises(ValueError, match="lacks"):
        save_checkpoint(tmp_path / "bad.pt", {"model": {}})


class Interrupt(Exception):
    """Stands in for a crash part-way through a run."""


def final_weights(out_dir: Path) -> dict[str, torch.Tensor]:
    return torch.load(out_dir / "weights.pt", weights_only=True)


@pytest.mark.parametrize("every", [1, 0])
def test_resume_after_interruption_is_bit_identical(binary_set: Path, tmp_path: Path, every: int) -> None:
    # With a moving average of the weights, whose state the checkpoint carries too.
    cfg = settings("train_binary.epochs=2", "train_binary.batch_size=1", "train_binary.accumulation=2",
                   "train_binary.warmup_steps=1", "train_binary.crop_width=128", "train_binary.ema_decay=0.9",
                   f"train_binary.checkpoint_every_steps={every}")
    uninterrupted = train_stage(cfg, "binary", binary_set, tmp_path / "a")
    seen: list[int] = []

    def crash(info: dict) -> None:
        seen.append(info["epoch"])
        if seen.count(2) == 2:  # two optimiser steps into epoch 2 (5 batches, accumulation 2 -> 3 steps)
            raise Interrupt

    with pytest.raises(Interrupt):
        train_stage(cfg, "binary", binary_set, tmp_path / "b", on_step=crash)
    position = load_checkpoint(tmp_path / "b" / "checkpoints" / "last.pt")
    assert (position["epoch"], position["step_in_epoch"]) == ((1, 4) if every else (1, 0))
    resumed = train_stage(cfg, "binary", binary_set, tmp_path / "b", resume=True)
    a, b = final_weights(tmp_path / "a"), final_weights(tmp_path / "b")
    assert a.keys() == b.keys()
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert [r["epoch"] for r in resumed["history"]] == [1, 2]
    timeless = [{k: v for k, v in run["history"][0].items() if k != "seconds"} for run in (resumed, uninterrupted)]
    assert timeless[0] == timeless[1]
    assert math.isclose(resumed["final"]["train_loss"], uninterrupted["final"]["train_loss"], rel_tol=1e-12)


def test_a_finished_training_resumed_reports_the_training_time_not_the_calls(binary_set: Path, tmp_path: Path) -> None:
    """Resumed from its last checkpoint, a finished training returns at once; `training_s` stays the first run's."""
    cfg = settings("train_binary.epochs=1", "train_binary.crop_width=128")
    first = train_stage(cfg, "binary", binary_set, tmp_path / "m", resume=True)
    again = train_stage(cfg, "binary", binary_set, tmp_path / "m", resume=True)
    assert again["training_s"] == first["training_s"] == first["history"][0]["seconds"] > 0


@pytest.fixture
def one_thread() -> Iterator[None]:
    """One intra-op thread for the test: three runs with 2 loader workers stay quick on 2 cores shared with others.

    On this machine, with other processes on both cores, 2 OpenMP threads made these runs about 6 times slower
    than 1. Every run of the test uses the same thread count, so the bit-identity it checks is unaffected.
    """
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.mark.usefixtures("one_thread")
def test_resume_mid_epoch_under_the_cpu_profile_data_settings(binary_set: Path, tmp_path: Path) -> None:
    # The cpu profile's data pipeline (batches of 4, 6 crops per log, 256-px crops) with 2 loader workers, on
    # tiny logs (two are narrower than the crop and 96 rows tall, so batches are padded) and a tiny net.
    cfg = load_settings(PARAMS_YAML, profile="cpu", overrides=[
        *TINY_MODEL, "train_binary.num_workers=2", "train_binary.epochs=2", "train_binary.warmup_steps=3",
        "train_binary.checkpoint_every_steps=2"])
    params = cfg.train_binary
    assert (params.batch_size, params.accumulation, params.crops_per_log, params.crop_width) == (4, 1, 6, 256)
    uninterrupted = train_stage(cfg, "binary", binary_set, tmp_path / "a")
    steps: list[tuple[int, int]] = []

    def crash(info: dict) -> None:
        steps.append((info["epoch"], info["step_in_epoch"]))
        if steps[-1] == (2, 5):  # 5 logs x 6 crops = 30 items: 8 batches of 4 per epoch
            raise Interrupt

    with pytest.raises(Interrupt):
        train_stage(cfg, "binary", binary_set, tmp_path / "b", on_step=crash)
    # Checkpoints every 2 optimiser steps: the last one before the crash is global step 12, batch 4 of epoch 2.
    position = load_checkpoint(tmp_path / "b" / "checkpoints" / "last.pt")
    assert (position["epoch"], position["step_in_epoch"], position["global_step"]) == (1, 4, 12)
    resumed = train_stage(cfg, "binary", binary_set, tmp_path / "b", resume=True)
    a, b = final_weights(tmp_path / "a"), final_weights(tmp_path / "b")
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    for left, right in zip(resumed["history"], uninterrupted["history"], strict=True):
        assert {k: v for k, v in left.items() if k not in ("seconds", "train_loss")} == \
            {k: v for k, v in right.items() if k not in ("seconds", "train_loss")}
        assert math.isclose(left["train_loss"], right["train_loss"], rel_tol=1e-12)


@pytest.mark.parametrize("decay", [0.75, 0.0])
def test_the_stage_saves_the_moving_average_of_its_weights(binary_set: Path, tmp_path: Path, decay: float) -> None:
    # Two optimiser steps (5 logs in batches of 3). The checkpoint after step 1 holds the weights w1, the last
    # one w2; the average is w1 at step 1 (a copy), then decay * w1 + (1 - decay) * w2. Decay 0 saves w2.
    cfg = settings("train_binary.epochs=1", "train_binary.batch_size=3", "train_binary.accumulation=1",
                   "train_binary.crop_width=128", "train_binary.checkpoint_every_steps=1",
                   f"train_binary.ema_decay={decay}")
    checkpoint = tmp_path / "out" / "checkpoints" / "last.pt"
    after_step: list[dict[str, torch.Tensor]] = []
    train_stage(cfg, "binary", binary_set, tmp_path / "out",
                on_step=lambda info: after_step.append(load_checkpoint(checkpoint)["model"]))
    w1, w2 = after_step[0], load_checkpoint(checkpoint)["model"]
    saved = final_weights(tmp_path / "out")
    assert len(after_step) == 2 and not torch.equal(w1["stem.conv1.0.weight"], w2["stem.conv1.0.weight"])
    for name, tensor in saved.items():
        expected = decay * w1[name] + (1 - decay) * w2[name] if decay else w2[name]
        torch.testing.assert_close(tensor, expected, rtol=1e-5, atol=1e-7)


def test_resume_refuses_other_settings(binary_set: Path, tmp_path: Path) -> None:
    train_stage(settings(), "binary", binary_set, tmp_path / "m")
    with pytest.raises(ValueError, match="other settings"):
        train_stage(settings("train_binary.lr=0.1"), "binary", binary_set, tmp_path / "m", resume=True)


def test_binary_then_multiclass_stage(binary_set: Path, multiclass_set: Path, tmp_path: Path) -> None:
    cfg = settings()
    epochs: list[int] = []
    binary = train_stage(cfg, "binary", binary_set, tmp_path / "bin", on_epoch_end=lambda e, rec: epochs.append(e))
    assert epochs == [1] and Path(binary["weights"]).is_file()
    record = binary["final"]
    assert set(record) == {"epoch", "train_loss", "val_loss", "val_iou", "lr", "seconds"}
    assert list(record["val_iou"]) == ["background", "curve"]
    assert json.loads((tmp_path / "bin" / "history.json").read_text()) == binary["history"]

    # Initialisation: every tensor comes from the binary weights. The head has 4 logits per class (one per pixel
    # of a 2 x 2 space-to-depth cell): each curve style starts as the binary head's 4 minus log 5, background and
    # other ink at weight 0 and bias -log 2.
    multi = build_model(cfg.model, NUM_CLASSES)
    loaded = load_matching_weights(multi, tmp_path / "bin")
    source = final_weights(tmp_path / "bin")
    state = multi.state_dict()
    assert sorted(loaded) == sorted(state)
    assert all(torch.equal(state[name], source[name]) for name in loaded if not name.startswith("head."))
    assert source["head.weight"].shape[0] == 4 and state["head.weight"].shape[0] == 4 * NUM_CLASSES
    for k, name in enumerate(CLASSES):
        weight, bias = state["head.weight"][4 * k:4 * k + 4], state["head.bias"][4 * k:4 * k + 4]
        if name in STYLES:
            assert torch.equal(weight, source["head.weight"])
            torch.testing.assert_close(bias, source["head.bias"] - math.log(5), rtol=0, atol=1e-6)
        else:
            assert not weight.any()
            torch.testing.assert_close(bias, torch.full((4,), -math.log(2)), rtol=0, atol=1e-6)
    # The seeded softmax gives exactly the binary model's curve probability, summed over the curve styles.
    probe = torch.rand(1, 1, 64, 64, generator=torch.Generator().manual_seed(0))
    binary_model = load_model(tmp_path / "bin")
    with torch.no_grad():
        p_curve = torch.sigmoid(binary_model(probe))[:, 0]
        p_multi = torch.softmax(multi.eval()(probe), dim=1)[:, [CLASSES.index(s) for s in STYLES]].sum(dim=1)
    torch.testing.assert_close(p_multi, p_curve, rtol=1e-5, atol=1e-6)

    result = train_stage(cfg, "multiclass", multiclass_set, tmp_path / "multi", init_weights=tmp_path / "bin")
    model = load_model(tmp_path / "multi")
    assert model.num_classes == NUM_CLASSES and result["wall_clock_s"] > 0
    assert list(result["final"]["val_iou"]) == list(CLASSES)
    assert json.loads((tmp_path / "multi" / "model.json").read_text())["classes"] == list(CLASSES)


def test_init_from_other_architecture_fails(tmp_path: Path) -> None:
    other = ModelParams(channels=[8, 8, 8, 16, 32], attention_layers=2, attention_heads=2)
    save_model(tmp_path, build_model(other, 1), other, 1)
    with pytest.raises(ValueError, match="same params.yaml `model:`"):
        load_matching_weights(build_model(settings().model, NUM_CLASSES), tmp_path)
