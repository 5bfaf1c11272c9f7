"""Layout detection on whole-log pages scanned at another resolution (simulated): does `veernet layout` still work?

    python benchmarks/page_resolution.py [--pages 20] [--scales 1.5 2.0] [--seed 20261123] [--out DIR]

The page detector's thresholds are pixel counts chosen on pages drawn at the generator's 200 dpi
(`pages.columns`, `pages.rows`). Each of the first `--pages` pages of `benchmarks/pages.py`'s default
shape is drawn again at each scale, as `benchmarks/resolution.py` draws a 300-dpi scan (1-bit pages
by replication, gray ones bilinear), and its layout detected there (`detect_layout`, which reads no
resolution tag: an operator runs it on the scan as it is). The layout found is brought back to the
page's own pixels (`at_page_scale`: pixel centres matched, rounded) and scored by `pages.score_detection`
against the page's exact layout, with the same 3-px tolerance, which is 3 px x scale on the
enlarged page. Scale 1 is the reference, the same pages as drawn.

Writes `page_resolution.json` and `page_resolution.md` into `--out` (default: `results/` beside this
script).
"""

from __future__ import annotations

import argparse
import dataclasses
import logging
import os
import time
from pathlib import Path
from typing import Any

import numpy as np
from _record import load_note, machine, write_results
from pages import SEED, TOLERANCE_PX, detection_table, score_detection, summarise
from resolution import enlarge
from tqdm import tqdm

from veernet_pipeline.config import load_settings
from veernet_pipeline.pages.detect import Detected, detect_layout
from veernet_pipeline.synthetic.curves import load_wells
from veernet_pipeline.synthetic.page import PageParams, render_page


def at_page_scale(found: Detected, scale: float) -> Detected:
    """A layout detected on a page enlarged by `scale`, in the page's own pixels: p -> (p + 0.5) / scale - 0.5."""

    def back(p: int) -> int:
        return int(round((p + 0.5) / scale - 0.5))

    return dataclasses.replace(
        found, height=back(found.height), width=back(found.width), pivot_row=back(found.pivot_row),
        tracks=[(back(a), back(b)) for a, b in found.tracks],
        depth_column=None if found.depth_column is None else (back(found.depth_column[0]),
                                                              back(found.depth_column[1])),
        bands=[dataclasses.replace(b, top=back(b.top), bottom=back(b.bottom)) for b in found.bands],
        label_rows=[[back(r) for r in rows] for rows in found.label_rows])


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=20, help="rendered pages of pages.py's default shape")
    parser.add_argument("--scales", type=float, nargs="+", default=[1.5, 2.0], help="300 dpi = 1.5, 400 dpi = 2")
    parser.add_argument("--seed", type=int, default=SEED)
    parser.add_argument("--profile", default="cpu", help="params.yaml profile for rendering params")
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "results")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING)
    settings = load_settings(Path(__file__).resolve().parents[1] / "params.yaml", args.profile)
    wells, load_before = load_wells(""), os.getloadavg()
    scales = [1.0, *args.scales]
    results: dict[str, list[dict[str, Any]]] = {f"x{s:g}": [] for s in scales}
    seconds: dict[str, list[float]] = {f"x{s:g}": [] for s in scales}
    for index in tqdm(range(args.pages), desc="pages"):
        page = render_page(args.seed, index, PageParams(), settings.synthesize, wells)
        for scale in scales:
            image = page.image if scale == 1.0 else enlarge(page.image, scale)
            started = time.perf_counter()
            found = detect_layout(image)
            seconds[f"x{scale:g}"].append(time.perf_counter() - started)
            results[f"x{scale:g}"].append({"index": index, "shape": list(image.shape),
                                           **score_detection(page.layout, at_page_scale(found, scale))})
    summaries = {name: summarise(rows) for name, rows in results.items()}
    record = machine(load_before)
    timing = {name: float(np.median(times)) for name, times in seconds.items()}
    document = {"seed": args.seed, "tolerance_px": TOLERANCE_PX, "scales": scales, "summaries": summaries,
                "detect_seconds_median": timing, "pages": results, "machine": record}
    body = (f"The first {args.pages} pages of `benchmarks/pages.py`'s default shape, drawn at each scale (x1.5 is a "
            "300-dpi scan of a 200-dpi page, x2 a 400-dpi one), laid out by `detect_layout` and scored in the page's "
            f"own pixels (tolerance {TOLERANCE_PX} px there).\n\n" + detection_table(summaries)
            + "\nMedian detection time per page: "
            + ", ".join(f"{name} {t:.2f} s" for name, t in timing.items()) + f".\n\n{load_note(record)}\n")
    write_results(args.out, "page_resolution", document, "Layout detection at other scan resolutions", body)
    return document


if __name__ == "__main__":
    main()
