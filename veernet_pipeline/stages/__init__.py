"""The pipeline's stages: one function each, called alike by the `veernet` CLI, Dagster and DVC.

Each stage lives in its own module (`ingest`, `validate`, `synthesize`, `train`, `evaluate`,
`infer`, `review_queue`) so that its code identity is its own import closure: a change to the
evaluation code does not make the trained models look stale. `cache` holds the rule that decides whether a
stage runs or returns its recorded result. This package's `__init__` imports no stage module;
`run` loads the one asked for.
"""

from __future__ import annotations

import importlib
from typing import Any

from veernet_pipeline.config import Settings
from veernet_pipeline.stages.cache import STAGE_MODULES, StageResult, recorded

STAGES: tuple[str, ...] = tuple(STAGE_MODULES)
DESCRIPTIONS: dict[str, str] = {
    "ingest": "walk the raw archive: manifest + decoded landscape scans",
    "validate": "split scans into validated and quarantined, with reason codes",
    "synthesize": "generate the binary and multiclass synthetic sets and the foreign evaluation set",
    "train_binary": "train the binary VeerNet (curve vs background)",
    "train_multiclass": "train the line-style VeerNet (background, other ink, 5 curve styles) from the binary weights",
    "evaluate": "measure the multiclass model on held-out logs; gate the champion alias",
    "infer": "digitise every validated scan to LAS + QC PNG",
    "review_queue": "rank the digitised scans for review (curves drawn alike first), with marks (data/review/)",
}


def run(stage: str, settings: Settings, **options: Any) -> StageResult:
    """Run one stage by name (`train_binary(settings, resume=True)` is `run("train_binary", settings, resume=True)`).

    Raises:
        KeyError: `stage` is not one of `STAGES`.
    """
    if stage not in STAGE_MODULES:
        raise KeyError(f"unknown stage {stage!r}; stages are {list(STAGES)}")
    return getattr(importlib.import_module(STAGE_MODULES[stage]), stage)(settings, **options)


__all__ = ["DESCRIPTIONS", "STAGES", "StageResult", "recorded", "run"]
