"""Shared helpers of the render tests: params with features forced on or off, and redrawing from the files."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from veernet_pipeline.config import SynthesizeParams, load_settings
from veernet_pipeline.io.las import LasCurve, read_curves, write_las
from veernet_pipeline.synthetic.render import SyntheticLog

PARAMS = Path(__file__).parents[1] / "params.yaml"
ALL_ARTEFACTS = ("paper", "illumination", "blur", "speckle", "jpeg", "skew", "bilevel")
# Nothing but grid, depth numbers and curves: every artefact, stretch and track feature off.
CLEAN = (*(f"synthesize.artefacts.{a}.share=0" for a in ALL_ARTEFACTS), "synthesize.noise_std=0",
         "synthesize.gaps.share=0", "synthesize.fades.share=0", "synthesize.text.headers_per_10k=0",
         "synthesize.flags.per_10k=0", "synthesize.banners.per_10k=0", "synthesize.steep.share=0",
         "synthesize.straight.share=0", "synthesize.tall.share=0", "synthesize.grid.heavy.share=0",
         "synthesize.grid.doubled.share=0")
# The documented drawing order of the styles (docs/synthetic-rendering.md, crossing rule), earliest first.
DOCUMENTED_ORDER = ("solid", "long_dash", "dashed", "dash_dot", "dotted")


def synth_params(*overrides: str) -> SynthesizeParams:
    """The test profile's synthesize params with `section.key=value` overrides."""
    return load_settings(PARAMS, profile="test", overrides=list(overrides)).synthesize


def only_style(style: str) -> str:
    """An override giving every curve `style`."""
    weights = ", ".join(f"{name}: {int(name == style)}" for name in DOCUMENTED_ORDER)
    return f"synthesize.styles={{{weights}}}"


def write_truth(folder: Path, name: str, log: SyntheticLog) -> tuple[Path, Path]:
    """Write a log's LAS and sidecar as the set does; return their paths."""
    las, calib = folder / f"{name}.las", folder / f"{name}.calib.json"
    curves = [LasCurve(m, u, v) for m, u, v in zip(log.mnemonics, log.units, log.values, strict=True)]
    write_las(las, log.depth, log.calibration.depth_unit, curves, log.calibration.well, ["test"])
    log.calibration.write(calib)
    return las, calib


def redraw(las: Path, calib: Path, height: int, width: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Centre pixel row and wrap count of each curve per column, from the files and the documented contract."""
    depth, curves, _ = read_curves(las)
    data = json.loads(calib.read_text())
    x = np.arange(width)
    at = data["depth"]["top"] + (x + 0.5) * (data["depth"]["bottom"] - data["depth"]["top"]) / width
    skew = data.get("skew", {"angle_deg": 0.0, "pivot_column": 0.0})
    offset = np.tan(np.radians(skew["angle_deg"])) * (x - skew["pivot_column"])
    drawn = []
    for curve in data["curves"]:
        ends = np.array([curve["top_value"], curve["bottom_value"]])
        values = np.interp(at, depth, curves[curve["mnemonic"]])
        if curve["scale"] == "log":
            ends, values = np.log10(ends), np.log10(values)
        fraction = (values - ends[0]) / (ends[1] - ends[0])
        limit = curve.get("backup", {}).get("max_wraps", 0)
        wraps = np.clip(np.floor(fraction), -limit, limit)
        rows = np.clip((fraction - wraps) * height - 0.5, 0, height - 1) + offset
        drawn.append((np.floor(rows + 0.5).astype(np.int64), wraps.astype(np.int64)))
    return drawn


def column_runs(flags: np.ndarray) -> np.ndarray:
    """Lengths of the runs of True in a 1-D array."""
    edges = np.flatnonzero(np.diff(np.concatenate(([0], flags.astype(np.int8), [0]))))
    return edges[1::2] - edges[0::2]
