"""What the benchmark scripts record beside their figures: the machine and its load, and the two result files.

Imported by the scripts in this folder (run as `python benchmarks/<script>.py`, so this folder is on
the import path).
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from veernet_pipeline.io.atomic import write_text_atomic


def machine(load_before: tuple[float, float, float]) -> dict[str, Any]:
    """CPU count, Python, platform and the load average before (given) and after (now) the measurement.

    Other processes on the same cores slow every figure; the load average says how busy they were.
    """
    return {"cpus": os.cpu_count(), "python": platform.python_version(), "platform": platform.platform(),
            "load_average_before": [round(x, 2) for x in load_before],
            "load_average_after": [round(x, 2) for x in os.getloadavg()]}


def load_note(record: dict[str, Any]) -> str:
    """The load averages of `machine` as one sentence for a results page."""
    return (f"Load average before/after: {record['load_average_before']} / {record['load_average_after']} on "
            f"{record['cpus']} CPUs.")


def markdown_table(header: list[str], rows: list[list[str]], right: set[int]) -> str:
    """A markdown table: `header`, then `rows` of cells already formatted; columns in `right` right-aligned."""
    rule = "|" + "|".join("---:" if i in right else "---" for i in range(len(header))) + "|"
    lines = ["| " + " | ".join(cells) + " |" for cells in [header, *rows]]
    return "\n".join([lines[0], rule, *lines[1:]]) + "\n"


def write_results(out: Path, name: str, document: dict[str, Any], title: str, body: str) -> None:
    """Write `<name>.json` (the document) and `<name>.md` (a title and the markdown body) into `out`; print the body."""
    out.mkdir(parents=True, exist_ok=True)
    write_text_atomic(out / f"{name}.json", json.dumps(document, indent=2) + "\n")
    write_text_atomic(out / f"{name}.md", f"# {title}\n\n{body}")
    print(body)


def median_seconds(func: Callable[[], Any], repeats: int, warm_up: bool = True) -> float:
    """Median wall seconds of `repeats` calls of `func`, after one untimed warm-up call unless `warm_up` is off."""
    if warm_up:
        func()
    seconds = []
    for _ in range(repeats):
        started = time.perf_counter()
        func()
        seconds.append(time.perf_counter() - started)
    return statistics.median(seconds)
