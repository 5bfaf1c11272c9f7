"""Reading tracks with the path searches compiled (numba) against their numpy versions, on the net's own output.

    python benchmarks/searches.py [SET_DIR] [--model DIR] [--split val] [--max-logs 20] [--profile cpu] [--out DIR]

Each log's style probabilities are computed once as `evaluate` computes them (`_logs.read_logs`: the
profile's tiles, mirroring, the machine's read precision); the track is then read whole
(`reading.track.read_track`, every search the evaluate stage and `veernet digitize` run) three ways:
as shipped (`reading.skips` and `reading.joint`, compiled); with the joint search in numpy again
(`_joint_numpy.py`); and with both searches in numpy, as before 2026-12-07 (`_skips_numpy.py`: seven
tables of skip costs, then the column loop). The three reads rotate which goes first from log to log,
so a slow spell of a shared machine falls on all. Every log's rows and confidences must come out equal
(reported). The first compiled calls of the process (numba's compile, or its cache's load) are timed
apart, before the logs.

Writes `searches.json` and `searches.md` into `--out` (default: `results/` beside this script).
"""

from __future__ import annotations

import contextlib
import functools
import os
import time
from collections.abc import Callable
from unittest import mock

import numpy as np
from _joint_numpy import numpy_viterbi
from _logs import chosen_set, log_parser, read_logs
from _record import load_note, machine, markdown_table, write_results
from _skips_numpy import numpy_skipping_paths

from veernet_pipeline.config import ExtractParams, load_settings
from veernet_pipeline.evaluation.evaluate import select_logs
from veernet_pipeline.io.calibration import Calibration
from veernet_pipeline.reading import ghosts, paths
from veernet_pipeline.reading.track import TrackReading, read_track

# The ways a track is read: which searches run in numpy (the rest compiled).
WAYS = {"compiled": (), "joint in numpy": ("joint",), "both in numpy (before)": ("joint", "single")}


def first_calls_seconds() -> float:
    """Seconds of the process's first compiled calls on tiny tables: numba's compile or its on-disk cache's load."""
    rows = np.zeros((3, 1))
    started = time.perf_counter()
    paths.best_skipping_paths(np.zeros((1, 3, 2)), np.zeros((1, 2, 2, 2)), rows, rows, np.zeros(1, dtype=bool),
                              np.zeros(1, np.int64), 8, paths.SKIP_COLUMNS, 16.0, 1.5)
    for g in range(1, paths.MAX_JOINT + 1):
        paths.viterbi(np.zeros((1, g, 3, 2)), np.zeros((2, 2, 2)), 1.0)
    return time.perf_counter() - started


def read_with(numpy_parts: tuple[str, ...], probs: np.ndarray, calibration: Calibration,
              params: ExtractParams) -> TrackReading:
    """`read_track` with the named searches ("joint", "single") running their numpy versions."""
    with contextlib.ExitStack() as stack:
        if "joint" in numpy_parts:
            # peel (in paths) and the ghost runs' joint searches (in ghosts) call it by these two names.
            stack.enter_context(mock.patch.object(paths, "viterbi", numpy_viterbi))
            stack.enter_context(mock.patch.object(ghosts, "viterbi", numpy_viterbi))
        if "single" in numpy_parts:
            stack.enter_context(mock.patch.object(paths, "best_skipping_paths", numpy_skipping_paths))
        return read_track(probs, calibration, params)


def timed(read: Callable[[], TrackReading]) -> tuple[TrackReading, float]:
    """The reading and its wall seconds."""
    started = time.perf_counter()
    return read(), time.perf_counter() - started


def main() -> None:
    args = log_parser(__doc__, max_logs=20).parse_args()
    settings = load_settings(None, args.profile)
    load_before = os.getloadavg()
    compile_s = first_calls_seconds()
    set_dir = chosen_set(args, settings)
    calibrations = {row.id: set_dir / row.calibration for row in select_logs(set_dir, args.split, args.max_logs)
                    .itertuples(index=False)}
    names = list(WAYS)
    rows = []
    for index, (log, probs) in enumerate(read_logs(args, settings)):
        calibration = Calibration.from_file(calibrations[log.id])
        order = names[index % len(names):] + names[:index % len(names)]
        reads = {name: timed(functools.partial(read_with, WAYS[name], probs, calibration, settings.extract))
                 for name in order}
        shipped = reads["compiled"][0]
        rows.append({"id": log.id, "width": int(probs.shape[2]), "curves": int(shipped.rows.shape[0]),
                     **{f"{name} s": reads[name][1] for name in names},
                     "equal": all(np.array_equal(shipped.rows, reading.rows, equal_nan=True)
                                  and np.array_equal(shipped.confidence, reading.confidence)
                                  for reading, _ in reads.values())})
    columns = sum(r["width"] for r in rows)
    totals = {name: sum(r[f"{name} s"] for r in rows) for name in names}
    before = totals["both in numpy (before)"]
    record = machine(load_before)
    summary = {"logs": len(rows), "columns": columns, "seconds": totals,
               "speed_up": {name: before / totals[name] for name in names}, "equal_logs": sum(r["equal"] for r in rows),
               "first_compiled_calls_s": compile_s}
    table = markdown_table(
        ["reading", "seconds", "per 10,000 columns, s", "speed-up against before"],
        [[name, f"{totals[name]:.1f}", f"{1e4 * totals[name] / columns:.2f}", f"{before / totals[name]:.2f}x"]
         for name in reversed(names)], {1, 2, 3})
    body = (f"{table}\nThe first {len(rows)} logs of split `{args.split}` of `{set_dir.name}` ({columns:,} columns), "
            "each read whole (`read_track`) the three ways in turn, the order rotating from log to log. The same rows "
            f"and confidences all three ways on {summary['equal_logs']} of {len(rows)} logs. The process's first "
            f"compiled calls took {compile_s:.2f} s (numba's compile, or its cache's load), before the logs and not in "
            f"the figures.\n\n{load_note(record)}\n")
    document = {"set": str(set_dir), "split": args.split, "profile": args.profile, "summary": summary, "logs": rows,
                "machine": record}
    write_results(args.out, "searches", document, "The path searches compiled, against their numpy versions", body)


if __name__ == "__main__":
    main()
