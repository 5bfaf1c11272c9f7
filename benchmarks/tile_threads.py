"""A mirrored strip read before and after the tiles went through the net side by side, one torch thread each.

    python benchmarks/tile_threads.py --model MODEL_DIR [--commit COMMIT] [--pairs 5] [--scan SCAN.tif]

One model (the trained `cpu` model: speed and bytes depend on its weights only through the reading) reads a
640 x 12,800 strip with test-time mirroring (the `cpu` profile's tiles of 2,048 with 128 overlap, the device's
precision), in one process:

- `before`: `reading/predict.py` at `--commit` (git show), each tile on every torch thread (one per core);
- `after`: this checkout's, the tiles side by side in one Python thread per torch thread, each on one;
- `on one thread`: this checkout's with torch on one thread (as the evaluate stage's and the archive's workers read).

`before` and `after` alternate in `--pairs` pairs (wall seconds of the read). The probabilities are compared
byte for byte: `after` should equal `on one thread`, which does not depend on the core count; `before` does.
Peak memory of the read, each way: the resident set of a fresh process that reads the strip once, less that of one
that loads the same model and strip and does not (`--peak`).
The strip is `speed._strip` (a synthetic grid with three traces) or the first 12,800 columns of `--scan`.
Writes `results/tile_threads.{json,md}`.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch
from _baseline import baseline_module
from _record import load_note, machine, markdown_table, write_results
from speed import OVERLAP, STRIP, TILE, _strip

from veernet_pipeline.config import load_settings
from veernet_pipeline.io.tiff import decode_colour
from veernet_pipeline.model.veernet import load_model
from veernet_pipeline.reading import predict

HERE = Path(__file__).resolve().parent
REPO = HERE.parent


def timed(read: Callable[[], np.ndarray]) -> tuple[float, np.ndarray]:
    started = time.perf_counter()
    probs = read()
    return time.perf_counter() - started, probs


def peak_mb(model: Path, commit: str, scan: Path | None, which: str, read: bool) -> float:
    """Peak resident MB of a fresh process that loads the model and the strip and, if `read`, reads it `which` way."""
    args = [sys.executable, __file__, "--model", str(model), "--commit", commit, "--peak", which,
            *(["--read"] if read else []), *(["--scan", str(scan)] if scan else [])]
    return float(subprocess.run(args, check=True, capture_output=True, text=True, cwd=HERE).stdout.split()[-1])


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, required=True, help="model folder (weights.pt + model.json)")
    parser.add_argument("--commit", default="d898a9c", help="the code before the change")
    parser.add_argument("--pairs", type=int, default=5)
    parser.add_argument("--scan", type=Path, help="read this scan's first 12,800 columns instead of a synthetic strip")
    parser.add_argument("--out", type=Path, default=HERE / "results")
    parser.add_argument("--peak", choices=["before", "after"], help="(internal) print this process's peak MB")
    parser.add_argument("--read", action="store_true", help="(internal) with --peak: read the strip")
    args = parser.parse_args(argv)
    load_before = os.getloadavg()
    settings = load_settings(REPO / "params.yaml", "cpu")
    image = decode_colour(args.scan)[0][:, :STRIP[1]] if args.scan else _strip(settings.seed)
    model = load_model(args.model)
    old = baseline_module("veernet_pipeline/reading/predict.py", "before_predict", args.commit)
    threads = torch.get_num_threads()

    def read(module: Any) -> Callable[[], np.ndarray]:
        return lambda: module.predict_probs(model, image, TILE[1], OVERLAP, mirror=True)

    if args.peak:
        if args.read:
            read(old if args.peak == "before" else predict)()
        # VmHWM, not ru_maxrss: a child's ru_maxrss starts from its parent's resident set at the fork (this
        # benchmark's, 2 GB), and execve keeps it.
        status = Path("/proc/self/status").read_text()
        print(int(next(line.split()[1] for line in status.splitlines() if line.startswith("VmHWM:"))) / 1024)
        return {}

    read(predict)()  # warm-up: weights cast, allocator grown
    seconds: dict[str, list[float]] = {"before": [], "after": [], "on one thread": []}
    probs: dict[str, np.ndarray] = {}
    for _ in range(args.pairs):
        for name, module in (("before", old), ("after", predict)):
            wall, probs[name] = timed(read(module))
            seconds[name].append(wall)
    torch.set_num_threads(1)
    try:
        for _ in range(2):
            wall, probs["on one thread"] = timed(read(predict))
            seconds["on one thread"].append(wall)
    finally:
        torch.set_num_threads(threads)
    memory = {which: peak_mb(args.model, args.commit, args.scan, which, True)
              - peak_mb(args.model, args.commit, args.scan, which, False) for which in ("before", "after")}
    same = {f"{a} = {b}": bool(np.array_equal(probs[a], probs[b]))
            for a, b in (("after", "on one thread"), ("before", "on one thread"))}
    largest = float(np.abs(probs["before"] - probs["on one thread"]).max())
    record = machine(load_before)
    median = {name: statistics.median(values) for name, values in seconds.items()}
    document = {"strip": list(image.shape), "scan": str(args.scan) if args.scan else None, "threads": threads,
                "commit": args.commit, "pairs": args.pairs, "seconds": seconds, "median_seconds": median,
                "after_against_before": median["before"] / median["after"], "probabilities_equal": same,
                "before_largest_difference": largest, "read_peak_mb": memory, "machine": record}
    rows = [[name, " / ".join(f"{s:.2f}" for s in values), f"{median[name]:.2f}",
             f"{median['before'] / median[name]:.2f}x"] for name, values in seconds.items()]
    strip = f"the first {image.shape[1]:,} columns of {args.scan.name}" if args.scan else "a synthetic strip"
    body = (f"A mirrored {image.shape[0]} x {image.shape[1]:,} read ({strip}) by the trained model, {threads} torch "
            f"threads, in one process; `before` (predict.py at {args.commit}) and `after` in {args.pairs} alternating "
            f"pairs. {load_note(record)}\n\n"
            + markdown_table(["reading", "wall seconds", "median", "against before"], rows, {1, 2, 3})
            + "\n\nProbabilities byte for byte: " + "; ".join(f"{k} {'yes' if v else 'no'}" for k, v in same.items())
            + f" (before's largest difference from one thread: {largest:.4f}). Peak memory of the read (fresh process, "
            f"less one that does not read): before {memory['before']:,.0f} MB, after {memory['after']:,.0f} MB.\n")
    write_results(args.out, "tile_threads", document, "Tiles side by side, one torch thread each", body)
    return document


if __name__ == "__main__":
    main()
