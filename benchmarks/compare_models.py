"""Two trained models read on the same val logs, and the rule that decides whether the second replaces the first.

    python benchmarks/compare_models.py --before MODEL_DIR --after MODEL_DIR [MODEL_DIR ...]
        [--labels NAME NAME ...] [--max-logs 80] [--split val] [--foreign] [--profile cpu] [--name compare]

Each model is read by `evaluate_model` exactly as the evaluate stage reads (tiles, mirroring and the
profile's path search) on the first `--max-logs` logs of `--split` of the profile's multiclass set, so
all are scored on the same curves. The rule, the one the recipe's changes have been kept by since
2026-11-29 (docs/accuracy.md), is fixed here before any figure is read: a candidate (`--after`, each
judged against `--before` alone) is kept when, on those logs,

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
TALL_PX = 640  # tracks taller than the seeds' strips (the evaluate stage's `tall`)


def style_figures(per_log: pd.DataFrame) -> dict[str, Any]:
    """Per-style median R², MAE and coverage, the lowest style, the mean of the MAEs, swaps over logs, all curves,
    median R² per curves in the track and on tall tracks."""
    medians = per_log.groupby("style")[["r2", "mae", "coverage"]].median()
    swaps = per_log.groupby("id")["swap_share"].first().dropna()
    lowest = medians["r2"].idxmin()
    by_count = per_log.groupby("n_curves")["r2"].median()
    return {"styles": {style: {k: float(v) for k, v in medians.loc[style].items()} for style in medians.index},
            "curve_counts": {int(n): float(r2) for n, r2 in by_count.items()},
            "tall_r2": float(per_log.loc[per_log["height"] > TALL_PX, "r2"].median()),
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
    evaluate_model(model, set_dir, folder, params, settings.extract, split, seed=settings.seed,
                   low_confidence=settings.infer.low_confidence)
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
            f"{100 * figures['swaps_median']:.1f} / {100 * figures['swaps_mean']:.1f} %",
            " / ".join(f"{figures['curve_counts'][n]:.3f}" for n in sorted(figures["curve_counts"])),
            f"{figures['tall_r2']:.3f}"]


def table(rows: list[tuple[str, dict[str, Any]]]) -> str:
    """One markdown row per (label, figures)."""
    header = ["model", "median R² per style", "lowest style", "median MAE per style", "mean MAE",
              "median coverage per style", "all curves: R²; MAE", "swaps median / mean",
              "median R² by curves in the track", "tall tracks: median R²"]
    return markdown_table(header, [_cells(label, figures) for label, figures in rows], set(range(1, len(header))))


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--before", type=Path, required=True, help="model folder (weights.pt + model.json) kept now")
    parser.add_argument("--after", type=Path, nargs="+", required=True, help="model folders of the candidates")
    parser.add_argument("--labels", nargs="+", help="names of --before and each --after in the tables")
    parser.add_argument("--split", default="val")
    parser.add_argument("--max-logs", type=int, default=80)
    parser.add_argument("--foreign", action="store_true", help="also read the foreign set (reported, never decided)")
    parser.add_argument("--profile", default="cpu")
    parser.add_argument("--name", default="compare")
    parser.add_argument("--out", type=Path, default=HERE / "results")
    args = parser.parse_args(argv)
    models = [args.before, *args.after]
    labels = args.labels or ["before", *(f"after {i + 1}" for i in range(len(args.after)))]
    if len(labels) != len(models):
        parser.error(f"--labels names {len(labels)} models; give one name for --before and one for each --after")
    load_before = os.getloadavg()
    settings = load_settings(HERE.parent / "params.yaml", profile=args.profile)
    work = args.out / "tmp" / args.name
    sets = {"own": (settings.path("synthetic") / "multiclass", args.split, args.max_logs)}
    if args.foreign:
        sets["foreign"] = (settings.path("synthetic") / settings.evaluate.foreign, "test", 0)
    document: dict[str, Any] = {"models": dict(zip(labels, map(str, models), strict=True)), "profile": args.profile,
                                "split": args.split, "max_logs": args.max_logs, "sets": {}}
    body = ""
    for name, (set_dir, split, max_logs) in sets.items():
        frames = [read(model, f"{name}-{i}", set_dir, split, settings, max_logs, work)
                  for i, model in enumerate(models)]
        figures = [style_figures(frame) for frame in frames]
        entry: dict[str, Any] = {"set": str(set_dir), "split": split, "logs": int(frames[0]["id"].nunique()),
                                 "figures": dict(zip(labels, figures, strict=True)), "candidates": {}}
        title = f"{name}: {entry['logs']} logs of {set_dir.name}/{split}, {figures[0]['curves']} curves"
        body += f"## {title}\n\n" + table(list(zip(labels, figures, strict=True))) + "\n"
        for label, frame, figure in zip(labels[1:], frames[1:], figures[1:], strict=True):
            pair = paired(frames[0], frame)
            candidate: dict[str, Any] = {"paired": pair}
            body += (f"- {label}: per curve, MAE lower / higher than {labels[0]}'s {pair['lower']} / {pair['higher']} "
                     f"(one-sided Wilcoxon: p higher {pair['p_higher']:.3g}, p lower {pair['p_lower']:.3g})")
            if name == "own":
                candidate["verdict"] = verdict(figures[0], figure, pair)
                body += "; the rule: " + "; ".join(
                    f"{check} {'yes' if held else 'no'}" for check, held in candidate["verdict"].items())
            entry["candidates"][label] = candidate
            body += ".\n"
        document["sets"][name] = entry
        body += "\n"
    if "foreign" in document["sets"]:
        gaps = {label: document["sets"]["own"]["figures"][label]["all_r2"]
                - document["sets"]["foreign"]["figures"][label]["all_r2"] for label in labels}
        document["generalisation_gap"] = gaps
        body += "Generalisation gap (own minus foreign, all curves' median R²): " + ", ".join(
            f"{label} {gap:.3f}" for label, gap in gaps.items()) + ".\n\n"
    document["machine"] = machine(load_before)
    body += load_note(document["machine"]) + "\n"
    write_results(args.out, args.name, document, f"{', '.join(labels[1:])} against {labels[0]}", body)
    return document


if __name__ == "__main__":
    main()
