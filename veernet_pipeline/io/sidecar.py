"""The calibration sidecar's JSON, checked field by field: a pydantic model whose errors name the field.

`parse_sidecar` turns the decoded JSON into a `Sidecar` or raises `SidecarError` listing every
problem as ``<field>: <what is wrong>``, e.g. ``curves[1].top_value: not a number`` or
``depth: top and bottom are both 1000.0``, so an operator can fix the file without reading code.
Whatever the JSON holds (a list where an object belongs, a missing key, a string, NaN or infinity,
equal ends, an unknown scale, a log scale through zero), the outcome is a `Sidecar` or a
`SidecarError`, never another exception. `io.calibration` builds its `Calibration` from a `Sidecar`.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from veernet_pipeline.io.classes import STYLES
from veernet_pipeline.io.colours import parse_colour

# Beyond this the scan is turned, not skewed; the renderer stays within 1 degree.
MAX_SKEW_DEG = 45.0

Finite = Annotated[float, Field(allow_inf_nan=False)]


class SidecarError(ValueError):
    """Every problem of one sidecar, ``; ``-separated, each naming its field."""


class _Part(BaseModel):
    # Unknown keys (notes, provenance) are allowed and ignored; numbers are accepted where text belongs.
    model_config = ConfigDict(extra="ignore", frozen=True, coerce_numbers_to_str=True)


class Depth(_Part):
    top: Finite
    bottom: Finite
    unit: str = ""

    @model_validator(mode="after")
    def _distinct(self) -> Depth:
        if self.top == self.bottom:
            raise ValueError(f"top and bottom are both {self.top}; give the depths of the image's two edges")
        return self


class Backup(_Part):
    mode: Literal["wrap"]
    max_wraps: int = Field(1, ge=0)


class Curve(_Part):
    mnemonic: str = Field(min_length=1)
    unit: str = ""
    top_value: Finite
    bottom_value: Finite
    scale: Literal["linear", "log"] = "linear"
    backup: Backup | None = None
    # The line style the log header's legend draws it in; None keeps the seeds' convention.
    style: str | None = None
    # The colour a colour print draws it in (io.colours: a name or #rrggbb); None reads it by style alone.
    colour: str | None = None

    @field_validator("colour")
    @classmethod
    def _known_colour(cls, colour: str | None) -> str | None:
        return None if colour is None else parse_colour(colour)

    @field_validator("style")
    @classmethod
    def _known_style(cls, style: str | None) -> str | None:
        if style is not None and style not in STYLES:
            raise ValueError(f"{style!r} is not one of {list(STYLES)}; name it as the log header's legend draws it, "
                             "or leave it out")
        return style

    @model_validator(mode="after")
    def _usable_scale(self) -> Curve:
        if self.top_value == self.bottom_value:
            raise ValueError(f"top_value and bottom_value are both {self.top_value}")
        if self.scale == "log" and min(self.top_value, self.bottom_value) <= 0:
            raise ValueError(f"a log scale needs positive top_value and bottom_value, not {self.top_value} and "
                             f"{self.bottom_value}")
        return self


class Skew(_Part):
    angle_deg: Finite = 0.0
    pivot_column: Finite = 0.0

    @model_validator(mode="after")
    def _small(self) -> Skew:
        if not abs(self.angle_deg) < MAX_SKEW_DEG:
            raise ValueError(f"angle_deg {self.angle_deg} is not below {MAX_SKEW_DEG}; turn the scan by 90 degrees "
                             "first")
        return self


class Sidecar(_Part):
    depth: Depth
    curves: list[Curve] = Field(min_length=1)
    well: dict[str, str] = Field(default_factory=dict)
    skew: Skew | None = None


# pydantic error type -> the words an operator reads ({input} is the offending value).
_WORDS = {
    "missing": "missing",
    "float_parsing": "not a number ({input!r})",
    "float_type": "not a number ({input!r})",
    "finite_number": "not a finite number ({input!r})",
    "int_parsing": "not a whole number ({input!r})",
    "int_type": "not a whole number ({input!r})",
    "int_from_float": "not a whole number ({input!r})",
    "string_type": "not text ({input!r})",
    "string_too_short": "empty",
    "dict_type": "not an object ({{...}}), found {kind}",
    "model_type": "not an object ({{...}}), found {kind}",
    "model_attributes_type": "not an object ({{...}}), found {kind}",
    "list_type": "not a list ([...]), found {kind}",
    "too_short": "empty; list at least one curve",
    "greater_than_equal": "{input!r} is below 0",
}


def _field(loc: tuple[str | int, ...]) -> str:
    """('curves', 1, 'top_value') -> ``curves[1].top_value``; () -> ``the sidecar``."""
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "the sidecar"


def _problem(error: dict[str, Any]) -> str:
    if error["type"] == "literal_error":
        allowed = error.get("ctx", {}).get("expected", "")
        return f"{error['input']!r} is not {allowed}".replace("'", "")
    if error["type"] == "value_error":
        return str(error["msg"]).removeprefix("Value error, ")
    words = _WORDS.get(error["type"])
    if words is None:
        return str(error["msg"])
    value = error.get("input")
    return words.format(input=value, kind=type(value).__name__)


def parse_sidecar(data: Any) -> Sidecar:
    """Check decoded sidecar JSON (module docstring).

    Raises:
        SidecarError: every problem found, each as ``<field>: <what is wrong>``.
    """
    try:
        return Sidecar.model_validate(data)
    except ValidationError as exc:
        problems = [f"{_field(e['loc'])}: {_problem(e)}" for e in exc.errors(include_url=False)]
        raise SidecarError("; ".join(problems)) from None
