"""LAS 2.0 curve files: the ground truth of synthetic sets and the output of digitisation.

Writing and reading both go through lasio. A missing sample is NaN in memory and the well's
NULL value (-999.25 by default) on disk, in both directions.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

import lasio
import numpy as np

from veernet_pipeline.io.atomic import atomic_path

logger = logging.getLogger(__name__)

DEPTH_MNEMONIC = "DEPT"
# Six decimals keep track-unit values (0..1) well below the metric resolution we report.
_NUMBER_FORMAT = "%.6f"


@dataclass
class LasCurve:
    """One curve: its samples follow the depth index of the file it goes into.

    Shape:
        values: (N,) with N = len(depth); NaN where the curve is absent.
    """

    mnemonic: str
    unit: str
    values: np.ndarray
    descr: str = ""


def write_las(
    path: Path | str,
    depth: np.ndarray,
    depth_unit: str,
    curves: list[LasCurve],
    well: dict[str, str],
    notes: list[str],
    null: float = -999.25,
) -> None:
    """Write a LAS 2.0 file atomically (unwrapped, NaN written as the NULL value).

    Args:
        path: target ``.las`` file.
        depth: the index curve, written as ``DEPT``.
        depth_unit: its unit (``FT``, ``M``, or ``PX`` for uncalibrated scans).
        curves: the data curves, each as long as ``depth``.
        well: ``~Well`` section items (``WELL``, ``UWI``...); STRT/STOP/STEP/NULL are computed.
        notes: lines for the ``~Other`` section (provenance, model version, calibration state).
        null: the NULL value that stands for NaN on disk.

    Raises:
        ValueError: the depth or a curve has the wrong shape, or depth holds NaN.

    Shape:
        depth: (N,); every ``curve.values``: (N,).
    """
    path = Path(path)
    depth = np.asarray(depth, dtype=np.float64)
    if depth.ndim != 1:
        raise ValueError(f"{path}: depth must be 1-D, got shape {depth.shape}")
    if np.isnan(depth).any():
        raise ValueError(f"{path}: depth holds NaN; every LAS row needs a depth")
    las = lasio.LASFile()
    las.well["NULL"].value = null
    for key, value in well.items():
        las.well[key] = str(value)
    las.append_curve(DEPTH_MNEMONIC, depth, unit=depth_unit, descr="Depth")
    for curve in curves:
        values = np.asarray(curve.values, dtype=np.float64)
        if values.shape != depth.shape:
            raise ValueError(
                f"{path}: curve {curve.mnemonic} has shape {values.shape} but depth has {depth.shape}; "
                "sample every curve at the depth index"
            )
        if curve.mnemonic.upper() == DEPTH_MNEMONIC:
            raise ValueError(f"{path}: curve mnemonic {curve.mnemonic} is reserved for the depth index")
        las.append_curve(curve.mnemonic, values, unit=curve.unit, descr=curve.descr)
    las.other = "\n".join(notes)
    with atomic_path(path) as tmp, tmp.open("w") as fh:
        las.write(fh, version=2.0, wrap=False, fmt=_NUMBER_FORMAT)
    logger.debug("wrote %s (%d samples, %d curves)", path, depth.size, len(curves))


def read_curves(path: Path | str) -> tuple[np.ndarray, dict[str, np.ndarray], dict[str, str]]:
    """Read a LAS file's depth index, curves and well items.

    Args:
        path: a LAS 1.2/2.0 file.

    Returns:
        ``(depth, curves, well)``: the index curve; every other curve by mnemonic, with NaN where
        the file holds its NULL value; the ``~Well`` items that have a value, as strings.

    Raises:
        FileNotFoundError: ``path`` is not a file.
        ValueError: the file cannot be parsed or holds no curves; the message names the file.

    Shape:
        depth: (N,); each curve: (N,).
    """
    return _contents(_read(path), path)


def read_curves_and_notes(path: Path | str) -> tuple[np.ndarray, dict[str, np.ndarray], dict[str, str], str]:
    """`read_curves` and the ``~Other`` section (the notes `write_las` wrote), from one parse of the file.

    Raises:
        FileNotFoundError: ``path`` is not a file.
        ValueError: the file cannot be parsed or holds no curves; the message names the file.
    """
    las = _read(path)
    return (*_contents(las, path), str(las.other))


def _contents(las: lasio.LASFile, path: Path | str) -> tuple[np.ndarray, dict[str, np.ndarray], dict[str, str]]:
    """Depth index, curves (NaN for NULL) and well items of a parsed file."""
    if not las.curves:
        raise ValueError(f"{path}: LAS file holds no curves; it needs at least a depth index")
    depth = np.asarray(las.index, dtype=np.float64)
    curves = {c.mnemonic: np.asarray(c.data, dtype=np.float64) for c in las.curves[1:]}
    well = {item.mnemonic: str(item.value) for item in las.well if str(item.value) != ""}
    return depth, curves, well


def _read(path: Path | str) -> lasio.LASFile:
    """Parse a LAS file with lasio, with errors that name the file."""
    path = Path(path)
    if not path.is_file():
        # lasio.read takes a string that is not a file for LAS text, which would hide the real error.
        raise FileNotFoundError(f"{path}: no such LAS file")
    try:
        las = lasio.read(str(path))
    except (OSError, UnicodeDecodeError, ValueError, KeyError, lasio.exceptions.LASDataError,
            lasio.exceptions.LASHeaderError) as exc:
        raise ValueError(f"{path}: cannot read as LAS ({exc}); check it is a LAS 1.2/2.0 text file") from exc
    return las
