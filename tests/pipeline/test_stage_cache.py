"""The stage cache: a stage re-runs when its inputs' content changes or its output is gone, and only then."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from tests.conftest import make_project
from veernet_pipeline import stages
from veernet_pipeline.config import load_settings
from veernet_pipeline.synthetic.sample import build_sample_archive


@pytest.fixture
def settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    params = make_project(tmp_path / "project")
    monkeypatch.setenv("VEERNET_PARAMS", str(params))
    monkeypatch.delenv("VEERNET_PROFILE", raising=False)
    settings = load_settings(params)
    build_sample_archive(settings.path("raw"), settings)
    return settings


def _ran(settings) -> dict[str, bool]:
    """Run ingest then validate; which of them did the work (instead of returning the recorded result)."""
    return {name: not stages.run(name, settings).skipped for name in ("ingest", "validate")}


def test_unchanged_inputs_reuse_and_a_corrected_sidecar_reaches_validation(settings) -> None:
    assert _ran(settings) == {"ingest": True, "validate": True}
    assert _ran(settings) == {"ingest": False, "validate": False}

    validated = pd.read_parquet(settings.path("validated") / "validated.parquet")
    row = validated[validated["calibration"] != ""].iloc[0]
    # The sidecar's content changes, its scan does not: ingest re-runs (the archive listing moved), and
    # validation must too, since the manifest records the sidecar's hash.
    (settings.path("raw") / row["calibration"]).write_text(json.dumps({"depth": {"top": 5, "bottom": 5}}))
    assert _ran(settings) == {"ingest": True, "validate": True}
    quarantine = pd.read_parquet(settings.path("validated") / "quarantine.parquet")
    assert "bad_calibration" in set(quarantine.loc[quarantine["path"] == row["path"], "reason_code"])


def test_a_deleted_output_is_rebuilt(settings) -> None:
    _ran(settings)
    (settings.path("validated") / "validated.parquet").unlink()
    assert _ran(settings) == {"ingest": False, "validate": True}
    assert (settings.path("validated") / "validated.parquet").is_file()
