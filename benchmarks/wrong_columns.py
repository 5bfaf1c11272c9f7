"""Where the reading loses R^2: each style's wrong columns by kind, and what each kind costs the median.

    python benchmarks/wrong_columns.py [SET_DIR] [--model DIR] [--split val] [--max-logs 40] [--profile cpu] [--out DIR]

The first `--max-logs` logs of the split (validation by default: never the test split) are read
by the profile's multiclass model as `benchmarks/extract.py` reads them (`evaluate`'s tiles and
mirroring, `trace_curves` with the profile's `extract:`), and scored as `evaluate` scores them
(`score_curves`: each curve against the band its truth sweeps over a column, curves drawn alike
under their best assignment). A read column is **wrong** when it lies more than `WRONG_TRACK` of
the track outside that band (the misread share's threshold). Each wrong column is put in every kind
it belongs to:

- **on another curve**: within `ON_CURVE_TRACK` of another curve's truth: the reading follows
  the wrong line (naming in contact, curves drawn alike);
- **bridged**: the curve is absent on its path there and the gap was bridged straight (confidence
  0): a swing inside a gap, or ink the search did not take;
- **steep**: the truth moves more than `STEEP_PX` rows a column there;
- **blip**: the wrong stretch is at most `BLIP_COLUMNS` columns long.

Per style: the share of read columns of each kind, the median R^2 as read, and the median R^2
with that kind's columns put into their band (every other column as read): a ceiling on what
mending that kind alone could give. The kinds overlap, so the ceilings do not add up.

Writes `wrong_columns.json` and `wrong_columns.md` into `--out` (default: `results/` beside this script).
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import pandas as pd
from _logs import chosen_set, log_parser, read_logs
from _record import machine, markdown_table, write_results

from veernet_pipeline.config import load_settings
from veernet_pipeline.evaluation.evaluate import score_curves
from veernet_pipeline.evaluation.metrics import MISREAD_TRACK, curve_metrics
from veernet_pipeline.evaluation.truth import truth_band
from veernet_pipeline.reading.extract import trace_curves

WRONG_TRACK = MISREAD_TRACK
ON_CURVE_TRACK = 0.01
STEEP_PX = 6.0
BLIP_COLUMNS = 5
KINDS = ("on another curve", "bridged", "steep", "blip", "all wrong")


def wrong_kinds(pred: np.ndarray, confidence: np.ndarray, truth: np.ndarray, lo: np.ndarray, hi: np.ndarray,
                k: int, height: int) -> dict[str, np.ndarray]:
    """Curve k's wrong columns, by kind (a column may be of several).

    Shape:
        pred, confidence, truth, lo, hi: (K, W), track units (confidence as `trace_curves` gives it).
        Returns per kind a (W,) bool mask.
    """
    with np.errstate(invalid="ignore"):
        wrong = np.isfinite(truth[k]) & ((pred[k] < lo[k] - WRONG_TRACK) | (pred[k] > hi[k] + WRONG_TRACK))
        near = np.zeros_like(wrong)
        for j in range(len(truth)):
            if j != k:
                near |= np.abs(pred[k] - truth[j]) <= ON_CURVE_TRACK
        steep = np.abs(np.gradient(truth[k])) * height > STEEP_PX if truth.shape[1] > 1 else np.zeros_like(wrong)
    edges = np.flatnonzero(np.diff(np.r_[0, wrong.astype(np.int8), 0]))
    blip = np.zeros_like(wrong)
    for start, stop in zip(edges[::2], edges[1::2], strict=True):
        blip[start:stop] = stop - start <= BLIP_COLUMNS
    return {"on another curve": wrong & near, "bridged": wrong & (confidence[k] == 0), "steep": wrong & steep,
            "blip": wrong & blip, "all wrong": wrong}


def curve_records(pred: np.ndarray, confidence: np.ndarray, truth: np.ndarray, styles: list[str],
                  height: int) -> list[dict[str, Any]]:
    """Per curve: read columns, each kind's wrong columns, R^2 as read and with each kind put into its band."""
    lo, hi = truth_band(truth)
    records = []
    for k in range(len(truth)):
        band = (lo[k], hi[k])
        record = {"style": styles[k], "read": int((np.isfinite(pred[k]) & np.isfinite(truth[k])).sum()),
                  "r2": curve_metrics(pred[k], truth[k], band)["r2"]}
        for kind, columns in wrong_kinds(pred, confidence, truth, lo, hi, k, height).items():
            mended = pred[k].copy()
            mended[columns] = truth[k, columns]  # the truth lies inside its own band
            record[f"n {kind}"] = int(columns.sum())
            record[f"r2 {kind}"] = curve_metrics(mended, truth[k], band)["r2"]
        records.append(record)
    return records


def summarise(records: list[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """Per style: curves, each kind's share of read columns, median R^2 as read and with each kind mended."""
    frame = pd.DataFrame(records)
    out = {}
    for style, group in frame.groupby("style"):
        read = group["read"].sum()
        out[str(style)] = {"curves": len(group), "median r2": float(group["r2"].median()),
                           **{f"share {kind}": float(group[f"n {kind}"].sum() / read) for kind in KINDS},
                           **{f"median r2 {kind}": float(group[f"r2 {kind}"].median()) for kind in KINDS}}
    return out


def markdown(summary: dict[str, dict[str, float]], note: str) -> str:
    """Two tables: the kinds' shares of read columns, and the median R^2 with each kind mended."""
    styles = sorted(summary)
    shares = markdown_table(["style", "curves", *(f"{kind}, % of read columns" for kind in KINDS)],
                            [[s, str(summary[s]["curves"]), *(f"{100 * summary[s][f'share {k}']:.2f}" for k in KINDS)]
                             for s in styles], right=set(range(1, len(KINDS) + 2)))
    ceilings = markdown_table(["style", "median R² as read", *(f"{kind} mended" for kind in KINDS)],
                              [[s, f"{summary[s]['median r2']:.3f}", *(f"{summary[s][f'median r2 {k}']:.3f}"
                                                                         for k in KINDS)] for s in styles],
                              right=set(range(1, len(KINDS) + 2)))
    return f"{note}\n\n{shares}\n\nMedian R² per style if one kind's columns were read right:\n\n{ceilings}\n"


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """Read the logs, sort every curve's wrong columns by kind, write the JSON and the tables."""
    args = log_parser(__doc__, 40).parse_args(argv)
    settings = load_settings(None, args.profile)
    load = os.getloadavg()
    records = []
    for log, probs in read_logs(args, settings):
        height = probs.shape[1]
        rows, confidence = trace_curves(probs, settings.extract, log.classes)
        _, _, order = score_curves(rows, log.truth, log.classes, height)
        records += curve_records((rows[order] + 0.5) / height, confidence[order], log.truth, log.styles, height)
    summary = summarise(records)
    note = (f"{args.max_logs or 'all'} logs of split `{args.split}` of `{chosen_set(args, settings).name}`, profile "
            f"`{args.profile}` (`extract.height_weight_styles` {settings.extract.height_weight_styles}), model "
            f"`{args.model or 'paths.models/multiclass'}`. Wrong: more than {WRONG_TRACK} of "
            f"the track outside the truth's band; kinds as in the script's docstring (they overlap).")
    document = {"settings": vars(args) | {"set_dir": str(chosen_set(args, settings)), "out": str(args.out),
                                          "model": str(args.model)},
                "extract": settings.extract.model_dump(), "summary": summary, "machine": machine(load)}
    write_results(args.out, "wrong_columns", document, "Where the reading loses R²", markdown(summary, note))
    return document


if __name__ == "__main__":
    main()
