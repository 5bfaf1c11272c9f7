"""VeerNet's speed on this CPU, before and after issue 11, against the 3x3-convolution limit measured in the same run.

    python benchmarks/speed.py [--repeats 3] [--compile] [--out DIR]

In one run, on the same machine, on 2 threads (`THREADS`) unless a row says 1:

- the limit: one 3x3 convolution (stride 1, C in and out, 160 x 512 positions) at 64 and 128
  channels in channels_last and at 16 channels in both layouts, in GFLOP/s, on 1 and 2 threads;
- the nets: "before" is main's net at `_baseline.BASELINE` (full-resolution stem, default layout,
  fp32), built from that commit's `cpu` profile; "after" is today's `model.veernet` (space-to-depth
  stem, channels_last) at the same widths. Each: forward on one 640 x 2,048 tile (the
  inference tile), forward on 4 stacked tiles (per tile), and forward + backward of the masked
  Tversky loss on a training batch of 4 crops of 640 x 256 (the `cpu` profile's batch; losses and
  targets as in training; "before" with main's one-hot loss, "after" with today's), at 1 and 2
  threads; bf16 autocast (forward; forward + backward for the record); `--compile` adds
  torch.compile (inductor) with its compile time. GFLOP from torch.utils.flop_counter
  (convolutions and matmuls; the attention's fused kernel is not counted);
- the widths the `cpu` profile could spend the speed-up on (`WIDTH_CANDIDATES`): today's net at
  each, forward + backward on the training batch at 2 threads (docs/model.md turns these into
  steps per 60 training minutes);
- one 640 x 12,800 strip read with mirroring (3 passes, tiles of 2,048 with 128 overlap): uint8
  strip in, stitched class probabilities out; before = main's `predict_probs` and net, after =
  today's (one tile per forward on CPU, `reading.predict.tiles_per_forward`), also the tiles
  stacked as on a GPU and bf16; the strip's peak memory with the `cpu` profile's net (resident set of
  a process that reads it, less that of one that builds the same net and strip and does not);
- `--previous COMMIT`: `model/veernet.py` as it was at COMMIT against today's, same weights, side by
  side in this run: the strip with the `cpu` profile's net, and forward + backward at the baseline's
  and the profile's widths (a code change's own speed-up, free of the day's machine). The file at
  COMMIT imports today's blocks and norms; a third net, today's with torch's own `nn.GroupNorm` in
  place of `model.norms.GroupNorm`, times what that module's backward buys.

Every time is the median of `--repeats` after one warm-up. Ratios compare rows of this run only.
The weights are seeded, not trained: speed does not depend on them. bf16 is measured here for speed
only; benchmarks/precision.py compares a trained net's reading in both, and `reading.predict.inference_dtype`
reads in bf16 on CPUs with bf16 instructions (the report says which this CPU reads in).
Writes `speed.json` and `speed.md` into `--out`.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import inspect
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch
from _baseline import BASELINE, baseline_model_params, baseline_module
from _record import load_note, machine, markdown_table, median_seconds, write_results
from torch import nn
from torch.utils.flop_counter import FlopCounterMode

from veernet_pipeline.allocator import keep_freed_memory
from veernet_pipeline.config import load_settings
from veernet_pipeline.io.classes import NUM_CLASSES
from veernet_pipeline.model.veernet import build_model, cell_rows
from veernet_pipeline.reading import predict
from veernet_pipeline.training.losses import TverskyLoss

PARAMS = Path(__file__).resolve().parents[1] / "params.yaml"
TILE, OVERLAP, STRIP, CROP, BATCH = (640, 2048), 128, (640, 12_800), (640, 256), 4
CONV_SHAPE = (160, 512)
THREADS = 2  # the `cpu` profile's machine: the limit, the strip and the width candidates run on 2 threads
# Widths the `cpu` profile could spend the speed-up on (docs/model.md "The cpu profile"): forward + backward only.
WIDTH_CANDIDATES = ([8, 16, 32, 64, 128], [12, 24, 48, 96, 128], [16, 32, 64, 96, 128], [16, 32, 64, 128, 128])


def gflop(func: Callable[[], Any]) -> float:
    """GFLOP that torch's flop counter sees in one call of `func`."""
    with FlopCounterMode(display=False) as counter:
        func()
    return counter.get_total_flops() / 1e9


def conv_limit(channels: int, channels_last: bool, repeats: int, threads: int) -> dict[str, Any]:
    """GFLOP/s of one 3x3 convolution, `channels` in and out, over `CONV_SHAPE` positions, on `threads` threads."""
    torch.set_num_threads(threads)
    fmt = torch.channels_last if channels_last else torch.contiguous_format
    conv = nn.Conv2d(channels, channels, 3, padding=1, bias=False).to(memory_format=fmt)
    x = torch.rand(1, channels, *CONV_SHAPE).contiguous(memory_format=fmt)
    flops = 2 * 9 * channels * channels * CONV_SHAPE[0] * CONV_SHAPE[1] / 1e9
    with torch.inference_mode():
        seconds = median_seconds(lambda: conv(x), repeats)
    return {"channels": channels, "threads": threads, "layout": "channels_last" if channels_last else "default",
            "gflop": flops, "seconds": seconds, "gflops": flops / seconds}


def autocast(bf16: bool) -> contextlib.AbstractContextManager[Any]:
    return torch.autocast("cpu", torch.bfloat16) if bf16 else contextlib.nullcontext()


def one_hot_tversky(logits: torch.Tensor, target: torch.Tensor, valid: torch.Tensor) -> torch.Tensor:
    """The masked Tversky loss as main computed it at `BASELINE`: products with a one-hot truth tensor.

    The "before" rows train with it, so their step is the step main took; today's `TverskyLoss`
    gets the same three sums without the one-hot tensor (`training.losses._inputs.overlap_sums`).
    """
    prob = torch.softmax(logits, dim=1)
    truth = torch.nn.functional.one_hot(target, logits.shape[1]).permute(0, 3, 1, 2).to(prob.dtype)
    weight = valid[:, None]
    tp = (prob * truth * weight).sum(dim=(2, 3))
    fp = (prob * (1.0 - truth) * weight).sum(dim=(2, 3))
    fn = ((1.0 - prob) * truth * weight).sum(dim=(2, 3))
    return (1.0 - (tp + 1.0) / (tp + 0.3 * fp + 0.7 * fn + 1.0)).mean()


def training_step(model: nn.Module, num_classes: int, fmt: torch.memory_format,
                  loss_fn: Callable[..., torch.Tensor] | None = None, bf16: bool = False) -> Callable[[], None]:
    """One forward + backward of `model` on a training batch of `BATCH` crops (`loss_fn` None: today's Tversky loss)."""
    crops = torch.rand(BATCH, 1, *CROP).contiguous(memory_format=fmt)
    target = torch.randint(0, max(2, num_classes), (BATCH, *CROP), generator=torch.Generator().manual_seed(0))
    valid = torch.ones(BATCH, *CROP)
    loss = loss_fn or TverskyLoss(0.3, 0.7, "binary" if num_classes == 1 else "multiclass")
    # As that code's training loop takes the step: a net that gives its logits in cell order is trained so.
    by_cell = "by_cell" in inspect.signature(model.forward).parameters
    if by_cell:
        target, valid = cell_rows(target), cell_rows(valid)

    def step() -> None:
        model.zero_grad(set_to_none=True)
        with autocast(bf16):
            logits = model(crops, valid, by_cell=True) if by_cell else model(crops, valid)
        loss(logits.float(), target, valid).backward()
    return step


def measure_net(name: str, model: nn.Module, num_classes: int, threads: int, bf16: bool, channels_last: bool,
                repeats: int, train: bool = True) -> dict[str, Any]:
    """Forward (1 and 4 tiles) and forward + backward times of `model` at `threads` threads.

    A "before" net trains with main's loss (`one_hot_tversky`), every other with today's.
    """
    torch.set_num_threads(threads)
    fmt = torch.channels_last if channels_last else torch.contiguous_format
    model = model.to(memory_format=fmt)
    tile = torch.rand(1, 1, *TILE).contiguous(memory_format=fmt)
    tiles = torch.rand(4, 1, *TILE).contiguous(memory_format=fmt)

    def forward(x: torch.Tensor, low: bool = bf16) -> Callable[[], Any]:
        def run() -> Any:
            with torch.inference_mode(), autocast(low):
                return model(x)
        return run

    model.eval()
    # FLOPs do not depend on the precision; counted in fp32 (the counter and autocast's fused attention clash).
    row: dict[str, Any] = {"net": name, "threads": threads, "bf16": bf16, "channels_last": channels_last,
                           "forward_gflop": gflop(forward(tile, False)),
                           "forward_s": median_seconds(forward(tile), repeats),
                           "forward_4_tiles_s": median_seconds(forward(tiles), repeats) / 4}
    if train:
        loss_fn = one_hot_tversky if name == "before" else None
        step = training_step(model, num_classes, fmt, loss_fn, bf16)

        model.train()
        row["train_gflop"] = gflop(training_step(model, num_classes, fmt, loss_fn, False))
        row["train_s"] = median_seconds(step, repeats)
        model.eval()
    return row


# Run in a fresh interpreter: peak resident memory of reading the strip with the `cpu` profile's net (mode "read")
# or of everything but the read (mode "setup"); the difference is what the read itself takes.
_PEAK_SCRIPT = """
import re, sys
from pathlib import Path
import torch
sys.path.insert(0, {benchmarks!r})
from speed import PARAMS, OVERLAP, TILE, THREADS, _strip
from veernet_pipeline.config import load_settings
from veernet_pipeline.io.classes import NUM_CLASSES
from veernet_pipeline.model.veernet import build_model, cell_rows
from veernet_pipeline.reading import predict
torch.set_num_threads(THREADS)
settings = load_settings(PARAMS, profile="cpu")
torch.manual_seed(settings.seed)
net = build_model(settings.model, NUM_CLASSES).eval()
image = _strip(settings.seed)
if {mode!r} == "read":
    predict.predict_probs(net, image, TILE[1], OVERLAP, mirror=True)
# VmHWM, not ru_maxrss: Linux carries ru_maxrss over from the forking parent, while exec starts a new VmHWM.
print(re.search(r"VmHWM:\\s+(\\d+) kB", Path("/proc/self/status").read_text()).group(1))
"""


def strip_peak_mb() -> dict[str, float]:
    """Peak resident MB of a process reading the mirrored strip with the `cpu` profile's net, and without the read."""
    peaks = {}
    for mode in ("setup", "read"):
        script = _PEAK_SCRIPT.format(benchmarks=str(Path(__file__).resolve().parent), mode=mode)
        out = subprocess.run([sys.executable, "-c", script], check=True, capture_output=True, text=True).stdout
        peaks[mode] = int(out.split()[-1]) / 1024
    return {"setup_mb": peaks["setup"], "read_mb": peaks["read"], "strip_mb": peaks["read"] - peaks["setup"]}


SIDE_BY_SIDE_REPEATS = 15  # the two codes alternate call by call, so a drift of the machine's speed hits both alike


def side_by_side(funcs: dict[str, Callable[[], Any]], repeats: int) -> dict[str, float]:
    """Median seconds of each of `funcs`, called in turn `repeats` times after one warm-up call each."""
    seconds: dict[str, list[float]] = {name: [] for name in funcs}
    for func in funcs.values():
        func()
    for _ in range(repeats):
        for name, func in funcs.items():
            started = time.perf_counter()
            func()
            seconds[name].append(time.perf_counter() - started)
    return {name: float(np.median(times)) for name, times in seconds.items()}


def previous_rows(commit: str, settings: Any, image: np.ndarray) -> list[dict[str, Any]]:
    """`model/veernet.py` at `commit` against today's, same weights, alternating: tile, training step, strip."""
    old = baseline_module("veernet_pipeline/model/veernet.py", "previous_veernet", commit)
    torch.set_num_threads(THREADS)
    tile = torch.rand(1, 1, *TILE).contiguous(memory_format=torch.channels_last)
    rows = []
    baseline = baseline_model_params("cpu").channels  # main's `cpu` widths at BASELINE, read from git
    for label, widths in (("baseline widths", baseline), ("cpu profile widths", settings.model.channels)):
        params = settings.model.model_copy(update={"channels": list(widths)})
        torch.manual_seed(settings.seed)
        nets = {"today": build_model(params, NUM_CLASSES)}
        nets["previous"] = old.VeerNet(params, NUM_CLASSES)
        nets["previous"].load_state_dict(nets["today"].state_dict())
        nets["torch's GroupNorm"] = copy.deepcopy(nets["today"])
        for module in nets["torch's GroupNorm"].modules():
            if isinstance(module, nn.GroupNorm):
                module.__class__ = nn.GroupNorm  # same parameters, torch's forward and backward

        def forward(net: nn.Module) -> Callable[[], Any]:
            def run() -> Any:
                with torch.inference_mode():
                    return net.eval()(tile)
            return run

        def step(net: nn.Module) -> Callable[[], Any]:
            run = training_step(net, NUM_CLASSES, torch.channels_last)
            return lambda: (net.train(), run())

        def strip(net: nn.Module) -> Callable[[], Any]:
            return lambda: predict.predict_probs(net.eval(), image, TILE[1], OVERLAP, mirror=True)

        measures = {"tile forward": forward, "forward + backward": step}
        if widths == settings.model.channels:
            measures["mirrored strip"] = strip
        for measure, make in measures.items():
            times = side_by_side({code: make(net) for code, net in nets.items()}, SIDE_BY_SIDE_REPEATS)
            rows.append({"net": label, "widths": list(widths), "measure": measure,
                         "previous_s": times["previous"], "torch_groupnorm_s": times["torch's GroupNorm"],
                         "today_s": times["today"]})
    return rows


def _strip(seed: int) -> np.ndarray:
    """A scan-like strip: paper with a grid and three dark sine traces, so the net sees ink."""
    rng = np.random.default_rng(seed)
    height, width = STRIP
    image = rng.normal(235, 6, size=(height, width)).clip(0, 255).astype(np.uint8)
    image[:, ::50], image[::64, :] = 120, 140
    cols = np.arange(width)
    for k in range(3):
        image[(height / 2 + height / 3 * np.sin(cols / rng.uniform(80, 400) + k)).astype(int), cols] = 10
    return image


def width_candidates(settings: Any, repeats: int) -> list[dict[str, Any]]:
    """Training-step time and parameters of today's net at each of `WIDTH_CANDIDATES`, `THREADS` threads."""
    rows = []
    for widths in WIDTH_CANDIDATES:
        torch.manual_seed(settings.seed)
        model = build_model(settings.model.model_copy(update={"channels": widths}), NUM_CLASSES)
        row = measure_net(f"after {widths}", model, NUM_CLASSES, THREADS, False, True, repeats)
        rows.append({**row, "channels": widths, "parameters": sum(p.numel() for p in model.parameters())})
    return rows


def read_strip(image: np.ndarray, repeats: int, read: Callable[[np.ndarray], np.ndarray]) -> float:
    """Median seconds of one mirrored read of `image` with `read`."""
    return median_seconds(lambda: read(image), repeats)


def run(repeats: int, compile_net: bool, previous: str | None = None) -> dict[str, Any]:
    """Every measurement of the module docstring, as one JSON document."""
    load_before = os.getloadavg()
    # Every row under the allocator limits the pipeline runs with (the first read would set them
    # part-way through otherwise); what the limits alone buy is benchmarks/allocator.py's.
    keep_freed_memory()
    settings = load_settings(PARAMS, profile="cpu")
    old_net_module = baseline_module("veernet_pipeline/model/veernet.py", "baseline_veernet")
    old_predict = baseline_module("veernet_pipeline/reading/predict.py", "baseline_predict")
    old_params = baseline_model_params("cpu")
    torch.manual_seed(settings.seed)
    before = old_net_module.VeerNet(old_params, 3).eval()
    # Same widths as the baseline: the rows compare architectures; `WIDTH_CANDIDATES` shows what wider nets cost.
    after = build_model(settings.model.model_copy(update={"channels": list(old_params.channels)}), NUM_CLASSES).eval()

    # On 1 thread too: the one-thread net rows are the ones a loaded machine distorts least.
    limits = [conv_limit(channels, channels_last, repeats, threads) for threads in (1, THREADS)
              for channels, channels_last in ((64, True), (128, True), (16, False), (16, True))]
    nets = []
    for threads in (1, THREADS):
        nets.append(measure_net("before", before, 3, threads, False, False, repeats))
        # The baseline's strided 1x1 shortcut crashes oneDNN's backward in channels_last: forward only.
        nets.append(measure_net("before", before, 3, threads, False, True, repeats, train=False))
        nets.append(measure_net("after", after, NUM_CLASSES, threads, False, True, repeats))
        nets.append(measure_net("after", after, NUM_CLASSES, threads, True, True, repeats))
    candidates = width_candidates(settings, repeats)
    torch.set_num_threads(THREADS)
    compiled: dict[str, Any] | None = None
    if compile_net:
        started = time.perf_counter()
        fast = torch.compile(build_model(after.params, NUM_CLASSES).eval())
        with torch.inference_mode():
            fast(torch.rand(1, 1, *TILE))
        compiled = measure_net("after, torch.compile", fast, NUM_CLASSES, THREADS, False, True, repeats)
        compiled["compile_and_first_calls_s"] = time.perf_counter() - started
        torch.set_num_threads(THREADS)

    image = _strip(settings.seed)
    plain = before.to(memory_format=torch.contiguous_format)
    after = after.to(memory_format=torch.channels_last)

    # Each row names its precision: the reading's own choice (`predict.inference_dtype`) depends on the CPU.
    def ours(net: nn.Module, dtype: torch.dtype | None, stack: int | None = None) -> Callable[[np.ndarray], Any]:
        return lambda im: predict.predict_probs(net, im, TILE[1], OVERLAP, mirror=True, stack=stack, dtype=dtype)

    # The baseline's read takes 15-30 s: one timed call after the warm-up (fp32: its code had no other).
    strips = {"before": read_strip(image, 1, lambda im: old_predict.predict_probs(plain, im, TILE[1], OVERLAP,
                                                                                    mirror=True)),
              "after": read_strip(image, repeats, ours(after, None)),
              "after, bf16": read_strip(image, repeats, ours(after, torch.bfloat16))}
    stacked = predict.TILES_PER_FORWARD["cuda"]
    strips[f"after, {stacked} tiles per forward (the GPU setting)"] = read_strip(image, repeats,
                                                                                ours(after, None, stacked))
    # The net the `cpu` profile trains (wider than the baseline's widths): what `veernet digitize` runs.
    profile_net = build_model(settings.model, NUM_CLASSES).eval().to(memory_format=torch.channels_last)
    profile = f"after, cpu profile widths {list(settings.model.channels)}"
    # fp32 and bf16 alternate read by read: the choice between them should not hang on the machine's drift.
    strips.update(side_by_side({profile: lambda: ours(profile_net, None)(image),
                                f"{profile}, bf16": lambda: ours(profile_net, torch.bfloat16)(image)}, repeats))
    previous_code = ({"commit": previous, "rows": previous_rows(previous, settings, image)}
                     if previous else None)
    return {"machine": machine(load_before), "baseline": BASELINE, "threads": THREADS, "repeats": repeats,
            "tile": TILE, "train_batch": [BATCH, *CROP], "strip": STRIP,
            "tiles_per_forward": predict.tiles_per_forward("cpu"),
            "reads_in": "bf16" if predict.inference_dtype("cpu") else "fp32",
            "conv_limit": limits, "nets": nets, "width_candidates": candidates, "compiled": compiled,
            "strip_mirrored_s": strips, "strip_peak": strip_peak_mb(), "previous": previous_code,
            "parameters": {"before": sum(p.numel() for p in before.parameters()),
                           "after": sum(p.numel() for p in after.parameters())}}


def report(doc: dict[str, Any]) -> str:
    """The markdown page: the limit, the nets with their ratios to the baseline, the widths, the strip."""
    limit_rows = [[f"{r['channels']}", str(r["threads"]), r["layout"], f"{r['gflop']:.2f}",
                   f"{r['seconds'] * 1e3:.1f}", f"{r['gflops']:.0f}"] for r in doc["conv_limit"]]
    rows = list(doc["nets"]) + ([doc["compiled"]] if doc["compiled"] else [])
    base = {r["threads"]: r for r in doc["nets"] if r["net"] == "before" and not r["channels_last"]}
    net_rows = []
    for r in rows:
        ref = base[r["threads"]]
        train = (f"{r['train_s']:.3f}", f"{r['train_gflop'] / r['train_s']:.0f}",
                 f"{ref['train_s'] / r['train_s']:.2f}x") if "train_s" in r else ("", "", "")
        net_rows.append([r["net"], str(r["threads"]), "channels_last" if r["channels_last"] else "default",
                         "bf16" if r["bf16"] else "fp32", f"{r['forward_gflop']:.1f}", f"{r['forward_s']:.3f}",
                         f"{r['forward_gflop'] / r['forward_s']:.0f}", f"{ref['forward_s'] / r['forward_s']:.2f}x",
                         f"{r['forward_4_tiles_s']:.3f}", *train])
    ref = base[doc["threads"]]
    width_rows = [[str(r["channels"]), f"{r['parameters']:,}", f"{r['forward_gflop']:.1f}", f"{r['forward_s']:.3f}",
                   f"{r['train_s']:.3f}", f"{ref['train_s'] / r['train_s']:.2f}x"] for r in doc["width_candidates"]]
    strips, peak = doc["strip_mirrored_s"], doc["strip_peak"]
    strip_rows = [[name, f"{seconds:.2f}", f"{strips['before'] / seconds:.2f}x"] for name, seconds in strips.items()]
    loads = doc["machine"]
    busiest = max(loads["load_average_before"][0], loads["load_average_after"][0])
    loads_text = (f"load average {loads['load_average_before'][0]:.1f} before and {loads['load_average_after'][0]:.1f} "
                  f"after on {loads['cpus']} CPUs")
    # The benchmark itself keeps THREADS cores busy; more than that means other work shared them.
    shared = (f"**Shared machine**: {loads_text}, so other processes took cores during the run: absolute times are "
              "pessimistic; ratios within this run are the comparable figures.\n" if busiest > THREADS + 0.5
              else f"**Quiet machine**: {loads_text} (the benchmark's own {THREADS} threads included).\n")
    return (shared
            + f"\n## The 3x3-convolution limit on this machine ({CONV_SHAPE[0]} x {CONV_SHAPE[1]} positions)\n\n"
            + markdown_table(["channels", "threads", "layout", "GFLOP", "ms", "GFLOP/s"], limit_rows, {0, 1, 3, 4, 5})
            + f"\n## The nets: one {TILE[0]} x {TILE[1]:,} tile forward; forward + backward on {BATCH} x "
              f"{CROP[0]} x {CROP[1]} crops\n\nBefore = main at `{BASELINE[:7]}` (`cpu` profile, "
              f"{doc['parameters']['before']:,} parameters), after = today's net at the same widths "
              f"({doc['parameters']['after']:,} parameters). Speed-up = before (default layout, fp32, same threads) / "
              "row.\n\n"
            + markdown_table(["net", "threads", "layout", "precision", "fwd GFLOP", "fwd s", "fwd GFLOP/s",
                              "fwd speed-up", "fwd s per tile, 4 stacked", "fwd+bwd s", "fwd+bwd GFLOP/s",
                              "fwd+bwd speed-up"], net_rows, set(range(4, 12)))
            + (f"\ntorch.compile: {doc['compiled']['compile_and_first_calls_s']:.0f} s to compile and run the first "
               "calls.\n" if doc["compiled"] else "")
            + f"\n## Widths the `cpu` profile could spend it on ({doc['threads']} threads, fp32, channels_last)\n\n"
              "Training-step speed-up against the baseline's training step on the same threads.\n\n"
            + markdown_table(["channels", "parameters", "fwd GFLOP", "fwd s", "fwd+bwd s", "fwd+bwd speed-up"],
                             width_rows, {1, 2, 3, 4, 5})
            + f"\n## One {STRIP[0]} x {STRIP[1]:,} strip with mirroring (3 passes), {doc['threads']} threads\n\n"
            + markdown_table(["read", "seconds", "speed-up"], strip_rows, {1, 2})
            + f"\nThe `cpu` profile's rows alternate read by read. This CPU reads in {doc['reads_in']} "
              "(`reading.predict.inference_dtype`: bf16 where the CPU has bf16 instructions).\n"
            + f"\nPeak memory of the read with the `cpu` profile's net: {peak['strip_mb']:,.0f} MB above the "
              f"{peak['setup_mb']:,.0f} MB of a process that builds the net and the strip ({peak['read_mb']:,.0f} MB "
              "resident at the peak).\n"
            + previous_report(doc["previous"])
            + f"\n{load_note(doc['machine'])}\n")


def previous_report(previous: dict[str, Any] | None) -> str:
    """The `--previous` section: the model code at that commit against today's, same weights, this run."""
    if previous is None:
        return ""
    table = [[f"{r['net']} {r['widths']}: {r['measure']}", f"{r['previous_s']:.3f}",
              f"{r['torch_groupnorm_s']:.3f}", f"{r['today_s']:.3f}", f"{r['previous_s'] / r['today_s']:.2f}x",
              f"{r['torch_groupnorm_s'] / r['today_s']:.2f}x"] for r in previous["rows"]]
    return (f"\n## Today's model code against `{previous['commit'][:7]}`'s, same weights, {THREADS} threads\n\n"
            f"The three alternate call by call, {SIDE_BY_SIDE_REPEATS} calls each after a warm-up; medians. "
            "Both nets run on today's blocks and norms; the middle one is today's with torch's `nn.GroupNorm`.\n\n"
            + markdown_table(["measure", "previous s", "today, torch's GroupNorm s", "today s",
                              "speed-up over previous", "over torch's GroupNorm"], table, {1, 2, 3, 4, 5}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--compile", action="store_true", help="also measure torch.compile (minutes to compile)")
    parser.add_argument("--previous", metavar="COMMIT", help="also time model/veernet.py at COMMIT side by side")
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "results")
    args = parser.parse_args()
    document = run(args.repeats, args.compile, args.previous)
    write_results(args.out, "speed", document, "VeerNet speed on CPU: before and after issue 11", report(document))


if __name__ == "__main__":
    main()
