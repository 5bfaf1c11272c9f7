"""torch's GroupNorm against `model.norms.GroupNorm` on the maps a training step normalises, side by side.

    python benchmarks/groupnorm.py [--repeats 31] [--out benchmarks/results]

For the baseline's widths and the `cpu` profile's, one forward of today's net on the training batch
(`speed.BATCH` crops of `speed.CROP`) lists the shape of every map a GroupNorm sees. For each distinct
shape, on `speed.THREADS` threads with freed memory kept (as training runs), forward + backward of one
GroupNorm over random channels_last maps is timed for: torch's `nn.GroupNorm` in channels_last (what
the net ran before), the same on a default-layout copy (what torch's kernel costs without the layout),
and ours; the three alternate call by call, so a drift of the machine's speed hits all alike. Per width,
the sum over the step's maps (each shape's median times its count) gives what the step spends in
GroupNorm each way. The largest difference of ours from torch's input gradient, relative to its
largest value, is reported per shape (float rounding only). Writes `groupnorm.json` and `groupnorm.md`.
"""

from __future__ import annotations

import argparse
import os
import time
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
import torch
from _baseline import baseline_model_params
from _record import load_note, machine, markdown_table, write_results
from speed import BATCH, CROP, PARAMS, THREADS
from torch import nn

from veernet_pipeline.allocator import keep_freed_memory
from veernet_pipeline.config import load_settings
from veernet_pipeline.io.classes import NUM_CLASSES
from veernet_pipeline.model.norms import MIN_PIXELS, GroupNorm
from veernet_pipeline.model.veernet import build_model

WAYS = ("torch, channels_last", "torch, default layout", "ours")


def step_shapes(widths: list[int]) -> Counter[tuple[int, int, int, int]]:
    """(groups, channels, height, width) of every map a GroupNorm sees in one forward on the training batch."""
    settings = load_settings(PARAMS, profile="cpu")
    torch.manual_seed(settings.seed)
    net = build_model(settings.model.model_copy(update={"channels": widths}), NUM_CLASSES).train()
    seen: Counter[tuple[int, int, int, int]] = Counter()

    def hook(module: nn.Module, inputs: tuple[torch.Tensor, ...], _: torch.Tensor) -> None:
        _, channels, height, width = inputs[0].shape
        seen[(module.num_groups, channels, height, width)] += 1

    for module in net.modules():
        if isinstance(module, nn.GroupNorm):
            module.register_forward_hook(hook)
    with torch.no_grad():
        net(torch.rand(BATCH, 1, *CROP).contiguous(memory_format=torch.channels_last))
    return seen


def time_shape(groups: int, channels: int, height: int, width: int, repeats: int) -> dict[str, Any]:
    """Median seconds of forward + backward each way, and ours' largest relative gradient difference."""
    generator = torch.Generator().manual_seed(channels * height)
    ours = GroupNorm(groups, channels)
    theirs = nn.GroupNorm(groups, channels)
    theirs.load_state_dict(ours.state_dict())
    maps = torch.randn(BATCH, channels, height, width, generator=generator)
    grad = torch.randn(BATCH, channels, height, width, generator=generator)
    inputs = {"torch, channels_last": (theirs, torch.channels_last), "torch, default layout":
              (theirs, torch.contiguous_format), "ours": (ours, torch.channels_last)}
    prepared = {way: (norm, maps.contiguous(memory_format=fmt).requires_grad_(), grad.contiguous(memory_format=fmt))
                for way, (norm, fmt) in inputs.items()}

    def run(way: str) -> torch.Tensor:
        norm, x, dy = prepared[way]
        return torch.autograd.grad(norm(x), (x, norm.weight, norm.bias), dy)[0]

    seconds: dict[str, list[float]] = {way: [] for way in WAYS}
    for way in WAYS:
        run(way)
    for _ in range(repeats):
        for way in WAYS:
            started = time.perf_counter()
            run(way)
            seconds[way].append(time.perf_counter() - started)
    reference = run("torch, channels_last")
    difference = float((run("ours") - reference).abs().max() / reference.abs().max())
    return {"groups": groups, "channels": channels, "height": height, "width": width,
            "ours_path": height * width >= MIN_PIXELS, "gradient_difference": difference,
            **{way: float(np.median(seconds[way])) for way in WAYS}}


def run(repeats: int) -> dict[str, Any]:
    """Every shape of both widths, timed three ways, and each width's sums per step."""
    load_before = os.getloadavg()
    keep_freed_memory()
    torch.set_num_threads(THREADS)
    settings = load_settings(PARAMS, profile="cpu")
    nets = []
    baseline = baseline_model_params("cpu").channels  # main's `cpu` widths at BASELINE, read from git
    for label, widths in (("baseline widths", baseline), ("cpu profile widths", settings.model.channels)):
        shapes = step_shapes(list(widths))
        rows = [{**time_shape(*shape, repeats), "count": count} for shape, count in sorted(shapes.items())]
        totals = {way: sum(row[way] * row["count"] for row in rows) for way in WAYS}
        nets.append({"net": label, "widths": list(widths), "rows": rows, "step_totals_s": totals})
    return {"threads": THREADS, "batch": [BATCH, *CROP], "repeats": repeats, "min_pixels": MIN_PIXELS,
            "nets": nets, "machine": machine(load_before)}


def report(doc: dict[str, Any]) -> str:
    """The markdown page: one table per width, each shape's milliseconds three ways, then the step's sums."""
    parts = [f"Forward + backward of one GroupNorm over {doc['batch'][0]} maps, {doc['threads']} threads, medians "
             f"of {doc['repeats']} calls alternating the three ways; ours takes its own backward on maps of at "
             f"least {doc['min_pixels']:,} pixels and torch's below.\n"]
    for net in doc["nets"]:
        rows = [[f"{r['channels']} x {r['height']} x {r['width']} ({r['groups']} groups)", str(r["count"]),
                 "own" if r["ours_path"] else "torch's", *(f"{1e3 * r[way]:.2f}" for way in WAYS),
                 f"{r['torch, channels_last'] / r['ours']:.2f}x", f"{r['gradient_difference']:.1e}"]
                for r in net["rows"]]
        totals = net["step_totals_s"]
        rows.append(["**per step (each shape x its count)**", "", "", *(f"**{1e3 * totals[way]:.1f}**" for way in WAYS),
                     f"**{totals['torch, channels_last'] / totals['ours']:.2f}x**", ""])
        parts.append(f"\n## {net['net']} {net['widths']}\n\n" + markdown_table(
            ["map (channels x height x width)", "in a step", "our backward", *(f"{way} ms" for way in WAYS),
             "ours vs torch channels_last", "input gradient, largest difference / largest value"], rows,
            {1, 3, 4, 5, 6, 7}))
    return "\n".join(parts) + f"\n{load_note(doc['machine'])}\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=31)
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "results")
    args = parser.parse_args()
    document = run(args.repeats)
    write_results(args.out, "groupnorm", document, "GroupNorm in a training step: torch's and ours", report(document))


if __name__ == "__main__":
    main()
