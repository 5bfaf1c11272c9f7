"""The stage cache: a stage whose code, parameters and inputs are unchanged returns its recorded result.

One rule decides for every runner (the `veernet` CLI, Dagster, `dvc repro`). A stage's
**fingerprint** is the digest of

- its code: `provenance.code_digest` of the stage module and everything it imports (read from
  the import statements, so it cannot miss a module); `dvc.yaml` lists the same files as the
  stage's deps (a test derives the closure and fails when `dvc.yaml` misses one) and Dagster
  shows the same digest as the asset's `code_version`;
- its parameters: the params.yaml sections it reads, after profile and overrides;
- its inputs: each upstream output's **data version** (a digest of that output's content, not of
  how it was made), so a code change that leaves an upstream output byte-identical re-runs that
  stage only, exactly as DVC decides from output hashes.

`_stage.json` in each output folder records the fingerprint, the data version of the output and
the result. A stage is skipped when the fingerprint matches and the output still has the
recorded data version (an output deleted or edited by hand is rebuilt). Dagster gets the data
version as the materialisation's `data_version`.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from veernet_pipeline.config import Settings
from veernet_pipeline.io.atomic import write_text_atomic
from veernet_pipeline.provenance import code_digest, digest, file_sha256

log = logging.getLogger(__name__)

STAGE_FILE = "_stage.json"
# The modules a stage runs. The CLI is in every stage's code: `veernet <stage>` is what DVC runs.
CLI_MODULE = "veernet_pipeline.cli"
# The params.yaml sections each stage reads (`seed` is the top-level seed; `section.key` one key of a
# section). dvc.yaml lists the same ones, plus `profile` and `profiles`, which can change any section
# (a test keeps them equal).
STAGE_PARAMS: dict[str, tuple[str, ...]] = {
    # The validate bounds decide which scans ingest decodes (nothing validation rejects is decoded), on
    # the net's grid (infer.net_dpi, infer.untagged_dpi: io/resolution.py).
    "ingest": ("ingest", "validate", "infer.net_dpi", "infer.untagged_dpi"),
    "validate": ("validate",),
    "synthesize": ("seed", "synthesize", "validate", "foreign"),
    "train_binary": ("seed", "model", "train_binary"),
    "train_multiclass": ("seed", "model", "train_multiclass"),
    "evaluate": ("extract", "evaluate", "infer.low_confidence"),
    "infer": ("extract", "infer"),
    "review_queue": ("review",),
}
STAGE_MODULES: dict[str, str] = {
    "ingest": "veernet_pipeline.stages.ingest",
    "validate": "veernet_pipeline.stages.validate",
    "synthesize": "veernet_pipeline.stages.synthesize",
    "train_binary": "veernet_pipeline.stages.train",
    "train_multiclass": "veernet_pipeline.stages.train",
    "evaluate": "veernet_pipeline.stages.evaluate",
    "infer": "veernet_pipeline.stages.infer",
    "review_queue": "veernet_pipeline.stages.review_queue",
}


@dataclass
class StageResult:
    """What one stage did: the numbers and paths runners surface as metadata.

    `fingerprint` identifies what went in (code, params, inputs); `data_version` what came out.
    """

    stage: str
    fingerprint: str = ""
    data_version: str = ""
    skipped: bool = False
    counts: dict[str, int] = field(default_factory=dict)
    metrics: dict[str, Any] = field(default_factory=dict)
    paths: dict[str, str] = field(default_factory=dict)


def stage_modules(stage: str) -> tuple[str, str]:
    """The entry modules whose import closure is `stage`'s code."""
    if stage not in STAGE_MODULES:
        raise KeyError(f"unknown stage {stage!r}; stages are {sorted(STAGE_MODULES)}")
    return CLI_MODULE, STAGE_MODULES[stage]


def stage_code_version(stage: str) -> str:
    """Digest of every source file `stage` runs (Dagster's `code_version` for its assets)."""
    return code_digest(stage_modules(stage))


def files_version(paths: Iterable[Path]) -> str:
    """Data version of an output made of these files: a digest of their names and contents.

    A missing file counts as content of its own (None), so an output deleted by hand never matches
    the version recorded when it was written, and its stage runs again.
    """
    return digest([(Path(p).name, file_sha256(p)[0] if Path(p).is_file() else None) for p in paths])


def recorded(folder: Path) -> dict[str, Any] | None:
    """The `_stage.json` record of a completed stage output, or None."""
    record = folder / STAGE_FILE
    return json.loads(record.read_text()) if record.is_file() else None


def upstream(folder: Path) -> str:
    """The data version of a completed upstream output, the identity downstream fingerprints use.

    Raises:
        FileNotFoundError: the folder holds no completed output; run its stage first.
    """
    record = recorded(folder)
    if record is None:
        raise FileNotFoundError(f"{folder} holds no completed stage output ({STAGE_FILE}); run its stage first")
    return record["data_version"]


def flat_counts(counts: dict[str, Any]) -> dict[str, int]:
    """Nested counts ({"by_reason": {"truncated": 1}}) as flat `by_reason.truncated` integers."""
    flat: dict[str, int] = {}
    for key, value in counts.items():
        if isinstance(value, dict):
            flat.update({f"{key}.{k}": int(v) for k, v in value.items()})
        else:
            flat[key] = int(value)
    return flat


def stage_params(stage: str, settings: Settings) -> dict[str, Any]:
    """The parameter sections and keys `stage` reads (`STAGE_PARAMS`), as plain data."""
    return {name: _param(settings, name) for name in STAGE_PARAMS[stage]}


def _param(settings: Settings, name: str) -> Any:
    """`seed`, a section (`validate`) or one key of a section (`infer.net_dpi`), as plain data."""
    if name == "seed":
        return settings.seed
    section, _, key = name.partition(".")
    values = settings.section(section)
    return values[key] if key else values


def fingerprint(stage: str, settings: Settings, inputs: dict[str, Any]) -> str:
    """Digest of `stage`'s code, parameter sections and input identities."""
    return digest({"stage": stage, "code": stage_code_version(stage), "params": stage_params(stage, settings),
                   "inputs": inputs})


def run_cached(
    stage: str,
    settings: Settings,
    outputs: Iterable[Path],
    inputs: dict[str, Any],
    work: Callable[[str], StageResult],
    data_version: Callable[[], str],
) -> StageResult:
    """Run `work(fingerprint)` unless every output folder records this fingerprint and still holds its data.

    Args:
        stage: the stage name.
        settings: the run's settings; the stage's sections (`STAGE_PARAMS`) go into the fingerprint.
        outputs: the stage's output folders; each gets a `_stage.json`.
        inputs: identities of its inputs (upstream data versions, raw listings).
        work: does the stage and returns its result; receives the fingerprint (e.g. to key checkpoints).
        data_version: digest of the outputs as they are on disk now.
    """
    outputs = list(outputs)
    key = fingerprint(stage, settings, inputs)
    records = [recorded(folder) for folder in outputs]
    if all(r is not None and r["fingerprint"] == key for r in records):
        current = data_version()
        if all(r.get("data_version") == current for r in records):
            log.info("%s: code, params and inputs unchanged (%s); reusing the recorded result", stage, key)
            result = StageResult(**records[0]["result"])
            result.skipped = True
            return result
        log.warning("%s: outputs changed since they were recorded (data version %s); running again", stage, current)
    # Until this run completes, its folders must not look like a completed (earlier) output.
    for folder in outputs:
        (folder / STAGE_FILE).unlink(missing_ok=True)
    started = time.perf_counter()
    result = work(key)
    result.fingerprint = key
    result.data_version = data_version()
    result.metrics.setdefault("wall_clock_s", round(time.perf_counter() - started, 3))
    for folder in outputs:
        write_text_atomic(folder / STAGE_FILE, json.dumps(
            {"fingerprint": key, "data_version": result.data_version, "result": asdict(result)},
            indent=2, default=str) + "\n")
    return result
