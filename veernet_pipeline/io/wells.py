"""The source wells: the LAS files every renderer of test and training logs draws its curves from.

By default the reduced FORCE 2020 wells bundled in `veernet_pipeline/resources/las`; a non-empty
`paths.las_source` names a folder of `*.las` / `*.las.gz` files (or one such file) instead. A well's
name is its file name without the LAS suffix, and names decide which split a well belongs to
(`io.splits`), so every reader must load and name the wells alike: the synthetic generator and the
foreign test renderer both load them here, and share nothing else.
"""

from __future__ import annotations

import gzip
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

import lasio
import numpy as np

LAS_SUFFIXES = (".las.gz", ".las")


@dataclass(frozen=True)
class SourceWell:
    """One source well as its file holds it.

    Shape:
        depth and every entry of `curves`: (N,); NaN where the file holds its NULL value.
    """

    name: str
    origin: str
    depth: np.ndarray
    depth_unit: str
    curves: dict[str, np.ndarray]
    units: dict[str, str] = field(default_factory=dict)
    header: dict[str, str] = field(default_factory=dict)


def well_name(filename: str) -> str:
    """A well's name: its file name without `.las` or `.las.gz` (any case)."""
    lower = filename.lower()
    for suffix in LAS_SUFFIXES:
        if lower.endswith(suffix):
            return filename[: -len(suffix)]
    return filename


def _files(source: str) -> list[tuple[str, bytes, str]]:
    if source:
        path = Path(source)
        files = [path] if path.is_file() else sorted(p for p in path.glob("*") if p.name.lower().endswith(LAS_SUFFIXES))
        return [(p.name, p.read_bytes(), str(p)) for p in files]
    folder = resources.files("veernet_pipeline.resources").joinpath("las")
    return sorted((f.name, f.read_bytes(), f"bundled {f.name}") for f in folder.iterdir() if f.name.endswith(".las.gz"))


def _read(name: str, text: str, origin: str) -> SourceWell:
    las = lasio.read(text)
    depth = np.asarray(las.index, dtype=np.float64)
    if depth.size < 2 or not np.all(np.diff(depth) > 0):
        raise ValueError(f"{origin}: depth is not strictly increasing; sort the LAS by depth or drop the well")
    curves = {c.mnemonic: np.asarray(c.data, dtype=np.float64) for c in las.curves[1:]}
    header = {k: str(las.well[k].value).strip() for k in ("WELL", "UWI") if k in las.well}
    return SourceWell(name=name, origin=origin, depth=depth, depth_unit=(las.curves[0].unit or "M").upper(),
                      curves=curves, units={c.mnemonic: c.unit for c in las.curves[1:]},
                      header={k: v for k, v in header.items() if v})


def load_source_wells(source: str = "") -> list[SourceWell]:
    """Read every source well, sorted by name.

    Args:
        source: a folder of `*.las` / `*.las.gz` files, one such file, or "" for the bundled wells.

    Raises:
        FileNotFoundError: no LAS file there.
        ValueError: a well's depth is not strictly increasing (the message names the file).
    """
    items = _files(source)
    if not items:
        raise FileNotFoundError(f"no *.las or *.las.gz wells in {source or 'the bundled resources'}; "
                                "point paths.las_source at a folder of LAS files or leave it empty")
    wells = []
    for filename, data, origin in items:
        raw = gzip.decompress(data) if filename.lower().endswith(".gz") else data
        wells.append(_read(well_name(filename), raw.decode("utf-8", errors="replace"), origin))
    return sorted(wells, key=lambda w: w.name)
