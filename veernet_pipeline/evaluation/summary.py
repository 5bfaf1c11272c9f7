"""Per-log records -> the figures of `metrics.json`, and the own-vs-foreign comparison.

Every figure is summarised over (log, curve) records six ways: per curve position (A, B, C, ...
as the sidecar lists them), per line style, per number of curves in the track, per track height
(tall = taller than `TALL_PX`, the training sets' tallest until tall tracks were rendered), per
whether another curve of the track is drawn alike (`drawn_alike`: the same style and pen, so only
the lines' continuity tells them apart: `alike`, else `own`), and per track feature the set's
index names (its optional `features` column, e.g. "steep": a curve counts under every feature of
its track).

The gate's figure is the lowest per-*style* median R^2. A curve letter is only a position in the
sidecar: with one to five curves per track, "C" pools whatever third curves happen to be, over
fewer logs than "A". A style is what the net must learn to see, and a style read badly is a class
of curves an operator cannot trust; with the seeds' two curves (A solid, B broken) the per-style
and per-letter figures are the same.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from veernet_pipeline.evaluation.interval import interval_text
from veernet_pipeline.evaluation.metrics import MaskScores
from veernet_pipeline.evaluation.report import PER_LOG_COLUMNS
from veernet_pipeline.io.atomic import write_json_atomic, write_text_atomic

CURVE_METRICS = ("r2", "r2_flat", "mae", "mse", "coverage", "pearson_abs", "misread_share", "swap_share",
                 "curve_swap_share", "own_line", "mae_physical")
TALL_PX = 640
GATE_FIGURE = "lowest per-style median R^2"
# metrics.json section -> how records are grouped for it.
GROUPINGS: dict[str, Callable[[pd.DataFrame], pd.Series]] = {
    "curves": lambda frame: frame["curve"].astype(str),
    "styles": lambda frame: frame["style"].astype(str),
    "curve_counts": lambda frame: frame["n_curves"].astype(int).astype(str),
    "heights": lambda frame: np.where(frame["height"].astype(int) > TALL_PX, "tall", "standard"),
    "drawn_alike": lambda frame: np.where(frame["drawn_alike"].astype(int) > 1, "alike", "own"),
}
SECTIONS = (*GROUPINGS, "features")
# The comparison table's rows: (metrics.json figure, label, lower is better).
COMPARED = (("median_r2", "median R²", False), ("p10_r2", "p10 R²", False), ("median_mae", "median MAE", True),
            ("median_coverage", "median coverage", False), ("mean_curve_swap_share", "mean swap share", True))


def group_stats(frame: pd.DataFrame) -> dict[str, float]:
    """Median, 10th/90th percentile and mean of every curve metric over the rows (NaN skipped), and `n` rows."""
    stats: dict[str, float] = {"n": len(frame)}
    for metric in CURVE_METRICS:
        values = frame[metric].to_numpy(dtype=np.float64)
        stats[f"median_{metric}"] = finite_stat(np.median, values)
        stats[f"p10_{metric}"] = finite_stat(lambda v: np.percentile(v, 10), values)
        stats[f"p90_{metric}"] = finite_stat(lambda v: np.percentile(v, 90), values)
        stats[f"mean_{metric}"] = finite_stat(np.mean, values)
    return stats


def summarise(records: Sequence[dict[str, Any]], pooled: MaskScores, split: str, n_logs: int) -> dict[str, Any]:
    """Per-log records -> `metrics.json`: each grouping's stats, the pooled mask scores, the gate's figures.

    Returns:
        `split`, `n_logs`, `n_curves` (records), `swap_share` (mean over logs), one section per
        `SECTIONS` entry ({group: stats}), `classes` (mask scores per class), `gate_figure` (its
        name), `median_r2` (lowest per-style median R^2: the gate's figure; NaN when a style was
        never read, so it fails), `median_mae` and `median_mse` (highest per-style medians).
    """
    frame = pd.DataFrame(list(records), columns=list(PER_LOG_COLUMNS))
    sections = {name: {str(key): group_stats(group) for key, group in frame.groupby(by(frame), sort=True)}
                for name, by in GROUPINGS.items()}
    tags = frame["features"].fillna("").astype(str).str.split(",")
    sections["features"] = {tag: group_stats(frame[tags.apply(lambda have, tag=tag: tag in have)])
                            for tag in sorted({t.strip() for have in tags for t in have if t.strip()})}
    # Worst style decides: np.min/np.max propagate NaN, so a style never read fails the gate.
    worst = {key: [s[key] for s in sections["styles"].values()] or [float("nan")]
             for key in ("median_r2", "median_mae", "median_mse")}
    return {
        "split": split,
        "n_logs": n_logs,
        "n_curves": len(frame),
        # Share of compared columns where identities are swapped, mean over logs.
        "swap_share": finite_stat(np.mean, frame.drop_duplicates("id")["swap_share"].to_numpy(dtype=np.float64)),
        **sections,
        "classes": {str(k): v for k, v in pooled.compute().items()},
        "gate_figure": GATE_FIGURE,
        "median_r2": float(np.min(worst["median_r2"])),
        "median_mae": float(np.max(worst["median_mae"])),
        "median_mse": float(np.max(worst["median_mse"])),
    }


def compare(own: Mapping[str, Any], foreign: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One row per grouping, group and compared figure: own, foreign and the gap (own - foreign).

    The gap is signed so that a positive gap means the foreign renderer is read worse.
    """
    rows = []
    for section in SECTIONS:
        for group in sorted(set(own.get(section, {})) | set(foreign.get(section, {}))):
            for key, label, lower_better in COMPARED:
                a = own.get(section, {}).get(group, {}).get(key, float("nan"))
                b = foreign.get(section, {}).get(group, {}).get(key, float("nan"))
                rows.append({"section": section, "group": group, "figure": label, "own": a, "foreign": b,
                             "gap": (b - a) if lower_better else (a - b)})
    return rows


def comparison_markdown(rows: Sequence[dict[str, Any]], own: Mapping[str, Any], foreign: Mapping[str, Any]) -> str:
    """The comparison as markdown: one table per grouping, own vs foreign and the gap."""
    lines = [f"# Own test split vs the foreign renderer\n\nOwn: {own['n_logs']} logs ({own['n_curves']} curves) "
             f"of split `{own['split']}`; foreign: {foreign['n_logs']} logs ({foreign['n_curves']} curves). Gap = how "
             "much worse the foreign set is read (own - foreign for R² and coverage, foreign - own for MAE and "
             "swaps). Gate figure (own set only): " + f"{GATE_FIGURE} = {_gate(own)}; the foreign set's: "
             f"{_gate(foreign)}.\n"]
    for section in SECTIONS:
        chosen = [r for r in rows if r["section"] == section]
        if not chosen:
            continue
        lines += [f"\n## By {section.replace('_', ' ')}\n", "| group | figure | own | foreign | gap |",
                  "|---|---|---:|---:|---:|"]
        lines += [f"| {r['group']} | {r['figure']} | {_fmt(r['own'])} | {_fmt(r['foreign'])} | {_fmt(r['gap'])} |"
                  for r in chosen]
    return "\n".join(lines) + "\n"


def write_comparison(out_dir: Path, own: Mapping[str, Any], foreign: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Write `comparison.json` (the `compare` rows) and `comparison.md` (its tables) into `out_dir`, atomically."""
    rows = compare(own, foreign)
    write_json_atomic(Path(out_dir) / "comparison.json", {"own": {k: own[k] for k in ("split", "n_logs", "n_curves")},
                                                          "foreign": {k: foreign[k] for k in ("n_logs", "n_curves")},
                                                          "rows": rows})
    write_text_atomic(Path(out_dir) / "comparison.md", comparison_markdown(rows, own, foreign))
    return rows


def finite_stat(stat: Callable[[np.ndarray], Any], values: np.ndarray) -> float:
    """`stat` over the finite values, NaN when there is none."""
    finite = values[np.isfinite(values)]
    return float(stat(finite)) if finite.size else float("nan")


def _gate(metrics: Mapping[str, Any]) -> str:
    """The gate's figure, with its bootstrap interval when the evaluation gave one (`evaluate_model`)."""
    interval = metrics.get("interval")
    if interval is None:
        return _fmt(metrics["median_r2"])
    return _fmt(metrics["median_r2"]) + interval_text(*interval["median_r2"], interval["level"])


def _fmt(value: float) -> str:
    return "n/a" if not np.isfinite(value) else f"{value:.4f}"
