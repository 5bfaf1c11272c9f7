"""A project whose archive arrives in tranches, and a small registered champion: what archive-run tests share."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.conftest import make_project
from tests.nets import untrained_veernet
from veernet_pipeline.config import Settings, load_settings
from veernet_pipeline.io.classes import NUM_CLASSES

# Where the embedded sample's scans go: three tranches, one of them the archive's root folder.
TRANCHE_OF = {"sample_00_zlib.tif": "north", "sample_01_lzw_portrait.tif": "north",
              "sample_02_packbits_1bit.tif": "south", "sample_03_lzw_nocalib.tif": "_root"}
BROKEN_TRANCHE = "north"  # the sample's truncated scan and too-tall page stay there
MODEL = "veernet-multiclass"


def tranche_project(folder: Path) -> Settings:
    """A `test` project whose raw archive holds the sample split into north/, south/ and the root folder."""
    from veernet_pipeline.synthetic.sample import build_sample_archive

    settings = load_settings(make_project(folder), profile="test")
    raw = settings.path("raw")
    build_sample_archive(raw / BROKEN_TRANCHE, settings)
    for name, tranche in TRANCHE_OF.items():
        if tranche == BROKEN_TRANCHE:
            continue
        target = raw if tranche == "_root" else raw / tranche
        target.mkdir(parents=True, exist_ok=True)
        for source in (raw / BROKEN_TRANCHE).glob(f"{name}*"):
            shutil.move(source, target / source.name)
    return settings


def register_champion(settings: Settings) -> str:
    """An untrained multiclass VeerNet of the test profile registered in the project's store as `champion`."""
    from veernet_pipeline.model.veernet import save_model
    from veernet_pipeline.tracking import store

    folder = settings.path("models") / "multiclass"
    save_model(folder, untrained_veernet(settings, NUM_CLASSES), settings.model, NUM_CLASSES)
    with store.stage_run(settings.root, "train_multiclass", {}, {"profile": settings.profile}):
        version = store.log_model(folder, MODEL)
    store.set_alias(settings.root, MODEL, "champion", version)
    return version
