"""One scan -> LAS curves with a per-column confidence, plus a QC picture for review.

The net's class probabilities become one subpixel row per column for every curve the sidecar names, each
read on the evidence of its line style (`reading.extract`); the sidecar turns columns into depths and
rows into values. Without a sidecar the output stays in track units, says so in the LAS header, and
holds every curve the map supports (CURVE_A, CURVE_B, ... with their style in the description:
`reading.styles`). Each curve gets a `<MNEM>_CONF` companion (style share x ink probability on the path,
divided by the curves reading the same run; 0 where the curve was absent or bridged): the review step
sorts and filters on it. Curves drawn alike (one style and pen in one track) carry `drawn alike with
...` in their descriptions and the header lists them (`ALIKE_NOTE`): which of them is which mnemonic
rests on their lines' continuity, not on their ink, and the review queue puts such scans first
(`inference.review`); so it does scans with curves that took another line than the net named by the
length of its dashes (`reading.dashes`; `EXCHANGED_NOTE`). Any width is read (tiled along depth), any
height up to `infer.max_height` (padded to a multiple of 32 with the validity mask). A scan is read at
its own pixels unless its TIFF states a resolution other than the net's (`infer.net_dpi`): then the net
reads it resampled to that, and the rows come back on the scan's own grid (`reading.resolution`). Where
a curve the sidecar names barely shows in the map, the LAS header says so, and with
`extract.enlarge.factor` above 1 the scan is read again enlarged (`reading.enlarge`).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from torch import nn

from veernet_pipeline.config import EnlargeParams, ExtractParams
from veernet_pipeline.io.calibration import Calibration, find_sidecar
from veernet_pipeline.io.las import LasCurve, write_las
from veernet_pipeline.io.resolution import AS_STORED, Resampling, net_size
from veernet_pipeline.io.tiff import decode_colour, read_header
from veernet_pipeline.reading.alike_order import alike_groups
from veernet_pipeline.reading.confidence import CONF_SUFFIX
from veernet_pipeline.reading.enlarge import ScanReading, read_scan
from veernet_pipeline.reading.picture import Series, curve_name, render_curves_png
from veernet_pipeline.reading.values import rows_to_values

log = logging.getLogger(__name__)

UNCALIBRATED_NOTE = "UNCALIBRATED: depth is column index, values are 0..1 across the track from the top edge"
# The header line that lists a scan's curves drawn alike, group by group ("none" when every curve has its own style
# and pen): the review queue counts them from it (`alike_count`); a LAS without the line predates it.
ALIKE_NOTE = "curves drawn alike (told apart by their lines' continuity only): "
# Likewise the curves given another line than the net named by the length of its dashes (`exchanged_count`).
EXCHANGED_NOTE = "curves given their lines by dash length, against the net's styles: "
_QC_COLORS = ("red", "blue", "darkorange", "magenta", "darkcyan", "saddlebrown")
LOW_MARK = "gold"  # the QC picture's dots under columns read below `infer.low_confidence`


@dataclass
class DigitizedLog:
    """What `write_las` needs, plus the pixel rows and confidence the QC picture draws.

    Shape:
        depth: (W,). Each curve's values: (W,). rows, confidence: (K, W) for the K curves written.
    """

    depth: np.ndarray
    depth_unit: str
    curves: list[LasCurve]
    well: dict[str, str]
    notes: list[str]
    calibrated: bool
    rows: np.ndarray = field(default_factory=lambda: np.empty((0, 0)))
    confidence: np.ndarray = field(default_factory=lambda: np.empty((0, 0)))

    @property
    def names(self) -> list[str]:
        """The mnemonics of the curves read, in the order of `rows` (their `_CONF` companions left out)."""
        return [curve.mnemonic for curve in self.curves if not curve.mnemonic.endswith(CONF_SUFFIX)]


def check_height(height: int, max_height: int | None, source: str) -> None:
    """Refuse a track taller than `infer.max_height`, naming the scan and the param.

    Raises:
        ValueError: `height` exceeds `max_height` (None = no bound).
    """
    if max_height is not None and height > max_height:
        raise ValueError(f"{source}: the track is {height} px tall, above infer.max_height = {max_height}; "
                         "raise infer.max_height in params.yaml (the whole height goes through the net at once, "
                         "so memory grows with it) or cut the track into narrower strips")


def digitize_scan(
    model: nn.Module,
    image: np.ndarray,
    calibration: Calibration | None,
    tile_width: int,
    tile_overlap: int,
    extract: ExtractParams,
    device: str = "cpu",
    max_height: int | None = None,
    source: str = "scan",
    scale: tuple[float, float] = (1.0, 1.0),
    rgb: np.ndarray | None = None,
) -> DigitizedLog:
    """Digitise one scan: every curve the calibration names, or every curve the map supports.

    Args:
        model: VeerNet on `device`, in eval mode.
        image: the landscape scan (any width, tiled along depth; any height up to `max_height`).
        calibration: the scan's sidecar, or None for track units.
        tile_width: inference tile width (multiple of 32).
        tile_overlap: columns shared by neighbouring tiles.
        extract: the path search from class probabilities to curves (params.yaml `extract:`).
        device: torch device of the model.
        max_height: tallest track read (params.yaml `infer.max_height`); None = no bound.
        source: names the scan in errors.
        scale: net pixels per scan pixel along (rows, columns) (`io.resolution.net_scale`): the
            net reads the scan resampled by it, and the rows come back on the scan's own grid.
        rgb: the scan in colour, for a colour print (`io.tiff.decode_colour`): curves whose sidecar entry
            names a `colour` are read on their pen's ink (`reading.colour`).

    Returns:
        Depth (`calibration.column_depths(W)`, or the column index), one value curve and one
        `_CONF` curve per curve read, header notes.

    Raises:
        ValueError: the track is taller than `max_height`.

    Shape:
        image: (H, W) uint8; rgb: (H, W, 3) uint8.
    """
    height, width = image.shape
    check_height(net_size(height, width, scale)[0], max_height, source)
    scan = read_scan(model, image, calibration, tile_width, tile_overlap, extract, device, scale, max_height, rgb)
    plan, rows, confidence = scan.reading.plan, scan.reading.rows, scan.reading.confidence
    calib = plan.calibration
    notes = ([] if calib.calibrated else [UNCALIBRATED_NOTE]) + plan.notes
    if calibration is not None:
        for note in plan.notes:  # a sidecar's curves read otherwise than it says (thick vs thin)
            log.warning("%s: %s", source, note)
    if scale != (1.0, 1.0):
        notes.append(f"read by the net resampled by {scale[0]:.4g} (rows) x {scale[1]:.4g} (columns) to the resolution "
                     "it was trained at (infer.net_dpi); rows and depths are the scan's own pixels")
    notes.extend(enlarge_notes(scan, scale, extract.enlarge))
    notes.append("each curve read along a path over runs of the ink of its line style (docs/reading.md); "
                 "<MNEM>_CONF = style share x ink probability on the path / curves on the run (0 = absent or bridged); "
                 "curves drawn alike are listed top first, but a line that steps out through one edge and in at the "
                 "other goes to one with a backup scale")
    mnemonics = [calib.curves[k].mnemonic for k in range(len(plan.labels))]
    alike = [group for group in alike_groups(plan.kinds) if len(group) > 1]
    notes.append(alike_note([[mnemonics[k] for k in group] for group in alike]))
    notes.append(EXCHANGED_NOTE + (", ".join(mnemonics[k] for k in plan.moved) or "none"))
    alike_with = {k: [mnemonics[j] for j in group if j != k] for group in alike for k in group}
    curves: list[LasCurve] = []
    for k, label in enumerate(plan.labels):
        scale = calib.curves[k]
        values, wraps = rows_to_values(calib, rows[k], height, k)
        if wraps.any():
            notes.append(f"{scale.mnemonic}: {int((wraps != 0).sum())} columns read on a backup scale")
        descr = f"curve {curve_name(k)}, {label}, VeerNet"
        if k in alike_with:
            descr += f"; drawn alike with {', '.join(alike_with[k])}"
        if k in plan.moved:
            descr += "; line given by its dash length"
        curves.append(LasCurve(scale.mnemonic, scale.unit, values, descr))
        curves.append(LasCurve(f"{scale.mnemonic}_CONF", "", confidence[k].copy(),
                               f"confidence of {scale.mnemonic}, 0..1"))
    return DigitizedLog(
        depth=calib.column_depths(width),
        depth_unit=calib.depth_unit,
        curves=curves,
        well=dict(calib.well),
        notes=notes,
        calibrated=calib.calibrated,
        rows=rows,
        confidence=confidence,
    )


def alike_note(groups: Sequence[Sequence[str]]) -> str:
    """The header line naming each group of curves drawn alike by mnemonic (groups split by ";"), or none."""
    return ALIKE_NOTE + ("; ".join(", ".join(group) for group in groups) if groups else "none")


def alike_count(notes: str) -> float:
    """How many curves of a digitised LAS are drawn alike with another, from its `~Other` text (`alike_note`).

    NaN when the text has no such line (a LAS written before the line was): unknown, not zero.
    """
    return _listed_count(notes, ALIKE_NOTE)


def exchanged_count(notes: str) -> float:
    """How many curves of a digitised LAS took their lines by dash length, from its `~Other` text (`EXCHANGED_NOTE`).

    NaN when the text has no such line (a LAS written before the line was): unknown, not zero.
    """
    return _listed_count(notes, EXCHANGED_NOTE)


def _listed_count(notes: str, prefix: str) -> float:
    """How many mnemonics the `prefix` line lists (groups split by ";", names by ","); 0 for "none", NaN without it."""
    for line in notes.splitlines():
        if line.startswith(prefix):
            listed = line[len(prefix):].strip()
            return 0.0 if listed == "none" else float(sum(len(g.split(",")) for g in listed.split(";")))
    return float("nan")


def enlarge_notes(scan: ScanReading, scale: tuple[float, float], enlarge: EnlargeParams) -> list[str]:
    """What the LAS header says of named curves that barely showed in the map, and of an enlarged reading."""
    if not scan.missing or scan.missing[0] == 0:
        return []
    shown = f"{scan.missing[0]} named curve(s) barely showed (their style in under {enlarge.below:.0%} of the columns)"
    if scan.scale != scale:
        return [f"read enlarged {enlarge.factor:.3g} times (extract.enlarge): {shown} at the scan's size, "
                f"{scan.missing[1]} enlarged; their dashes are drawn shorter than the net learnt them"]
    if len(scan.missing) > 1:
        return [f"{shown}; enlarged {enlarge.factor:.3g} times no fewer did, so the scan's size was kept"]
    if enlarge.factor > 1.0:
        return [f"{shown}; enlarged {enlarge.factor:.3g} times the track would be taller than infer.max_height"]
    return [f"{shown}: where the print's dashes are shorter than the net learnt them, extract.enlarge.factor 1.5 "
            "reads such scans enlarged (docs/reading.md)"]


def write_qc_png(
    path: Path, image: np.ndarray, rows: np.ndarray, confidence: np.ndarray | None = None, max_columns: int = 2048,
    names: Sequence[str] = (), low_confidence: float | None = None,
) -> tuple[int, int]:
    """Extracted curves over the scan at native pixels, written atomically.

    A scan wider than `max_columns` is cropped to a column window (never resized): the stretch
    with the lowest confidence when `confidence` is given (what a reviewer should look at),
    else the middle. Each curve is labelled with its mnemonic from `names` (else "curve A", ...).
    With `low_confidence`, every column read on ink whose confidence is below it carries a gold
    dot (`LOW_MARK`) under the curve's line: faint or contested ink, and a curve riding another's
    line, which otherwise shows only as two lines drawn on top of each other. Bridged columns
    (confidence 0), which `low_conf_share` also counts, are left unmarked: they are every gap of a
    broken style, and the dashes show in the scan beneath.

    Returns:
        The window `(start, stop)` drawn.

    Shape:
        image: (H, W) uint8. rows, confidence: (K, W).
    """
    series = []
    if confidence is not None and low_confidence is not None and len(confidence):
        confidence = np.asarray(confidence)
        low = np.where((confidence > 0) & (confidence < low_confidence), rows, np.nan)
        marked = [row for row in low if np.isfinite(row).any()]
        # One legend entry for every curve's low columns: matplotlib leaves out labels that start with "_".
        series += [Series(row, LOW_MARK, f"confidence < {low_confidence:g}" if i == 0 else "_low", "none", "o")
                   for i, row in enumerate(marked)]
    series += [Series(r, _QC_COLORS[k % len(_QC_COLORS)], names[k] if k < len(names) else f"curve {curve_name(k)}")
               for k, r in enumerate(rows)]
    badness = None if confidence is None or len(confidence) == 0 else np.sum(1.0 - confidence, axis=0)
    return render_curves_png(Path(path), image, series, max_columns, badness)


def write_digitized(result: DigitizedLog, image: np.ndarray, las_path: Path, qc_path: Path | None,
                    notes: list[str], low_confidence: float | None = None) -> None:
    """Write the QC PNG (if asked; `low_confidence` marks its doubtful columns) and then the LAS: the LAS comes
    last because it marks completion."""
    if qc_path is not None:
        write_qc_png(qc_path, image, result.rows, result.confidence, names=result.names,
                     low_confidence=low_confidence)
    write_las(las_path, result.depth, result.depth_unit, result.curves, result.well, [*result.notes, *notes])


def digitize_file(
    scan: Path,
    out_las: Path,
    model: nn.Module,
    model_label: str,
    tile_width: int,
    tile_overlap: int,
    extract: ExtractParams,
    calibration: Path | None = None,
    qc: Path | None = None,
    max_height: int | None = None,
    resampling: Resampling = AS_STORED,
    low_confidence: float | None = None,
) -> DigitizedLog:
    """Digitise one TIFF on disk: `veernet digitize`.

    Args:
        scan: a track-strip TIFF (any compression ingest reads; a portrait scan is rotated).
        out_las: the LAS 2.0 file to write.
        model: VeerNet in eval mode, on the CPU.
        model_label: names the model in the LAS header, e.g. "veernet-multiclass v3".
        tile_width, tile_overlap: inference tiling along depth.
        extract: the path search from class probabilities to curves.
        calibration: a sidecar; default the scan's own `<scan>.calib.json` or its folder's
            `tranche.calib.json`, else track units.
        qc: where to write the QC overlay, if wanted.
        max_height: tallest track read (params.yaml `infer.max_height`); None = no bound.
        resampling: a scan at another resolution than the net's is read resampled to it (params.yaml
            `infer.net_dpi`, `infer.untagged_dpi`: `io.resolution`); the default reads it as it is.
        low_confidence: the QC picture marks the columns read below it (params.yaml `infer.low_confidence`).
    """
    image, rgb = decode_colour(scan)
    dpi = read_header(scan).landscape_dpi
    scale = resampling.scale(dpi)
    sidecar = calibration or find_sidecar(Path(scan))
    calib = Calibration.from_file(sidecar) if sidecar else None
    result = digitize_scan(model, image, calib, tile_width, tile_overlap, extract, max_height=max_height,
                           source=str(scan), scale=scale, rgb=rgb)
    notes = [f"source scan {Path(scan).name}", f"model {model_label}", *resampling.notes(dpi)]
    if sidecar:
        notes.append(f"calibration {Path(sidecar).name}")
    write_digitized(result, image, Path(out_las), qc, notes, low_confidence)
    return result
