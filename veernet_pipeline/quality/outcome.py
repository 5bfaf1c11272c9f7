"""What a check returns, and the helpers the checks share to read tables and report problem lists."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from veernet_pipeline.config import Settings
from veernet_pipeline.io.tranches import archive_dirs

# `validation.validate.VALIDATED_FILE` and `QUARANTINE_FILE`: spelt out because that module imports
# Great Expectations (seconds), which the checks that do not run it should not pay for.
VALIDATED = "validated.parquet"
QUARANTINE = "quarantine.parquet"
# How many scan names a check lists in its metadata; its counts always cover every scan.
LISTED = 20


@dataclass(frozen=True)
class CheckOutcome:
    """One check's verdict: ``passed``, a one-line ``description`` and the ``metadata`` figures behind it."""

    passed: bool
    description: str
    metadata: dict[str, Any] = field(default_factory=dict)


def read_table(path: Path, asset: str) -> pd.DataFrame:
    """A stage's parquet output; a missing file names the asset to materialise."""
    if not path.is_file():
        raise FileNotFoundError(f"{path}: not found; materialise the {asset} asset first")
    return pd.read_parquet(path)


def validated_rows(settings: Settings, tranche: str | None = None) -> pd.DataFrame:
    """The validate stage's ``validated.parquet`` (of the whole archive, or of one tranche)."""
    return read_table(archive_dirs(settings, tranche).validated / VALIDATED, "validated_scans")


def accounting(counts: dict[str, Any], problems: dict[str, list[str]], summary: str, fix: str) -> CheckOutcome:
    """Passes when every problem list is empty; the description counts each non-empty one and says the fix."""
    found = {name: sorted(names) for name, names in problems.items() if names}
    if not found:
        return CheckOutcome(True, summary, counts)
    description = "; ".join(f"{name.replace('_', ' ')}: {len(names)}" for name, names in found.items())
    return CheckOutcome(False, f"{description}; {fix}", {**counts, **{k: v[:LISTED] for k, v in found.items()}})
