"""params.yaml: profiles, overrides and path resolution."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from tests.conftest import REPO, make_project
from veernet_pipeline.config import load_settings, parse_override


def test_every_profile_loads() -> None:
    for profile in ("test", "demo", "paper"):
        settings = load_settings(REPO / "params.yaml", profile=profile)
        assert settings.profile == profile
        assert settings.model.channels[-1] == 128


def test_paper_profile_keeps_the_seeds_regime() -> None:
    paper = load_settings(REPO / "params.yaml", profile="paper")
    assert paper.synthesize.binary_count == 2000 and paper.synthesize.multiclass_count == 15000
    assert (paper.train_binary.batch_size, paper.train_binary.accumulation, paper.train_binary.epochs) == (1, 1, 50)
    assert paper.train_multiclass.batch_size * paper.train_multiclass.accumulation == 16
    assert paper.train_multiclass.epochs == 50
    assert (paper.synthesize.width.min, paper.synthesize.width.max) == (3200, 12800)
    # Inference bounds are not training bounds: any length, taller tracks than the generator draws.
    assert (paper.validate_.width.max, paper.validate_.height.max) == (None, 1280)


def test_overrides_beat_the_profile_and_parse_yaml_values() -> None:
    settings = load_settings(REPO / "params.yaml", profile="test",
                             overrides=["train_binary.epochs=7", "model.channels=[4,8,8,16,128]"])
    assert settings.train_binary.epochs == 7
    assert settings.model.channels == [4, 8, 8, 16, 128]
    assert parse_override("a.b=0.5") == {"a": {"b": 0.5}}


def test_bad_input_names_the_problem(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="not of the form"):
        parse_override("epochs")
    with pytest.raises(ValueError, match="profile 'nope'"):
        load_settings(REPO / "params.yaml", profile="nope")
    with pytest.raises(ValidationError, match="typo"):
        load_settings(REPO / "params.yaml", profile="test", overrides=["train_binary.typo=1"])


def test_paths_resolve_against_the_params_folder(tmp_path: Path) -> None:
    settings = load_settings(make_project(tmp_path / "p"))
    assert settings.profile == "test"
    assert settings.path("raw") == tmp_path / "p" / "data" / "raw"
