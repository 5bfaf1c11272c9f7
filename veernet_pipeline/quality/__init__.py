"""Quality checks over stage outputs, run by the Dagster asset checks.

Each returns a `CheckOutcome` (passed, a one-line description, figures) computed from the files on
disk, so the same check can be run from a notebook or a test as from the UI. Each one tests what
the stage that wrote its input did not itself decide, so that it can fail: `scans` holds the checks
on the archive and the validated scans, `models` those on the weights, the gate and the digitised
archive. Nothing here imports Dagster.
"""

from veernet_pipeline.quality.models import champion_gate, digitized_accounting, model_sanity
from veernet_pipeline.quality.outcome import CheckOutcome
from veernet_pipeline.quality.scans import (
    manifest_accounting,
    quarantine_summary,
    validated_expectations,
    validated_schema,
)

__all__ = [
    "CheckOutcome",
    "champion_gate",
    "digitized_accounting",
    "manifest_accounting",
    "model_sanity",
    "quarantine_summary",
    "validated_expectations",
    "validated_schema",
]
