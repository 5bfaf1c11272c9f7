"""dvc.yaml lists, for each stage, exactly the code and the params the stage's fingerprint covers.

The fingerprint (stages/cache.py) hashes the import closure of the stage's modules and the params
sections of STAGE_PARAMS; DVC decides from the deps and params in dvc.yaml. When the two lists are
equal, both runners re-run a stage for the same edits and for no others.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from tests.conftest import REPO
from veernet_pipeline.provenance import PACKAGE, import_closure, relative
from veernet_pipeline.stages.cache import STAGE_MODULES, STAGE_PARAMS, stage_modules

ALWAYS_PARAMS = {"profile", "profiles"}  # the profile block can change any section


def code_deps(deps: list[str], root: Path) -> set[str]:
    """The package's source files a stage's deps name: a folder stands for every .py file under it."""
    files: set[str] = set()
    for dep in deps:
        if not dep.startswith(PACKAGE + "/"):
            continue
        path = root / dep
        found = sorted(path.rglob("*.py")) if path.is_dir() else [path]
        files.update(p.relative_to(root).as_posix() for p in found)
    return files


def coverage_problems(stages: dict, root: Path) -> list[str]:
    """What dvc.yaml misses or adds against each stage's real code and params, one line each."""
    problems = []
    for stage in STAGE_MODULES:
        spec = stages.get(stage)
        if spec is None:
            problems.append(f"{stage}: not in dvc.yaml")
            continue
        real = {relative(p) for p in import_closure(stage_modules(stage))}
        listed = code_deps(spec.get("deps", []), root)
        problems += [f"{stage}: deps miss {f} (the stage imports it)" for f in sorted(real - listed)]
        problems += [f"{stage}: deps list {f}, which the stage never imports" for f in sorted(listed - real)]
        params = set(spec.get("params", []))
        wanted = ALWAYS_PARAMS | set(STAGE_PARAMS[stage])
        problems += [f"{stage}: params miss {p}" for p in sorted(wanted - params)]
        problems += [f"{stage}: params list {p}, which the stage does not read" for p in sorted(params - wanted)]
    return problems


def test_dvc_deps_and_params_are_the_code_and_params_each_stage_runs() -> None:
    stages = yaml.safe_load((REPO / "dvc.yaml").read_text())["stages"]
    assert coverage_problems(stages, REPO) == []


def test_a_missing_or_extra_dep_is_named() -> None:
    stages = yaml.safe_load((REPO / "dvc.yaml").read_text())["stages"]
    ingest = stages["ingest"]
    ingest["deps"] = [d for d in ingest["deps"] if d != "veernet_pipeline/io/tiff.py"] + ["veernet_pipeline/reading"]
    ingest["params"] = [p for p in ingest["params"] if p != "ingest"]
    problems = coverage_problems(stages, REPO)
    assert "ingest: deps miss veernet_pipeline/io/tiff.py (the stage imports it)" in problems
    assert "ingest: deps list veernet_pipeline/reading/predict.py, which the stage never imports" in problems
    assert "ingest: params miss ingest" in problems
    assert all(p.startswith("ingest:") for p in problems)
