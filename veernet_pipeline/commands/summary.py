"""`veernet summary`: the end-of-run summary `make demo` prints: what came in, what went out, where it lies."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import pandas as pd

from veernet_pipeline.config import Settings, load_settings
from veernet_pipeline.evaluation.interval import interval_text
from veernet_pipeline.inference.archive import INDEX_FILE
from veernet_pipeline.io.tranches import archive_dirs, run_tranches
from veernet_pipeline.stages import recorded
from veernet_pipeline.tracking.store import tracking_uri

HELP = "print what the last run produced"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """No options of its own: it reads the recorded stage results of the chosen params and profile."""


def run(args: argparse.Namespace) -> dict[str, Any]:
    return summarize(load_settings(args.params, args.profile, args.set))


def summarize(settings: Settings) -> dict[str, Any]:
    """Collect the recorded stage results into one dict with a human-readable `text`.

    The archive's figures are those of its tranches when it was run tranche by tranche (Dagster's
    partitions, `make demo`), else those of the whole-archive run (`dvc repro`, `veernet validate`).
    """
    runs = [archive_dirs(settings, t) for t in run_tranches(settings)] or [archive_dirs(settings)]
    validated = [recorded(dirs.validated) for dirs in runs]
    evaluation = recorded(settings.path("evaluation"))
    if None in validated or evaluation is None or not all((d.index / INDEX_FILE).is_file() for d in runs):
        raise FileNotFoundError("no completed run to summarise: run the pipeline first (make demo)")
    counts = {key: sum(v["result"]["counts"][key] for v in validated) for key in ("files", "validated", "quarantined")}
    metrics = evaluation["result"]["metrics"]
    digitized = pd.concat([pd.read_parquet(d.index / INDEX_FILE) for d in runs], ignore_index=True)
    quarantine = pd.concat([pd.read_parquet(d.validated / "quarantine.parquet") for d in runs], ignore_index=True)
    las_files = sorted(Path(p) for p in digitized.loc[digitized["status"] != "failed", "las"])
    level = settings.evaluate.interval.level
    interval = interval_text(metrics.get("median_r2_low"), metrics.get("median_r2_high"), level)
    lines = [
        f"profile: {settings.profile}",
        f"scans: {counts['files']} in, {counts['validated']} accepted, {counts['quarantined']} quarantined",
        *(f"  quarantined {row.path}: {row.reason_code} ({row.reason})" for row in quarantine.itertuples()),
        f"held-out logs: {evaluation['result']['counts']['logs']}; "
        f"median R^2 {metrics['median_r2']:.4f}{interval}, "
        f"median MAE {metrics['median_mae']:.4f} (track units, worst style)",
        f"champion gate: {'passed' if metrics['gate']['promoted'] else 'not passed'} "
        f"(threshold {metrics['gate']['threshold'] if metrics['gate']['threshold'] is not None else 'open'})",
        f"LAS files ({len(las_files)}): {settings.path('digitized')}",
        *(f"validation report: {d.validated / 'report.json'}" for d in runs),
        f"MLflow store: {tracking_uri(settings.root)}",
        f"evaluation: {settings.path('evaluation')}",
    ]
    return {"text": "\n".join(lines), "counts": counts, "median_r2": metrics["median_r2"],
            "median_mae": metrics["median_mae"], "las_files": [str(p) for p in las_files]}
