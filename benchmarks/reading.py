"""Wall time of the path search on a full-size strip (640 x 12,800 px) holding two to five curves.

    python benchmarks/reading.py [--repeats 3] [--profile cpu] [--out DIR]

A hand-made probability map (no net: `trace_curves` alone is timed) holds sine-like curves that
cross each other across the whole strip, 2 px of ink at 0.95, dashed curves 18 px on and 10 off.
Each case asks for the curves under different classes, which decides how they are read
(docs/reading.md): distinct styles read by independent paths batched in one pass, same-style
pairs and triples by exact joint Viterbi, four or five alike by peeling. The baseline is the seeds'
case, a solid and a dashed curve; every other case is a ratio to it, measured in the same run. The
profile's `extract:` settings (candidates per column, costs) are used. After one warm-up call, the
median of `--repeats` calls is reported; the candidate step (`find_candidates`) is timed alone too,
and every case again with `height_weight_styles` 0: the cost of the second search of the track that
run heights between styles make. It runs only where two curves' typical run heights differ by 1 px
or more, so one case draws its four curves with pens of 1-4 px. Every case is timed once more with every
second curve (B, D) given a backup scale: such curves move by their own cyclic costs (`paths.transitions(wrap=True)`),
so a track mixing both builds and indexes two tables of costs.

Writes `reading.json` and `reading.md` into `--out` (default: `results/` beside this script).
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

import numpy as np
from _record import load_note, machine, markdown_table, median_seconds, write_results

from veernet_pipeline.config import ExtractParams, load_settings
from veernet_pipeline.io.classes import NUM_CLASSES, style_class
from veernet_pipeline.reading.candidates import find_candidates
from veernet_pipeline.reading.extract import trace_curves

HEIGHT, WIDTH = 640, 12_800
SOLID, DASHED, DOTTED, DASH_DOT, LONG_DASH = (style_class(s) for s in
                                              ("solid", "dashed", "dotted", "dash_dot", "long_dash"))
# name -> the class each curve is drawn in and read as; the curves are the same sines in every case.
CASES: dict[str, list[int]] = {
    "2 curves, solid + dashed (baseline)": [SOLID, DASHED],
    "4 curves, 4 styles": [SOLID, DASHED, DASH_DOT, LONG_DASH],
    "4 curves, 2 solid + 2 dashed": [SOLID, DASHED, SOLID, DASHED],
    "4 curves, 3 solid + 1 dashed": [SOLID, SOLID, SOLID, DASHED],
    "4 curves, all solid": [SOLID] * 4,
    "5 curves, 5 styles": [SOLID, DASHED, DASH_DOT, LONG_DASH, DOTTED],
    "5 curves, all solid": [SOLID] * 5,
    "4 curves, 4 styles, pens 1-4 px": [SOLID, DASHED, DASH_DOT, LONG_DASH],
}
# Cases drawn with pens of different widths (px per curve; 2 px otherwise): their typical run heights differ,
# so the search reads the track a second time (`extract.height_weight_styles`).
PENS: dict[str, list[int]] = {"4 curves, 4 styles, pens 1-4 px": [1, 2, 3, 4]}


def probability_map(styles: list[int], pens: list[int] | None = None) -> np.ndarray:
    """Curves k = 0.. as sines of different phase and period crossing each other, `pens` px thick (default 2).

    Shape:
        Returns (7, H, W) float32.
    """
    probs = np.zeros((NUM_CLASSES, HEIGHT, WIDTH), dtype=np.float32)
    probs[0] = 1.0
    x = np.arange(WIDTH)
    for k, cls in enumerate(styles):
        rows = np.round(HEIGHT / 2 + 0.4 * HEIGHT * np.sin(x / (300.0 + 70 * k) + 1.3 * k)).astype(int)
        columns = x if cls == SOLID else x[(x % 28) < 18]
        for offset in range(pens[k] if pens else 2):
            probs[:, rows[columns] + offset, columns] = 0.0
            probs[cls, rows[columns] + offset, columns] = 0.95
            probs[0, rows[columns] + offset, columns] = 0.05
    return probs


def run_case(name: str, styles: list[int], extract: ExtractParams, repeats: int) -> dict[str, Any]:
    probs = probability_map(styles, PENS.get(name))
    classes = [(cls,) for cls in styles]
    total = median_seconds(lambda: trace_curves(probs, extract, classes), repeats)
    # The same without run heights between styles: what their second search of the track costs.
    off = extract.model_copy(update={"height_weight_styles": 0.0})
    without = median_seconds(lambda: trace_curves(probs, off, classes), repeats)
    wraps = [k % 2 == 1 for k in range(len(styles))]
    wrapped = median_seconds(lambda: trace_curves(probs, extract, classes, wraps=wraps), repeats)
    candidates = median_seconds(
        lambda: find_candidates(probs, classes, extract.max_candidates, extract.min_confidence), repeats)
    return {"case": name, "curves": len(styles), "seconds": round(total, 3), "candidates_seconds": round(candidates, 3),
            "seconds_without_height_styles": round(without, 3), "seconds_half_backup_scales": round(wrapped, 3)}


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--profile", default="cpu", help="params.yaml profile whose extract: settings are used")
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "results")
    args = parser.parse_args(argv)
    extract = load_settings(Path(__file__).resolve().parents[1] / "params.yaml", args.profile).extract
    load_before = os.getloadavg()
    runs = [run_case(name, styles, extract, args.repeats) for name, styles in CASES.items()]
    baseline = runs[0]["seconds"]
    for run in runs:
        run["ratio_to_baseline"] = round(run["seconds"] / baseline, 2)
    document = {"size": [HEIGHT, WIDTH], "profile": args.profile, "extract": extract.model_dump(),
                "repeats": args.repeats, "runs": runs, "machine": machine(load_before)}
    header = ["Case", "Curves", "Path search s (median)", "of which candidates s", "Ratio to 2 curves",
              "without run heights between styles, s", "ratio with / without", "B, D with backup scales, s",
              "ratio to none"]
    rows = [[r["case"], str(r["curves"]), f"{r['seconds']:.2f}", f"{r['candidates_seconds']:.2f}",
             f"{r['ratio_to_baseline']:.2f}", f"{r['seconds_without_height_styles']:.2f}",
             f"{r['seconds'] / r['seconds_without_height_styles']:.2f}", f"{r['seconds_half_backup_scales']:.2f}",
             f"{r['seconds_half_backup_scales'] / r['seconds']:.2f}"] for r in runs]
    body = (f"`trace_curves` on one {HEIGHT} x {WIDTH} probability map, profile `{args.profile}` "
            f"(max_candidates {extract.max_candidates}), median of {args.repeats} after a warm-up.\n\n"
            + markdown_table(header, rows, right=set(range(1, 9))) + "\n" + load_note(document["machine"]) + "\n")
    write_results(args.out, "reading", document, "Path search time, 640 x 12,800 px", body)
    return document


if __name__ == "__main__":
    main()
