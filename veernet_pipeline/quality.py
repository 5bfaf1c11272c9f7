"""Quality checks over stage outputs, run by the Dagster asset checks.

Each returns a `CheckOutcome` (passed, a one-line description, figures) computed from the files on
disk, so the same check can be run from a notebook or a test as from the UI. Each one tests what
the stage that wrote its input did not itself decide, so that it can fail:

- `manifest_accounting`: the archive on disk, walked as ingest walks it, against validated +
  quarantined rows (a scan added or removed after ingest, a row lost or written twice);
- `validated_schema`: the files the validated rows point at (`validation.files`);
- `validated_expectations`: the pixel statistics of the validated scans (`expectations.content_suite`);
- `quarantine_summary`, `model_sanity`, `champion_gate`, `digitized_accounting`: what quarantine
  holds, how the saved weights behave, the recorded gate decision, the digitised index against
  the validated scans and the LAS files on disk.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from veernet_pipeline.config import Settings
from veernet_pipeline.io.ingest import scan_files
from veernet_pipeline.stages import recorded

# How many scan names a check lists in its metadata; its counts always cover every scan.
LISTED = 20
VALIDATED = "validated.parquet"
QUARANTINE = "quarantine.parquet"
INDEX = "index.parquet"


@dataclass(frozen=True)
class CheckOutcome:
    passed: bool
    description: str
    metadata: dict[str, Any] = field(default_factory=dict)


def _table(path: Path, asset: str) -> pd.DataFrame:
    if not path.is_file():
        raise FileNotFoundError(f"{path}: not found; materialise the {asset} asset first")
    return pd.read_parquet(path)


def _accounting(counts: dict[str, Any], problems: dict[str, list[str]], summary: str, fix: str) -> CheckOutcome:
    """Passes when every problem list is empty; the description counts each non-empty one and says the fix."""
    found = {name: sorted(names) for name, names in problems.items() if names}
    if not found:
        return CheckOutcome(True, summary, counts)
    description = "; ".join(f"{name.replace('_', ' ')}: {len(names)}" for name, names in found.items())
    return CheckOutcome(False, f"{description}; {fix}", {**counts, **{k: v[:LISTED] for k, v in found.items()}})


def manifest_accounting(settings: Settings) -> CheckOutcome:
    """Every scan file in the archive is in validated or quarantine exactly once, and every row's file is there.

    The archive is walked with ingest's own `scan_files` (``ingest.extensions``, case-insensitive), not
    read from the manifest, so this fails when a scan was added to or removed from `paths.raw` after
    ingest, or when a row is missing from both tables or appears twice across them.
    """
    raw = settings.path("raw")
    on_disk = {p.relative_to(raw).as_posix() for p in scan_files(raw, settings.ingest.extensions)}
    validated = _table(settings.path("validated") / VALIDATED, "validated_scans")
    quarantined = _table(settings.path("validated") / QUARANTINE, "quarantined_scans")
    listed = pd.concat([validated["path"], quarantined["path"]], ignore_index=True)
    times = listed.value_counts()
    problems = {
        "archive_files_in_neither_table": list(on_disk - set(listed)),
        "rows_listed_twice": list(times[times > 1].index),
        "rows_whose_file_left_the_archive": list(set(listed) - on_disk),
    }
    counts = {"archive": len(on_disk), "validated": len(validated), "quarantined": len(quarantined)}
    return _accounting(counts, problems,
                       f"{len(on_disk)} scans in {raw} = {len(validated)} validated + {len(quarantined)} quarantined",
                       "materialise raw_scans and validated_scans again to account for the archive as it is")


def validated_schema(settings: Settings) -> CheckOutcome:
    """The pandera schema of `validation.files` holds for the files every validated row points at."""
    from veernet_pipeline.validation.files import file_facts, file_failures

    validated = _table(settings.path("validated") / VALIDATED, "validated_scans")
    failures = file_failures(file_facts(validated, settings.path("ingested"), settings.path("raw")))
    if not failures:
        return CheckOutcome(True, f"{len(validated)} validated scans: each decoded file readable, one uint8 page of "
                                  "the row's landscape shape; paths and hashes unique; sidecars present",
                            {"rows": len(validated)})
    by_check = dict(Counter(f["check"] for f in failures))
    scans = len({f["path"] for f in failures})
    return CheckOutcome(False, f"{scans} of {len(validated)} validated scans fail: {json.dumps(by_check)}",
                        {"rows": len(validated), "by_check": by_check, "failures": failures[:LISTED]})


def validated_expectations(settings: Settings) -> CheckOutcome:
    """The Great Expectations content suite (light paper, plausible ink share, unique bytes) on validated scans."""
    from veernet_pipeline.validation.expectations import run_content_expectations

    validated = _table(settings.path("validated") / VALIDATED, "validated_scans")
    result = run_content_expectations(validated)
    failed = [{**{k: e[k] for k in ("column", "expectation", "bound", "unexpected_count")},
               "unexpected_paths": e["unexpected_paths"][:LISTED], "unexpected_values": e["unexpected_values"][:LISTED]}
              for e in result["expectations"] if not e["success"]]
    total = len(result["expectations"])
    description = f"{total - len(failed)}/{total} content expectations met on {result['rows']} validated scans"
    if failed:
        description += ": " + "; ".join(f"{e['column']} {json.dumps(e['bound'])} missed by {e['unexpected_count']}"
                                        if e["bound"] else f"{e['column']} repeated in {e['unexpected_count']}"
                                        for e in failed)
    return CheckOutcome(bool(result["success"]), description, {"rows": result["rows"], "failed": failed})


def quarantine_summary(settings: Settings) -> CheckOutcome:
    """Passes only when nothing waits in quarantine; the figures say why scans were rejected."""
    quarantined = _table(settings.path("validated") / QUARANTINE, "quarantined_scans")
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
    """Every validated scan is in the digitised index once, none failed, and each LAS it lists is on disk.

    Fails when a scan was validated after the last inference run, when the index lists a scan no
    longer validated or one twice, when a scan failed, or when a LAS file was removed since.
    """
    out = settings.path("digitized")
    validated = _table(settings.path("validated") / VALIDATED, "validated_scans")
    index = _table(out / INDEX, "digitized_logs")
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
    return _accounting({"validated": len(validated), "by_status": status}, problems,
                       f"{len(validated)} validated -> {json.dumps(status)}, every LAS on disk",
                       "materialise digitized_logs again: it digitises what is missing and retries failed scans "
                       "(their reasons are in index.parquet)")
