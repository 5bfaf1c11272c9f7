"""Checks on the models and the digitised archive: weights that behave, the gate's decision, every LAS."""

from __future__ import annotations

import json

from veernet_pipeline.config import Settings
from veernet_pipeline.evaluation.interval import interval_text
from veernet_pipeline.io.classes import NUM_CLASSES
from veernet_pipeline.io.tranches import archive_dirs
from veernet_pipeline.quality.outcome import CheckOutcome, accounting, read_table, validated_rows
from veernet_pipeline.stages import recorded

# `inference.archive.INDEX_FILE`, spelt out: that module imports torch, which this check does not need.
INDEX = "index.parquet"


def model_sanity(settings: Settings, which: str) -> CheckOutcome:
    """The trained weights load, keep the input shape on a 64 x 96 probe, give finite logits, one map per output.

    A binary model has one output (curve); a multiclass model one per mask class of `io.classes`,
    in that order (load_model already refuses a model.json whose class names differ).
    """
    import torch

    from veernet_pipeline.model.veernet import load_model, output_names

    model = load_model(settings.path("models") / which)
    expected = output_names(1 if which == "binary" else NUM_CLASSES)
    probe = torch.rand(1, 1, 64, 96, generator=torch.Generator().manual_seed(settings.seed))
    with torch.inference_mode():
        logits = model(probe)
    shape_ok = tuple(logits.shape[-2:]) == (64, 96) and logits.shape[1] == len(expected)
    finite = bool(torch.isfinite(logits).all())
    return CheckOutcome(shape_ok and finite,
                        f"output {tuple(logits.shape)} for input {tuple(probe.shape)}, {len(expected)} expected "
                        f"({', '.join(expected)})",
                        {"output_shape": list(logits.shape), "finite": finite, "outputs": list(expected),
                         "parameters": int(sum(p.numel() for p in model.parameters()))})


def champion_gate(settings: Settings) -> CheckOutcome:
    """Whether the evaluated model met the promotion gate (and so became `champion`)."""
    record = recorded(settings.path("evaluation"))
    if record is None:
        return CheckOutcome(False, "no evaluation recorded")
    figures = record["result"]["metrics"]
    decision = figures["gate"]
    gate = "an open gate" if decision["threshold"] is None else f"gate {decision['threshold']}"
    level = settings.evaluate.interval.level
    interval = interval_text(figures.get("median_r2_low"), figures.get("median_r2_high"), level)
    return CheckOutcome(bool(decision["promoted"]), f"median R^2 {decision['median_r2']:.4f}{interval} against {gate}",
                        {k: v for k, v in decision.items() if v is not None}
                        | {k: figures[k] for k in ("median_r2_low", "median_r2_high") if k in figures})


def digitized_accounting(settings: Settings, tranche: str | None = None) -> CheckOutcome:
    """Every validated scan is in the digitised index once, none failed, and each LAS it lists is on disk.

    Fails when a scan was validated after the last inference run, when the index lists a scan no
    longer validated or one twice, when a scan failed, or when a LAS file was removed since.
    """
    out = settings.path("digitized")
    validated = validated_rows(settings, tranche)
    index = read_table(archive_dirs(settings, tranche).index / INDEX, "digitized_logs")
    status = {str(k): int(v) for k, v in index["status"].value_counts().items()}
    times = index["sha256"].value_counts()
    done = index[index["status"].isin(["written", "skipped"])]
    failed = index[index["status"] == "failed"]
    problems = {
        "validated_scans_not_in_the_index": list(validated.loc[~validated["sha256"].isin(index["sha256"]), "path"]),
        "indexed_scans_not_validated": list(index.loc[~index["sha256"].isin(validated["sha256"]), "path"]),
        "scans_indexed_twice": list(index.loc[index["sha256"].isin(times[times > 1].index), "path"].unique()),
        "scans_failed": [f"{row.path}: {row.reason}" for row in failed.itertuples()],
        "las_files_missing": [f"{row.path}: {row.las}" for row in done.itertuples() if not (out / row.las).is_file()],
    }
    return accounting({"validated": len(validated), "by_status": status}, problems,
                       f"{len(validated)} validated -> {json.dumps(status)}, every LAS on disk",
                       "materialise digitized_logs again: it digitises what is missing and retries failed scans "
                       "(their reasons are in index.parquet)")
