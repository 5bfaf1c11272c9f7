"""The loss comparison run in parts (benchmarks/losses.py --work-dir): finished losses reused, stale ones redone.

The full comparison trains five multiclass models for about 5 h 30 min on 2 cores, longer than one working
session, so a run that is stopped must be continued, not restarted, and a run after a change must not reuse
what the change made stale. Real trainings and evaluations at the `test` profile's tiny shapes.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks import losses
from tests.conftest import make_project
from veernet_pipeline.config import load_settings
from veernet_pipeline.stages.synthesize import synthesize
from veernet_pipeline.training.losses import LOSSES
from veernet_pipeline.training.recipes import train_stage


def test_a_second_run_reuses_every_loss_and_only_what_a_change_touches_is_redone(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    params = make_project(tmp_path / "project")
    settings = load_settings(params, profile="test")
    synthesize(settings)
    binary = tmp_path / "binary"
    train_stage(settings, "binary", settings.path("synthetic") / "binary", binary)
    trained: list[str] = []

    def counted(loss_settings, *args, **kwargs):  # the real training, recording which loss it ran
        trained.append(loss_settings.train_multiclass.loss.name)
        return train_stage(loss_settings, *args, **kwargs)

    monkeypatch.setattr(losses, "train_stage", counted)
    work = tmp_path / "work"
    args = ["--params", str(params), "--profile", "test", "--binary", str(binary), "--work-dir", str(work),
            "--json", str(tmp_path / "losses.json"), "--doc", str(tmp_path / "loss-ablation.md"),
            "--set", "evaluate.split=val"]

    first = losses.main(args)
    written = json.loads((tmp_path / "losses.json").read_text())
    assert trained == list(LOSSES)
    rows = {loss: (work / loss / losses.ROW_FILE).read_bytes() for loss in LOSSES}

    second = losses.main(args)
    assert trained == list(LOSSES), "an unchanged run trained again"
    assert {loss: (work / loss / losses.ROW_FILE).read_bytes() for loss in LOSSES} == rows
    assert json.loads((tmp_path / "losses.json").read_text())["losses"] == written["losses"]
    assert (second["winner"], second["decisive"]) == (first["winner"], first["decisive"])

    # A reading param changes the evaluation only: every loss is scored again, none trained.
    losses.main([*args, "--set", "extract.max_gap=5"])
    assert trained == list(LOSSES)
    for loss in LOSSES:
        record = json.loads((work / loss / losses.ROW_FILE).read_text())
        assert record["keys"]["evaluate"] != json.loads(rows[loss])["keys"]["evaluate"]
        assert record["keys"]["train"] == json.loads(rows[loss])["keys"]["train"]

    # A training param makes every model stale: all five train again; the old checkpoints are set aside, not deleted.
    losses.main([*args, "--set", "train_multiclass.lr=0.0005"])
    assert trained == list(LOSSES) * 2
    for loss in LOSSES:
        assert len(list((work / loss / "model").glob("checkpoints.superseded-*/last.pt"))) == 1
