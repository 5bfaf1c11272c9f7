"""The loss comparison run in parts (benchmarks/losses.py --work-dir): finished losses reused, stale ones redone.

The full comparison trains five multiclass models for about 5 h 30 min on 2 cores, longer than one working
session, so a run that is stopped must be continued, not restarted, and a run after a change must not reuse
what the change made stale. Real trainings and evaluations at the `test` profile's tiny shapes.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from benchmarks import losses
from tests.conftest import make_project
from veernet_pipeline.config import load_settings
from veernet_pipeline.stages.synthesize import synthesize
from veernet_pipeline.stages.train import train_binary, train_multiclass
from veernet_pipeline.training.losses import LOSSES
from veernet_pipeline.training.recipes import train_stage


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(params.yaml, binary model folder) of a test-profile project with its synthetic sets."""
    root = tmp_path_factory.mktemp("losses")
    params = make_project(root / "project")
    settings = load_settings(params, profile="test")
    synthesize(settings)
    train_stage(settings, "binary", settings.path("synthetic") / "binary", root / "binary")
    return params, root / "binary"


@pytest.fixture
def trained(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The losses `benchmarks/losses.py` trains, in order (the real training, counted)."""
    names: list[str] = []

    def counted(loss_settings, *args, **kwargs):
        names.append(loss_settings.train_multiclass.loss.name)
        return train_stage(loss_settings, *args, **kwargs)

    monkeypatch.setattr(losses, "train_stage", counted)
    return names


def _args(project: tuple[Path, Path], out: Path, *more: str) -> list[str]:
    params, binary = project
    return ["--params", str(params), "--profile", "test", "--binary", str(binary), "--json", str(out / "losses.json"),
            "--doc", str(out / "loss-ablation.md"), "--set", "evaluate.split=val", *more]


def test_a_second_run_reuses_every_loss_and_only_what_a_change_touches_is_redone(
        project: tuple[Path, Path], trained: list[str], tmp_path: Path) -> None:
    work = tmp_path / "work"
    args = _args(project, tmp_path, "--work-dir", str(work))

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


def test_parts_run_on_two_machines_meet_in_the_committed_rows(
        project: tuple[Path, Path], trained: list[str], tmp_path: Path) -> None:
    rows, out = tmp_path / "rows", tmp_path / "out"
    out.mkdir()
    first = losses.main(_args(project, out, "--work-dir", str(tmp_path / "machine-1"), "--rows-dir", str(rows),
                              "--only", "dice", "lovasz"))
    assert trained == ["dice", "lovasz"]
    assert first["pending"] == ["focal", "soft_ce", "tversky"]
    assert not (out / "losses.json").exists(), "a comparison was written with losses missing"
    assert sorted(path.name for path in rows.iterdir()) == ["dice.json", "lovasz.json"]

    # Another machine: only the rows came along (the models of machine 1 are gone).
    second = losses.main(_args(project, out, "--work-dir", str(tmp_path / "machine-2"), "--rows-dir", str(rows),
                               "--only", "focal", "soft_ce", "tversky"))
    assert trained == ["dice", "lovasz", "focal", "soft_ce", "tversky"]
    assert [row["loss"] for row in json.loads((out / "losses.json").read_text())["losses"]] == list(LOSSES)
    assert second["winner"] in LOSSES

    # A reading change on machine 2 for dice: its row's training key still holds, but its model is on
    # machine 1, so it trains again rather than scoring a model that is not there; the rest are stale.
    third = losses.main(_args(project, out, "--work-dir", str(tmp_path / "machine-2"), "--rows-dir", str(rows),
                              "--only", "dice", "--set", "extract.max_gap=5"))
    assert trained[-1] == "dice" and len(trained) == 6
    assert third["pending"] == ["focal", "lovasz", "soft_ce", "tversky"]


def test_only_without_a_place_for_its_rows_is_refused(project: tuple[Path, Path], trained: list[str],
                                                     tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        losses.main(_args(project, tmp_path, "--only", "dice"))
    assert "--rows-dir" in capsys.readouterr().err
    assert trained == []


def test_the_model_the_pipeline_trained_for_the_profile_loss_is_scored_not_trained_again(
        trained: list[str], tmp_path: Path) -> None:
    # Its own project: the pipeline's models here must not be found by the other tests' runs.
    params = make_project(tmp_path / "project")
    settings = load_settings(params, profile="test")
    synthesize(settings)
    train_binary(settings)
    train_multiclass(settings)
    recipe_loss, binary = settings.train_multiclass.loss.name, settings.path("models") / "binary"
    assert settings.train_multiclass.checkpoint_every_steps != 1

    def run(*more: str, rows: str = "rows") -> dict:
        return losses.main(["--params", str(params), "--profile", "test", "--binary", str(binary),
                            "--json", str(tmp_path / "losses.json"), "--doc", str(tmp_path / "loss-ablation.md"),
                            "--set", "evaluate.split=val", "--set", "train_multiclass.checkpoint_every_steps=1",
                            "--work-dir", str(tmp_path / "work"), "--rows-dir", str(tmp_path / rows),
                            "--only", recipe_loss, *more])

    run()
    assert trained == [], "the profile's own loss was trained again though the pipeline had trained it"
    record = json.loads((tmp_path / "rows" / f"{recipe_loss}.json").read_text())
    assert record["train"]["history"] == json.loads((settings.path("models") / "multiclass" / "history.json")
                                                    .read_text())
    # What reusing it rests on: the same training, saving its state every step, gives the same weights.
    every_step = load_settings(params, profile="test", overrides=["train_multiclass.checkpoint_every_steps=1"])
    train_stage(every_step, "multiclass", settings.path("synthetic") / "multiclass", tmp_path / "again",
                init_weights=binary / "weights.pt")
    trained.clear()
    ours, again = (torch.load(folder / "weights.pt", weights_only=True)
                   for folder in (settings.path("models") / "multiclass", tmp_path / "again"))
    assert ours.keys() == again.keys() and all(torch.equal(ours[k], again[k]) for k in ours)

    # Any other training param: not what the pipeline trained, so the loss is trained.
    run("--set", "train_multiclass.lr=0.0005")
    assert trained == [recipe_loss]
    # Weights changed after the stage recorded them: no longer what it trained.
    torch.save({k: v + 1 if v.is_floating_point() else v for k, v in ours.items()},
               settings.path("models") / "multiclass" / "weights.pt")
    run(rows="rows-after-edit")
    assert trained == [recipe_loss, recipe_loss]


def test_losses_compares_a_subset_and_trained_scores_a_model_given_without_training_it(
        trained: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    params = make_project(tmp_path / "project")
    settings = load_settings(params, profile="test")
    synthesize(settings)
    train_binary(settings)
    train_multiclass(settings)
    binary, given = settings.path("models") / "binary", settings.path("models") / "multiclass"

    def run(*more: str) -> dict:
        return losses.main(["--params", str(params), "--profile", "test", "--binary", str(binary),
                            "--json", str(tmp_path / "losses.json"), "--doc", str(tmp_path / "loss-ablation.md"),
                            "--set", "evaluate.split=val", "--set", "train_multiclass.lr=0.0005",
                            "--losses", "dice", "tversky", *more])

    # lr differs from what the stage trained with, so without --trained tversky would be trained too.
    document = run("--trained", f"tversky={given}")
    assert trained == ["dice"]
    assert [row["loss"] for row in document["losses"]] == ["dice", "tversky"]
    assert set(document["p_values_vs_winner"]) == {"dice", "tversky"} - {document["winner"]}
    assert document["histories"]["tversky"] == json.loads((given / "history.json").read_text())

    # A loss given that is not compared is refused; so are weights changed since the stage recorded them.
    with pytest.raises(SystemExit):
        run("--trained", f"focal={given}")
    assert "--trained focal=" in capsys.readouterr().err
    weights = torch.load(given / "weights.pt", weights_only=True)
    torch.save({k: v + 1 if v.is_floating_point() else v for k, v in weights.items()}, given / "weights.pt")
    with pytest.raises(ValueError, match="changed since the stage recorded it"):
        run("--trained", f"tversky={given}")
