"""The evaluate stage's reading before and after it read each log on one torch thread in worker processes.

    git worktree add ../before <commit before the change>
    python benchmarks/evaluate_threads.py --before-code ../before --model MODEL_DIR [--max-logs 20] [--pairs 2]

Three ways of reading the first `--max-logs` logs of the own test split with one model, each in a fresh process
through `evaluate_model`, as the stage calls it:

- `before`: the `--before-code` checkout as the stage ran it, one process on torch's default threads (one per core);
- `before, one thread`: the same code with `OMP_NUM_THREADS=1`, how the docs' figures were read;
- `after`: this checkout, which reads each log on one thread in one spawned worker per core.

`before` and `after` are timed in alternating pairs (wall seconds of the whole process: start, imports, model
load, reading, scoring, writing). Each run's `per_log.csv` is compared byte for byte with the others': `after` should
equal `before, one thread`. Writes `results/evaluate_threads.{json,md}`.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from _record import load_note, machine, markdown_table, write_results
from compare_reading import CHECK_IMPORT, READ

HERE = Path(__file__).resolve().parent
REPO = HERE.parent


def run(code: Path, model: Path, set_dir: Path, out: Path, max_logs: int, threads: int | None) -> float:
    """Wall seconds of one process reading the logs with the checkout at `code` into `out` (`threads`: OMP_NUM_THREADS,
    None = torch's default)."""
    env = {key: value for key, value in os.environ.items() if key != "OMP_NUM_THREADS"}
    env["PYTHONPATH"] = str(code)
    if threads is not None:
        env["OMP_NUM_THREADS"] = str(threads)
    args = [str(model.resolve()), str(set_dir.resolve()), str(out.resolve()), "test", str(max_logs),
            str(REPO / "params.yaml"), "cpu"]
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", CHECK_IMPORT + READ, str(code), *args], check=True, env=env, cwd=code)
    return time.perf_counter() - started


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before-code", type=Path, required=True, help="a checkout of the code before the change")
    parser.add_argument("--model", type=Path, required=True, help="model folder (weights.pt + model.json)")
    parser.add_argument("--set", type=Path, default=REPO / "data" / "synthetic" / "multiclass")
    parser.add_argument("--max-logs", type=int, default=20)
    parser.add_argument("--pairs", type=int, default=2)
    parser.add_argument("--work", type=Path, default=HERE / "results" / "tmp" / "evaluate_threads")
    parser.add_argument("--out", type=Path, default=HERE / "results")
    args = parser.parse_args(argv)
    load_before = os.getloadavg()
    ways = {"before": (args.before_code.resolve(), None), "before, one thread": (args.before_code.resolve(), 1),
            "after": (REPO, None)}
    seconds: dict[str, list[float]] = {name: [] for name in ways}
    for pair in range(args.pairs):
        for name in ("before", "after"):
            code, threads = ways[name]
            seconds[name].append(run(code, args.model, args.set, args.work / f"{name}-{pair}", args.max_logs, threads))
    code, threads = ways["before, one thread"]
    seconds["before, one thread"].append(run(code, args.model, args.set, args.work / "one-thread", args.max_logs,
                                             threads))
    csv = {name: (args.work / folder / "per_log.csv").read_bytes()
           for name, folder in (("before", "before-0"), ("before, one thread", "one-thread"), ("after", "after-0"))}
    repeatable = all((args.work / f"{name}-{pair}" / "per_log.csv").read_bytes() == csv[name]
                     for name in ("before", "after") for pair in range(args.pairs))
    same = {f"{a} = {b}": csv[a] == csv[b] for a, b in (("after", "before, one thread"), ("after", "before"),
                                                         ("before", "before, one thread"))}
    record = machine(load_before)
    median = {name: statistics.median(values) for name, values in seconds.items()}
    document = {"max_logs": args.max_logs, "pairs": args.pairs, "seconds": seconds, "median_seconds": median,
                "speed_up": median["before"] / median["after"], "per_log_csv_equal": same,
                "each_way_repeatable": repeatable, "cores": len(os.sched_getaffinity(0)), "machine": record}
    rows = [[name, " / ".join(f"{s:.1f}" for s in values), f"{median[name]:.1f}",
             f"{median['before'] / median[name]:.2f}x"] for name, values in seconds.items()]
    body = (f"The first {args.max_logs} own test logs read with one model through `evaluate_model`, each way in a "
            f"fresh process ({document['cores']} cores; `before` and `after` in {args.pairs} alternating pairs). "
            f"{load_note(record)}\n\n"
            + markdown_table(["reading", "wall seconds", "median", "against before"], rows, {1, 2, 3})
            + "\n\nper_log.csv byte for byte: "
            + "; ".join(f"{pair} {'yes' if equal else 'no'}" for pair, equal in same.items())
            + f". Each way gave the same bytes in every pair: {'yes' if repeatable else 'no'}.\n")
    write_results(args.out, "evaluate_threads", document, "The evaluate stage's reading on one thread per process",
                  body)
    return document


if __name__ == "__main__":
    main()
