"""Wall time of one full-size synthetic render (1,024 x 12,800 px, 5 curves): the figure a unit test used to assert.

    python benchmarks/render.py [--n 10] [--profiles test,paper] [--out DIR]

`render_instance` draws one five-curve log at the largest size the archive validation accepts,
1,024 x 12,800 px (a tall track), from the bundled wells, exactly as the synthesize stage calls it
(no checks, no writing: `synthesize.py` times those). For each profile's rendering params, one render warms up
(imports, caches) and is not counted; then instances 1..N are timed one by one, by wall clock and
by this process's CPU time. The target, under 2.0 s of wall time for one render, was the bound of
the unit test `test_full_size_render_is_fast`; speed is measured here instead, where a busy machine
makes a slow figure rather than a failed test.

Writes `render.json` and `render.md` into `--out` (default: `results/` beside this script). The
machine's load average is recorded: other processes on the same cores slow every figure.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path
from typing import Any

from _record import load_note, machine, markdown_table, write_results

from veernet_pipeline.config import Range, load_settings
from veernet_pipeline.synthetic.curves import load_wells
from veernet_pipeline.synthetic.render import render_instance

HEIGHT, WIDTH, CURVES = 1024, 12_800, 5
TARGET_SECONDS = 2.0
SEED = 0


def _run(profile: str, n: int) -> dict[str, Any]:
    """Warm up once, then time n full-size renders one by one."""
    params = load_settings(Path(__file__).resolve().parents[1] / "params.yaml", profile).synthesize
    full = params.model_copy(update={"width": Range(min=WIDTH, max=WIDTH), "height": Range(min=HEIGHT, max=HEIGHT),
                                     "tall": params.tall.model_copy(update={"share": 0.0})})
    wells = load_wells("")
    render_instance(SEED, 0, full, wells, CURVES)
    walls, cpus = [], []
    for index in range(1, n + 1):
        wall, cpu = time.perf_counter(), time.process_time()
        log = render_instance(SEED, index, full, wells, CURVES)
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
        if log.image.shape != (HEIGHT, WIDTH):
            raise RuntimeError(f"render gave {log.image.shape}, expected {(HEIGHT, WIDTH)}")
    return {"profile": profile, "n": n, "median_wall_s": round(statistics.median(walls), 4),
            "max_wall_s": round(max(walls), 4), "mean_cpu_s": round(statistics.mean(cpus), 4),
            "wall_s": [round(w, 4) for w in walls], "met": max(walls) < TARGET_SECONDS}


def _table(runs: list[dict[str, Any]]) -> str:
    header = ["Profile", "Size", "N", "Median wall s", "Max wall s", "Mean CPU s", "Target", "Met"]
    rows = [[r["profile"], f"{HEIGHT} x {WIDTH}", str(r["n"]), f"{r['median_wall_s']:.3f}", f"{r['max_wall_s']:.3f}",
             f"{r['mean_cpu_s']:.3f}", f"< {TARGET_SECONDS:.1f} s", "yes" if r["met"] else "NO"] for r in runs]
    return markdown_table(header, rows, right={2, 3, 4, 5, 6})


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10, help="timed renders per profile (default 10)")
    parser.add_argument("--profiles", default="test,paper", help="params.yaml profiles whose rendering params to use")
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "results")
    args = parser.parse_args(argv)
    load_before = os.getloadavg()
    runs = [_run(profile, args.n) for profile in args.profiles.split(",")]
    record = machine(load_before)
    document = {"target_wall_s": TARGET_SECONDS, "size": [HEIGHT, WIDTH], "runs": runs, "machine": record}
    notes = f"\nOne render warmed up first per profile (not counted). {load_note(record)}\n"
    write_results(args.out, "render", document, "One full-size synthetic render", _table(runs) + notes)
    return document


if __name__ == "__main__":
    main()
