"""How soon the review queue shows the scans read wrong: in the queue's order and in the orders before it.

    python benchmarks/review_order.py PER_LOG_CSV [PER_LOG_CSV ...] [--bad-r2 0.5] [--out DIR]

Each `per_log.csv` is what `veernet evaluate` writes for a set (one row per log and curve, with the
log's confidence figures as digitize writes them into the index, and each curve's `drawn_alike`: how
many curves of its track share its style and pen). Its logs stand in for digitised scans: each
becomes one row of an index (the four figures, `alike_curves` = the curves drawn alike with
another) and the library's own
`inference.review.rank_queue` orders them by each of `ORDERS`: the queue's before 2026-12-06
(confidence alone, `conf_p10` first), curves drawn alike first then `conf_p10`, and the queue's
(`review.ORDER`: curves drawn alike first, then `conf_median`). A log is *wrong* when
one of its curves reads under `--bad-r2` R² against its truth. Per order: the share of wrong logs
among the first 10 %, 25 % and 50 % of the queue, the wrong logs found there out of all, and the
AUC (the chance that a wrong log comes before a right one). Beside them, each confidence figure alone
(`SINGLE`, ties by log id) over the logs without curves drawn alike: what the confidence keys
choose among once those are set aside.

Writes `review_order.json` and `review_order.md` into `--out` (default `results/review-order/`).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from _record import markdown_table, write_results

from veernet_pipeline.inference.review import ORDER, rank_queue
from veernet_pipeline.reading.confidence import ALIKE, EXCHANGED, FIGURES

SHARES = (0.10, 0.25, 0.50)
BY_CONFIDENCE = (("conf_p10", True), ("low_conf_share", False), ("null_share", False))
ORDERS: dict[str, tuple[tuple[str, bool], ...]] = {
    "confidence alone (conf_p10 first; before 2026-12-06)": BY_CONFIDENCE,
    "drawn alike first, then conf_p10": (ORDER[0], *BY_CONFIDENCE),  # the queue's first step, then the old keys
    "drawn alike first, then conf_median (the queue)": ORDER,
}
# Each confidence figure alone, least confident first.
SINGLE = {"conf_median": (("conf_median", True),), "conf_p10": (("conf_p10", True),),
          "low_conf_share": (("low_conf_share", False),), "null_share": (("null_share", False),)}


def scans_of(per_log: pd.DataFrame, bad_r2: float) -> pd.DataFrame:
    """One index row per log: `las` (its id), the confidence FIGURES, ALIKE, EXCHANGED and `wrong` (a curve under
    `bad_r2`). EXCHANGED is NaN, not known: per_log.csv does not say which lines the dash check moved."""
    by_log = per_log.assign(alike=per_log["drawn_alike"] > 1, low=per_log["r2"] < bad_r2).groupby("id", sort=True)
    scans = pd.DataFrame({"las": [str(i) for i in by_log.groups], ALIKE: by_log["alike"].sum().to_numpy(dtype=float),
                          EXCHANGED: float("nan"), "wrong": by_log["low"].any().to_numpy()})
    for name in FIGURES:  # one value per log, repeated on each of its curves' rows
        scans[name] = by_log[name].first().to_numpy()
    return scans


def order_figures(scans: pd.DataFrame, order: tuple[tuple[str, bool], ...]) -> dict[str, Any]:
    """`scans` in `order` (`rank_queue`, no marks) and how early it shows the wrong ones."""
    index = scans.assign(path=scans["las"], sha256=scans["las"], qc=scans["las"])
    queue = rank_queue(index, {}, order)
    wrong = scans.set_index("las").loc[queue["las"], "wrong"].to_numpy()
    n, n_wrong = len(wrong), int(wrong.sum())
    figures: dict[str, Any] = {"logs": n, "wrong": n_wrong}
    for share in SHARES:
        first = wrong[: max(1, round(share * n))]
        figures[f"first_{round(100 * share)}"] = {"logs": len(first), "wrong": int(first.sum())}
    # AUC: over every (wrong, right) pair, the share where the wrong log is ranked first.
    right_after = np.cumsum(~wrong[::-1])[::-1]  # right logs at or after each position
    figures["auc"] = float(right_after[wrong].sum() / (n_wrong * (n - n_wrong))) if 0 < n_wrong < n else float("nan")
    return figures


def _found(part: dict[str, int]) -> str:
    return f"{part['wrong']} of {part['logs']}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("per_log", nargs="+", type=Path)
    parser.add_argument("--bad-r2", type=float, default=0.5)
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "review-order")
    args = parser.parse_args()
    sets, rows, singles = {}, [], []
    for path in args.per_log:
        scans = scans_of(pd.read_csv(path, dtype={"id": str}), args.bad_r2)
        with_alike = scans[scans[ALIKE] > 0]
        record = {"file": str(path), "logs_with_alike": len(with_alike),
                  "wrong_with_alike": int(with_alike["wrong"].sum()),
                  "orders": {name: order_figures(scans, order) for name, order in ORDERS.items()},
                  "single_without_alike": {name: order_figures(scans[~(scans[ALIKE] > 0)], order)
                                           for name, order in SINGLE.items()}}
        sets[str(path)] = record
        for name, figures in record["orders"].items():
            rows.append([path.parent.name + "/" + path.name, name, str(figures["logs"]),
                         str(figures["wrong"]), f"{record['wrong_with_alike']} of {record['logs_with_alike']}",
                         *(_found(figures[f"first_{round(100 * s)}"]) for s in SHARES), f"{figures['auc']:.3f}"])
        single = record["single_without_alike"]
        singles.append([path.parent.name + "/" + path.name, str(single["conf_median"]["logs"]),
                        str(single["conf_median"]["wrong"]), *(f"{single[name]['auc']:.3f}" for name in SINGLE)])
    body = (f"A log is wrong when a curve reads under R² {args.bad_r2}. Each row: the queue's order of the set's "
            "logs (`inference.review.rank_queue`) in each order; wrong logs "
            "among the first 10 / 25 / 50 % of it, and the AUC (chance a wrong log comes before a right one).\n\n"
            + markdown_table(["set", "order", "logs", "wrong", "wrong with curves drawn alike", "first 10 %",
                              "first 25 %", "first 50 %", "AUC"], rows, {2, 3, 5, 6, 7, 8}))
    body += ("\nEach confidence figure alone, least confident first (ties by log id), over the logs without curves "
             "drawn alike: AUC.\n\n" + markdown_table(["set", "logs", "wrong", *SINGLE], singles, {1, 2, 3, 4, 5, 6}))
    write_results(args.out, "review_order", {"bad_r2": args.bad_r2, "sets": sets}, "The review queue's order", body)


if __name__ == "__main__":
    main()
