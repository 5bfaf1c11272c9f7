"""The calibration sidecar: the contract between a scan's pixels and its LAS.

A JSON file beside a scan (`<scan>.calib.json`), or one `tranche.calib.json` shared by every
scan in its folder that has no sidecar of its own::

    {"depth": {"top": 1000.0, "bottom": 1250.0, "unit": "FT"},
     "curves": [{"mnemonic": "GR", "unit": "GAPI", "top_value": 0.0, "bottom_value": 150.0,
                 "scale": "linear"}, ...],
     "well": {"WELL": "...", "UWI": "..."}}

Column x of a W-wide image sits at depth ``top + (x + 0.5) * (bottom - top) / W``. Row y of an
H-tall image reads ``top_value`` at the top edge and ``bottom_value`` at the bottom edge, linear
or linear in log10 for "log"; a reversed scale is normal. Every curve listed is read, told apart
by its line style (``"style"`` below, or the seeds' convention: first solid, second broken).
Without a sidecar, output stays in track units: depth = column index and value = position across
the track from the top edge, 0..1, for every curve the map supports (see `Calibration.track_units`).

Two optional extensions (docs/synthetic-rendering.md); a sidecar without them reads as before:

- Backup scale, per curve: ``"backup": {"mode": "wrap", "max_wraps": 1}``. A value whose track
  fraction f leaves 0..1 is drawn at ``f - k`` with ``k = clip(floor(f), -max_wraps, max_wraps)``:
  it re-enters from the opposite edge on a scale shifted by one track width (linear) or by the
  decades span (log). Beyond ``max_wraps`` (and always without a backup) it pegs at the edge.
  `row_to_value(rows, H, curve, wraps=k)` reads a value back from a row and its wrap count.
- Line style, per curve: ``"style": "dashed"``, one of `io.classes.STYLES`, as the log header's
  legend draws the curve. It tells the reader which class of ink is this curve's; a sidecar
  naming no style keeps the seeds' convention (first curve solid, second broken).
- Skew, top level: ``"skew": {"angle_deg": 0.4, "pivot_column": 6400.0}``. The track is drawn
  sheared: image row = track row + ``tan(angle) * (x - pivot_column)`` in column x (the depth axis is
  not sheared). `image_rows_to_track` undoes it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np

from veernet_pipeline.io.atomic import write_text_atomic
from veernet_pipeline.io.sidecar import SidecarError, parse_sidecar

SIDECAR_SUFFIX = ".calib.json"
TRANCHE_FILE = "tranche.calib.json"


class CalibrationError(ValueError):
    """A sidecar that cannot be used; the message names the file, the field and the reason."""


@dataclass(frozen=True)
class CurveScale:
    """One curve's track scale; `backup_wraps` > 0 means values off the track wrap to backup scales."""

    mnemonic: str
    unit: str
    top_value: float
    bottom_value: float
    scale: Literal["linear", "log"] = "linear"
    backup_wraps: int = 0
    style: str | None = None
    colour: str | None = None  # the pen's colour on a colour print (`io.colours`)

    def _ends(self) -> tuple[float, float]:
        if self.scale == "log":
            return float(np.log10(self.top_value)), float(np.log10(self.bottom_value))
        return self.top_value, self.bottom_value

    def fraction_to_value(self, fraction: np.ndarray) -> np.ndarray:
        """Position across the track (0 top edge, 1 bottom edge) -> physical value."""
        top, bottom = self._ends()
        mapped = top + np.asarray(fraction, dtype=np.float64) * (bottom - top)
        return np.power(10.0, mapped) if self.scale == "log" else mapped

    def value_to_fraction(self, value: np.ndarray) -> np.ndarray:
        """Physical value -> position across the track (0 top edge, 1 bottom edge)."""
        top, bottom = self._ends()
        value = np.asarray(value, dtype=np.float64)
        if self.scale == "log":
            with np.errstate(divide="ignore", invalid="ignore"):
                value = np.log10(value)
        return (value - top) / (bottom - top)

    def wrap(self, fraction: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Track fraction -> (fraction on the scale it is drawn on, wrap count), per the backup rule.

        The drawn fraction lies in [0, 1) unless the value is beyond the last backup scale (or the
        curve has none); the caller clips such values to the track edge. NaN keeps wrap count 0.
        """
        fraction = np.asarray(fraction, dtype=np.float64)
        if self.backup_wraps == 0:
            return fraction, np.zeros(fraction.shape, dtype=np.int64)
        wraps = np.clip(np.floor(np.nan_to_num(fraction)), -self.backup_wraps, self.backup_wraps)
        return fraction - wraps, wraps.astype(np.int64)


@dataclass(frozen=True)
class Calibration:
    depth_top: float
    depth_bottom: float
    depth_unit: str
    curves: tuple[CurveScale, ...]
    well: dict[str, str] = field(default_factory=dict)
    calibrated: bool = True
    skew_deg: float = 0.0
    skew_pivot: float = 0.0

    @classmethod
    def track_units(cls, n_curves: int = 2, styles: Sequence[str | None] | None = None) -> Calibration:
        """The uncalibrated fallback: depth = column index, value = 0..1 across the track.

        The curves are CURVE_A, CURVE_B, ... with the given styles (None each when not given).
        """
        styles = [None] * n_curves if styles is None else list(styles)
        if len(styles) != n_curves:
            raise ValueError(f"track_units: {n_curves} curves but {len(styles)} styles")
        curves = tuple(CurveScale(f"CURVE_{chr(ord('A') + i)}", "TRACK", 0.0, 1.0, style=style)
                       for i, style in enumerate(styles))
        return cls(0.0, 0.0, "PX", curves, {}, calibrated=False)

    @classmethod
    def from_dict(cls, data: Any, source: str = "<dict>") -> Calibration:
        """A calibration from decoded sidecar JSON, checked field by field (`io.sidecar`).

        Raises:
            CalibrationError: ``<source>: <field>: <what is wrong>``, every problem found.
        """
        try:
            sidecar = parse_sidecar(data)
        except SidecarError as exc:
            raise CalibrationError(f"{source}: {exc}") from exc
        curves = tuple(CurveScale(c.mnemonic, c.unit, c.top_value, c.bottom_value, c.scale,
                                  c.backup.max_wraps if c.backup else 0, c.style, c.colour) for c in sidecar.curves)
        skew = sidecar.skew
        return cls(sidecar.depth.top, sidecar.depth.bottom, sidecar.depth.unit, curves, dict(sidecar.well),
                   skew_deg=skew.angle_deg if skew else 0.0, skew_pivot=skew.pivot_column if skew else 0.0)

    @classmethod
    def from_file(cls, path: Path | str) -> Calibration:
        """Read a sidecar; any problem (unreadable, not UTF-8, not JSON, a bad field) is a `CalibrationError`."""
        path = Path(path)
        try:
            text = path.read_bytes().decode("utf-8")
        except OSError as exc:
            raise CalibrationError(f"{path}: unreadable calibration ({exc.strerror or exc})") from exc
        except UnicodeDecodeError as exc:
            raise CalibrationError(f"{path}: not UTF-8 text (byte {exc.object[exc.start]:#04x} at offset {exc.start}); "
                                   "save the sidecar as UTF-8") from exc
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise CalibrationError(f"{path}: not valid JSON ({exc.msg} at line {exc.lineno}, "
                                   f"column {exc.colno})") from exc
        except RecursionError as exc:
            raise CalibrationError(f"{path}: JSON nested too deeply to be a sidecar") from exc
        return cls.from_dict(data, source=str(path))

    def to_dict(self) -> dict[str, Any]:
        curves = []
        for c in self.curves:
            item: dict[str, Any] = {k: v for k, v in asdict(c).items() if k not in ("backup_wraps", "style", "colour")}
            if c.style is not None:
                item["style"] = c.style
            if c.colour is not None:
                item["colour"] = c.colour
            if c.backup_wraps:
                item["backup"] = {"mode": "wrap", "max_wraps": c.backup_wraps}
            curves.append(item)
        data: dict[str, Any] = {
            "depth": {"top": self.depth_top, "bottom": self.depth_bottom, "unit": self.depth_unit},
            "curves": curves,
            "well": dict(self.well),
        }
        if self.skew_deg:
            data["skew"] = {"angle_deg": self.skew_deg, "pivot_column": self.skew_pivot}
        return data

    def write(self, path: Path | str) -> None:
        """Write the sidecar atomically."""
        write_text_atomic(Path(path), json.dumps(self.to_dict(), indent=2) + "\n")

    def column_depths(self, width: int) -> np.ndarray:
        """Depth of each column's centre. Shape: (W,)."""
        x = np.arange(width, dtype=np.float64)
        if not self.calibrated:
            return x
        return self.depth_top + (x + 0.5) * (self.depth_bottom - self.depth_top) / width

    def depth_to_column(self, depth: np.ndarray, width: int) -> np.ndarray:
        """Inverse of `column_depths`: fractional column index of each depth."""
        depth = np.asarray(depth, dtype=np.float64)
        if not self.calibrated:
            return depth
        return (depth - self.depth_top) * width / (self.depth_bottom - self.depth_top) - 0.5

    def row_to_value(self, rows: np.ndarray, height: int, curve: int, wraps: np.ndarray | int = 0) -> np.ndarray:
        """Subpixel track row (pixel centres at y + 0.5) -> value of curve `curve` (0-based).

        `wraps` is the backup scale the row is read on (0 = the main scale, 1 = one track width
        past the bottom edge's value, -1 past the top's), per column or one for all.
        """
        fraction = (np.asarray(rows, dtype=np.float64) + 0.5) / height + np.asarray(wraps, dtype=np.float64)
        return self.curves[curve].fraction_to_value(fraction)

    def value_to_drawn_row(self, values: np.ndarray, height: int, curve: int) -> tuple[np.ndarray, np.ndarray]:
        """Value -> (subpixel track row where it is drawn, wrap count): backup wrap, then pegged at the edges.

        Inverse: ``row_to_value(rows, height, curve, wraps)`` (exact unless the value was pegged).
        """
        fraction, wraps = self.curves[curve].wrap(self.curves[curve].value_to_fraction(values))
        return np.clip(fraction * height - 0.5, 0.0, height - 1.0), wraps

    def skew_offset(self, columns: np.ndarray) -> np.ndarray:
        """Rows the skewed drawing moves track row r down in each column: image row = r + offset."""
        columns = np.asarray(columns, dtype=np.float64)
        return np.tan(np.radians(self.skew_deg)) * (columns - self.skew_pivot)

    def image_rows_to_track(self, rows: np.ndarray, columns: np.ndarray) -> np.ndarray:
        """Image rows read in `columns` -> track rows (undoes the skew)."""
        return np.asarray(rows, dtype=np.float64) - self.skew_offset(columns)


def find_sidecar(scan: Path) -> Path | None:
    """The scan's own `<scan>.calib.json`, else its folder's `tranche.calib.json`, else None."""
    own = scan.with_name(scan.name + SIDECAR_SUFFIX)
    if own.is_file():
        return own
    tranche = scan.parent / TRANCHE_FILE
    return tranche if tranche.is_file() else None
