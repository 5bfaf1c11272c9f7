"""How much of the reading's loss is curves named wrong: what renaming read curves could gain, and a rule tried.

    python benchmarks/labels.py [SET_DIR] [--model MODEL_DIR] [--split val] [--max-logs 30] [--profile cpu]

Each log is read as `evaluate` reads it (the profile's `extract:`, test-time mirroring). Then the
read curves are given other labels, and every way is scored as `evaluate` scores (`evaluate.score_curves`):

1. as read;
2. the legend-order rule (`legend_order`), which uses no truth: the curves whose style is theirs
   alone in the track are ranked by their gaps per 100 px of line (`gaps_per_100px`, on the net's
   curve ink along the read row) and given their track's styles in `LEGEND_ORDER`, fewest gaps
   first: solid, long-dash, dashed, dash-dot, dotted. Absolute dash lengths differ between
   renderers and log makers; that order is the one a legend shows;
3. per log, the permutation of all the read curves' labels that fits the truth best
   (`identity.best_assignment` with every curve in one group): the most any rule that renames
   whole read curves could gain;
4. per `WINDOW` columns, the same (`relabel_windows`): the most renaming stretches could gain.

The foreign renderer's set may be given as SET_DIR (with `--split test`): nothing is fitted here,
the figures only measure. Writes `labels_<set folder>.json` and `.md` into `--out`.
"""

from __future__ import annotations

import os

import numpy as np
import pandas as pd
from _logs import chosen_set, log_parser, read_logs
from _record import load_note, machine, markdown_table, write_results

from veernet_pipeline.config import load_settings
from veernet_pipeline.evaluation.evaluate import score_curves
from veernet_pipeline.evaluation.identity import best_assignment
from veernet_pipeline.evaluation.truth import truth_band
from veernet_pipeline.io.classes import STYLES, style_class
from veernet_pipeline.reading.extract import trace_curves

WINDOW = 1000  # columns renamed at a time by the windowed oracle
LEGEND_ORDER = ("solid", "long_dash", "dashed", "dash_dot", "dotted")  # fewest gaps along the line first
INKED = 0.5  # a column of a read row is inked where the curve ink within a row of it exceeds this
WAYS = ("as read", "legend-order rule", "oracle per log", f"oracle per {WINDOW} columns")


def gaps_per_100px(ink: np.ndarray, row: np.ndarray) -> float:
    """Gaps in the ink along a read row, per 100 px of line, from its first to its last read column.

    A column is inked where `ink` within one row of the rounded row exceeds `INKED`; an unread
    column (NaN, a gap left open) is not. A gap is a run of columns not inked. Length along the
    line is the arc length of the row (NaN rows interpolated), so a steep dash counts its full length.

    Shape:
        ink: (H, W) curve ink probability; row: (W,) rows, NaN where not read. Returns NaN when fewer
        than two columns are read.
    """
    read = np.nonzero(np.isfinite(row))[0]
    if read.size < 2:
        return float("nan")
    cols = np.arange(read[0], read[-1] + 1)
    rows = np.interp(cols, read, row[read])
    centre = np.round(rows).astype(np.int64)
    near = [ink[np.clip(centre + d, 0, ink.shape[0] - 1), cols] for d in (-1, 0, 1)]
    inked = (np.max(near, axis=0) > INKED) & np.isfinite(row[cols])
    gaps = int(np.count_nonzero(np.diff(inked.astype(np.int8)) == -1)) + int(not inked[0])
    length = float(np.sum(np.hypot(1.0, np.diff(rows, prepend=rows[0]))))
    return 100.0 * gaps / length


def legend_order(rates: np.ndarray, styles: list[str]) -> np.ndarray:
    """Which read curve each label gets: curves of a style alone in the track, ranked by gap rate, take `LEGEND_ORDER`.

    Curves drawn alike, curves with no rate (never read) and curves whose sidecar names no style
    (`style_labels`' "broken" or "any") keep their reading.

    Shape:
        rates: (K,) gaps per 100 px. Returns (K,) int64: label k is given read curve order[k].
    """
    order = np.arange(len(styles))
    alone = [k for k in range(len(styles))
             if styles[k] in LEGEND_ORDER and styles.count(styles[k]) == 1 and np.isfinite(rates[k])]
    by_legend = sorted(alone, key=lambda k: LEGEND_ORDER.index(styles[k]))
    by_rate = sorted(alone, key=lambda k: (rates[k], k))
    order[by_legend] = by_rate
    return order


def relabel_windows(rows: np.ndarray, truth: np.ndarray, height: int, window: int) -> np.ndarray:
    """The read rows with every `window` columns' labels permuted to fit the truth best (`best_assignment`).

    Shape:
        rows: (K, W) pixel rows; truth: (K, W) track units. Returns (K, W).
    """
    lo, hi = truth_band(truth)
    pred = (rows + 0.5) / height
    out = rows.copy()
    every = [list(range(rows.shape[0]))]
    for start in range(0, rows.shape[1], window):
        part = slice(start, start + window)
        out[:, part] = rows[best_assignment(pred[:, part], lo[:, part], hi[:, part], every), part]
    return out


def ways(probs: np.ndarray, rows: np.ndarray, truth: np.ndarray, styles: list[str]) -> dict[str, np.ndarray]:
    """The read rows under each of `WAYS`. Shape: probs (C, H, W) style classes; rows (K, W); each (K, W)."""
    height = probs.shape[1]
    ink = probs[[style_class(style) for style in STYLES]].sum(axis=0)
    rates = np.array([gaps_per_100px(ink, row) for row in rows])
    lo, hi = truth_band(truth)
    per_log = best_assignment((rows + 0.5) / height, lo, hi, [list(range(rows.shape[0]))])
    return dict(zip(WAYS, (rows, rows[legend_order(rates, styles)], rows[per_log],
                           relabel_windows(rows, truth, height, WINDOW)), strict=True))


def main() -> None:
    args = log_parser(__doc__, 30).parse_args()
    settings = load_settings(None, args.profile)
    set_dir = chosen_set(args, settings)
    load_before = os.getloadavg()
    records, swaps, changed = [], {way: [] for way in WAYS}, {way: 0 for way in WAYS}
    for log, probs in read_logs(args, settings):
        rows, _ = trace_curves(probs, settings.extract, log.classes)
        for way, read in ways(probs, rows, log.truth, log.styles).items():
            scores, swap, _ = score_curves(read, log.truth, log.classes, log.image.shape[0])
            named = zip(log.styles, scores, strict=True)
            records += [{"way": way, "log": log.id, "style": style, **figures} for style, figures in named]
            swaps[way].append(swap)
            changed[way] += int(not np.array_equal(read, rows, equal_nan=True))
    frame = pd.DataFrame(records)
    results = {}
    for way in WAYS:
        part = frame[frame["way"] == way]
        results[way] = {"median_r2": float(part["r2"].median()), "p10_r2": float(part["r2"].quantile(0.1)),
                        "median_mae": float(part["mae"].median()), "mean_swap_share": float(np.nanmean(swaps[way])),
                        "logs_changed": changed[way],
                        "median_r2_by_style": part.groupby("style")["r2"].median().to_dict()}
    present = [s for s in STYLES if s in frame["style"].unique()]
    rows_md = [[way, f"{r['median_r2']:.3f}", f"{r['p10_r2']:.2f}", f"{r['median_mae']:.4f}",
                f"{100 * r['mean_swap_share']:.1f} %", *(f"{r['median_r2_by_style'][s]:.3f}" for s in present),
                str(r["logs_changed"])] for way, r in results.items()]
    record = machine(load_before)
    n_logs = frame["log"].nunique()
    body = (markdown_table(["labels", "all curves, median R²", "p10", "median MAE", "swaps (mean)", *present,
                            "logs changed"], rows_md, set(range(1, 6 + len(present))))
            + f"\n{n_logs} logs of split `{args.split}` of `{set_dir.name}`, profile `{args.profile}`, mirrored as "
            f"`evaluate` reads; {len(frame) // len(WAYS)} curves. Per-style columns: median R². Logs changed counts "
            "renamings among curves drawn alike too, which the scoring's own best assignment makes anyway.\n\n"
            f"{load_note(record)}\n")
    document = {"set": str(set_dir), "split": args.split, "profile": args.profile, "window": WINDOW,
                "legend_order": LEGEND_ORDER, "results": results, "machine": record}
    write_results(args.out, f"labels_{set_dir.name}", document, f"Renaming read curves: {set_dir.name}", body)


if __name__ == "__main__":
    main()
