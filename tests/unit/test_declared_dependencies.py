"""Every package the library and the Dagster code import is one pyproject.toml asks for, not one that happens to
come with another (psutil came with dvc and dagster until inference/memory.py imported it; dagster_shared with
dagster until pyproject named it beside its lockstep packages)."""

from __future__ import annotations

import ast
import sys
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from tests.conftest import REPO


def imported_modules(folders: list[Path]) -> dict[str, set[str]]:
    """Top-level module -> the files under `folders` that import it (absolute imports, the standard library out)."""
    found: dict[str, set[str]] = {}
    for path in (p for folder in folders for p in sorted(folder.rglob("*.py"))):
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in {n.split(".")[0] for n in names} - set(sys.stdlib_module_names):
                found.setdefault(name, set()).add(path.name)
    return found


def undeclared(folders: list[Path], pyproject: Path) -> dict[str, set[str]]:
    """Installed modules that no distribution pyproject's dependencies name provides, with the files importing each.

    A module several distributions provide (mlflow: mlflow, mlflow-skinny, mlflow-tracing) counts as declared
    when any of them is.
    """
    project = tomllib.loads(pyproject.read_text())["project"]
    declared = {canonicalize_name(Requirement(spec).name) for spec in project["dependencies"]}
    declared.add(canonicalize_name(project["name"]))  # the project's own package
    owners = packages_distributions()
    return {module: files for module, files in imported_modules(folders).items()
            if module in owners and not declared.intersection(canonicalize_name(d) for d in owners[module])}


def test_the_library_and_the_dagster_code_import_only_what_pyproject_declares() -> None:
    assert undeclared([REPO / "veernet_pipeline", REPO / "assets"], REPO / "pyproject.toml") == {}


def test_an_import_pyproject_does_not_declare_is_named(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "mod.py").write_text("import json\nimport psutil\nfrom numpy import zeros\nimport mlflow\n"
                                             "from . import sibling\nimport veernet_pipeline_not_installed\n")
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text('[project]\nname = "x"\ndependencies = ["numpy>=1", "mlflow>=3"]\n')
    assert undeclared([tmp_path / "pkg"], pyproject) == {"psutil": {"mod.py"}}
