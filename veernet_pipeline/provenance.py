"""Identities of what decides an output: JSON payloads, files, and the code a module really runs.

Three things make a stage's output what it is: its parameters, its inputs and its code. The first
two are hashed as canonical JSON (`digest`) and file contents (`file_sha256`); the code is the
source of every module of this package that the stage's entry module imports, directly or not,
at module level or inside a function (`import_closure`, found by reading the import statements,
so it cannot drift from the code the way a hand-written list does). `code_digest` hashes that
closure. The stage cache, the DVC stage deps (checked by a test) and Dagster's code versions are
all built from it.
"""

from __future__ import annotations

import ast
import hashlib
import json
from collections.abc import Iterable
from functools import cache
from pathlib import Path
from typing import Any

PACKAGE = "veernet_pipeline"
PACKAGE_DIR = Path(__file__).resolve().parent
_CHUNK = 1 << 20


def digest(payload: Any) -> str:
    """Short sha256 of `payload` as canonical JSON (sorted keys; non-JSON values by `str`)."""
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()[:16]


def file_sha256(path: Path | str) -> tuple[str, int]:
    """sha256 hex digest and size in bytes of a file, streamed so a large scan is never held whole."""
    sha = hashlib.sha256()
    size = 0
    with Path(path).open("rb") as fh:
        while chunk := fh.read(_CHUNK):
            sha.update(chunk)
            size += len(chunk)
    return sha.hexdigest(), size


def folder_listing(folder: Path) -> list[tuple[str, int, int]]:
    """Cheap identity of a folder's files: each one's relative path, size and mtime (nothing is read)."""
    if not folder.exists():
        return []
    return sorted(
        (p.relative_to(folder).as_posix(), p.stat().st_size, p.stat().st_mtime_ns)
        for p in folder.rglob("*")
        if p.is_file()
    )


def module_file(name: str) -> Path | None:
    """Source file of module `name` of this package (`a.b` -> a/b.py or a/b/__init__.py), or None."""
    if name != PACKAGE and not name.startswith(PACKAGE + "."):
        return None
    base = PACKAGE_DIR.joinpath(*name.split(".")[1:])
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _imported_names(path: Path, name: str) -> set[str]:
    """Every module name of this package that `path` (module `name`) imports, anywhere in its body."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1])
                module = f"{base}.{node.module}" if node.module else base
            else:
                module = node.module or ""
            found.add(module)
            # `from pkg import mod` imports the submodule `pkg.mod` when there is one.
            found.update(f"{module}.{alias.name}" for alias in node.names)
    return {n for n in found if module_file(n) is not None}


def _parents(name: str) -> list[str]:
    """Packages Python imports before `name`: a.b.c -> [a, a.b]."""
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


@cache
def _closure(names: tuple[str, ...]) -> tuple[Path, ...]:
    seen: set[str] = set()
    todo = [n for name in names for n in (*_parents(name), name)]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        path = module_file(name)
        if path is None:
            raise ModuleNotFoundError(f"{name} is not a module of {PACKAGE} (looked under {PACKAGE_DIR})")
        seen.add(name)
        for imported in _imported_names(path, name):
            todo.extend(n for n in (*_parents(imported), imported) if n not in seen)
    return tuple(sorted({module_file(n) for n in seen}))


def import_closure(modules: Iterable[str]) -> list[Path]:
    """Source files of `modules` and of every module of this package they import, transitively.

    Imports inside functions count (stages import their heavy libraries lazily); so do the
    `__init__.py` files Python runs on the way to a module.

    Raises:
        ModuleNotFoundError: a name is not a module of this package.
    """
    return list(_closure(tuple(sorted(modules))))


def relative(path: Path) -> str:
    """`path` relative to the folder holding the package, e.g. ``veernet_pipeline/io/tiff.py``."""
    return path.relative_to(PACKAGE_DIR.parent).as_posix()


def code_digest(modules: Iterable[str]) -> str:
    """Digest of the source of `import_closure(modules)`: changes exactly when that code changes."""
    return digest([(relative(p), hashlib.sha256(p.read_bytes()).hexdigest()) for p in import_closure(modules)])
