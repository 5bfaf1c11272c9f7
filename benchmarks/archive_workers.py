"""The archive's digitising before and after it read each scan on one torch thread in worker processes.

    git worktree add ../before <commit before the change>
    python benchmarks/archive_workers.py --before-code ../before --model MODEL_DIR [--scans 16] [--pairs 2]

A validated manifest of the first `--scans` own test logs (the synthetic set's TIFFs as ingest's decoded scans,
their sidecars as the calibration), digitised with one model through `digitize_validated`, as the infer stage calls
it, each way in a fresh process into its own output folder:

- `before`: the `--before-code` checkout, every scan in one process on torch's default threads (one per core);
- `after`: this checkout, each scan on one thread in one spawned worker per core;
- `after, one process`: this checkout with `OMP_NUM_THREADS=1` (one thread, so one process reads every scan).

`before` and `after` are timed in alternating pairs (wall seconds of the whole process: start, imports, model load,
reading, writing); the largest resident set of the process or any of its workers is noted (ru_maxrss, which in a
child starts at its parent's resident set at the fork: smaller here than any reading's peak). Every LAS file is
compared byte for byte across the ways: `after` should equal `after, one process`; the bytes of `before` depend on
the core count. Writes `results/archive_workers.{json,md}`.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pandas as pd
from _record import load_note, machine, markdown_table, write_results
from compare_reading import CHECK_IMPORT

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
DIGITIZE = ("from veernet_pipeline.config import load_settings; "
            "from veernet_pipeline.inference.archive import digitize_validated; "
            "model, scans, out, params, profile = sys.argv[1:]; s = load_settings(Path(params), profile); "
            "digitize_validated(Path(scans), Path(scans), Path(scans), Path(model), 'bench', Path(out), s.infer, "
            "s.extract); import resource; "
            "print(max(resource.getrusage(w).ru_maxrss for w in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)))")


def write_manifest(set_dir: Path, work: Path, count: int) -> int:
    """`work/validated.parquet` naming the first `count` test logs of `set_dir` as decoded, calibrated scans; their
    pixels. The TIFFs and sidecars stay where they are: the manifest's paths are relative to `set_dir`, linked."""
    index = pd.read_parquet(set_dir / "index.parquet")
    logs = index[index["split"] == "test"].head(count)
    rows = [{"path": row.image, "sha256": hashlib.sha256((set_dir / row.image).read_bytes()).hexdigest(),
             "decoded": row.image, "calibration": row.calibration, "page_file": "",
             "calibration_sha256": hashlib.sha256((set_dir / row.calibration).read_bytes()).hexdigest()}
            for row in logs.itertuples()]
    work.mkdir(parents=True, exist_ok=True)
    for row in logs.itertuples():
        for name in (row.image, row.calibration):
            link = work / name
            if not link.exists():
                link.symlink_to((set_dir / name).resolve())
    pd.DataFrame(rows).to_parquet(work / "validated.parquet")
    return int((logs["width"] * logs["height"]).sum())


def run(code: Path, model: Path, scans: Path, out: Path, threads: int | None) -> tuple[float, float]:
    """Wall seconds of one process digitising the manifest with the checkout at `code` (`threads`: OMP_NUM_THREADS,
    None = torch's default), and the largest resident MB of it or any of its workers."""
    env = {key: value for key, value in os.environ.items() if key != "OMP_NUM_THREADS"}
    env["PYTHONPATH"] = str(code)
    if threads is not None:
        env["OMP_NUM_THREADS"] = str(threads)
    args = [str(model.resolve()), str(scans.resolve()), str(out.resolve()), str(REPO / "params.yaml"), "cpu"]
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", CHECK_IMPORT + DIGITIZE, str(code), *args], check=True, env=env,
                          cwd=code, stdout=subprocess.PIPE, text=True)
    return time.perf_counter() - started, int(done.stdout.split()[-1]) / 1024


def las_bytes(out: Path) -> dict[str, bytes]:
    """Each LAS file under `out` by its path below the output label (the label differs by checkout)."""
    return {"/".join(p.relative_to(out).parts[:1] + p.relative_to(out).parts[2:]): p.read_bytes()
            for p in sorted(out.rglob("*.las"))}


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before-code", type=Path, required=True, help="a checkout of the code before the change")
    parser.add_argument("--model", type=Path, required=True, help="model folder (weights.pt + model.json)")
    parser.add_argument("--set", type=Path, default=REPO / "data" / "synthetic" / "multiclass")
    parser.add_argument("--scans", type=int, default=16)
    parser.add_argument("--pairs", type=int, default=2)
    parser.add_argument("--work", type=Path, default=HERE / "results" / "tmp" / "archive_workers")
    parser.add_argument("--out", type=Path, default=HERE / "results")
    args = parser.parse_args(argv)
    load_before = os.getloadavg()
    scans = args.work / "scans"
    pixels = write_manifest(args.set, scans, args.scans)
    ways = {"before": (args.before_code.resolve(), None), "after": (REPO, None), "after, one process": (REPO, 1)}
    seconds: dict[str, list[float]] = {name: [] for name in ways}
    peak_mb: dict[str, float] = {}
    outputs: dict[str, list[Path]] = {name: [] for name in ways}
    for pair in range(args.pairs):
        for name in ("before", "after"):
            code, threads = ways[name]
            out = args.work / f"{name}-{pair}"
            wall, peak_mb[name] = run(code, args.model, scans, out, threads)
            seconds[name].append(wall)
            outputs[name].append(out)
    out = args.work / "after-one-process"
    wall, peak_mb["after, one process"] = run(REPO, args.model, scans, out, 1)
    seconds["after, one process"].append(wall)
    outputs["after, one process"].append(out)
    written = {name: [las_bytes(folder) for folder in folders] for name, folders in outputs.items()}
    if any(len(files) != args.scans for runs in written.values() for files in runs):
        raise AssertionError(f"not every scan was written: {[len(f) for r in written.values() for f in r]}")
    repeatable = all(files == runs[0] for runs in written.values() for files in runs)
    first = {name: runs[0] for name, runs in written.items()}

    def differing(a: str, b: str) -> int:
        return sum(first[a][key] != first[b][key] for key in first[a])

    differ = {f"{a} / {b}": differing(a, b) for a, b in (("after", "after, one process"), ("after", "before"))}
    record = machine(load_before)
    median = {name: statistics.median(values) for name, values in seconds.items()}
    document = {"scans": args.scans, "pixels": pixels, "pairs": args.pairs, "seconds": seconds,
                "median_seconds": median, "peak_process_mb": peak_mb, "speed_up": median["before"] / median["after"],
                "las_files_differing": differ, "each_way_repeatable": repeatable,
                "cores": len(os.sched_getaffinity(0)), "machine": record}
    rows = [[name, " / ".join(f"{s:.1f}" for s in values), f"{median[name]:.1f}",
             f"{median['before'] / median[name]:.2f}x", f"{peak_mb[name]:,.0f}"] for name, values in seconds.items()]
    body = (f"The first {args.scans} own test logs ({pixels / args.scans / 1e6:.2f} Mpx a scan) digitised with one "
            f"model through `digitize_validated`, each way in a fresh process ({document['cores']} cores; `before` "
            f"and `after` in {args.pairs} alternating pairs). {load_note(record)}\n\n"
            + markdown_table(["digitising", "wall seconds", "median", "against before", "largest process, MB"], rows,
                             {1, 2, 3, 4})
            + f"\n\nLAS files that differ byte for byte, of {args.scans}: "
            + "; ".join(f"{pair} {count}" for pair, count in differ.items())
            + f". Each way wrote the same bytes in every run: {'yes' if repeatable else 'no'}.\n")
    write_results(args.out, "archive_workers", document, "The archive read on one thread per worker process", body)
    return document


if __name__ == "__main__":
    main()
