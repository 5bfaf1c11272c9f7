"""Two trained models read on the same val logs, and the rule that decides whether the second replaces the first.

    python benchmarks/compare_models.py --before MODEL_DIR --after MODEL_DIR [--label NAME ...]
        [--max-logs 80] [--split val] [--foreign] [--profile cpu] [--name compare]

Each model is read by `evaluate_model` exactly as the evaluate stage reads (tiles, mirroring and the
profile's path search) on the first `--max-logs` logs of `--split` of the profile's multiclass set, so
both are scored on the same curves. The rule, the one the recipe's changes have been kept by since
2026-11-29 (docs/accuracy.md), is fixed here before any figure is read: the second model is kept when,
on those logs,

- its lowest per-style median R² (the gate's figure) is higher;
- its mean of the per-style median MAEs is not higher;
- no style's median coverage falls by more than `COVERAGE_SLACK`;
- its per-curve MAE is not significantly higher (one-sided Wilcoxon signed-rank, p < `ALPHA`).

With `--foreign` both are also read on the foreign renderer's set, after the rule and never for it:
the generalisation gap is reported, not decided on. Writes `results/<name>.{json,md}`; the per-log
CSVs go to `results/tmp/<name>/`.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

import pandas as pd
from _record import load_note, machine, markdown_table, write_results
from scipy.stats import wilcoxon

from veernet_pipeline.config import load_settings
from veernet_pipeline.evaluation.evaluate import evaluate_model
from veernet_pipeline.io.classes import STYLES

HERE = Path(__file__).resolve().parent
COVERAGE_SLACK = 0.005
ALPHA = 0.05


def style_figures(per_log: pd.DataFrame) -> dict[str, Any]:
    """Per-style median R², MAE and coverage, the lowest style, the mean of the MAEs, swaps over logs, all curves."""
    medians = per_log.groupby("style")[["r2", "mae", "coverage"]].median()
    swaps = per_log.groupby("id")["swap_share"].first().dropna()
    lowest = medians["r2"].idxmin()
    return {"styles": {style: {k: float(v) for k, v in medians.loc[style].items()} for style in medians.index},
            "lowest_style": lowest, "lowest_r2": float(medians.loc[lowest, "r2"]),
            "mean_mae": float(medians["mae"].mean()), "all_r2": float(per_log["r2"].median()),
            "all_mae": float(per_log["mae"].median()), "curves": len(per_log),
            "swaps_median": float(swaps.median()), "swaps_mean": float(swaps.mean())}


def paired(before: pd.DataFrame, after: pd.DataFrame) -> dict[str, Any]:
    """Per curve (log and position), how often `after`'s MAE is lower and higher, with both one-sided p-values."""
    key = ["id", "curve"]
    both = before[[*key, "mae"]].merge(after[[*key, "mae"]], on=key, suffixes=("_before", "_after")).dropna()
    diff = (both["mae_after"] - both["mae_before"]).to_numpy()
    moved = diff[diff != 0]
    if len(moved) < 6:  # below 6 pairs no ordering reaches p < 0.05
        return {"lower": int((diff < 0).sum()), "higher": int((diff > 0).sum()), "p_higher": 1.0, "p_lower": 1.0}
    return {"lower": int((diff < 0).sum()), "higher": int((diff > 0).sum()),
            "p_higher": float(wilcoxon(moved, alternative="greater").pvalue),
            "p_lower": float(wilcoxon(moved, alternative="less").pvalue)}


def verdict(before: dict[str, Any], after: dict[str, Any], pair: dict[str, Any]) -> dict[str, bool]:
    """Each condition of the rule (module docstring) and whether all hold."""
    coverage_kept = all(after["styles"][s]["coverage"] >= before["styles"][s]["coverage"] - COVERAGE_SLACK
                        for s in before["styles"] if s in after["styles"])
    checks = {"lowest style higher": after["lowest_r2"] > before["lowest_r2"],
              "mean MAE not higher": after["mean_mae"] <= before["mean_mae"],
              "coverage kept": coverage_kept,
              "per-curve MAE not significantly higher": pair["p_higher"] >= ALPHA}
    return {**checks, "kept": all(checks.values())}


def read(model: Path, label: str, set_dir: Path, split: str, settings: Any, max_logs: int, out: Path) -> pd.DataFrame:
    """Every curve of the chosen logs read by `model` as `evaluate` reads; its per-log rows."""
    params = settings.evaluate.model_copy(update={"max_logs": max_logs})
    folder = out / label
    evaluate_model(model, set_dir, folder, params, settings.extract, split, seed=settings.seed)
    return pd.read_csv(folder / "per_log.csv")


def _cells(label: str, figures: dict[str, Any]) -> list[str]:
    styles = [s for s in STYLES if s in figures["styles"]]
    return [label,
            " / ".join(f"{figures['styles'][s]['r2']:.3f}" for s in styles),
            f"{figures['lowest_r2']:.3f} ({figures['lowest_style']})",
            " / ".join(f"{figures['styles'][s]['mae']:.4f}" for s in styles),
            f"{figures['mean_mae']:.4f}",
            " / ".join(f"{figures['styles'][s]['coverage']:.3f}" for s in styles),
            f"{figures['all_r2']:.3f}; {figures['all_mae']:.4f}",
            f"{100 * figures['swaps_median']:.1f} / {100 * figures['swaps_mean']:.1f} %"]


def table(rows: list[tuple[str, dict[str, Any]]]) -> str:
    """One markdown row per (label, figures)."""
    header = ["model", "median R² per style", "lowest style", "median MAE per style", "mean MAE",
              "median coverage per style", "all curves: R²; MAE", "swaps median / mean"]
    return markdown_table(header, [_cells(label, figures) for label, figures in rows], set(range(1, len(header))))


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--before", type=Path, required=True, help="model folder (weights.pt + model.json) kept now")
    parser.add_argument("--after", type=Path, required=True, help="model folder of the candidate")
    parser.add_argument("--label", nargs=2, default=["before", "after"], help="names of the two in the tables")
    parser.add_argument("--split", default="val")
    parser.add_argument("--max-logs", type=int, default=80)
    parser.add_argument("--foreign", action="store_true", help="also read the foreign set (reported, never decided)")
    parser.add_argument("--profile", default="cpu")
    parser.add_argument("--name", default="compare")
    parser.add_argument("--out", type=Path, default=HERE / "results")
    args = parser.parse_args(argv)
    load_before = os.getloadavg()
    settings = load_settings(HERE.parent / "params.yaml", profile=args.profile)
    work = args.out / "tmp" / args.name
    sets = {"own": (settings.path("synthetic") / "multiclass", args.split, args.max_logs)}
    if args.foreign:
        sets["foreign"] = (settings.path("synthetic") / settings.evaluate.foreign, "test", 0)
    document: dict[str, Any] = {"before": str(args.before), "after": str(args.after), "labels": args.label,
                                "profile": args.profile, "split": args.split, "max_logs": args.max_logs, "sets": {}}
    body = ""
    for name, (set_dir, split, max_logs) in sets.items():
        frames = [read(model, f"{name}-{label}", set_dir, split, settings, max_logs, work)
                  for model, label in zip((args.before, args.after), args.label, strict=True)]
        figures = [style_figures(frame) for frame in frames]
        pair = paired(*frames)
        entry = {"set": str(set_dir), "split": split, "logs": int(frames[0]["id"].nunique()),
                 "figures": dict(zip(args.label, figures, strict=True)), "paired": pair}
        title = f"{name}: {entry['logs']} logs of {set_dir.name}/{split}, {figures[0]['curves']} curves"
        body += f"## {title}\n\n" + table(list(zip(args.label, figures, strict=True)))
        body += (f"\nPer curve, {args.label[1]}'s MAE lower / higher than {args.label[0]}'s: {pair['lower']} / "
                 f"{pair['higher']} (one-sided Wilcoxon: p higher {pair['p_higher']:.3g}, p lower "
                 f"{pair['p_lower']:.3g}).\n\n")
        if name == "own":
            entry["verdict"] = verdict(*figures, pair)
            body += "Rule (written before the figures): " + "; ".join(
                f"{check} {'yes' if held else 'no'}" for check, held in entry["verdict"].items()) + ".\n\n"
        document["sets"][name] = entry
    if "foreign" in document["sets"]:
        gaps = {label: document["sets"]["own"]["figures"][label]["all_r2"]
                - document["sets"]["foreign"]["figures"][label]["all_r2"] for label in args.label}
        document["generalisation_gap"] = gaps
        body += "Generalisation gap (own minus foreign, all curves' median R²): " + ", ".join(
            f"{label} {gap:.3f}" for label, gap in gaps.items()) + ".\n\n"
    document["machine"] = machine(load_before)
    body += load_note(document["machine"]) + "\n"
    write_results(args.out, args.name, document, f"{args.label[1]} against {args.label[0]}", body)
    return document


if __name__ == "__main__":
    main()
