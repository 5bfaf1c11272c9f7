"""Tranches as partitions: each stage run on one tranche processes only its folder, and outputs never collide."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from dagster import DagsterInstance, materialize

from assets.partitions import TRANCHES, register_tranches
from assets.resources import PipelineResource
from assets.scans import raw_scans, validation
from tests.archive import BROKEN_TRANCHE, TRANCHE_OF, tranche_project
from veernet_pipeline import stages
from veernet_pipeline.config import Settings
from veernet_pipeline.io.tranches import ROOT_TRANCHE, archive_dirs, tranche_states


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    return tranche_project(tmp_path_factory.mktemp("tranches"))


def test_tranches_are_the_top_level_folders_and_the_root(project: Settings, tmp_path: Path) -> None:
    raw = project.path("raw")
    states = tranche_states(raw, project.ingest.extensions)
    assert set(states) == {"north", "south", ROOT_TRANCHE}
    # A corrected sidecar changes its own tranche's digest and no other.
    sidecar = raw / "south" / "sample_02_packbits_1bit.tif.calib.json"
    sidecar.write_text(sidecar.read_text() + " ")
    after = tranche_states(raw, project.ingest.extensions)
    assert after["south"] != states["south"]
    assert {k: after[k] for k in ("north", ROOT_TRANCHE)} == {k: states[k] for k in ("north", ROOT_TRANCHE)}
    (tmp_path / ROOT_TRANCHE).mkdir()
    (tmp_path / "scan.tif").write_bytes(b"II*\0")
    with pytest.raises(ValueError, match="clashes"):
        tranche_states(tmp_path, [".tif"])


def test_a_tranche_run_reads_only_its_folder(project: Settings) -> None:
    per_tranche = {}
    for tranche in ("north", "south", ROOT_TRANCHE):
        ingested = stages.run("ingest", project, tranche=tranche)
        validated = stages.run("validate", project, tranche=tranche)
        manifest = pd.read_parquet(archive_dirs(project, tranche).ingested / "manifest.parquet")
        per_tranche[tranche] = set(manifest["path"])
        expected = {f"{'' if t == ROOT_TRANCHE else t + '/'}{name}" for name, t in TRANCHE_OF.items() if t == tranche}
        assert expected <= per_tranche[tranche]
        assert ingested.counts["files"] == len(manifest)
        assert validated.counts["validated"] + validated.counts["quarantined"] == len(manifest)
    assert len(per_tranche[BROKEN_TRANCHE]) == 4 and len(per_tranche["south"]) == 1
    # The whole archive, as DVC runs it, is exactly the union of the tranches, and its tables are elsewhere.
    whole = stages.run("ingest", project)
    manifest = pd.read_parquet(project.path("ingested") / "manifest.parquet")
    assert set(manifest["path"]) == set().union(*per_tranche.values()) and whole.counts["files"] == 6
    # Untouched tranches are cached on their own files: a new scan in south re-reads south only.
    assert stages.run("ingest", project, tranche="north").skipped


def test_partition_metadata_says_what_went_in_and_came_out(project: Settings) -> None:
    resource = PipelineResource(params_path=str(project.root / "params.yaml"), profile=project.profile)
    with DagsterInstance.ephemeral() as instance:
        assert register_tranches(instance, project) == sorted(["north", "south", ROOT_TRANCHE])
        assert set(instance.get_dynamic_partitions(TRANCHES.name)) == {"north", "south", ROOT_TRANCHE}
        result = materialize([raw_scans, validation], partition_key="north", instance=instance,
                             resources={"pipeline": resource})
        assert result.success
        events = {e.asset_key.to_user_string(): e for e in result.get_asset_materialization_events()}
        assert {e.partition for e in events.values()} == {"north"}
        meta = {key: {k: getattr(v, "value", v) for k, v in e.materialization.metadata.items()}
                for key, e in events.items()}
        assert meta["raw_scans"]["tranche"] == "north" and meta["raw_scans"]["files"] == 4
        # (validated_scans' `validated` entry is its table's path; the counts sit beside it in both assets.)
        assert meta["quarantined_scans"]["files"] == 4
        assert meta["quarantined_scans"]["validated"] == 2 and meta["quarantined_scans"]["quarantined"] == 2
