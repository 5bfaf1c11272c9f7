"""One epoch of the `cpu` profile's multiclass stage with today's code against a commit's, in fresh processes.

    python benchmarks/stage_previous.py COMMIT [--set-dir data/synthetic/multiclass] [--train 60] [--val 8]
        [--pairs 3] [--init DIR] [--out benchmarks/results]

`speed.py` times a training step on a fixed batch of random pixels; this times what the stage does:
the real set's crops of every height, data loading in the training process, AdamW and the scheduler.
COMMIT's tree is checked out into a temporary git worktree; each process runs `train_stage` from
that tree or today's, one epoch on the first `--train` train logs and `--val` val logs of the set
(an index of those rows beside links to the set's files), from the same weights (`--init`, a
binary model folder: the stage's own start; seeded weights without it). Per process: the median
seconds between optimiser steps after the fifth (validation and set-up left out), the epoch's
seconds (validation included) and its training loss, which must agree to float rounding. The two
codes run in `--pairs` pairs back to back, which goes first alternating; speed-ups are taken
within each pair. Writes `stage_previous.json` and `stage_previous.md` into `--out`.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from _record import load_note, machine, markdown_table, write_results

ROOT = Path(__file__).resolve().parents[1]
# Run in a fresh interpreter inside the tree under test (its params.yaml, its veernet_pipeline first on the path).
_CHILD = """
import json, sys, tempfile, time
from pathlib import Path
from veernet_pipeline.config import load_settings
from veernet_pipeline.training import recipes
set_dir, init = Path(sys.argv[1]), (Path(sys.argv[2]) if sys.argv[2] else None)
settings = load_settings(Path("params.yaml"), profile="cpu", overrides=["train_multiclass.epochs=1"])
stamps = []
with tempfile.TemporaryDirectory() as out:
    result = recipes.train_stage(settings, "multiclass", set_dir, Path(out), init_weights=init,
                                 on_step=lambda info: stamps.append(time.perf_counter()))
skip = min(5, len(stamps) - 2)  # the first steps warm up; a set of a few steps keeps what it has
gaps = [b - a for a, b in zip(stamps[skip:], stamps[skip + 1:])]
gaps.sort()
print(json.dumps({"steps": len(stamps), "step_s": gaps[len(gaps) // 2], "epoch_s": result["history"][0]["seconds"],
                  "train_loss": result["history"][0]["train_loss"]}))
"""


def subset(set_dir: Path, train: int, val: int, into: Path) -> Path:
    """A set of `set_dir`'s first `train` train and `val` val logs: its index's rows, links to its files."""
    index = pd.read_parquet(set_dir / "index.parquet")
    rows = pd.concat([index[index["split"] == "train"].head(train), index[index["split"] == "val"].head(val)])
    for path in set_dir.iterdir():
        if path.name != "index.parquet":
            (into / path.name).symlink_to(path.resolve())
    rows.to_parquet(into / "index.parquet")
    return into


def epoch(tree: Path, set_dir: Path, init: Path | None) -> dict[str, Any]:
    """One epoch of the stage in a fresh interpreter running `tree`'s code."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    done = subprocess.run([sys.executable, "-c", _CHILD, str(set_dir), str(init or "")], cwd=tree, env=env,
                          capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f"the stage's epoch in {tree} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def run(commit: str, set_dir: Path, train: int, val: int, pairs: int, init: Path | None) -> dict[str, Any]:
    """`pairs` pairs of epochs, COMMIT's code and today's, the first of each pair alternating."""
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory() as work:
        tree, small = Path(work) / "previous", Path(work) / "set"
        subprocess.run(["git", "worktree", "add", "--detach", str(tree), commit], cwd=ROOT, check=True,
                       capture_output=True)
        small.mkdir()
        try:
            subset(set_dir, train, val, small)
            runs = []
            for pair in range(pairs):
                order = ("previous", "today") if pair % 2 == 0 else ("today", "previous")
                for code in order:
                    figures = epoch(tree if code == "previous" else ROOT, small, init)
                    runs.append({"pair": pair, "code": code, **figures})
                    print(json.dumps(runs[-1]), flush=True)
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=ROOT, check=True)
    return {"commit": commit, "set_dir": str(set_dir), "train_logs": train, "val_logs": val, "pairs": pairs,
            "init": str(init) if init else None, "runs": runs, "machine": machine(load_before)}


def report(doc: dict[str, Any]) -> str:
    """Each code's medians over its processes and the speed-ups within pairs."""
    def of(code: str, key: str) -> list[float]:
        return [r[key] for r in doc["runs"] if r["code"] == code]

    rows = []
    for key, label in (("step_s", "seconds between optimiser steps (median of a process)"),
                       ("epoch_s", "epoch seconds (validation included)")):
        ratios = [p / t for p, t in zip(of("previous", key), of("today", key), strict=True)]
        rows.append([label, f"{np.median(of('previous', key)):.3f}", f"{np.median(of('today', key)):.3f}",
                     f"{np.median(ratios):.2f}x ({min(ratios):.2f}-{max(ratios):.2f})"])
    losses = sorted({f"{r['train_loss']:.9f}" for r in doc["runs"]})
    return (f"`{doc['commit'][:7]}`'s code against today's: one epoch of the `cpu` profile's multiclass stage on "
            f"the first {doc['train_logs']} train and {doc['val_logs']} val logs of `{doc['set_dir']}` "
            f"({doc['runs'][0]['steps']} optimiser steps), from {doc['init'] or 'seeded weights'}; {doc['pairs']} "
            "pairs of fresh processes back to back, which goes first alternating.\n\n"
            + markdown_table(["measure", f"{doc['commit'][:7]}", "today", "speed-up within pairs: median (range)"],
                             rows, {1, 2, 3})
            + f"\nTraining loss of the epoch, every process: {', '.join(losses)}.\n\n{load_note(doc['machine'])}\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("commit")
    parser.add_argument("--set-dir", type=Path, default=ROOT / "data" / "synthetic" / "multiclass")
    parser.add_argument("--train", type=int, default=60)
    parser.add_argument("--val", type=int, default=8)
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--init", type=Path, help="binary model folder (or weights) the stage starts from")
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "results")
    args = parser.parse_args()
    document = run(args.commit, args.set_dir.resolve(), args.train, args.val, args.pairs, args.init)
    write_results(args.out, "stage_previous", document, "The multiclass stage: a commit's code against today's",
                  report(document))


if __name__ == "__main__":
    main()
