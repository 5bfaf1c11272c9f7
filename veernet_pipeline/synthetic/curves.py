"""Curve sources for synthetic logs: windows of real wells and a procedural walk.

Real curves come from LAS wells (by default the reduced FORCE 2020 wells bundled in
`veernet_pipeline/resources/las`). A window is a run of consecutive native samples in which every
chosen curve is finite; NaN gaps of at most `MAX_GAP_SAMPLES` samples are filled by linear
interpolation first (the filled values are what the ground-truth LAS holds), longer gaps make the
window search move elsewhere, and so do stretches a well's vendor already filled with a straight
line (`straight_runs`: a printed log never looks like that). The procedural source is a smooth
random walk over layered "beds", for variety beyond the bundled wells. Track scales: `scales`.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field

import numpy as np

from veernet_pipeline.config import SplitParams
from veernet_pipeline.io.splits import SPLITS, assign_well_splits
from veernet_pipeline.io.wells import load_source_wells

CURVE_MNEMONICS = ("GR", "RDEP", "RMED", "RHOB", "NPHI", "DTC", "CALI", "PEF")
MAX_GAP_SAMPLES = 8
# Runs of at least this many samples on one straight line are taken as interpolated, not logged.
MIN_STRAIGHT_RUN = 16
# Image columns per LAS sample: ~1.2 is a 1:1000 print at 200 dpi, ~6 a 1:200 print.
PX_PER_SAMPLE = (1.2, 6.0)
# Upper bound when a wide image needs a longer run than a well offers at the drawn density.
MAX_PX_PER_SAMPLE = 12.0
PROCEDURAL = "procedural"
PROCEDURAL_STEP = 0.1524

# mnemonic -> (unit for procedural curves, linear presets as (low, high) in value order).
LINEAR_PRESETS: dict[str, tuple[str, tuple[tuple[float, float], ...]]] = {
    "GR": ("GAPI", ((0.0, 150.0), (0.0, 200.0), (0.0, 100.0))),
    "RDEP": ("OHMM", ((0.0, 20.0), (0.0, 10.0), (0.0, 50.0))),
    "RMED": ("OHMM", ((0.0, 20.0), (0.0, 10.0), (0.0, 50.0))),
    "RHOB": ("G/C3", ((1.95, 2.95), (1.65, 2.65), (2.0, 3.0))),
    "NPHI": ("V/V", ((-0.15, 0.45), (0.0, 0.6))),
    "DTC": ("US/F", ((40.0, 140.0), (40.0, 190.0))),
    "CALI": ("IN", ((6.0, 16.0), (8.0, 18.0), (4.0, 24.0))),
    "PEF": ("B/E", ((0.0, 10.0), (0.0, 20.0))),
}


@dataclass(frozen=True)
class Well:
    """One source well: native depth samples and the curves of `CURVE_MNEMONICS` it has (NaN = null)."""

    name: str
    depth: np.ndarray
    curves: dict[str, np.ndarray]
    unit: str
    units: dict[str, str] = field(default_factory=dict)
    header: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class CurveWindow:
    """Consecutive native samples of one or more curves, all finite. Shape: depth and values (N,)."""

    well: str
    header: dict[str, str]
    depth: np.ndarray
    depth_unit: str
    mnemonics: tuple[str, ...]
    units: tuple[str, ...]
    values: tuple[np.ndarray, ...]


def round_significant(values: np.ndarray, digits: int = 4) -> np.ndarray:
    """Round to `digits` significant digits (as the bundled wells are), so a LAS round trip is exact."""
    values = np.asarray(values, dtype=np.float64)
    out = values.copy()
    nonzero = np.isfinite(values) & (values != 0)
    scale = 10.0 ** (digits - 1 - np.floor(np.log10(np.abs(values[nonzero]))))
    out[nonzero] = np.round(values[nonzero] * scale) / scale
    return out


def load_wells(source: str = "") -> list[Well]:
    """Load the source wells (`io.wells`), sorted by name, keeping the curves of `CURVE_MNEMONICS`.

    Args:
        source: a folder of `*.las` / `*.las.gz` files, one such file, or "" for the bundled wells.

    Returns:
        The wells; `Well.name` is the file name without its LAS suffix.
    """
    wells = []
    for found in load_source_wells(source):
        curves = {m: found.curves[m] for m in CURVE_MNEMONICS if m in found.curves}
        if not curves:
            raise ValueError(f"{found.origin}: none of {', '.join(CURVE_MNEMONICS)} present; add one or drop the well")
        wells.append(Well(name=found.name, depth=found.depth, curves=curves, unit=found.depth_unit,
                          units={m: found.units.get(m, "") for m in curves}, header=dict(found.header)))
    return wells


def wells_by_split(wells: list[Well], splits: SplitParams, seed: int) -> dict[str, list[Well]]:
    """The source wells of each split (`io.splits`)."""
    assignment = assign_well_splits([w.name for w in wells], splits, seed)
    return {split: [w for w in wells if assignment[w.name] == split] for split in SPLITS}


def fill_short_gaps(values: np.ndarray, max_gap: int = MAX_GAP_SAMPLES) -> np.ndarray:
    """Linearly fill interior NaN gaps of at most `max_gap` samples; longer or edge gaps stay NaN."""
    values = np.asarray(values, dtype=np.float64)
    finite = np.isfinite(values)
    if finite.sum() < 2:
        return values.copy()
    index = np.arange(values.size)
    filled = np.interp(index, index[finite], values[finite])
    starts, ends = true_runs(~finite)
    long = (starts == 0) | (ends == values.size) | (ends - starts > max_gap)
    # +1 at each long gap's start, -1 at its end: the running sum marks samples inside one.
    delta = np.zeros(values.size + 1, dtype=np.int64)
    np.add.at(delta, starts[long], 1)
    np.add.at(delta, ends[long], -1)
    filled[np.cumsum(delta[:-1]) > 0] = np.nan
    return filled


def straight_runs(values: np.ndarray, min_run: int = MIN_STRAIGHT_RUN) -> np.ndarray:
    """True at samples inside runs of `min_run` or more samples lying on one straight line. Shape: (N,).

    "Straight" allows the rounding to 4 significant digits: the second difference stays within two
    units of the 4th significant digit of the largest of its three samples.
    """
    values = np.asarray(values, dtype=np.float64)
    if values.size < 3:
        return np.zeros(values.size, dtype=bool)
    with np.errstate(invalid="ignore", divide="ignore"):
        largest = np.maximum.reduce([np.abs(values[:-2]), np.abs(values[1:-1]), np.abs(values[2:])])
        tolerance = 2.0 * 10.0 ** (np.floor(np.log10(np.maximum(largest, 1e-12))) - 3)
        flat = np.abs(np.diff(values, 2)) <= tolerance
    # Second difference k spans samples k..k+2; a run of r flat ones spans r + 2 samples.
    starts, ends = true_runs(flat)
    long = ends - starts + 2 >= min_run
    marked = np.zeros(values.size + 1, dtype=np.int64)
    np.add.at(marked, starts[long], 1)
    np.add.at(marked, ends[long] + 2, -1)
    return np.cumsum(marked[:-1]) > 0


def true_runs(flags: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Start (inclusive) and end (exclusive) indices of the runs of True in a 1-D bool array."""
    padded = np.concatenate(([False], np.asarray(flags, dtype=bool), [False]))
    edges = np.flatnonzero(np.diff(padded.astype(np.int8)))
    return edges[0::2], edges[1::2]


def _draw_samples(width: int, rng: np.random.Generator) -> int:
    pps = math.exp(rng.uniform(math.log(PX_PER_SAMPLE[0]), math.log(PX_PER_SAMPLE[1])))
    return math.ceil(width / pps) + 1


def window(wells: list[Well], n_curves: int, width: int, rng: np.random.Generator,
           overlay: bool = False) -> CurveWindow | None:
    """A random window of `n_curves` distinct curves of one well, sized for a `width`-column image.

    Wells and curve combinations are tried in random order. When no run is long enough at the drawn
    sample density, the density is raised step by step up to `MAX_PX_PER_SAMPLE` px per sample.
    `overlay` admits only combinations holding two or more curves of one unit (`same_unit_groups`).

    Returns:
        The window, or None when no well holds such a run.
    """
    n_samples = _draw_samples(width, rng)
    fewest = math.ceil(width / MAX_PX_PER_SAMPLE) + 1
    well_order = rng.permutation(len(wells))
    while True:
        for wi in well_order:
            found = _window_in_well(wells[wi], n_curves, n_samples, rng, overlay)
            if found is not None:
                return found
        if n_samples <= fewest:
            return None
        n_samples = max(fewest, math.ceil((n_samples - 1) / 1.5) + 1)


def same_unit_groups(mnemonics: tuple[str, ...], units: tuple[str, ...]) -> list[list[int]]:
    """Indices of the curves sharing a unit, in groups of two or more (a resistivity pair: ohm.m, ohm.m)."""
    groups: dict[str, list[int]] = {}
    for k, unit in enumerate(units):
        if unit.strip():
            groups.setdefault(unit.strip().lower(), []).append(k)
    return [g for g in groups.values() if len(g) > 1 and len({mnemonics[k] for k in g}) == len(g)]


def _window_in_well(well: Well, n_curves: int, n_samples: int, rng: np.random.Generator,
                    overlay: bool = False) -> CurveWindow | None:
    filled: dict[str, np.ndarray] = {}
    combos = list(itertools.combinations(sorted(well.curves), n_curves))
    if overlay:
        combos = [c for c in combos if same_unit_groups(c, tuple(well.units.get(m, "") for m in c))]
    for ci in rng.permutation(len(combos)):
        # The combination's curves in a random order: the order is the sidecar's, and any may come first.
        combo = tuple(combos[ci][i] for i in rng.permutation(n_curves))
        for m in combo:
            if m not in filled:
                filled[m] = fill_short_gaps(well.curves[m])
                filled[m][straight_runs(filled[m])] = np.nan
        ok = np.logical_and.reduce([np.isfinite(filled[m]) for m in combo])
        starts, ends = true_runs(ok)
        room = ends - starts - n_samples + 1
        fits = room > 0
        if not fits.any():
            continue
        # Uniform over every admissible start position, so long runs are chosen in proportion.
        pick = int(rng.integers(room[fits].sum()))
        cumulative = np.cumsum(room[fits])
        run = int(np.searchsorted(cumulative, pick, side="right"))
        offset = pick - (int(cumulative[run - 1]) if run else 0)
        i0 = int(starts[fits][run]) + offset
        sl = slice(i0, i0 + n_samples)
        return CurveWindow(
            well=well.name,
            header=dict(well.header),
            depth=well.depth[sl].copy(),
            depth_unit=well.unit,
            mnemonics=combo,
            units=tuple(well.units.get(m, "") for m in combo),
            values=tuple(round_significant(filled[m][sl]) for m in combo),
        )
    return None


def smooth_walk(n: int, rng: np.random.Generator) -> np.ndarray:
    """A log-like trace in track fractions: layered beds plus a random walk, smoothed. Shape: (n,)."""
    mean_bed = rng.uniform(15.0, 80.0)
    n_beds = max(1, int(n / mean_bed))
    boundaries = np.sort(rng.integers(0, n, n_beds - 1))
    levels = rng.uniform(0.15, 0.85, n_beds)
    trace = levels[np.searchsorted(boundaries, np.arange(n), side="right")]
    walk = np.cumsum(rng.normal(0.0, rng.uniform(0.003, 0.015), n))
    trace = trace + walk - walk.mean()
    kernel = np.ones(int(rng.integers(2, 7)))
    padded = np.pad(trace, (kernel.size, kernel.size), mode="edge")
    trace = np.convolve(padded, kernel / kernel.sum(), mode="same")[kernel.size : -kernel.size]
    # Fold back into the track rather than clip, so the walk never sticks to an edge.
    folded = np.mod((trace - 0.02) / 0.96, 2.0)
    return 0.02 + 0.96 * np.where(folded > 1.0, 2.0 - folded, folded)


def procedural_window(n_curves: int, width: int, rng: np.random.Generator) -> CurveWindow:
    """A window of `n_curves` procedural curves with distinct mnemonics on a regular 0.1524 m grid."""
    n_samples = _draw_samples(width, rng)
    top = round(float(rng.uniform(200.0, 3000.0)), 2)
    depth = np.round(top + np.arange(n_samples) * PROCEDURAL_STEP, 4)
    names = tuple(str(m) for m in rng.choice(list(LINEAR_PRESETS), size=n_curves, replace=False))
    values = []
    for m in names:
        presets = LINEAR_PRESETS[m][1]
        low, high = presets[int(rng.integers(len(presets)))]
        values.append(round_significant(low + smooth_walk(n_samples, rng) * (high - low)))
    return CurveWindow(
        well=PROCEDURAL,
        header={"WELL": "PROCEDURAL"},
        depth=depth,
        depth_unit="M",
        mnemonics=names,
        units=tuple(LINEAR_PRESETS[m][0] for m in names),
        values=tuple(values),
    )
