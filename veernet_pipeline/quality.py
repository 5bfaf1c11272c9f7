"""Quality checks over stage outputs, run by the Dagster asset checks.

Each returns a `CheckOutcome` (passed, a one-line description, figures) computed from the
files on disk, so the same check can be run from a notebook or a test as from the UI.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from veernet_pipeline.config import Settings
from veernet_pipeline.stages import recorded


@dataclass(frozen=True)
class CheckOutcome:
    passed: bool
    description: str
    metadata: dict[str, Any] = field(default_factory=dict)


def manifest_accounting(settings: Settings) -> CheckOutcome:
    """Every file in the manifest is either validated or quarantined, once."""
    manifest = pd.read_parquet(settings.path("ingested") / "manifest.parquet")
    validated = pd.read_parquet(settings.path("validated") / "validated.parquet")
    quarantined = pd.read_parquet(settings.path("validated") / "quarantine.parquet")
    out = len(validated) + len(quarantined)
    same = set(manifest["path"]) == set(validated["path"]) | set(quarantined["path"])
    passed = len(manifest) == out and same
    return CheckOutcome(passed, f"{len(manifest)} in, {len(validated)} validated + {len(quarantined)} quarantined",
                        {"files": len(manifest), "validated": len(validated), "quarantined": len(quarantined)})


def validated_schema(settings: Settings) -> CheckOutcome:
    """The pandera schema built from params' bounds holds for every validated row."""
    import pandera.errors

    from veernet_pipeline.validation.schema import manifest_schema

    validated = pd.read_parquet(settings.path("validated") / "validated.parquet")
    try:
        manifest_schema(settings.validate_).validate(validated, lazy=True)
    except pandera.errors.SchemaErrors as exc:
        cases = exc.failure_cases
        return CheckOutcome(False, f"{len(cases)} schema failures in validated scans",
                            {"failures": cases.head(20).astype(str).to_dict(orient="records")})
    return CheckOutcome(True, f"{len(validated)} validated rows satisfy the schema", {"rows": len(validated)})


def validated_expectations(settings: Settings) -> CheckOutcome:
    """The Great Expectations suite built from the same bounds succeeds on the validated rows."""
    from veernet_pipeline.validation.expectations import run_expectations

    validated = pd.read_parquet(settings.path("validated") / "validated.parquet")
    result = run_expectations(validated, settings.validate_)
    failed = [r for r in result["expectations"] if not r["success"]]
    met = len(result["expectations"]) - len(failed)
    return CheckOutcome(bool(result["success"]), f"{met}/{len(result['expectations'])} expectations met",
                        {"rows": result["rows"], "failed": failed})


def quarantine_summary(settings: Settings) -> CheckOutcome:
    """Passes only when nothing waits in quarantine; the figures say why scans were rejected."""
    quarantined = pd.read_parquet(settings.path("validated") / "quarantine.parquet")
    by_reason = {str(k): int(v) for k, v in quarantined["reason_code"].value_counts().items()}
    return CheckOutcome(quarantined.empty, f"{len(quarantined)} scans in quarantine",
                        {"quarantined": len(quarantined), "by_reason": by_reason,
                         "files": quarantined["path"].tolist()[:50]})


def model_sanity(settings: Settings, which: str) -> CheckOutcome:
    """The trained weights load, keep the input shape on a 64 x 96 probe, and give finite logits."""
    import torch

    from veernet_pipeline.model.veernet import load_model

    model = load_model(settings.path("models") / which)
    probe = torch.rand(1, 1, 64, 96, generator=torch.Generator().manual_seed(settings.seed))
    with torch.inference_mode():
        logits = model(probe)
    shape_ok = tuple(logits.shape[-2:]) == (64, 96)
    finite = bool(torch.isfinite(logits).all())
    return CheckOutcome(shape_ok and finite, f"output {tuple(logits.shape)} for input {tuple(probe.shape)}",
                        {"output_shape": list(logits.shape), "finite": finite,
                         "parameters": int(sum(p.numel() for p in model.parameters()))})


def champion_gate(settings: Settings) -> CheckOutcome:
    """Whether the evaluated model met the promotion gate (and so became `champion`)."""
    record = recorded(settings.path("evaluation"))
    if record is None:
        return CheckOutcome(False, "no evaluation recorded")
    decision = record["result"]["metrics"]["gate"]
    gate = "an open gate" if decision["threshold"] is None else f"gate {decision['threshold']}"
    return CheckOutcome(bool(decision["promoted"]), f"median R^2 {decision['median_r2']:.4f} against {gate}",
                        {k: v for k, v in decision.items() if v is not None})


def digitized_accounting(settings: Settings) -> CheckOutcome:
    """Every validated scan is written, skipped as already done, or recorded as failed; none failed."""
    validated = pd.read_parquet(settings.path("validated") / "validated.parquet")
    index = pd.read_parquet(settings.path("digitized") / "index.parquet")
    status = {str(k): int(v) for k, v in index["status"].value_counts().items()}
    accounted = len(index) == len(validated) and set(index["sha256"]) == set(validated["sha256"])
    failed = status.get("failed", 0)
    return CheckOutcome(accounted and failed == 0, f"{len(validated)} validated -> {json.dumps(status)}",
                        {"validated": len(validated), "by_status": status})
