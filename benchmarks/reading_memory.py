"""Peak memory of one scan's reading against its size, in a fresh process on one thread (as a reading worker).

    python benchmarks/reading_memory.py --model MODEL_DIR [--set DIR] [--logs 000013 000850]

Each of `--logs` (own test logs of the `cpu` set: the default a 3-curve and a 5-curve track) is tiled along
depth and padded with paper across the track to each size of `SIZES`, and read once by
`inference.digitize.digitize_scan` with the `cpu` profile's reading (tiles, mirroring, path search) in a fresh
process on one torch thread. The read's memory is that process's peak resident set (VmHWM) less the peak of one
that loads the same model and image and does not read. A least-squares line through the reads gives MB per
million pixels and MB per scan; `inference.readers` budgets each scan at `READ_MB_PER_MPX` and `READ_SCAN_MB`,
which the table checks against every read (the estimate must not fall below one). A loaded worker's own peak
(`WORKER_MB`: torch and the model, no scan yet) is near the non-reading process with the smallest image.
Writes `results/reading_memory.{json,md}`.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
from _record import load_note, machine, markdown_table, write_results

from veernet_pipeline.inference.readers import READ_MB_PER_MPX, READ_SCAN_MB, WORKER_MB, reading_mb

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
# (rows, columns): strips of a track's usual height and a tall one, 6,400 to 102,400 columns (a 10,000 ft log at
# 1:240 and 200 dpi is about 100,000 columns).
SIZES = [(563, 6_400), (563, 12_800), (563, 25_600), (1_024, 12_800), (1_024, 25_600), (563, 51_200), (563, 102_400)]


def peak(model: Path, set_dir: Path, log: str, rows: int, columns: int, read: bool) -> dict[str, float]:
    """Peak MB (VmHWM) and read seconds of a fresh one-thread process that loads and, if `read`, reads the image."""
    args = [sys.executable, __file__, "--model", str(model), "--set", str(set_dir), "--child", log, str(rows),
            str(columns), *(["--read"] if read else [])]
    done = subprocess.run(args, check=True, capture_output=True, text=True, cwd=HERE,
                          env={**os.environ, "OMP_NUM_THREADS": "1"})
    return json.loads(done.stdout.splitlines()[-1])


def child(model_dir: Path, set_dir: Path, log: str, rows: int, columns: int, read: bool) -> None:
    import torch

    from veernet_pipeline.config import load_settings
    from veernet_pipeline.inference.digitize import digitize_scan
    from veernet_pipeline.io.calibration import Calibration
    from veernet_pipeline.io.tiff import decode_colour
    from veernet_pipeline.model.veernet import load_model

    torch.set_num_threads(1)
    settings = load_settings(REPO / "params.yaml", "cpu")
    track = decode_colour(set_dir / f"{log}.tif")[0]
    image = np.tile(track, (1, -(-columns // track.shape[1])))[:rows, :columns]
    image = np.ascontiguousarray(np.pad(image, ((0, rows - image.shape[0]), (0, 0)), constant_values=255))
    model = load_model(model_dir)
    started = time.perf_counter()
    if read:
        digitize_scan(model, image, Calibration.from_file(set_dir / f"{log}.calib.json"), settings.infer.tile_width,
                      settings.infer.tile_overlap, settings.extract, max_height=settings.infer.max_height)
    status = Path("/proc/self/status").read_text()
    hwm_kb = int(next(line.split()[1] for line in status.splitlines() if line.startswith("VmHWM:")))
    print(json.dumps({"peak_mb": hwm_kb / 1024, "seconds": time.perf_counter() - started}))


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, required=True, help="model folder (weights.pt + model.json)")
    parser.add_argument("--set", type=Path, default=REPO / "data/synthetic/multiclass", help="the `cpu` set")
    parser.add_argument("--logs", nargs="+", default=["000013", "000850"], help="test logs to tile")
    parser.add_argument("--out", type=Path, default=HERE / "results")
    parser.add_argument("--child", nargs=3, metavar=("LOG", "ROWS", "COLUMNS"), help="(internal) one process")
    parser.add_argument("--read", action="store_true", help="(internal) with --child: read the image")
    args = parser.parse_args(argv)
    args.model, args.set = args.model.resolve(), args.set.resolve()
    if args.child:
        child(args.model, args.set, args.child[0], int(args.child[1]), int(args.child[2]), args.read)
        return {}
    load_before = os.getloadavg()
    reads = []
    for log in args.logs:
        for rows, columns in SIZES:
            idle, busy = (peak(args.model, args.set, log, rows, columns, read) for read in (False, True))
            reads.append({"log": log, "rows": rows, "columns": columns, "mpx": rows * columns / 1e6,
                          "loaded_mb": idle["peak_mb"], "read_mb": busy["peak_mb"] - idle["peak_mb"],
                          "seconds": busy["seconds"], "estimate_mb": reading_mb(rows * columns)})
            print(reads[-1], flush=True)
    mpx, read_mb = np.array([r["mpx"] for r in reads]), np.array([r["read_mb"] for r in reads])
    slope, intercept = np.polyfit(mpx, read_mb, 1)
    below = [r for r in reads if r["estimate_mb"] < r["read_mb"]]
    loaded = [min(r["loaded_mb"] for r in reads), max(r["loaded_mb"] for r in reads)]
    document = {"sizes": SIZES, "logs": args.logs, "reads": reads, "fit_mb_per_mpx": slope, "fit_mb": intercept,
                "estimate": {"READ_MB_PER_MPX": READ_MB_PER_MPX, "READ_SCAN_MB": READ_SCAN_MB, "WORKER_MB": WORKER_MB},
                "estimate_below_read": len(below), "loaded_mb": loaded, "machine": machine(load_before)}
    rows = [[r["log"], f"{r['rows']:,} x {r['columns']:,}", f"{r['mpx']:.1f}", f"{r['read_mb']:,.0f}",
             f"{r['estimate_mb']:,.0f}", f"{r['seconds']:.1f}"] for r in reads]
    body = (f"One scan's reading (the `cpu` profile: tiles of 2,048, mirroring, path search) in a fresh process on one "
            f"torch thread, each of logs {', '.join(args.logs)} tiled to each size; the read's memory is the process's "
            f"peak resident set less that of one that loads the model and image and does not read. "
            f"{load_note(document['machine'])}\n\n"
            + markdown_table(["log", "rows x columns", "Mpx", "read MB", "estimate MB", "read s"], rows, {2, 3, 4, 5})
            + f"\n\nLeast squares: {slope:.1f} MB per Mpx + {intercept:.0f} MB. The estimate "
            f"(`inference.readers.reading_mb`: {READ_MB_PER_MPX:g} MB per Mpx + {READ_SCAN_MB:g} MB) is below the read "
            f"on {len(below)} of {len(reads)}. A process with the model and the image loaded, before the read: "
            f"{loaded[0]:,.0f} MB with the smallest image, {loaded[1]:,.0f} MB with the largest (a reading worker "
            f"holds no image until it reads: `WORKER_MB` {WORKER_MB:g}).\n")
    write_results(args.out, "reading_memory", document, "Memory of one scan's reading", body)
    return document


if __name__ == "__main__":
    main()
