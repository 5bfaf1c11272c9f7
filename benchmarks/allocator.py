"""glibc malloc's defaults against `allocator.keep_freed_memory`: training steps and a strip read, in fresh processes.

    python benchmarks/allocator.py [--pairs 3] [--steps 10] [--reads 3] [--set-dir DIR [--logs 60]] [--out DIR]

The limits are process-wide and cannot be unset, so each measurement is a fresh interpreter,
`--pairs` of them per setting, run in pairs back to back (which setting goes first alternates), so
a drift of the machine's speed hits both alike; speed-ups are taken within each pair. Each
process, on `speed.THREADS` threads, with seeded weights:

- forward + backward of the masked Tversky loss on the training batch (4 crops of 640 x 256,
  `speed.training_step`), `--steps` timed after two warm-ups, at the `cpu` profile's widths and at
  the baseline's (benchmarks/speed.py's "after" rows);
- `--reads` mirrored reads of one 640 x 12,800 strip with the `cpu` profile's net
  (`reading.predict.predict_probs`), timed after one warm-up.

With `--set-dir DIR` (a multiclass synthetic set, e.g. data/synthetic/multiclass), each process
also runs the multiclass `train_stage` of the `cpu` profile for one epoch on the set's first
`--logs` train logs (data loading, AdamW, validation and checkpoint included), from seeded weights,
and records its wall time and the SHA-256 of the weights it wrote: the limits must not change a byte.

`predict_probs` and `train_stage` set the limits themselves, so a "default" process replaces the
names they call with a function that leaves malloc alone: what the pipeline did before the module
existed. Reported per setting: the median over processes of each process's median seconds, minor
page faults per call (getrusage), the process's peak resident MB, and its resident MB after each
read (whether keeping freed memory grows it read by read); per measure, the speed-up within each
pair. Writes `allocator.json` and `allocator.md` into `--out`.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
from _baseline import baseline_model_params
from _record import load_note, machine, markdown_table, write_results
from speed import OVERLAP, THREADS, TILE, _strip, training_step

from veernet_pipeline import allocator
from veernet_pipeline.config import load_settings
from veernet_pipeline.io.classes import NUM_CLASSES
from veernet_pipeline.model.veernet import build_model
from veernet_pipeline.reading import predict
from veernet_pipeline.training import recipes

BENCHMARKS = Path(__file__).resolve().parent
PARAMS = BENCHMARKS.parent / "params.yaml"
SETTINGS = ("default", "keep_freed_memory")


def _faults() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


def _status_mb(field: str) -> float:
    """`VmRSS` (resident now) or `VmHWM` (its peak) of this process, in MB.

    VmHWM, not ru_maxrss, for the peak: Linux carries ru_maxrss over from the forking parent (speed.py's
    peak script says the same), while exec starts a new VmHWM.
    """
    status = Path("/proc/self/status").read_text()
    return int(next(line for line in status.splitlines() if line.startswith(f"{field}:")).split()[1]) / 1024


def _timed(func: Any, repeats: int, warm_ups: int) -> dict[str, float]:
    for _ in range(warm_ups):
        func()
    seconds, before = [], _faults()
    for _ in range(repeats):
        started = time.perf_counter()
        func()
        seconds.append(time.perf_counter() - started)
    return {"seconds": float(np.median(seconds)), "faults_per_call": (_faults() - before) / repeats}


def stage_epoch(set_dir: Path, logs: int) -> dict[str, Any]:
    """One epoch of the `cpu` profile's multiclass stage on the first `logs` train logs of `set_dir`."""
    settings = load_settings(PARAMS, profile="cpu", overrides=["train_multiclass.epochs=1",
                                                               f"train_multiclass.max_train={logs}"])
    with tempfile.TemporaryDirectory() as out:
        result = recipes.train_stage(settings, "multiclass", set_dir, Path(out))
        weights = hashlib.sha256(Path(result["weights"]).read_bytes()).hexdigest()
    return {"wall_clock_s": result["wall_clock_s"], "epoch_s": result["history"][0]["seconds"],
            "weights_sha256": weights}


def child(setting: str, steps: int, reads: int, set_dir: Path | None, logs: int) -> dict[str, Any]:
    """One process's measurements under `setting` (run with `--child`)."""
    if setting == "default":
        # The read and the stage call the module's name: a function that sets nothing measures glibc's defaults.
        predict.keep_freed_memory = recipes.keep_freed_memory = lambda: False
    else:
        assert allocator.keep_freed_memory(), "glibc refused the limits (see the log)"
    torch.set_num_threads(THREADS)
    settings = load_settings(PARAMS, profile="cpu")
    out: dict[str, Any] = {}
    for label, widths in (("step, cpu profile widths", settings.model.channels),
                          ("step, baseline widths", baseline_model_params("cpu").channels)):
        torch.manual_seed(settings.seed)
        net = build_model(settings.model.model_copy(update={"channels": list(widths)}), NUM_CLASSES)
        net = net.to(memory_format=torch.channels_last).train()
        out[label] = _timed(training_step(net, NUM_CLASSES, torch.channels_last), steps, 2)
        del net
    torch.manual_seed(settings.seed)
    net = build_model(settings.model, NUM_CLASSES).eval().to(memory_format=torch.channels_last)
    image = _strip(settings.seed)
    rss = []

    def read() -> None:
        predict.predict_probs(net, image, TILE[1], OVERLAP, mirror=True)
        rss.append(_status_mb("VmRSS"))
    out["mirrored strip, cpu profile widths"] = _timed(read, reads, 1)
    out["rss_after_each_read_mb"] = rss
    if set_dir is not None:
        out["stage_epoch"] = stage_epoch(set_dir, logs)
    out["peak_mb"] = _status_mb("VmHWM")
    return out


def run(pairs: int, steps: int, reads: int, set_dir: Path | None, logs: int) -> dict[str, Any]:
    """`pairs` processes per setting, alternating; every process's record and the medians."""
    processes: dict[str, list[dict[str, Any]]] = {s: [] for s in SETTINGS}
    load_before = os.getloadavg()
    for pair in range(pairs):
        # Which setting goes first alternates too, so neither always runs on the heels of the other.
        for setting in SETTINGS if pair % 2 == 0 else SETTINGS[::-1]:
            cmd = [sys.executable, __file__, "--child", setting, "--steps", str(steps), "--reads", str(reads),
                   "--logs", str(logs)] + (["--set-dir", str(set_dir.resolve())] if set_dir else [])
            done = subprocess.run(cmd, check=True, capture_output=True, text=True, cwd=BENCHMARKS)
            processes[setting].append(json.loads(done.stdout.splitlines()[-1]))
            print(f"pair {pair + 1}/{pairs} {setting}: done", file=sys.stderr)
    measures = [k for k, v in processes[SETTINGS[0]][0].items() if isinstance(v, dict) and "seconds" in v]
    medians = {s: {m: {k: float(np.median([p[m][k] for p in processes[s]])) for k in ("seconds", "faults_per_call")}
                   for m in measures} | {"peak_mb": float(np.median([p["peak_mb"] for p in processes[s]]))}
               for s in SETTINGS}
    if set_dir is not None:
        for s in SETTINGS:
            medians[s]["stage_epoch_s"] = float(np.median([p["stage_epoch"]["wall_clock_s"] for p in processes[s]]))
        digests = {p["stage_epoch"]["weights_sha256"] for s in SETTINGS for p in processes[s]}
        medians["same_weights"] = len(digests) == 1
    # The two processes of a pair ran back to back: their ratio is the least touched by the machine's drift.
    seconds = {m: lambda p, m=m: p[m]["seconds"] for m in measures}
    if set_dir is not None:
        seconds["stage_epoch"] = lambda p: p["stage_epoch"]["wall_clock_s"]
    pair_ratios = {m: [get(d) / get(k) for d, k in zip(*processes.values(), strict=True)]
                   for m, get in seconds.items()}
    return {"machine": machine(load_before), "pairs": pairs, "steps": steps, "reads": reads,
            "set_dir": str(set_dir) if set_dir else None, "logs": logs,
            "measures": measures, "medians": medians, "pair_ratios": pair_ratios, "processes": processes}


def report(doc: dict[str, Any]) -> str:
    """The markdown table: seconds, faults and ratio per measure, then memory."""
    med = doc["medians"]
    rows = []
    ratios = doc["pair_ratios"]

    def pairs(measure: str) -> str:
        r = ratios[measure]
        return f"{np.median(r):.2f}x ({min(r):.2f}-{max(r):.2f})"
    for m in doc["measures"]:
        d, k = med["default"][m], med["keep_freed_memory"][m]
        rows.append([m, f"{d['seconds']:.3f}", f"{k['seconds']:.3f}", pairs(m),
                     f"{d['faults_per_call']:,.0f}", f"{k['faults_per_call']:,.0f}"])
    weights = ""
    if "same_weights" in med:
        d, k = med["default"]["stage_epoch_s"], med["keep_freed_memory"]["stage_epoch_s"]
        rows.append([f"multiclass stage, 1 epoch on {doc['logs']} logs", f"{d:.1f}", f"{k:.1f}", pairs("stage_epoch"),
                     "", ""])
        weights = "The stage's weights: " + ("the same bytes in every process.\n\n" if med["same_weights"]
                                             else "**they differ between processes**.\n\n")
    table = markdown_table(["measure", "default s", "keep s", "speed-up per pair: median (range)",
                            "default faults/call", "keep faults/call"],
                           rows, right={1, 2, 3, 4, 5})
    rss = {s: [[round(x) for x in p["rss_after_each_read_mb"]] for p in doc["processes"][s]] for s in SETTINGS}
    return (f"{doc['pairs']} processes per setting, alternating; seconds and faults: medians over processes of "
            f"each one's median ({doc['steps']} steps, {doc['reads']} reads); speed-up: default / keep within each "
            f"pair of processes run back to back. {load_note(doc['machine'])}\n\n{table}\n{weights}"
            f"Peak resident MB (median over processes): default {med['default']['peak_mb']:.0f}, "
            f"keep_freed_memory {med['keep_freed_memory']['peak_mb']:.0f}.\n\n"
            f"Resident MB after each read, per process: default {rss['default']}; "
            f"keep_freed_memory {rss['keep_freed_memory']}.\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--reads", type=int, default=3)
    parser.add_argument("--set-dir", type=Path, help="also time one epoch of the multiclass stage on this set")
    parser.add_argument("--logs", type=int, default=60, help="train logs of --set-dir the epoch trains on")
    parser.add_argument("--child", choices=SETTINGS, help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, default=BENCHMARKS / "results")
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child, args.steps, args.reads, args.set_dir, args.logs)))
        return
    doc = run(args.pairs, args.steps, args.reads, args.set_dir, args.logs)
    write_results(args.out, "allocator", doc, "glibc malloc's defaults against keep_freed_memory", report(doc))


if __name__ == "__main__":
    main()
