"""The convolutions of a training step against this machine's 3x3-convolution limit, measured in the same run.

    python benchmarks/convolutions.py [--repeats 9] [--out benchmarks/results/convolutions]

For the `cpu` profile's widths and the baseline's, one forward of today's net on the training batch
(`speed.BATCH` crops of `speed.CROP`) lists every convolution it runs (input shape, channels in and
out, kernel, stride, dilation). Each distinct one is timed alone, forward + backward (the input's
and the weight's gradients, as training needs them), channels_last, on `speed.THREADS` threads with
freed memory kept: the median of `--repeats`. GFLOP counts 2 x multiply-adds, three times the
forward's for forward + backward. The limit is `speed.conv_limit` (a 3x3 convolution at 64 and 128
channels, channels_last) at the start and at the end of the run (a drift of the machine shows as a
difference; the higher of all four is the limit), and the whole training step (`speed.training_step`) is timed
too, so the convolutions' share of it is read off one machine in one window. What it answers: how far
below the machine the step's convolutions run, i.e. how much a faster implementation of the same net
could still buy. Writes `convolutions.json` and `convolutions.md`.
"""

from __future__ import annotations

import argparse
import os
from collections import Counter
from pathlib import Path
from typing import Any

import torch
from _baseline import baseline_model_params
from _record import load_note, machine, markdown_table, median_seconds, write_results
from speed import BATCH, CROP, PARAMS, THREADS, conv_limit, training_step
from torch import nn

from veernet_pipeline.allocator import keep_freed_memory
from veernet_pipeline.config import load_settings
from veernet_pipeline.io.classes import NUM_CLASSES
from veernet_pipeline.model.veernet import build_model

# (batch, channels in, height, width, channels out, kernel, stride, padding, dilation): one convolution of the step.
Shape = tuple[int, int, int, int, int, tuple[int, int], tuple[int, int], tuple[int, int], tuple[int, int]]


def step_convolutions(net: nn.Module) -> Counter[Shape]:
    """Every convolution one forward of `net` on the training batch runs, with how often."""
    seen: Counter[Shape] = Counter()

    def hook(module: nn.Conv2d, inputs: tuple[torch.Tensor, ...], _: torch.Tensor) -> None:
        seen[(*inputs[0].shape, module.out_channels, module.kernel_size, module.stride, module.padding,
              module.dilation)] += 1

    handles = [m.register_forward_hook(hook) for m in net.modules() if isinstance(m, nn.Conv2d)]
    with torch.no_grad():
        net(torch.rand(BATCH, 1, *CROP).contiguous(memory_format=torch.channels_last))
    for handle in handles:
        handle.remove()
    return seen


def time_convolution(shape: Shape, repeats: int) -> dict[str, Any]:
    """Forward + backward of one convolution of `shape`: median seconds, GFLOP (2 x multiply-adds) and GFLOP/s."""
    batch, cin, height, width, cout, kernel, stride, padding, dilation = shape
    conv = nn.Conv2d(cin, cout, kernel, stride, padding, dilation, bias=False).to(memory_format=torch.channels_last)
    x = torch.randn(batch, cin, height, width).contiguous(memory_format=torch.channels_last).requires_grad_()
    out = conv(x)
    grad = torch.randn_like(out)
    seconds = median_seconds(lambda: torch.autograd.grad(conv(x), (x, conv.weight), grad), repeats)
    gflop = 3 * 2 * out.numel() * cin * kernel[0] * kernel[1] / 1e9
    return {"input": [batch, cin, height, width], "out_channels": cout, "kernel": list(kernel), "stride": list(stride),
            "dilation": list(dilation), "seconds": seconds, "gflop": gflop, "gflops": gflop / seconds}


def run(repeats: int) -> dict[str, Any]:
    """The limit, then per width every convolution of a step, their sums and the whole step."""
    load_before = os.getloadavg()
    keep_freed_memory()
    torch.set_num_threads(THREADS)
    limits = [conv_limit(channels, True, repeats, THREADS) for channels in (64, 128)]
    settings = load_settings(PARAMS, profile="cpu")
    widths = {"cpu profile widths": list(settings.model.channels),
              "baseline widths": list(baseline_model_params("cpu").channels)}
    nets = []
    for label, channels in widths.items():
        torch.manual_seed(settings.seed)
        net = build_model(settings.model.model_copy(update={"channels": channels}), NUM_CLASSES).train()
        net = net.to(memory_format=torch.channels_last)
        rows = [{**time_convolution(shape, repeats), "count": count}
                for shape, count in sorted(step_convolutions(net).items(), key=lambda item: -item[0][2] * item[0][3])]
        seconds = sum(row["seconds"] * row["count"] for row in rows)
        gflop = sum(row["gflop"] * row["count"] for row in rows)
        step = median_seconds(training_step(net, NUM_CLASSES, torch.channels_last), repeats)
        nets.append({"label": label, "channels": channels, "rows": rows, "conv_seconds": seconds, "conv_gflop": gflop,
                     "conv_gflops": gflop / seconds, "step_seconds": step})
    limits += [conv_limit(channels, True, repeats, THREADS) for channels in (64, 128)]
    return {"machine": machine(load_before), "threads": THREADS, "repeats": repeats, "limits": limits, "nets": nets}


def report(doc: dict[str, Any]) -> str:
    """The markdown: the limit, each width's sums against it, and each width's convolutions."""
    limit = max(row["gflops"] for row in doc["limits"])
    start, end = (" / ".join(f"{row['gflops']:.0f}" for row in part) for part in (doc["limits"][:2], doc["limits"][2:]))
    text = [f"{load_note(doc['machine'])}\n\nThe limit in this run ({doc['threads']} threads, channels_last, 3x3 "
            f"convolution at 64 / 128 channels): {start} GFLOP/s at the start, {end} at the end; the highest, "
            f"{limit:.0f}, is the limit below.\n\n"]
    text.append(markdown_table(
        ["widths", "convolutions: s per step (fwd+bwd, alone)", "GFLOP", "GFLOP/s", "of the limit",
         "whole step s", "convolutions' share of the step"],
        [[f"{net['label']} {net['channels']}", f"{net['conv_seconds']:.3f}", f"{net['conv_gflop']:.1f}",
          f"{net['conv_gflops']:.0f}", f"{net['conv_gflops'] / limit:.0%}", f"{net['step_seconds']:.3f}",
          f"{net['conv_seconds'] / net['step_seconds']:.0%}"] for net in doc["nets"]], {1, 2, 3, 4, 5, 6}))
    for net in doc["nets"]:
        text.append(f"\n### {net['label']} {net['channels']}\n\n")
        text.append(markdown_table(
            ["input (N, C, H, W)", "out", "kernel", "stride", "dilation", "count", "ms (fwd+bwd)", "GFLOP/s"],
            [[str(tuple(row["input"])), str(row["out_channels"]), "x".join(map(str, row["kernel"])),
              str(row["stride"][0]), "x".join(map(str, row["dilation"])), str(row["count"]),
              f"{1000 * row['seconds']:.2f}", f"{row['gflops']:.0f}"] for row in net["rows"]], {1, 5, 6, 7}))
    return "".join(text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "convolutions")
    args = parser.parse_args()
    doc = run(args.repeats)
    write_results(args.out, "convolutions", doc, "The training step's convolutions against the machine", report(doc))


if __name__ == "__main__":
    main()
