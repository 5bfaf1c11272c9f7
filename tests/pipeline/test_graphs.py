"""The DVC stage graph and the Dagster asset graph are one graph."""

from __future__ import annotations

from pathlib import PurePosixPath

import yaml

from assets.definitions import defs
from assets.metadata import STAGE_TAG
from tests.conftest import REPO


def _out_paths(stage: dict) -> list[str]:
    paths = []
    for key in ("outs", "metrics", "plots"):
        for entry in stage.get(key, []):
            paths.append(next(iter(entry)) if isinstance(entry, dict) else entry)
    return paths


def _within(path: str, folder: str) -> bool:
    return path == folder or PurePosixPath(folder) in PurePosixPath(path).parents


def dvc_graph() -> tuple[set[str], set[tuple[str, str]]]:
    stages = yaml.safe_load((REPO / "dvc.yaml").read_text())["stages"]
    outs = {name: _out_paths(stage) for name, stage in stages.items()}
    edges = set()
    for name, stage in stages.items():
        for dep in stage.get("deps", []):
            for producer, paths in outs.items():
                if any(_within(dep, p) or _within(p, dep) for p in paths):
                    edges.add((producer, name))
    return set(stages), edges


def dagster_graph() -> tuple[set[str], set[tuple[str, str]]]:
    graph = defs.resolve_asset_graph()
    stage_of = {key: graph.get(key).tags[STAGE_TAG] for key in graph.materializable_asset_keys}
    edges = set()
    for key, stage in stage_of.items():
        for parent in graph.get(key).parent_keys:
            if stage_of[parent] != stage:
                edges.add((stage_of[parent], stage))
    return set(stage_of.values()), edges


def test_stage_names_and_edges_agree() -> None:
    dvc_nodes, dvc_edges = dvc_graph()
    dagster_nodes, dagster_edges = dagster_graph()
    assert dvc_nodes == dagster_nodes
    assert dvc_edges == dagster_edges


def test_dvc_commands_are_the_stage_names() -> None:
    stages = yaml.safe_load((REPO / "dvc.yaml").read_text())["stages"]
    for name, stage in stages.items():
        assert stage["cmd"].split()[:2] == ["veernet", name]


def test_graph_is_the_documented_pipeline() -> None:
    _, edges = dvc_graph()
    assert edges == {
        ("ingest", "validate"),
        ("validate", "synthesize"),
        ("synthesize", "train_binary"),
        ("synthesize", "train_multiclass"),
        ("train_binary", "train_multiclass"),
        ("train_multiclass", "evaluate"),
        ("synthesize", "evaluate"),
        ("validate", "infer"),
        ("evaluate", "infer"),
        ("infer", "review_queue"),
    }
