"""Code identity: the import closure a stage runs, and a digest that moves exactly when that code does."""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from veernet_pipeline.provenance import PACKAGE_DIR, digest, file_sha256, import_closure, relative
from veernet_pipeline.stages.cache import STAGE_MODULES, stage_modules


def names(paths: list[Path]) -> set[str]:
    return {relative(p) for p in paths}


def test_closure_of_a_leaf_module_is_it_and_its_packages() -> None:
    # io/atomic.py imports only the standard library and numpy.
    assert names(import_closure(["veernet_pipeline.io.atomic"])) == {
        "veernet_pipeline/__init__.py", "veernet_pipeline/io/__init__.py", "veernet_pipeline/io/atomic.py"}


def test_closure_follows_imports_inside_functions_and_from_package_imports() -> None:
    # quality.scans imports quality.content only inside a function, and validation.schema is reached
    # from there (through validation.expectations); validation/quarantine.py does `from
    # veernet_pipeline.io import scan_errors`, which imports the submodule io/scan_errors.py.
    assert "veernet_pipeline/validation/schema.py" in names(import_closure(["veernet_pipeline.quality"]))
    assert "veernet_pipeline/io/scan_errors.py" in names(import_closure(["veernet_pipeline.validation.quarantine"]))
    with pytest.raises(ModuleNotFoundError, match="not a module of veernet_pipeline"):
        import_closure(["veernet_pipeline.no_such_module"])


@pytest.mark.parametrize("stage", sorted(STAGE_MODULES))
def test_closure_holds_every_module_python_really_imports(stage: str) -> None:
    """A second source: the modules a fresh interpreter has loaded after importing the stage's entry modules."""
    code = ("import importlib, json, sys\n"
            f"for name in {list(stage_modules(stage))!r}:\n"
            "    importlib.import_module(name)\n"
            "print(json.dumps(sorted(getattr(m, '__file__', None) or '' for k, m in sys.modules.items()"
            " if k.split('.')[0] == 'veernet_pipeline')))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                          cwd=PACKAGE_DIR.parent)
    loaded = {relative(Path(f).resolve()) for f in json.loads(done.stdout) if f}
    closure = names(import_closure(stage_modules(stage)))
    assert loaded <= closure, f"imported but not in the closure: {sorted(loaded - closure)}"


@pytest.mark.parametrize("stage", ["train_binary", "train_multiclass"])
def test_training_code_holds_no_reading_rule(stage: str) -> None:
    """How sidecar curves are read (`curve_classes`, `style_labels`) may change without retraining the net.

    Before 2026-11-27 both sat in io/classes.py, which training imports for the mask classes: an edit of
    the reading rule set aside a training run's checkpoints. Read from the source, not from an import.
    """
    closure = import_closure(stage_modules(stage))
    assert "veernet_pipeline/io/classes.py" in names(closure)  # the mask classes: training does read them
    defined = {(relative(path), node.name) for path in closure for node in ast.walk(ast.parse(path.read_text()))
               if isinstance(node, ast.FunctionDef) and node.name in ("curve_classes", "style_labels")}
    assert not defined, f"reading rules inside the training code: {sorted(defined)}"


def test_code_digest_moves_with_the_stage_code_and_only_with_it(tmp_path: Path) -> None:
    """On a copy of the package: edit a renderer module, a module of another stage, and a docs file."""
    shutil.copytree(PACKAGE_DIR, tmp_path / "veernet_pipeline", ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "notes.md").write_text("before\n")

    def stage_digest(stage: str) -> str:
        code = f"from veernet_pipeline.stages.cache import stage_code_version; print(stage_code_version({stage!r}))"
        env = {**os.environ, "PYTHONPATH": str(tmp_path)}
        return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env,
                              cwd=tmp_path).stdout.strip()

    before = {stage: stage_digest(stage) for stage in ("synthesize", "infer")}
    (tmp_path / "docs" / "notes.md").write_text("after\n")
    assert {stage: stage_digest(stage) for stage in before} == before
    with (tmp_path / "veernet_pipeline" / "synthetic" / "render.py").open("a") as fh:
        fh.write("\n# an edit\n")
    assert stage_digest("synthesize") != before["synthesize"]
    assert stage_digest("infer") == before["infer"]  # inference never imports the renderer


def test_digest_is_canonical_and_file_sha256_streams(tmp_path: Path) -> None:
    assert digest({"a": 1, "b": [2, 3]}) == digest({"b": [2, 3], "a": 1})
    assert digest({"a": 1}) != digest({"a": 2})
    (tmp_path / "f").write_bytes(b"abc")
    # sha256("abc"), the FIPS 180-2 test vector.
    assert file_sha256(tmp_path / "f") == ("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", 3)
