"""The MLflow store: a real SQLite store in tmp, models as weights + code, aliases."""

from __future__ import annotations

import shutil
from pathlib import Path

import mlflow
import numpy as np
import pytest
import torch

from veernet_pipeline.config import Settings
from veernet_pipeline.io.classes import NUM_CLASSES
from veernet_pipeline.model.veernet import build_model, load_model, save_model
from veernet_pipeline.tracking import store
from veernet_pipeline.tracking.gate import gate
from veernet_pipeline.tracking.store import CHAMPION, MULTICLASS_MODEL


@pytest.fixture()
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    return tmp_path


def test_store_defaults_to_the_project_and_yields_to_the_env(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert store.tracking_uri(root) == f"sqlite:///{root / 'mlruns.db'}"
    # Pointing MLflow at one project's store does not pin the next project to it.
    store.configure(root)
    assert store.tracking_uri(root / "other") == f"sqlite:///{root / 'other' / 'mlruns.db'}"
    monkeypatch.setenv("MLFLOW_TRACKING_URI", "sqlite:////elsewhere/x.db")
    assert store.tracking_uri(root) == "sqlite:////elsewhere/x.db"


def test_registered_model_round_trips_at_a_new_width(root: Path, test_settings: Settings) -> None:
    model = build_model(test_settings.model, NUM_CLASSES)
    save_model(root / "model", model, test_settings.model, NUM_CLASSES)
    with store.stage_run(root, "train_multiclass", {"train": {"epochs": 1}}, {"profile": "test"}):
        store.log_epoch(1, {"loss": 0.5, "note": "skipped", "per_item": [0.2, float("nan")],
                            "val_iou": {"background": 0.99, "solid": 0.4, "dashed": None}})
        version = store.log_model(root / "model", "veernet-multiclass")
        run_id = mlflow.active_run().info.run_id
    logged = mlflow.get_run(run_id).data.metrics
    assert logged == {"loss": 0.5, "val_iou.background": 0.99, "val_iou.solid": 0.4, "per_item_0": 0.2}
    assert version == "1"
    assert store.alias_version(root, "veernet-multiclass", "champion") is None
    with pytest.raises(LookupError, match="alias 'champion' is not set"):
        store.resolve_model(root, "models:/veernet-multiclass@champion")

    store.set_alias(root, "veernet-multiclass", "champion", version)
    folder, resolved = store.download_model(root, "models:/veernet-multiclass@champion", root / "cache")
    assert resolved == "1"
    loaded = load_model(folder)
    for name, tensor in model.state_dict().items():
        assert torch.equal(tensor, loaded.state_dict()[name]), name

    # The pyfunc flavour rebuilds the net from code, so any width works (no shape-fixed export).
    pyfunc = mlflow.pyfunc.load_model("models:/veernet-multiclass@champion")
    for width in (320, 352):
        probs = pyfunc.predict(np.full((96, width), 255, np.uint8), params={"tile_width": 256, "tile_overlap": 64})
        assert probs.shape == (NUM_CLASSES, 96, width)
        np.testing.assert_allclose(probs.sum(axis=0), 1.0, rtol=1e-5)


def _register(root: Path, settings: Settings, seed: int) -> dict[str, torch.Tensor]:
    """Register a freshly initialised net as `veernet-multiclass` in the store of `root`; return its weights."""
    torch.manual_seed(seed)
    model = build_model(settings.model, NUM_CLASSES)
    save_model(root / "model", model, settings.model, NUM_CLASSES)
    with store.stage_run(root, "train_multiclass", {}, {}):
        store.log_model(root / "model", "veernet-multiclass")
    return model.state_dict()


def _equal(weights: dict[str, torch.Tensor], folder: Path) -> bool:
    loaded = load_model(folder).state_dict()
    return all(torch.equal(tensor, loaded[name]) for name, tensor in weights.items())


def test_two_stores_version_1_get_their_own_cache_folders(tmp_path: Path, test_settings: Settings,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    cache = tmp_path / "cache"
    weights = {store_name: _register(tmp_path / store_name, test_settings, seed)
               for store_name, seed in (("a", 1), ("b", 2))}
    folders = {}
    for store_name in weights:
        folders[store_name], version = store.download_model(tmp_path / store_name, "models:/veernet-multiclass/1",
                                                            cache)
        assert version == "1"
    assert folders["a"] != folders["b"]
    assert _equal(weights["a"], folders["a"]) and _equal(weights["b"], folders["b"])
    assert not _equal(weights["a"], folders["b"])  # the two nets differ, so the checks above can tell them apart

    # A cached version is not fetched again: it loads with its store's artifacts gone.
    shutil.rmtree(tmp_path / "a" / "mlartifacts")
    again, _ = store.download_model(tmp_path / "a", "models:/veernet-multiclass/1", cache)
    assert again == folders["a"] and _equal(weights["a"], again)


def test_an_interrupted_download_leaves_nothing_that_counts_as_cached(root: Path, test_settings: Settings) -> None:
    weights = _register(root, test_settings, 1)
    [stored] = (root / "mlartifacts").rglob("weights.pt")
    saved = stored.read_bytes()
    # A dangling link lists as a file and fails when copied: the download breaks off midway.
    stored.unlink()
    stored.symlink_to(root / "gone")
    cache = root / "cache"
    with pytest.raises(OSError):
        store.download_model(root, "models:/veernet-multiclass/1", cache)
    assert list(cache.iterdir()) == []  # neither a partial folder under the cached name nor a temporary one

    stored.unlink()
    stored.write_bytes(saved)
    folder, _ = store.download_model(root, "models:/veernet-multiclass/1", cache)
    assert _equal(weights, folder)


def test_bad_model_uri_says_what_it_needs(root: Path) -> None:
    with pytest.raises(ValueError, match="models:/NAME@ALIAS"):
        store.resolve_model(root, "runs:/abc/model")


def test_gate_promotes_on_figures_never_on_nan_and_never_backwards(root: Path, test_settings: Settings) -> None:
    params = test_settings.model
    save_model(root / "m", build_model(params, NUM_CLASSES), params, NUM_CLASSES)
    versions = []
    for _ in range(4):
        with store.stage_run(root, "train_multiclass", {}, {}):
            versions.append(store.log_model(root / "m", MULTICLASS_MODEL))

    def decide(version: str, figure: float, threshold: float | None) -> dict:
        return gate(root, MULTICLASS_MODEL, version, figure, threshold)

    def champion() -> str | None:
        return store.alias_version(root, MULTICLASS_MODEL, CHAMPION)

    assert not decide(versions[0], float("nan"), 0.5)["promoted"] and champion() is None
    assert not decide(versions[0], 0.4, 0.5)["promoted"] and champion() is None
    assert decide(versions[1], 0.8, 0.5)["promoted"] and champion() == versions[1]
    decision = decide(versions[2], 0.7, 0.5)  # meets the bar, but worse than the champion
    assert not decision["promoted"] and decision["previous_median_r2"] == pytest.approx(0.8)
    assert champion() == versions[1]
    # An open gate promotes the newest version whatever its figure.
    assert decide(versions[3], float("nan"), None)["promoted"] and champion() == versions[3]
