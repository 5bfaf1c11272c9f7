"""Synthetic generation throughput at full size: instances per second on 1 and on 2 worker processes.

    python benchmarks/synthesize.py [--n N] [--workers 1,2] [--profile NAME] [--breakdown K] [--out DIR]

Runs the multiclass generator exactly as the synthesize stage does (`generate_set` with
`CandidateMaker`: render, the archive validation and label checks, the four files and the
record), into a temporary folder that is removed afterwards, for two size mixes:

- `largest`: every instance 1,024 x 12,800 px (the widest strip, as tall as a tall track);
- `uniform`: the profile's `synthesize.width`/`height` ranges (3,200-12,800 x 480-640 in `paper`) with its
  share of tall tracks (641-1,024 px).

For each mix and worker count: wall-clock time of N instances (process start included), the
steady rate (instances completed after the first round of tasks, over the time they took, read
from the records' modification times, so the one-off cost of starting workers is left out), the
steady rate relative to 1 worker, the CPU time per instance (this process and its reaped workers,
start-up included), the disk used per instance, and the projected time for 20,000 instances: at
the steady rate, and on 2 cores nobody else uses (1-worker CPU time / 2). On a shared machine the
measured rate drops when other processes take a core; the CPU-time figure does not. A serial breakdown
(render / checks / write, and the renderer's hottest functions by cProfile) over K instances of
the largest size says where the time goes. Last, the foreign test renderer (`veernet_pipeline/foreign`)
writes `--foreign` scans of the profile's `foreign` sizes serially (it runs in one process in the
stage): scans per second, CPU s and MB per scan.

Writes `synthesize.json` and `synthesize.md` into `--out` (default: `results/` beside this script).
The machine's load average is recorded: other processes on the same cores slow every figure.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import resource
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from _record import load_note, machine, write_results

from veernet_pipeline.config import Settings, load_settings
from veernet_pipeline.foreign.dataset import evaluation_wells, render_foreign, write_scan
from veernet_pipeline.io.splits import instance_splits
from veernet_pipeline.synthetic.checks import check_candidate
from veernet_pipeline.synthetic.curves import load_wells, wells_by_split
from veernet_pipeline.synthetic.dataset import SET_SEED_OFFSETS, CandidateMaker, SetJob, curve_count, write_instance
from veernet_pipeline.synthetic.generate import RECORD_SUFFIX, generate_set
from veernet_pipeline.synthetic.render import render_instance

TARGET_INSTANCES = 20_000
TARGET_SECONDS = 3600.0
LARGEST = {"height": 1024, "width": 12800}


def _settings(profile: str, mix: str) -> Settings:
    overrides = []
    if mix == "largest":
        overrides = [f"synthesize.width={{min: {LARGEST['width']}, max: {LARGEST['width']}}}",
                     f"synthesize.height={{min: {LARGEST['height']}, max: {LARGEST['height']}}}",
                     "synthesize.tall.share=0"]
    return load_settings(Path(__file__).resolve().parents[1] / "params.yaml", profile, overrides)


def _job(settings: Settings, set_dir: Path, n: int, mix: str) -> SetJob:
    params = settings.synthesize
    seed = settings.seed + SET_SEED_OFFSETS["multiclass"]
    splits = tuple(instance_splits(n, params.splits, seed))
    return SetJob("multiclass", set_dir, seed, settings.seed, params, "", splits, settings.validate_, None,
                  f"benchmark-{mix}")


def _cpu_seconds() -> float:
    """User + system CPU time of this process and its reaped children (the pool workers)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _run(settings: Settings, n: int, workers: int, mix: str) -> dict[str, Any]:
    """Generate n candidates into a temporary folder; time them and measure their files."""
    folder = Path(tempfile.mkdtemp(prefix="veernet-bench-synth-"))
    try:
        job = _job(settings, folder, n, mix)
        cpu_before = _cpu_seconds()
        started = time.perf_counter()
        outcome = generate_set(folder, CandidateMaker(job), job.key, n, n, workers, f"{mix} x{workers}")
        wall = time.perf_counter() - started
        # The pool has exited and its workers are reaped, so their CPU time is in RUSAGE_CHILDREN.
        cpu = _cpu_seconds() - cpu_before
        done = sorted(p.stat().st_mtime_ns for p in folder.glob(f"*{RECORD_SUFFIX}"))
        # The first round of tasks carries the workers' start-up; the rest is the steady state.
        first = min(workers, n - 1)
        steady = (len(done) - 1 - first) / ((done[-1] - done[first]) / 1e9) if len(done) - 1 > first else float("nan")
        size = sum(p.stat().st_size for p in folder.iterdir() if p.is_file())
        areas = [int(c.row["width"]) * int(c.row["height"]) for c in outcome.kept + outcome.rejected]
        return {"mix": mix, "workers": workers, "n": n, "kept": len(outcome.kept), "rejected": len(outcome.rejected),
                "wall_s": round(wall, 2), "instances_per_s_wall": round(n / wall, 3),
                "instances_per_s_steady": round(steady, 3), "cpu_s_per_instance": round(cpu / n, 4),
                "mb_per_instance": round(size / n / 1e6, 3),
                "mean_megapixels": round(sum(areas) / len(areas) / 1e6, 3)}
    finally:
        shutil.rmtree(folder)


def _breakdown(settings: Settings, k: int) -> dict[str, Any]:
    """Serial CPU time per step at the largest size, and the renderer's hottest functions."""
    wells = wells_by_split(load_wells(""), settings.synthesize.splits, settings.seed)["train"]
    seed = settings.seed + SET_SEED_OFFSETS["multiclass"]
    steps = {"render_s": 0.0, "checks_s": 0.0, "write_s": 0.0}
    with tempfile.TemporaryDirectory(prefix="veernet-bench-synth-") as folder:
        for index in range(k):
            started = time.process_time()
            log = render_instance(seed, index, settings.synthesize, wells,
                                  curve_count(seed, index, settings.synthesize.curves_per_track))
            rendered = time.process_time()
            check_candidate(f"{index:06d}", log, settings.validate_)
            checked = time.process_time()
            write_instance(Path(folder), f"{index:06d}", log)
            steps["render_s"] += rendered - started
            steps["checks_s"] += checked - rendered
            steps["write_s"] += time.process_time() - checked
        # Profiled apart from the timing above: cProfile slows pure-Python code more than numpy code.
        log = _hotspots(render_instance, seed, 0, settings.synthesize, wells,
                        curve_count(seed, 0, settings.synthesize.curves_per_track))
        writing = _hotspots(write_instance, Path(folder), "profiled", log[0])
    return {"instances": k, **{name: round(value / k, 4) for name, value in steps.items()},
            "render_hotspots": log[1], "write_hotspots": writing[1]}


def _foreign(settings: Settings, n: int) -> dict[str, Any]:
    """Render and write n foreign scans serially into a temporary folder; time them and measure their files."""
    wells = evaluation_wells(settings)
    with tempfile.TemporaryDirectory(prefix="veernet-bench-foreign-") as folder:
        cpu_before, started = _cpu_seconds(), time.perf_counter()
        rows = [write_scan(Path(folder), f"{i:06d}", render_foreign(settings, i, wells)) for i in range(n)]
        wall, cpu = time.perf_counter() - started, _cpu_seconds() - cpu_before
        size = sum(p.stat().st_size for p in Path(folder).iterdir() if p.is_file())
    areas = [int(r["width"]) * int(r["height"]) for r in rows]
    return {"n": n, "bilevel": sum(r["bits"] == 1 for r in rows), "wall_s": round(wall, 2),
            "instances_per_s": round(n / wall, 3), "cpu_s_per_instance": round(cpu / n, 3),
            "mb_per_instance": round(size / n / 1e6, 3), "mean_megapixels": round(sum(areas) / n / 1e6, 3)}


def _hotspots(func: Any, *args: Any) -> tuple[Any, list[str]]:
    """Call `func(*args)` under cProfile; its result and the 10 functions with the most own time."""
    profiler = cProfile.Profile()
    result = profiler.runcall(func, *args)
    stream = io.StringIO()
    pstats.Stats(profiler, stream=stream).sort_stats("tottime").print_stats(10)
    lines = stream.getvalue().splitlines()
    start = next(i for i, line in enumerate(lines) if line.strip().startswith("ncalls")) + 1
    return result, [" ".join(line.split()) for line in lines[start:] if line.strip()]


def _table(runs: list[dict[str, Any]]) -> str:
    base = {r["mix"]: r["instances_per_s_steady"] for r in runs if r["workers"] == 1}
    lines = ["| Sizes | Workers | N | Mean Mpx | Wall s | Inst/s (wall) | Inst/s (steady) | vs 1 worker | "
             "CPU s/instance | MB/instance | 20,000 at the steady rate | 20,000 on 2 free cores (CPU time / 2) |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in runs:
        ratio = r["instances_per_s_steady"] / base[r["mix"]] if base.get(r["mix"]) else float("nan")
        lines.append(f"| {r['mix']} | {r['workers']} | {r['n']} | {r['mean_megapixels']:.2f} | {r['wall_s']:.1f} | "
                     f"{r['instances_per_s_wall']:.2f} | {r['instances_per_s_steady']:.2f} | {ratio:.2f}x | "
                     f"{r['cpu_s_per_instance']:.3f} | {r['mb_per_instance']:.2f} | "
                     f"{r['projected_20000_min']:.0f} min | {_minutes(r.get('projected_20000_min_2_cores_cpu'))} |")
    return "\n".join(lines) + "\n"


def _minutes(value: float | None) -> str:
    return "" if value is None else f"{value:.0f} min"


def _summary(runs: list[dict[str, Any]]) -> dict[str, str]:
    """The verdict against the issue's target (20,000 in one hour on 2 cores) and the disk need.

    Judged on the 1-worker CPU time per instance over 2 cores, which other processes on the same
    cores do not inflate (the 2-worker run's own CPU time is dominated by worker start-up at small
    N); the rate measured with 2 workers and its ratio to 1 worker are reported beside it.
    """
    pick = next((r for r in runs if r["mix"] == "uniform" and r["workers"] == 1), None)
    pair = next((r for r in runs if r["mix"] == "uniform" and r["workers"] == 2), None)
    if pick is None or pair is None:
        return {"verdict": "no 1- and 2-worker uniform-mix runs to judge", "disk": ""}
    minutes = pick["projected_20000_min_2_cores_cpu"]
    met = "met" if minutes * 60.0 <= TARGET_SECONDS else "NOT met"
    return {"verdict": f"20,000 uniform-mix instances on 2 free cores: {minutes:.0f} min from CPU time "
                       f"({pair['projected_20000_min']:.0f} min at the rate measured with 2 workers on this machine, "
                       f"{pair['instances_per_s_steady'] / pick['instances_per_s_steady']:.2f}x the 1-worker rate), "
                       f"target {TARGET_SECONDS / 60:.0f} min: {met}",
            "disk": f"Disk: {pick['mb_per_instance']:.2f} MB per uniform-mix instance, about "
                    f"{pick['mb_per_instance'] * TARGET_INSTANCES / 1000:.0f} GB for 20,000"}


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=24, help="instances per size mix and worker count (default 24)")
    parser.add_argument("--workers", default="1,2", help="worker counts to compare (default 1,2)")
    parser.add_argument("--profile", default="paper", help="params.yaml profile (default paper: full sizes)")
    parser.add_argument("--breakdown", type=int, default=4, help="largest-size instances timed step by step")
    parser.add_argument("--foreign", type=int, default=12, help="foreign scans rendered and written serially")
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "results")
    args = parser.parse_args(argv)
    load_before = os.getloadavg()
    runs = []
    for mix in ("largest", "uniform"):
        settings = _settings(args.profile, mix)
        for workers in (int(w) for w in args.workers.split(",")):
            run = _run(settings, args.n, workers, mix)
            run["projected_20000_min"] = round(TARGET_INSTANCES / run["instances_per_s_steady"] / 60.0, 1)
            if workers == 1:
                # Two workers each doing what one does: the figure for 2 cores nobody else uses.
                run["projected_20000_min_2_cores_cpu"] = round(
                    TARGET_INSTANCES * run["cpu_s_per_instance"] / 2.0 / 60.0, 1)
            runs.append(run)
            print(run, flush=True)
    breakdown = _breakdown(_settings(args.profile, "largest"), args.breakdown)
    foreign = _foreign(_settings(args.profile, "uniform"), args.foreign)
    print(foreign, flush=True)
    record = machine(load_before)
    summary = _summary(runs)
    document = {"runs": runs, "breakdown_largest": breakdown, "foreign": foreign, **summary, "machine": record,
                "profile": args.profile, "validate": _settings(args.profile, "uniform").section("validate")}
    table = _table(runs)
    notes = (f"\n{summary['verdict']}. {summary['disk']}.\n\nSerial breakdown at {LARGEST['height']} x "
             f"{LARGEST['width']}, CPU s per instance: render {breakdown['render_s']}, checks {breakdown['checks_s']}, "
             f"write {breakdown['write_s']}. Foreign test renderer, {foreign['n']} scans of the profile's foreign "
             f"sizes ({foreign['mean_megapixels']} Mpx mean, {foreign['bilevel']} of them 1-bit G4) in one process: "
             f"{foreign['instances_per_s']} scans/s, {foreign['cpu_s_per_instance']} CPU s and "
             f"{foreign['mb_per_instance']} MB per scan. {load_note(record)} Steady rate: instances after the first "
             "round of tasks over their time (worker start-up excluded); projections use it.\n")
    write_results(args.out, "synthesize", document, "Synthetic generation throughput", table + notes)
    return document


if __name__ == "__main__":
    main()
