"""How exact the foreign renderer's masks are, measured against the calibration contract.

    python benchmarks/foreign_masks.py [--n 8] [--profile demo] [--out DIR]

Renders N foreign scans as 8-bit gray and N as 1-bit (the profile's `foreign` sizes, test wells,
`render_foreign` exactly as the synthesize stage calls it) and, per curve, compares the pixels the
mask gives that curve with the row the contract draws its LAS value in (`Calibration.value_to_drawn_row`
of the values interpolated at each column's depth):

- **in band**: the share of the curve's pixels within the stroke's reach of that row: half its width
  times sqrt(1 + s^2) for a slope of s rows per column, plus half the row change to the next column,
  plus 1 px (columns within 4 of a wrap are left out: there the stroke runs to the track edge);
- **offset**: the mean of (pixel row - contract row) over the curve's pixels on flat stretches
  (s < 0.1): a systematic shift of the drawing would show here;
- **centre owned**: for solid curves, the share of contract-row pixels the mask gives that curve
  (the rest lie under another curve at a crossing, under a white box or banner, or, on a 1-bit
  scan, were dropped as fax errors).

Writes `foreign_masks.json` and `foreign_masks.md` into `--out` (default: `results/` beside this script).
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

import numpy as np
from _record import load_note, machine, markdown_table, write_results

from veernet_pipeline.config import load_settings
from veernet_pipeline.foreign.dataset import evaluation_wells, render_foreign

WRAP_MARGIN = 4


def _measure(profile: str, bilevel: bool, n: int) -> dict[str, Any]:
    settings = load_settings(Path(__file__).resolve().parents[1] / "params.yaml", profile,
                             [f"foreign.bilevel_share={int(bilevel)}"])
    wells = evaluation_wells(settings)
    in_band = owned = centre = centre_owned = 0
    offsets = []
    for index in range(n):
        found = render_foreign(settings, index, wells)
        log = found.log
        depths = log.top + (np.arange(log.width) + 0.5) * (log.bottom - log.top) / log.width
        for k, curve in enumerate(log.curves):
            rows, wraps = found.calibration.value_to_drawn_row(np.interp(depths, log.depth, curve.values),
                                                               log.height, k)
            changes = np.diff(wraps, prepend=wraps[0]) != 0
            steady = np.convolve(changes, np.ones(2 * WRAP_MARGIN + 1), mode="same") == 0
            slope = np.maximum(np.abs(np.diff(rows, prepend=rows[0])), np.abs(np.diff(rows, append=rows[-1])))
            reach = curve.width_px / 2 * np.sqrt(1 + slope**2) + slope / 2 + 1.0
            ys, xs = np.nonzero(found.curves == k + 1)
            keep = steady[xs]
            in_band += int((np.abs(ys - rows[xs]) <= reach[xs])[keep].sum())
            owned += int(keep.sum())
            flat = keep & (slope[xs] < 0.1)
            offsets.append(ys[flat] - rows[xs][flat])
            if not curve.pattern:
                columns = np.flatnonzero(steady)
                centre_rows = np.floor(rows[columns] + 0.5).astype(np.int64)
                centre += columns.size
                centre_owned += int((found.curves[centre_rows, columns] == k + 1).sum())
    offset = np.concatenate(offsets)
    return {"storage": "1-bit G4" if bilevel else "8-bit gray", "scans": n, "owned_px": owned,
            "in_band": round(in_band / owned, 5), "mean_flat_offset_px": round(float(offset.mean()), 4),
            "solid_centre_px": centre, "centre_owned": round(centre_owned / max(centre, 1), 4)}


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=8, help="scans per storage (default 8)")
    parser.add_argument("--profile", default="demo", help="params.yaml profile (default demo: full sizes)")
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "results")
    args = parser.parse_args(argv)
    load_before = os.getloadavg()
    runs = [_measure(args.profile, bilevel, args.n) for bilevel in (False, True)]
    record = machine(load_before)
    header = ["Storage", "Scans", "Curve pixels", "In band", "Mean offset, flat (px)", "Solid centre owned"]
    rows = [[r["storage"], str(r["scans"]), str(r["owned_px"]), f"{r['in_band']:.2%}",
             f"{r['mean_flat_offset_px']:+.3f}", f"{r['centre_owned']:.1%}"] for r in runs]
    body = markdown_table(header, rows, right={1, 2, 3, 4, 5}) + f"\nProfile {args.profile}. {load_note(record)}\n"
    document = {"runs": runs, "profile": args.profile, "machine": record}
    write_results(args.out, "foreign_masks", document, "Foreign renderer: how exact the masks are", body)
    return document


if __name__ == "__main__":
    main()
