"""One scan -> LAS curves with a per-column confidence, plus a QC picture for review.

The net's class probabilities become one subpixel row per column per curve along the joint path
of `reading.extract`; the calibration sidecar turns columns into depths and rows into values.
Without a sidecar the output stays in track units and says so in the LAS header. Each curve gets
a `<MNEM>_CONF` companion (class share x ink probability on the path, 0 where the curve was
absent or bridged): the review step sorts and filters on it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from torch import nn

from veernet_pipeline.config import ExtractParams
from veernet_pipeline.io.calibration import Calibration, find_sidecar
from veernet_pipeline.io.las import LasCurve, write_las
from veernet_pipeline.io.tiff import decode_scan
from veernet_pipeline.reading.extract import trace_curves
from veernet_pipeline.reading.picture import Series, curve_name, render_curves_png
from veernet_pipeline.reading.predict import predict_probs
from veernet_pipeline.reading.styles import MAX_CURVES, curve_probs
from veernet_pipeline.reading.values import rows_to_values

UNCALIBRATED_NOTE = "UNCALIBRATED: depth is column index, values are 0..1 across the track from the top edge"
_QC_COLORS = ("red", "blue", "darkorange", "magenta")


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


def digitize_scan(
    model: nn.Module,
    image: np.ndarray,
    calibration: Calibration | None,
    tile_width: int,
    tile_overlap: int,
    extract: ExtractParams,
    device: str = "cpu",
) -> DigitizedLog:
    """Digitise one scan.

    Args:
        model: VeerNet on `device`, in eval mode.
        image: the landscape scan, ink dark on light.
        calibration: the scan's sidecar, or None for track units.
        tile_width: inference tile width (multiple of 32).
        tile_overlap: columns shared by neighbouring tiles.
        extract: the path search from class probabilities to curves (params.yaml `extract:`).
        device: torch device of the model.

    Returns:
        Depth (`calibration.column_depths(W)`, or the column index), one value curve and one
        `_CONF` curve per curve class the calibration names, header notes.

    Shape:
        image: (H, W) uint8.
    """
    height, width = image.shape
    probs = predict_probs(model, image, tile_width, tile_overlap, device, mirror=extract.mirror)
    styles = [c.style for c in calibration.curves] if calibration is not None else [None] * MAX_CURVES
    rows, confidence = trace_curves(curve_probs(probs, styles), extract)
    n_classes = rows.shape[0]
    calib = calibration if calibration is not None else Calibration.track_units(n_classes)
    notes = [] if calib.calibrated else [UNCALIBRATED_NOTE]
    n_curves = min(n_classes, len(calib.curves))
    if n_classes > n_curves:
        notes.append(f"model separates {n_classes} curves but the calibration names {n_curves}; "
                     f"only the first {n_curves} are written")
    elif len(calib.curves) > n_curves:
        notes.append(f"calibration names {len(calib.curves)} curves but the model separates only {n_curves}; "
                     f"{', '.join(c.mnemonic for c in calib.curves[n_curves:])} not digitised")
    notes.append("curve values along a joint path over candidate ink rows that keeps each curve's identity; "
                 "<MNEM>_CONF = class share x ink probability on the path (0 = absent or bridged)")
    curves: list[LasCurve] = []
    for k in range(n_curves):
        scale = calib.curves[k]
        values, wraps = rows_to_values(calib, rows[k], height, k)
        if wraps.any():
            notes.append(f"{scale.mnemonic}: {int((wraps != 0).sum())} columns read on a backup scale")
        curves.append(LasCurve(scale.mnemonic, scale.unit, values, f"curve {curve_name(k)} (class {k + 1}), VeerNet"))
        curves.append(LasCurve(f"{scale.mnemonic}_CONF", "", confidence[k].copy(),
                               f"confidence of {scale.mnemonic}, 0..1"))
    return DigitizedLog(
        depth=calib.column_depths(width),
        depth_unit=calib.depth_unit,
        curves=curves,
        well=dict(calib.well),
        notes=notes,
        calibrated=calib.calibrated,
        rows=rows[:n_curves],
        confidence=confidence[:n_curves],
    )


def write_qc_png(
    path: Path, image: np.ndarray, rows: np.ndarray, confidence: np.ndarray | None = None, max_columns: int = 2048
) -> tuple[int, int]:
    """Extracted curves over the scan at native pixels, written atomically.

    A scan wider than `max_columns` is cropped to a column window (never resized): the stretch
    with the lowest confidence when `confidence` is given (what a reviewer should look at),
    else the middle.

    Returns:
        The window `(start, stop)` drawn.

    Shape:
        image: (H, W) uint8. rows, confidence: (K, W).
    """
    series = [Series(r, _QC_COLORS[k % len(_QC_COLORS)], f"curve {curve_name(k)}") for k, r in enumerate(rows)]
    badness = None if confidence is None or len(confidence) == 0 else np.sum(1.0 - confidence, axis=0)
    return render_curves_png(Path(path), image, series, max_columns, badness)


def write_digitized(result: DigitizedLog, image: np.ndarray, las_path: Path, qc_path: Path | None,
                    notes: list[str]) -> None:
    """Write the QC PNG (if asked) and then the LAS: the LAS comes last because it marks completion."""
    if qc_path is not None:
        write_qc_png(qc_path, image, result.rows, result.confidence)
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
    """
    image = decode_scan(scan)
    sidecar = calibration or find_sidecar(Path(scan))
    calib = Calibration.from_file(sidecar) if sidecar else None
    result = digitize_scan(model, image, calib, tile_width, tile_overlap, extract)
    notes = [f"source scan {Path(scan).name}", f"model {model_label}"]
    if sidecar:
        notes.append(f"calibration {Path(sidecar).name}")
    write_digitized(result, image, Path(out_las), qc, notes)
    return result
