"""How much of the R² tail is curves whose truth barely moves: per-curve figures against the truth's spread.

    python benchmarks/flat_truth.py PER_LOG_CSV:SET_DIR:SPLIT [...] [--out DIR]

R² = 1 - MSE / Var(truth). A curve whose truth stays within a pixel or two for the whole log (a tension
line, a caliper in gauge hole, a resistivity pegged at its scale's edge) has a variance of the order
of the reading's own pixel error, so a reading a fraction of a pixel off scores R² far below 0 while
its MAE is tiny. For each set this rebuilds every curve's truth as the evaluate stage draws it
(`evaluation.truth.truth_values` then `drawn_tracks`, the sidecar's scales and backup wraps), takes
its standard deviation in pixel rows over the columns that have one, and reports:

- per spread threshold (`SPREADS`, px): the curves whose truth varies less, how many of them read
  under R² 0, and their median MAE in pixel rows (MAE x track height);
- the per-style median and 10th percentile of R² over every curve and over the curves whose truth
  varies at least `KEPT` px, and the count of curves under R² 0 in each.

Expected relation, checked per curve: R² is about 1 - MSE / (std / height)²; the evaluation scores against
the truth's band (a column's sweep), so the two agree closely only where the band is narrow, which is
where the truth is flat. Writes `flat_truth.json` and `flat_truth.md` into `--out` (default
`results/flat-truth/`).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from _record import markdown_table, write_results

from veernet_pipeline.evaluation.truth import drawn_tracks, truth_values
from veernet_pipeline.io.calibration import Calibration
from veernet_pipeline.io.sets import read_split

SPREADS = (1.0, 2.0, 4.0)
KEPT = 2.0  # px: the per-style figures are given again without curves whose truth varies less


def truth_spread(per_log: pd.DataFrame, set_dir: Path, split: str) -> np.ndarray:
    """Per row of `per_log`, the standard deviation of its curve's drawn truth in pixel rows.

    Shape:
        Returns (len(per_log),).
    """
    logs = read_split(set_dir, split)
    logs.index = logs["id"].astype(str)
    spread = np.full(len(per_log), np.nan)
    for log_id, rows in per_log.groupby(per_log["id"].astype(str), sort=False):
        row = logs.loc[log_id]
        calibration = Calibration.from_file(set_dir / row["calibration"])
        height, width = int(rows["height"].iloc[0]), int(rows["width"].iloc[0])
        n_curves = int(rows["n_curves"].iloc[0])
        truth = drawn_tracks(truth_values(set_dir / row["las"], calibration, width, n_curves), calibration, height)
        for position, curve in zip(per_log.index.get_indexer(rows.index), rows["curve"], strict=True):
            k = ord(curve) - ord("A")
            spread[position] = float(np.nanstd(truth[k] * height))
    return spread


def set_figures(per_log: pd.DataFrame) -> dict[str, Any]:
    """The flat curves per threshold and the per-style R² with and without those under `KEPT` (module docstring)."""
    mae_px = per_log["mae"] * per_log["height"]
    by_spread = {}
    for spread in SPREADS:
        flat = per_log["spread_px"] < spread
        by_spread[str(spread)] = {"curves": int(flat.sum()), "under_0": int((flat & (per_log["r2"] < 0)).sum()),
                                  "median_mae_px": float(mae_px[flat].median()) if flat.any() else float("nan")}
    styles = {}
    for name, part in (("all", per_log), ("varying", per_log[per_log["spread_px"] >= KEPT])):
        grouped = part.groupby("style")["r2"]
        styles[name] = {"curves": len(part), "under_0": int((part["r2"] < 0).sum()),
                        "median": grouped.median().to_dict(), "p10": grouped.quantile(0.1).to_dict()}
    expected = 1 - per_log["mse"] / (per_log["spread_px"] / per_log["height"]) ** 2
    flat = per_log["spread_px"] < KEPT
    agree = float(np.corrcoef(expected[flat], per_log["r2"][flat])[0, 1]) if flat.sum() > 2 else float("nan")
    return {"curves": len(per_log), "by_spread": by_spread, "styles": styles, "flat_r2_vs_formula_r": agree}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sets", nargs="+", help="PER_LOG_CSV:SET_DIR:SPLIT")
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "flat-truth")
    args = parser.parse_args()
    record, spread_rows, style_rows = {}, [], []
    for spec in args.sets:
        csv, set_dir, split = spec.split(":")
        per_log = pd.read_csv(csv, dtype={"id": str})
        per_log["spread_px"] = truth_spread(per_log, Path(set_dir), split)
        figures = set_figures(per_log)
        record[csv] = figures
        name = Path(csv).name
        for spread, part in figures["by_spread"].items():
            spread_rows.append([name, spread, str(part["curves"]), str(part["under_0"]),
                                f"{part['median_mae_px']:.2f}"])
        for which, part in figures["styles"].items():
            style_rows.append([name, which, str(part["curves"]), str(part["under_0"]),
                               *(f"{part['median'].get(s, np.nan):.3f} / {part['p10'].get(s, np.nan):.2f}"
                                 for s in sorted(figures["styles"]["all"]["median"]))])
    styles = sorted(next(iter(record.values()))["styles"]["all"]["median"])
    body = ("Curves whose truth varies less than each spread (standard deviation of the drawn truth, pixel rows), "
            "how many read under R² 0, and their median MAE in pixel rows.\n\n"
            + markdown_table(["set", "spread under, px", "curves", "under R² 0", "median MAE, px"], spread_rows,
                             {1, 2, 3, 4})
            + f"\nPer style, median / p10 R²: every curve, and the curves whose truth varies at least {KEPT:g} px.\n\n"
            + markdown_table(["set", "which curves", "count", "under R² 0", *styles], style_rows,
                             set(range(2, 4 + len(styles))))
            + "\nCorrelation of R² with 1 - MSE / (spread / height)² over the flat curves: "
            + ", ".join(f"{Path(k).name} {v['flat_r2_vs_formula_r']:.3f}" for k, v in record.items()) + ".\n")
    write_results(args.out, "flat_truth", {"spreads": SPREADS, "kept": KEPT, "sets": record},
                  "Curves whose truth barely moves", body)


if __name__ == "__main__":
    main()
