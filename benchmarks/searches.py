"""Reading a track with the single-curve search compiled (numba) against its numpy loop, on the net's own output.

    python benchmarks/skips.py [SET_DIR] [--model DIR] [--split val] [--max-logs 20] [--profile cpu] [--out DIR]

Each log's style probabilities are computed once as `evaluate` computes them (`_logs.read_logs`: the
profile's tiles, mirroring, the machine's read precision); the track is then read whole
(`reading.track.read_track`, every search the evaluate stage and `veernet digitize` run) twice: with
`reading.skips.best_skipping_paths` as shipped, and with `paths.viterbi_single` handed the numpy search
it ran before (`_skips_numpy.py`: seven tables of skip costs, then the column loop). The two reads
alternate which goes first from log to log, so a slow spell of a shared machine falls on both. Every
log's rows and confidences must come out equal (reported). The first compiled call of the process
(numba's compile, or its cache's load) is timed apart, before the logs.

Writes `skips.json` and `skips.md` into `--out` (default: `results/` beside this script).
"""

from __future__ import annotations

import functools
import os
import time
from collections.abc import Callable
from unittest import mock

import numpy as np
from _logs import chosen_set, log_parser, read_logs
from _record import load_note, machine, markdown_table, write_results
from _skips_numpy import numpy_skipping_paths

from veernet_pipeline.config import ExtractParams, load_settings
from veernet_pipeline.evaluation.evaluate import select_logs
from veernet_pipeline.io.calibration import Calibration
from veernet_pipeline.reading import paths
from veernet_pipeline.reading.skips import best_skipping_paths
from veernet_pipeline.reading.track import TrackReading, read_track


def first_call_seconds() -> float:
    """Seconds of the process's first compiled call on a tiny table: numba's compile or its on-disk cache's load."""
    rows = np.zeros((3, 1))
    started = time.perf_counter()
    best_skipping_paths(np.zeros((1, 3, 2)), np.zeros((1, 2, 2, 2)), rows, rows, np.zeros(1, dtype=bool),
                        np.zeros(1, np.int64), 8, paths.SKIP_COLUMNS, 16.0, 1.5)
    return time.perf_counter() - started


def read_with_numpy_loop(probs: np.ndarray, calibration: Calibration, params: ExtractParams) -> TrackReading:
    """`read_track` with `paths.viterbi_single` running the numpy loop of before 2026-12-07."""
    with mock.patch.object(paths, "best_skipping_paths", numpy_skipping_paths):
        return read_track(probs, calibration, params)


def timed(read: Callable[[], TrackReading]) -> tuple[TrackReading, float]:
    """The reading and its wall seconds."""
    started = time.perf_counter()
    return read(), time.perf_counter() - started


def main() -> None:
    args = log_parser(__doc__, max_logs=20).parse_args()
    settings = load_settings(None, args.profile)
    load_before = os.getloadavg()
    compile_s = first_call_seconds()
    set_dir = chosen_set(args, settings)
    calibrations = {row.id: set_dir / row.calibration for row in select_logs(set_dir, args.split, args.max_logs)
                    .itertuples(index=False)}
    rows = []
    for index, (log, probs) in enumerate(read_logs(args, settings)):
        calibration = Calibration.from_file(calibrations[log.id])
        compiled = functools.partial(read_track, probs, calibration, settings.extract)
        numpy_loop = functools.partial(read_with_numpy_loop, probs, calibration, settings.extract)
        first, second = (compiled, numpy_loop) if index % 2 else (numpy_loop, compiled)
        (read_a, seconds_a), (read_b, seconds_b) = timed(first), timed(second)
        after, before = (read_a, read_b) if first is compiled else (read_b, read_a)
        after_s, before_s = (seconds_a, seconds_b) if first is compiled else (seconds_b, seconds_a)
        rows.append({"id": log.id, "width": int(probs.shape[2]), "height": int(probs.shape[1]),
                     "curves": int(after.rows.shape[0]), "before_s": before_s, "after_s": after_s,
                     "equal": bool(np.array_equal(after.rows, before.rows, equal_nan=True)
                                   and np.array_equal(after.confidence, before.confidence))})
    before_total, after_total = sum(r["before_s"] for r in rows), sum(r["after_s"] for r in rows)
    record = machine(load_before)
    summary = {"logs": len(rows), "columns": sum(r["width"] for r in rows), "before_s": before_total,
               "after_s": after_total, "speed_up": before_total / after_total,
               "equal_logs": sum(r["equal"] for r in rows), "first_compiled_call_s": compile_s}
    table = markdown_table(
        ["logs", "columns", "numpy loop, s", "compiled, s", "speed-up", "per 10,000 columns: before / after, s",
         "logs read alike"],
        [[str(len(rows)), f"{summary['columns']:,}", f"{before_total:.1f}", f"{after_total:.1f}",
          f"{summary['speed_up']:.2f}x",
          f"{1e4 * before_total / summary['columns']:.2f} / {1e4 * after_total / summary['columns']:.2f}",
          f"{summary['equal_logs']} of {len(rows)}"]], set(range(6)))
    body = (f"{table}\nThe first {len(rows)} logs of split `{args.split}` of `{set_dir.name}`, each read whole "
            "(`read_track`) by both versions in turn, the order alternating from log to log; \"read alike\": the same "
            f"rows and confidences. The process's first compiled call took {compile_s:.2f} s (numba's compile, or its "
            f"cache's load), before the logs and not in the figures.\n\n{load_note(record)}\n")
    document = {"set": str(set_dir), "split": args.split, "profile": args.profile, "summary": summary, "logs": rows,
                "machine": record}
    write_results(args.out, "skips", document, "The single-curve search compiled, against its numpy loop", body)


if __name__ == "__main__":
    main()
