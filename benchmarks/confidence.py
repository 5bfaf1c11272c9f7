"""Does a curve's confidence point a reviewer at the columns it misread?

    python benchmarks/confidence.py [SET_DIR] [--model MODEL_DIR] [--split val] [--max-logs 47] [--profile cpu]

The first `--max-logs` logs of the split (validation by default: never the test split) are read
with the profile's settings and test-time mirroring, as `evaluate` does. A column of a read curve
is misread when its row lies more than `MISREAD_PX` from its own true curve (curves drawn alike
under their best assignment, `evaluate.score_curves`). Two confidences are compared on the same
paths: as shipped (divided by the curves reading the same run, `extract.run_holders`) and
undivided. Reported for all curves, curves drawn alike and distinct styles: the AUROC of
1 - confidence for misread columns (0.5 = no better than chance), and the shares of misread and
of right columns that fall below `infer.low_confidence` (what the review queue's
`low_conf_share` counts). A second table sweeps that threshold over the shipped confidence: the
same two shares, their difference (Youden's J: how much more often a misread column is flagged
than a right one) and the share of columns at exactly 0.5, where a run two curves read with
certain ink lands. A third counts the stretches where two curves read the same row (within
`SAME_PX`), by length (`STRETCHES`): how many of their columns have both curves on their own truth,
one only (the other a copy), or neither: what a rule replacing long copies by NULL would keep and
lose. Writes `confidence.json` and `confidence.md` into `--out`.
"""

from __future__ import annotations

import contextlib
import os
from unittest import mock

import numpy as np
from _logs import chosen_set, log_parser, read_logs
from _record import load_note, machine, markdown_table, write_results
from sklearn.metrics import roc_auc_score

from veernet_pipeline.config import ExtractParams, load_settings
from veernet_pipeline.evaluation.evaluate import score_curves
from veernet_pipeline.reading import extract

MISREAD_PX = 3.0
THRESHOLDS = (0.3, 0.4, 0.5, 0.55, 0.6, 0.7, 0.8)
SAME_PX = 1.0  # two curves' rows this close read one run
STRETCHES = (1, 5, 20, 100, 500)  # lower bounds of the shared stretches' length bins, columns
WAYS = {"shared runs divide (shipped)": False, "undivided": True}


def undivided_holders(states: np.ndarray, absent: int) -> np.ndarray:
    """Stands in for `extract.run_holders`: every curve alone on its run, the confidence before the division."""
    return np.ones(states.shape, dtype=np.int64)


def shared_stretches(rows: np.ndarray, truth_rows: np.ndarray) -> np.ndarray:
    """Per length bin of `STRETCHES`: columns of stretches where two curves read within `SAME_PX`, and of those the
    columns where both, exactly one or neither lies within `MISREAD_PX` of its own truth.

    Shape:
        rows, truth_rows: (K, W) pixel rows. Returns (len(STRETCHES), 4) int64: columns, both, one, neither.
    """
    counts = np.zeros((len(STRETCHES), 4), dtype=np.int64)
    right = np.abs(rows - truth_rows) <= MISREAD_PX  # NaN compares False
    for a in range(rows.shape[0]):
        for b in range(a + 1, rows.shape[0]):
            same = np.concatenate([[0], (np.abs(rows[a] - rows[b]) <= SAME_PX).astype(np.int8), [0]])
            edges = np.flatnonzero(np.diff(same))
            for start, stop in zip(edges[::2], edges[1::2], strict=True):
                on_own = right[a, start:stop].astype(int) + right[b, start:stop]
                row = counts[np.searchsorted(STRETCHES, stop - start, side="right") - 1]
                row += [stop - start, np.sum(on_own == 2), np.sum(on_own == 1), np.sum(on_own == 0)]
    return counts


def log_columns(probs: np.ndarray, truth: np.ndarray, classes: list[tuple[int, ...]], height: int,
                params: ExtractParams, undivided: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """One log's read columns: misread or not, their confidence, whether their curve is drawn alike; and its
    `shared_stretches`."""
    with mock.patch.object(extract, "run_holders", undivided_holders) if undivided else contextlib.nullcontext():
        rows, confidence = extract.trace_curves(probs, params, classes)
    _, _, order = score_curves(rows, truth, classes, height)
    rows, confidence = rows[order], confidence[order]
    truth_rows = truth * height - 0.5
    read = np.isfinite(rows) & np.isfinite(truth_rows)
    drawn_alike = np.broadcast_to(np.array([classes.count(c) > 1 for c in classes])[:, None], rows.shape)
    return ((np.abs(rows - truth_rows) > MISREAD_PX)[read], confidence[read], drawn_alike[read],
            shared_stretches(rows, truth_rows))


def figures(columns: dict[str, np.ndarray], threshold: float) -> dict[str, dict[str, float]]:
    """AUROC and low-confidence shares over all curves, curves drawn alike and distinct styles, where both occur."""
    out = {}
    for name, keep in (("all", np.ones_like(columns["alike"])), ("alike", columns["alike"]),
                       ("distinct", ~columns["alike"])):
        misread, confidence = columns["misread"][keep], columns["confidence"][keep]
        if misread.all() or not misread.any():  # no columns, or one kind only: nothing to rank
            continue
        out[name] = {"columns": int(keep.sum()), "misread_share": float(misread.mean()),
                     "auroc": float(roc_auc_score(misread, -confidence)),
                     "low_of_misread": float(np.mean(confidence[misread] < threshold)),
                     "low_of_right": float(np.mean(confidence[~misread] < threshold))}
    return out


def sweep(misread: np.ndarray, confidence: np.ndarray) -> list[dict[str, float]]:
    """Per threshold of `THRESHOLDS`: the shares of misread and right columns below it, and their difference."""
    out = []
    for threshold in THRESHOLDS:
        low_of_misread = float(np.mean(confidence[misread] < threshold))
        low_of_right = float(np.mean(confidence[~misread] < threshold))
        out.append({"threshold": threshold, "low_of_misread": low_of_misread, "low_of_right": low_of_right,
                    "youden_j": low_of_misread - low_of_right})
    return out


def main() -> None:
    args = log_parser(__doc__, 47).parse_args()
    settings = load_settings(None, args.profile)
    set_dir = chosen_set(args, settings)
    load_before = os.getloadavg()
    parts: dict[str, list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]] = {way: [] for way in WAYS}
    ids = []
    for log, probs in read_logs(args, settings):
        for way, undivided in WAYS.items():
            parts[way].append(log_columns(probs, log.truth, log.classes, log.image.shape[0], settings.extract,
                                          undivided))
        ids.append(log.id)
    threshold = settings.infer.low_confidence
    columns = {way: {key: np.concatenate([p[i] for p in parts[way]])
                     for i, key in enumerate(("misread", "confidence", "alike"))} for way in WAYS}
    results = {way: figures(columns[way], threshold) for way in WAYS}
    shipped = columns[next(iter(WAYS))]
    thresholds = sweep(shipped["misread"], shipped["confidence"])
    at_half = float(np.mean(shipped["confidence"] == 0.5))
    shared = sum(p[3] for p in parts[next(iter(WAYS))])  # the paths do not depend on the division
    bounds = [*STRETCHES[1:], None]
    stretches = [{"columns_from": low, "columns_below": high, "columns": int(c[0]), "both_own": int(c[1]),
                  "one_own": int(c[2]), "neither": int(c[3])} for low, high, c in zip(STRETCHES, bounds, shared,
                                                                                      strict=True)]
    rows = [[way, group, str(f["columns"]), f"{100 * f['misread_share']:.1f} %", f"{f['auroc']:.4f}",
             f"{100 * f['low_of_misread']:.1f} %", f"{100 * f['low_of_right']:.1f} %"]
            for way, groups in results.items() for group, f in groups.items()]
    record = machine(load_before)
    body = (markdown_table(["confidence", "curves", "columns", "misread", "AUROC", "low, of misread",
                            "low, of right"], rows, set(range(2, 7)))
            + f"\n{len(ids)} logs of split `{args.split}`, profile `{args.profile}`, mirrored as `evaluate` reads. "
            f"Misread: more than {MISREAD_PX:g} px from the curve's truth. Low: below `infer.low_confidence` "
            f"({threshold}).\n\n"
            + "## The threshold, swept (shipped confidence, all curves)\n\n"
            + markdown_table(["below", "low, of misread", "low, of right", "Youden's J"],
                             [[f"{t['threshold']:g}", f"{100 * t['low_of_misread']:.1f} %",
                               f"{100 * t['low_of_right']:.1f} %", f"{t['youden_j']:.3f}"] for t in thresholds],
                             {1, 2, 3})
            + f"\nColumns at exactly 0.5 (a run two curves read, its ink certain): {100 * at_half:.1f} %.\n\n"
            + f"## Stretches where two curves read one run (rows within {SAME_PX:g} px)\n\n"
            + markdown_table(["stretch, columns", "columns", "both on their own truth", "one only (a copy)",
                              "neither"],
                             [[f"{t['columns_from']}-{t['columns_below'] - 1}" if t["columns_below"] else
                               f"{t['columns_from']}+", str(t["columns"]),
                               *(f"{100 * t[k] / max(t['columns'], 1):.1f} %" for k in ("both_own", "one_own",
                                                                                       "neither"))]
                              for t in stretches], {1, 2, 3, 4})
            + f"\n{load_note(record)}\n")
    document = {"set": str(set_dir), "split": args.split, "profile": args.profile, "logs": ids,
                "misread_px": MISREAD_PX, "low_confidence": threshold, "results": results, "thresholds": thresholds,
                "at_half": at_half, "stretches": stretches, "machine": record}
    write_results(args.out, "confidence", document, "Confidence against misread columns", body)


if __name__ == "__main__":
    main()
