"""The calibration sidecar: the contract between a scan's pixels and its LAS.

A JSON file beside a scan (`<scan>.calib.json`), or one `tranche.calib.json` shared by every
scan in its folder that has no sidecar of its own::

    {"depth": {"top": 1000.0, "bottom": 1250.0, "unit": "FT"},
     "curves": [{"mnemonic": "GR", "unit": "GAPI", "top_value": 0.0, "bottom_value": 150.0,
                 "scale": "linear"}, ...],
     "well": {"WELL": "...", "UWI": "..."}}

Column x of a W-wide image sits at depth ``top + (x + 0.5) * (bottom - top) / W``. Row y of an
H-tall image reads ``top_value`` at the top edge and ``bottom_value`` at the bottom edge, linear
or linear in log10 for "log"; a reversed scale is normal. ``curves[0]`` is class 1, ``curves[1]``
class 2. Without a sidecar, output stays in track units: depth = column index and value =
position across the track from the top edge, 0..1 (see `Calibration.track_units`).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np

from veernet_pipeline.io.atomic import write_text_atomic

SIDECAR_SUFFIX = ".calib.json"
TRANCHE_FILE = "tranche.calib.json"


class CalibrationError(ValueError):
    """A sidecar that cannot be used; the message names the file and the reason."""


@dataclass(frozen=True)
class CurveScale:
    mnemonic: str
    unit: str
    top_value: float
    bottom_value: float
    scale: Literal["linear", "log"] = "linear"

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


@dataclass(frozen=True)
class Calibration:
    depth_top: float
    depth_bottom: float
    depth_unit: str
    curves: tuple[CurveScale, ...]
    well: dict[str, str] = field(default_factory=dict)
    calibrated: bool = True

    @classmethod
    def track_units(cls, n_curves: int = 2) -> Calibration:
        """The uncalibrated fallback: depth = column index, value = 0..1 across the track."""
        curves = tuple(CurveScale(f"CURVE_{'AB'[i]}", "TRACK", 0.0, 1.0) for i in range(n_curves))
        return cls(0.0, 0.0, "PX", curves, {}, calibrated=False)

    @classmethod
    def from_dict(cls, data: dict[str, Any], source: str = "<dict>") -> Calibration:
        try:
            depth = data["depth"]
            curves = tuple(
                CurveScale(
                    mnemonic=str(c["mnemonic"]),
                    unit=str(c.get("unit", "")),
                    top_value=float(c["top_value"]),
                    bottom_value=float(c["bottom_value"]),
                    scale=c.get("scale", "linear"),
                )
                for c in data["curves"]
            )
            calib = cls(float(depth["top"]), float(depth["bottom"]), str(depth.get("unit", "")), curves,
                        {str(k): str(v) for k, v in (data.get("well") or {}).items()})
        except (KeyError, TypeError, ValueError) as exc:
            raise CalibrationError(f"{source}: malformed calibration ({exc!r})") from exc
        calib.check(source)
        return calib

    @classmethod
    def from_file(cls, path: Path | str) -> Calibration:
        path = Path(path)
        try:
            data = json.loads(path.read_text())
        except (OSError, json.JSONDecodeError) as exc:
            raise CalibrationError(f"{path}: unreadable calibration ({exc})") from exc
        return cls.from_dict(data, source=str(path))

    def check(self, source: str) -> None:
        if not self.curves:
            raise CalibrationError(f"{source}: calibration lists no curves")
        if self.depth_top == self.depth_bottom:
            raise CalibrationError(f"{source}: depth top and bottom are both {self.depth_top}")
        for c in self.curves:
            if c.scale not in ("linear", "log"):
                raise CalibrationError(f"{source}: curve {c.mnemonic} has scale {c.scale!r}, not linear or log")
            if c.top_value == c.bottom_value:
                raise CalibrationError(f"{source}: curve {c.mnemonic} has equal top and bottom values")
            if c.scale == "log" and min(c.top_value, c.bottom_value) <= 0:
                raise CalibrationError(f"{source}: log curve {c.mnemonic} needs positive top and bottom values")

    def to_dict(self) -> dict[str, Any]:
        return {
            "depth": {"top": self.depth_top, "bottom": self.depth_bottom, "unit": self.depth_unit},
            "curves": [asdict(c) for c in self.curves],
            "well": dict(self.well),
        }

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

    def row_to_value(self, rows: np.ndarray, height: int, curve: int) -> np.ndarray:
        """Subpixel row (pixel centres at y + 0.5) -> value of curve `curve` (0-based)."""
        fraction = (np.asarray(rows, dtype=np.float64) + 0.5) / height
        return self.curves[curve].fraction_to_value(fraction)

    def value_to_row(self, values: np.ndarray, height: int, curve: int) -> np.ndarray:
        """Value of curve `curve` -> subpixel row; NaN stays NaN."""
        return self.curves[curve].value_to_fraction(values) * height - 0.5

    def value_to_track(self, values: np.ndarray, curve: int) -> np.ndarray:
        """Physical value -> track units (0 top edge, 1 bottom edge), the scale metrics use."""
        return self.curves[curve].value_to_fraction(values)


def find_sidecar(scan: Path) -> Path | None:
    """The scan's own `<scan>.calib.json`, else its folder's `tranche.calib.json`, else None."""
    own = scan.with_name(scan.name + SIDECAR_SUFFIX)
    if own.is_file():
        return own
    tranche = scan.parent / TRANCHE_FILE
    return tranche if tranche.is_file() else None

