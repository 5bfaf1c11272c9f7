"""`veernet digitize` end to end on one full-size strip: this checkout against another, in one run.

    python benchmarks/digitize.py --before-code DIR [--scan TIF] [--model DIR] [--repeats 3] [--profile cpu]
        [--name digitize] [--out DIR]

What an operator waits for per scan outside the pipeline: each run is a fresh process running
`veernet --profile P digitize SCAN --model MODEL --out LAS` (`cli.main`), timed by the wall clock from
start to exit: imports, the model's load, the net's three passes (the profile's mirroring), the path
search, the LAS and its atomic write. Each checkout runs in its own subprocess with its folder first on
the import path (`compare_reading.run_with_code`, which fails if another `veernet_pipeline` is imported)
and its own params.yaml; both read the same scan, sidecar and model. The checkouts take turns, one untimed
run each first (it may compile the path searches into numba's cache). Default scan: the widest log of
the own test split no taller than 640 px (603 x 12,719, three curves, on the `cpu` synthetic set).
Reports each checkout's median seconds and the ratio, and whether the two wrote the same LAS bytes (a change
meant for speed alone should); writes `results/<name>.{json,md}`.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

from _record import load_note, machine, markdown_table, write_results
from compare_models import HERE
from compare_reading import run_with_code

from veernet_pipeline.config import load_settings
from veernet_pipeline.evaluation.evaluate import select_logs

DIGITIZE = "from veernet_pipeline.cli import main; sys.exit(main(sys.argv[1:]))"
MAX_HEIGHT = 640  # px: the strips the issue timed were 640 rows tall


def widest_strip(profile: str) -> Path:
    """The widest own test log no taller than `MAX_HEIGHT`: the scan read by default."""
    set_dir = load_settings(None, profile).path("synthetic") / "multiclass"
    logs = select_logs(set_dir, "test", 0)
    logs = logs[logs["height"] <= MAX_HEIGHT]
    if logs.empty:
        raise SystemExit(f"no test log of {set_dir} is {MAX_HEIGHT} px tall or less: pass --scan")
    return set_dir / str(logs.sort_values("width", ascending=False).iloc[0]["image"])


def timed_run(code: Path, profile: str, scan: Path, model: Path, out: Path) -> float:
    """Wall seconds of one `veernet digitize` process with the checkout at `code`."""
    started = time.perf_counter()
    run_with_code(code, DIGITIZE, ["--profile", profile, "digitize", str(scan), "--model", str(model),
                                   "--out", str(out)])
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--before-code", type=Path, required=True, help="a checkout of the code to compare with")
    parser.add_argument("--scan", type=Path, help="a track-strip TIFF with its sidecar beside it")
    parser.add_argument("--model", type=Path, default=HERE.parent / "data" / "models" / "multiclass")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--profile", default="cpu")
    parser.add_argument("--name", default="digitize")
    parser.add_argument("--out", type=Path, default=HERE / "results")
    args = parser.parse_args()
    scan = (args.scan or widest_strip(args.profile)).resolve()
    model = args.model.resolve()
    codes = {"before": args.before_code.resolve(), "after": HERE.parent.resolve()}
    load_before = os.getloadavg()
    seconds: dict[str, list[float]] = {label: [] for label in codes}
    with tempfile.TemporaryDirectory() as tmp:
        for label, code in codes.items():  # untimed: imports warm, numba's cache written
            timed_run(code, args.profile, scan, model, Path(tmp) / f"{label}-warm.las")
        for repeat in range(args.repeats):
            for label, code in codes.items():
                seconds[label].append(timed_run(code, args.profile, scan, model, Path(tmp) / f"{label}-{repeat}.las"))
        same = (Path(tmp) / "before-warm.las").read_bytes() == (Path(tmp) / "after-warm.las").read_bytes()
    median = {label: statistics.median(values) for label, values in seconds.items()}
    record = machine(load_before)
    rows = [[label, str(codes[label]), f"{median[label]:.2f}", " / ".join(f"{s:.2f}" for s in seconds[label])]
            for label in codes]
    body = (markdown_table(["code", "checkout", "median s", "runs"], rows, {2})
            + f"\n`veernet --profile {args.profile} digitize {scan.name}` ({scan.parent}), model {model}: "
            f"before / after = **{median['before'] / median['after']:.2f}x**, median of {args.repeats} runs each "
            f"after one untimed run, the checkouts taking turns. The same LAS bytes: {'yes' if same else 'no'}."
            f"\n\n{load_note(record)}\n")
    document = {"scan": str(scan), "model": str(model), "profile": args.profile,
                "code": {label: str(code) for label, code in codes.items()}, "seconds": seconds,
                "median_seconds": median, "ratio": median["before"] / median["after"], "same_las_bytes": same,
                "machine": record}
    write_results(args.out, args.name, document, "`veernet digitize` end to end on one strip", body)


if __name__ == "__main__":
    main()
