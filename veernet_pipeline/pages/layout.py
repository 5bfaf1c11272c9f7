"""The page layout contract: where the tracks, log sections and non-log rows of a whole-log page are.

A JSON file beside the scans: `<scan>.layout.json` for one page, `tranche.layout.json` for every
page of a folder printed alike. When both exist, the scan's own file wins key by key at the top
level (a tranche file typically gives `tracks`, a scan file `sections`, `skip` and `well`).
Every coordinate is a pixel of the page **as stored** in the TIFF (portrait, depth running down
the rows): x = column from the left edge, y = row from the top, 0-based. A full example is in
docs/pages.md. In short:

- `tracks`: each track's column range `[left, right)` and its curves, each with the values
  printed at the track's left and right edges (`left_value`, `right_value`), `scale` linear or
  log, an optional backup (wrap) scale and optionally the legend's line style and, on a colour
  print, its pen's colour (`io.colours`); both go into each strip's sidecar;
- `sections`: each log section (`kind` main or repeat) with its row range `[top_row, bottom_row)`
  and its depth calibration, two or more (`row`, `depth`) points read off the printed depth
  numbers (a least-squares line through them; a row is the pixel row's centre);
- `skip`: row bands that are not log (header, footer, banner, repeated track headers); they may
  not overlap a section, so they are never digitised;
- optional: `page` (stored width and height, checked against the image), `skew` (a page turned
  by `angle_deg`: the tracks' columns move by ``round(tan(angle) * (y - pivot_row))`` in row y,
  positive to the right going down), `depth_column`, `well` (LAS ~Well items), `notes`.

A draft written by `veernet layout` holds JSON nulls where only a person can read the value
(depths, curve names and scales); `parse_layout` refuses a layout with nulls left and lists them.
Null is never a valid value: an optional field is left out instead.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from veernet_pipeline.io.colours import parse_colour

LAYOUT_SUFFIX = ".layout.json"
TRANCHE_LAYOUT = "tranche.layout.json"
# Beyond this a page is turned, not skewed; scanners stay well within a degree.
MAX_SKEW_DEG = 5.0
# `<MNEM>_CONF` is the confidence companion `veernet digitize` writes beside each curve.
CONF_SUFFIX = "_CONF"

Finite = Annotated[float, Field(allow_inf_nan=False)]
Pixel = Annotated[int, Field(ge=0)]
Style = Literal["solid", "dashed", "dotted", "dash_dot", "long_dash"]


class LayoutError(ValueError):
    """A layout that cannot be used; the message names the file and the field, and says how to fix it."""


class _Part(BaseModel):
    # Strict: a string where a number belongs is an error, not a silent conversion.
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)


class Backup(_Part):
    mode: Literal["wrap"]
    max_wraps: Annotated[int, Field(ge=0)] = 1


class Curve(_Part):
    """One curve of a track; `left_value` / `right_value` are printed at the track's left / right edge."""

    mnemonic: Annotated[str, Field(min_length=1)]
    unit: str = ""
    left_value: Finite
    right_value: Finite
    scale: Literal["linear", "log"] = "linear"
    backup: Backup | None = None
    style: Style | None = None
    colour: str | None = None

    @field_validator("colour")
    @classmethod
    def _known_colour(cls, colour: str | None) -> str | None:
        return None if colour is None else parse_colour(colour)

    @model_validator(mode="after")
    def _usable_scale(self) -> Curve:
        if self.left_value == self.right_value:
            raise ValueError(f"curve {self.mnemonic}: left_value and right_value are both {self.left_value}")
        if self.scale == "log" and min(self.left_value, self.right_value) <= 0:
            raise ValueError(f"curve {self.mnemonic}: a log scale needs positive left_value and right_value")
        if self.mnemonic.upper() == "DEPT" or self.mnemonic.upper().endswith(CONF_SUFFIX):
            raise ValueError(f"curve {self.mnemonic}: DEPT and names ending {CONF_SUFFIX} are written by "
                             "digitising; rename the curve")
        return self


class _Span(_Part):
    # Subclasses name their two ends; the first must be below the second (an empty span is a mistake).
    _ends: tuple[str, str]

    @model_validator(mode="after")
    def _ordered(self) -> _Span:
        low, high = (getattr(self, name) for name in self._ends)
        if low >= high:
            raise ValueError(f"{self._ends[0]} ({low}) must be less than {self._ends[1]} ({high})")
        return self


class ColumnRange(_Span):
    _ends = ("left", "right")
    left: Pixel
    right: Pixel


class Track(ColumnRange):
    name: Annotated[str, Field(min_length=1)]
    curves: Annotated[list[Curve], Field(min_length=1)]


class DepthPoint(_Part):
    row: Finite
    depth: Finite


class DepthScale(_Part):
    unit: Annotated[str, Field(min_length=1)]
    points: Annotated[list[DepthPoint], Field(min_length=2)]

    @model_validator(mode="after")
    def _two_distinct(self) -> DepthScale:
        rows = [p.row for p in self.points]
        if len(set(rows)) < len(rows):
            raise ValueError(f"points: two points share a row ({rows}); give each depth at its own row")
        if len({p.depth for p in self.points}) < 2:
            raise ValueError(f"points: every depth is {self.points[0].depth}; read two different depth numbers")
        if self.line()[1] == 0.0:
            raise ValueError("points: the depths do not change with the row (a flat line through the points); "
                             "check the rows and depths")
        return self

    def line(self) -> tuple[float, float]:
        """(depth at row 0, depth per row): the least-squares line through the points (exact for two)."""
        rows = np.array([p.row for p in self.points])
        depths = np.array([p.depth for p in self.points])
        if rows.size == 2:
            slope = (depths[1] - depths[0]) / (rows[1] - rows[0])
            return float(depths[0] - slope * rows[0]), float(slope)
        slope, intercept = np.polyfit(rows, depths, 1)
        return float(intercept), float(slope)

    def depth_at(self, rows: np.ndarray | float) -> np.ndarray:
        """Depth at (fractional) page rows; row y is the centre of pixel row y."""
        intercept, slope = self.line()
        return intercept + slope * np.asarray(rows, dtype=np.float64)


class RowBand(_Span):
    _ends = ("top_row", "bottom_row")
    top_row: Pixel
    bottom_row: Pixel


class Section(RowBand):
    """A log section; each goes to its own LAS (`main` -> `<scan>.las`, others `<scan>.<name>.las`)."""

    name: Annotated[str, Field(min_length=1, pattern=r"^[A-Za-z0-9_-]+$")]
    kind: Literal["main", "repeat"]
    depth: DepthScale
    # Rows where `veernet layout` found printed depth numbers; information for the operator only.
    depth_label_rows: list[Pixel] = []


class Skip(RowBand):
    kind: Literal["header", "footer", "banner", "track_header", "other"]
    label: str = ""


class PageSize(_Part):
    width: Annotated[int, Field(gt=0)]
    height: Annotated[int, Field(gt=0)]


class Skew(_Part):
    angle_deg: Annotated[float, Field(allow_inf_nan=False, gt=-MAX_SKEW_DEG, lt=MAX_SKEW_DEG)]
    pivot_row: Pixel = 0

    def shifts(self, rows: np.ndarray) -> np.ndarray:
        """Columns the page content has moved right in each row (int64)."""
        offset = math.tan(math.radians(self.angle_deg)) * (np.asarray(rows, dtype=np.float64) - self.pivot_row)
        return np.floor(offset + 0.5).astype(np.int64)


class Layout(_Part):
    """A parsed, checked page layout (see the module docstring)."""

    tracks: Annotated[list[Track], Field(min_length=1)]
    sections: Annotated[list[Section], Field(min_length=1)]
    skip: list[Skip] = []
    page: PageSize | None = None
    skew: Skew | None = None
    depth_column: ColumnRange | None = None
    well: dict[str, str | int | float] = {}
    notes: list[str] = []

    @model_validator(mode="after")
    def _consistent(self) -> Layout:
        _unique("tracks", [t.name for t in self.tracks])
        _unique("sections", [s.name for s in self.sections])
        _unique("curve mnemonics (one LAS holds every track's curves)",
                [c.mnemonic.upper() for t in self.tracks for c in t.curves])
        columns = [(f"tracks[{i}] ({t.name})", t.left, t.right) for i, t in enumerate(self.tracks)]
        if self.depth_column is not None:
            columns.append(("depth_column", self.depth_column.left, self.depth_column.right))
        _disjoint(columns, "columns")
        bands = [(f"sections[{i}] ({s.name})", s.top_row, s.bottom_row) for i, s in enumerate(self.sections)]
        bands += [(f"skip[{i}] ({s.kind})", s.top_row, s.bottom_row) for i, s in enumerate(self.skip)]
        _disjoint(bands, "rows")
        if self.page is not None:
            for name, _, right in columns:
                if right > self.page.width:
                    raise ValueError(f"{name} ends at column {right}, past the page width {self.page.width}")
            for name, _, bottom in bands:
                if bottom > self.page.height:
                    raise ValueError(f"{name} ends at row {bottom}, past the page height {self.page.height}")
        return self

    def well_items(self) -> dict[str, str]:
        return {str(k): str(v) for k, v in self.well.items()}


def _unique(what: str, names: list[str]) -> None:
    seen = {n for n in names if names.count(n) > 1}
    if seen:
        raise ValueError(f"{what}: {', '.join(sorted(seen))} appear more than once; names must be unique")


def _disjoint(spans: list[tuple[str, int, int]], unit: str) -> None:
    ordered = sorted(spans, key=lambda s: s[1])
    for (a, _, a_end), (b, b_start, _) in zip(ordered, ordered[1:], strict=False):
        if b_start < a_end:
            raise ValueError(f"{a} and {b} overlap ({unit} {b_start} to {a_end}); they must not share {unit}")


def placeholders(data: Any, path: str = "") -> list[str]:
    """Paths of the JSON nulls in `data` (the fields a draft leaves for a person to fill)."""
    if data is None:
        return [path or "<the whole layout>"]
    if isinstance(data, dict):
        return [p for k, v in data.items() for p in placeholders(v, f"{path}.{k}" if path else str(k))]
    if isinstance(data, list):
        return [p for i, v in enumerate(data) for p in placeholders(v, f"{path}[{i}]")]
    return []


def _where(loc: tuple[int | str, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "<top level>"


def parse_layout(data: Any, source: str = "<layout>") -> Layout:
    """Check a layout's JSON data.

    Raises:
        LayoutError: placeholders left, a wrong type, a missing key, NaN/inf, an empty range, equal
            depth points, overlapping tracks or sections, or bounds past the page; the message
            names `source` and each field.
    """
    left = placeholders(data)
    if left:
        raise LayoutError(f"{source}: {len(left)} placeholder(s) still null; fill in {', '.join(left)} "
                          "(read them off the page's track headers and depth column) or remove the entry")
    try:
        return Layout.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(f"{_where(e['loc'])}: {e['msg'].removeprefix('Value error, ')}" for e in exc.errors())
        raise LayoutError(f"{source}: {problems}") from None


def read_layout(path: Path | str) -> Layout:
    """Read and check one layout file."""
    return parse_layout(_read_json(Path(path)), str(path))


def _read_json(path: Path) -> Any:
    try:
        text = path.read_bytes().decode("utf-8")
        return json.loads(text)
    except OSError as exc:
        raise LayoutError(f"{path}: cannot read the layout ({exc})") from exc
    except UnicodeDecodeError as exc:
        raise LayoutError(f"{path}: not UTF-8 text (byte {exc.start}); save the layout as UTF-8 JSON") from exc
    except json.JSONDecodeError as exc:
        raise LayoutError(f"{path}: not valid JSON ({exc}); check the brackets and commas there") from exc


def find_layout(scan: Path) -> list[Path]:
    """The layout files that apply to `scan`, tranche first: `tranche.layout.json`, then `<scan>.layout.json`."""
    found = [Path(scan).parent / TRANCHE_LAYOUT, Path(scan).with_name(Path(scan).name + LAYOUT_SUFFIX)]
    return [p for p in found if p.is_file()]


def load_layout(scan: Path) -> Layout | None:
    """The layout of one scan: its tranche file overlaid key by key with its own file; None if neither exists."""
    files = find_layout(scan)
    if not files:
        return None
    merged: dict[str, Any] = {}
    for path in files:
        data = _read_json(path)
        if not isinstance(data, dict):
            raise LayoutError(f"{path}: the layout must be a JSON object ({{...}}), not {type(data).__name__}")
        merged.update(data)
    return parse_layout(merged, " over ".join(str(p) for p in reversed(files)))
