"""The package import graph flows one way: each package imports only packages below it (README, Layout)."""

from __future__ import annotations

import ast

from veernet_pipeline.provenance import PACKAGE, PACKAGE_DIR

# Bottom to top, as the README documents it; a package may import those on lower lines (and itself).
LAYERS: tuple[tuple[str, ...], ...] = (
    ("errors",),
    ("allocator", "config", "progress", "provenance", "resources"),
    ("io",),
    ("pages",),
    ("validation",),
    ("synthetic", "foreign"),
    ("model",),
    ("reading",),
    ("tracking",),
    ("evaluation",),
    ("training",),
    ("inference",),
    ("stages",),
    ("quality", "commands"),
    ("cli",),
)


def package_of(path_parts: tuple[str, ...]) -> str:
    """Top-level unit of a file: its package folder, or the module name for a top-level file."""
    return path_parts[0] if len(path_parts) > 1 else path_parts[0].removesuffix(".py")


def import_edges() -> set[tuple[str, str]]:
    """(importer, imported) pairs between top-level units, from every import statement, anywhere in a file."""
    edges: set[tuple[str, str]] = set()
    for path in PACKAGE_DIR.rglob("*.py"):
        source = package_of(path.relative_to(PACKAGE_DIR).parts)
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
            else:
                continue
            for name in names:
                parts = name.split(".")
                if parts[0] == PACKAGE and len(parts) > 1 and parts[1] != "__version__" and parts[1] != source:
                    edges.add((source, parts[1]))
    return edges


def violations(edges: set[tuple[str, str]], layers: tuple[tuple[str, ...], ...]) -> list[str]:
    """Edges that point upwards or sideways, two-way pairs, and units missing from the layering."""
    level = {unit: i for i, row in enumerate(layers) for unit in row}
    problems = [f"{a} <-> {b} import each other" for a, b in sorted(edges) if (b, a) in edges and a < b]
    for a, b in sorted(edges):
        if a not in level or b not in level:
            problems.append(f"{a} -> {b}: {a if a not in level else b} is not in the documented layering")
        elif level[b] >= level[a]:
            problems.append(f"{a} (layer {level[a]}) imports {b} (layer {level[b]}), which is not below it")
    return problems


def test_every_package_imports_only_the_layers_below_it() -> None:
    units = {package_of(p.relative_to(PACKAGE_DIR).parts) for p in PACKAGE_DIR.rglob("*.py")} - {"__init__"}
    assert units == {unit for row in LAYERS for unit in row}, "a package is missing from LAYERS (and the README)"
    assert violations(import_edges(), LAYERS) == []


def test_the_check_catches_an_upward_import_and_a_cycle() -> None:
    layers = (("io",), ("reading",), ("evaluation", "inference"))
    assert violations({("inference", "reading"), ("reading", "io")}, layers) == []
    found = violations({("reading", "evaluation"), ("evaluation", "reading"), ("evaluation", "inference")}, layers)
    assert "evaluation <-> reading import each other" in found
    assert any(p.startswith("reading (layer 1) imports evaluation") for p in found)
    assert any(p.startswith("evaluation (layer 2) imports inference") for p in found)  # sideways, same layer
