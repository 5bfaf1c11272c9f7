"""The measurements behind docs/libraries.md: torchmetrics for the mask scores, torch's schedulers for the LR.

    python benchmarks/libraries.py [--repeats 5] [--out DIR]

Mask scores (`evaluation.metrics.MaskScores`, torchmetrics' `MulticlassStatScores` underneath):

- agreement: on random 3-class masks with padding, its per-class tp / fp / fn equal a plain numpy
  count over the valid pixels (the bincount of the code it replaced);
- time to count one full-size log (640 x 12,800 px, 3 classes): that numpy bincount, `MaskScores`
  (our range check, then torchmetrics without its own validation), and torchmetrics with its
  validation on; beside it, the net's forward pass over the same log in 2,048-px tiles (the
  evaluate stage's tiling, no mirroring), so the counting cost can be read against a log's cost;
- the import time of torchmetrics in a fresh process (after torch);
- two behaviours the code works around, recorded as torchmetrics 1.x gives them: F1, precision and
  recall refuse `zero_division=nan`, and `validate_args=True` lets a predicted class >= C through.

LR schedule (`training.recipes.warmup_cosine`: `SequentialLR(LinearLR, CosineAnnealingLR)`): its LR at
every optimiser step against the closed form it replaced (linear warmup (s + 1) / (w + 1), then
0.5 * (1 + cos(pi * progress))), for the step counts of the profiles' training stages, estimated
from params.yaml (train logs = count x (1 - val - test): the split is by well, so real counts differ
a little).

Writes `libraries.json` and `libraries.md` into `--out` (default: `results/` beside this script).
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import torch
from _record import load_note, machine, markdown_table, median_seconds, write_results

from veernet_pipeline.config import Settings, load_settings
from veernet_pipeline.evaluation.metrics import MaskScores
from veernet_pipeline.model.veernet import build_model
from veernet_pipeline.training.recipes import warmup_cosine

PARAMS = Path(__file__).resolve().parents[1] / "params.yaml"
HEIGHT, WIDTH, CLASSES, TILE = 640, 12_800, 3, 2048
BASE_LR = 0.001


def _numpy_counts(pred: np.ndarray, true: np.ndarray, valid: np.ndarray, classes: int) -> np.ndarray:
    """tp, fp, fn per class over the valid pixels: one bincount of the (true, predicted) pairs."""
    pairs = np.bincount(true[valid] * classes + pred[valid], minlength=classes**2).reshape(classes, classes)
    tp = np.diag(pairs)
    return np.stack([tp, pairs.sum(axis=0) - tp, pairs.sum(axis=1) - tp])


def _mask_scores(repeats: int) -> dict[str, Any]:
    from torchmetrics.classification import MulticlassStatScores

    rng = np.random.default_rng(0)
    agreement = []
    for trial in range(5):
        height, width = rng.integers(20, 200, size=2)
        pred, true = rng.integers(0, CLASSES, (2, height, width))
        valid = rng.random((height, width)) > 0.2 * trial
        scores = MaskScores(CLASSES)
        scores.update(pred, true, valid)
        agreement.append(bool(np.array_equal(scores.counts(), _numpy_counts(pred, true, valid, CLASSES))))

    pred_np, true_np = rng.integers(0, CLASSES, (2, HEIGHT, WIDTH))
    valid_np = np.ones((HEIGHT, WIDTH), dtype=bool)
    pred, true, valid = torch.from_numpy(pred_np), torch.from_numpy(true_np), torch.from_numpy(valid_np)

    def validated() -> None:
        MulticlassStatScores(CLASSES, average=None, ignore_index=-1).update(pred[None], true[None])

    model = build_model(load_settings(PARAMS, "cpu").model, CLASSES).eval()
    tile = torch.rand(1, 1, HEIGHT, TILE)
    tiles = math.ceil((WIDTH - 128) / (TILE - 128))  # the evaluate stage's tiles at 128 px of overlap

    def forward() -> None:
        with torch.inference_mode():
            model(tile)

    figures = {
        "numpy_bincount_s": median_seconds(lambda: _numpy_counts(pred_np, true_np, valid_np, CLASSES), repeats),
        "mask_scores_s": median_seconds(lambda: MaskScores(CLASSES).update(pred, true, valid), repeats),
        "torchmetrics_validated_s": median_seconds(validated, repeats),
        "net_forward_per_log_s": median_seconds(forward, max(1, repeats // 2)) * tiles,
    }
    return {"agreement_with_numpy": agreement, "log": [HEIGHT, WIDTH], "classes": CLASSES, "tiles": tiles,
            **{k: round(v, 4) for k, v in figures.items()}, "import_s": _import_seconds(),
            **_behaviours()}


def _import_seconds() -> float:
    """Seconds to import torchmetrics.classification in a fresh process that has already imported torch."""
    code = ("import time, torch; t = time.perf_counter(); import torchmetrics.classification; "
            "print(time.perf_counter() - t)")
    runs = [float(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)
            for _ in range(3)]
    return round(statistics.median(runs), 3)


def _behaviours() -> dict[str, Any]:
    """What torchmetrics does with a NaN zero division and with a predicted class out of range."""
    from torchmetrics.classification import MulticlassF1Score, MulticlassStatScores

    try:
        MulticlassF1Score(CLASSES, average=None, zero_division=float("nan"))
        nan_division = "accepted"
    except ValueError as error:
        nan_division = f"refused: {error}"
    stats = MulticlassStatScores(CLASSES, average=None, validate_args=True)
    try:
        # Two pixels, both truly background; one predicted as class 3, which does not exist.
        stats.update(torch.tensor([CLASSES, 0]), torch.tensor([0, 0]))
        counts = stats.compute()[:, [0, 1, 3]].T.tolist()
        out_of_range = (f"accepted, no error; rows tp, fp, fn over classes 0..{CLASSES - 1}: {counts} (one true "
                        "class-0 pixel predicted as class 0, one true class-0 pixel predicted as the missing class)")
    except (ValueError, RuntimeError) as error:
        out_of_range = f"refused: {error}"
    return {"f1_zero_division_nan": nan_division, "predicted_class_out_of_range": out_of_range}


def _closed_form(step: int, warmup: int, total: int) -> float:
    if step < warmup:
        return (step + 1) / (warmup + 1)
    return 0.5 * (1.0 + math.cos(math.pi * min(1.0, (step - warmup) / max(1, total - warmup))))


def _stage_steps(settings: Settings, stage: str) -> tuple[int, int]:
    """(warmup, total) optimiser steps of a training stage, from the set size the profile asks for."""
    params = settings.train_binary if stage == "binary" else settings.train_multiclass
    count = settings.synthesize.binary_count if stage == "binary" else settings.synthesize.multiclass_count
    splits = settings.synthesize.splits
    train_logs = round(count * (1.0 - splits.val - splits.test))
    if params.max_train:
        train_logs = min(train_logs, params.max_train)
    batches = math.ceil(train_logs * params.crops_per_log / params.batch_size)
    return params.warmup_steps, params.epochs * math.ceil(batches / params.accumulation)


def _schedules() -> list[dict[str, Any]]:
    rows = []
    for profile in ("demo", "cpu", "paper"):
        settings = load_settings(PARAMS, profile)
        for stage in ("binary", "multiclass"):
            warmup, total = _stage_steps(settings, stage)
            optimizer = torch.optim.AdamW([torch.nn.Parameter(torch.zeros(1))], lr=BASE_LR)
            scheduler = warmup_cosine(optimizer, warmup, total)
            worst_rel, worst_abs, exact = 0.0, 0.0, 0
            for step in range(total):
                lr, want = optimizer.param_groups[0]["lr"], BASE_LR * _closed_form(step, warmup, total)
                exact += lr == want
                worst_abs = max(worst_abs, abs(lr - want) / BASE_LR)
                if want > 0:
                    worst_rel = max(worst_rel, abs(lr - want) / want)
                optimizer.step()
                scheduler.step()
            rows.append({"profile": profile, "stage": stage, "warmup": warmup, "steps": total,
                         "max_relative_deviation": worst_rel, "max_deviation_of_base_lr": worst_abs,
                         "exact_share": round(exact / total, 4), "final_lr": optimizer.param_groups[0]["lr"]})
    return rows


def _tables(masks: dict[str, Any], schedules: list[dict[str, Any]]) -> str:
    counting = [["numpy bincount (the code replaced)", f"{masks['numpy_bincount_s']:.3f}"],
                ["MaskScores: our range check + torchmetrics MulticlassStatScores", f"{masks['mask_scores_s']:.3f}"],
                ["torchmetrics with validate_args=True", f"{masks['torchmetrics_validated_s']:.3f}"],
                [f"the net's forward pass over the log ({masks['tiles']} tiles of {TILE} px, cpu-profile net)",
                 f"{masks['net_forward_per_log_s']:.3f}"]]
    lr = [[r["profile"], r["stage"], str(r["warmup"]), f"{r['steps']:,}", f"{r['max_relative_deviation']:.1e}",
           f"{r['max_deviation_of_base_lr']:.1e}", f"{r['exact_share']:.1%}", f"{r['final_lr']:.1e}"]
          for r in schedules]
    return "\n".join([
        f"## Mask scores: one {HEIGHT} x {WIDTH} log, {CLASSES} classes (median wall s)", "",
        markdown_table(["Counting", "s per log"], counting, right={1}),
        f"Counts equal to the numpy count on {len(masks['agreement_with_numpy'])} random padded masks: "
        f"{all(masks['agreement_with_numpy'])}. Importing torchmetrics.classification after torch: "
        f"{masks['import_s']:.2f} s.", "",
        f"- F1 with zero_division=nan: {masks['f1_zero_division_nan']}",
        f"- a predicted class >= C with validate_args=True: {masks['predicted_class_out_of_range']}", "",
        "## LR: torch's SequentialLR(LinearLR, CosineAnnealingLR) against the closed form", "",
        markdown_table(["Profile", "Stage", "Warmup", "Steps", "Max relative deviation", "Max deviation / base LR",
                        "Steps exactly equal", "LR after the last step"], lr, right={2, 3, 4, 5, 6, 7})])


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5, help="timed calls per figure (default 5)")
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "results")
    args = parser.parse_args(argv)
    load_before = os.getloadavg()
    masks = _mask_scores(args.repeats)
    schedules = _schedules()
    record = machine(load_before)
    import torchmetrics

    document = {"mask_scores": masks, "schedules": schedules, "torch": torch.__version__,
                "torchmetrics": torchmetrics.__version__, "torch_threads": torch.get_num_threads(), "machine": record}
    body = _tables(masks, schedules) + (f"\ntorch {torch.__version__}, torchmetrics {torchmetrics.__version__}, "
                                        f"{torch.get_num_threads()} torch threads. {load_note(record)}\n")
    write_results(args.out, "libraries", document, "Library adoption measurements (docs/libraries.md)", body)
    return document


if __name__ == "__main__":
    main()
