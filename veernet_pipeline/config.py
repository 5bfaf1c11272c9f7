"""params.yaml -> typed settings.

`params.yaml` is the one configuration every runner reads. Its base values are grouped by
stage; `profile` names a block under `profiles:` whose keys override the base (deep merge);
explicit overrides (`veernet --set train_binary.epochs=3`, Dagster run config, or
`dvc exp run -S`) come last. Paths are resolved against the folder that holds params.yaml,
so a run behaves the same from any working directory.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, model_validator

PARAMS_ENV = "VEERNET_PARAMS"
PROFILE_ENV = "VEERNET_PROFILE"


class _Strict(BaseModel):
    # A misspelt key in params.yaml must fail loudly, not fall back to a default.
    model_config = ConfigDict(extra="forbid", frozen=True)


class _Ordered(_Strict):
    @model_validator(mode="after")
    def _ordered(self) -> _Ordered:
        if self.min > self.max:
            raise ValueError(f"range min {self.min} exceeds max {self.max}")
        return self


class Range(_Ordered):
    min: int
    max: int


class LowerBound(_Strict):
    """A lower bound and an optional upper one (None: no bound above)."""

    min: int
    max: int | None = None

    @model_validator(mode="after")
    def _ordered(self) -> LowerBound:
        if self.max is not None and self.min > self.max:
            raise ValueError(f"range min {self.min} exceeds max {self.max}")
        return self


class Paths(_Strict):
    raw: Path
    ingested: Path
    validated: Path
    synthetic: Path
    models: Path
    evaluation: Path
    digitized: Path
    las_source: str = ""


class IngestParams(_Strict):
    extensions: list[str]
    workers: int = Field(ge=0)
    max_pixels: int = Field(gt=0)
    worker_memory_mb: int = Field(ge=0)
    timeout_s: float = Field(gt=0)


class ValidateParams(_Strict):
    width: LowerBound
    height: Range
    bits: list[int]
    max_pages: int


class DashParams(_Strict):
    ink: int
    gap: int


class SplitParams(_Strict):
    val: float
    test: float


class FloatRange(_Ordered):
    min: float
    max: float


class StyleWeights(_Strict):
    """Relative weights of curve B's style (curve A is solid); a weight of 0 switches that style off."""

    dashed: float
    dotted: float
    long_dash: float
    dash_dot: float
    thin_solid: float

    @model_validator(mode="after")
    def _some_style(self) -> StyleWeights:
        weights = self.model_dump()
        if min(weights.values()) < 0 or sum(weights.values()) <= 0:
            raise ValueError(f"synthesize.styles weights must be >= 0 with a positive sum, got {weights}")
        return self


class StretchParams(_Strict):
    """Stretches along a curve (pen skips, faded ink): which curves get them, how many, how long."""

    share: float
    per_10k: float
    length: Range


class GridParams(_Strict):
    minor_px: FloatRange
    major_every: Range
    minor_gray: Range
    major_gray: Range
    major_px: Range
    value_divisions: Range
    border_px: Range


class TextParams(_Strict):
    depth_numbers: float
    number_every: Range
    font_px: Range
    headers_per_10k: float
    flags_per_10k: float


class Artefact(_Strict):
    """One scan artefact: applied to a share of instances, with a strength drawn from a range."""

    share: float
    strength: FloatRange


class ArtefactParams(_Strict):
    paper: Artefact
    illumination: Artefact
    blur: Artefact
    speckle: Artefact
    jpeg: Artefact
    skew: Artefact
    bilevel: Artefact

    @model_validator(mode="after")
    def _slight_skew(self) -> ArtefactParams:
        if max(abs(self.skew.strength.min), abs(self.skew.strength.max)) > 1.0:
            raise ValueError("synthesize.artefacts.skew.strength is in degrees and may not exceed 1 "
                             f"(got {self.skew.strength.min}..{self.skew.strength.max}); real scans skew less")
        return self


class SynthesizeParams(_Strict):
    binary_count: int
    multiclass_count: int
    multiclass_generated: int
    workers: int
    size_source: Literal["uniform", "archive"]

    @model_validator(mode="after")
    def _enough_candidates(self) -> SynthesizeParams:
        if self.multiclass_generated < self.multiclass_count:
            raise ValueError(f"synthesize.multiclass_generated ({self.multiclass_generated}) must be at least "
                             f"multiclass_count ({self.multiclass_count}), the number kept")
        return self
    width: Range
    height: Range
    splits: SplitParams
    procedural_share: float
    log_scale_share: float
    reversed_share: float
    line_width: Range
    noise_std: float
    dash: DashParams
    solo_broken_share: float
    ink: Range
    styles: StyleWeights
    dotted: DashParams
    long_dash: DashParams
    dash_jitter: float
    gaps: StretchParams
    fades: StretchParams
    fade_gray: Range
    backup_share: float
    max_wraps: int
    grid: GridParams
    text: TextParams
    artefacts: ArtefactParams


class ModelParams(_Strict):
    channels: list[int] = Field(min_length=5, max_length=5)
    stem_channels: int
    attention_layers: int
    attention_heads: int


class LossParams(_Strict):
    """The training loss (training/losses): `name` picks it; each loss reads only its own fields."""

    name: str
    alpha: float = 0.3  # tversky: weight of false positives
    beta: float = 0.7  # tversky: weight of false negatives
    gamma: float = Field(2.0, ge=0.0)  # focal: focusing exponent, 0 = plain cross-entropy
    smoothing: float = Field(0.0, ge=0.0, lt=1.0)  # soft_ce: label-smoothing share spread over all classes


class TrainParams(_Strict):
    epochs: int
    lr: float
    weight_decay: float
    batch_size: int
    accumulation: int
    warmup_steps: int
    crop_width: int
    crops_per_log: int
    loss: LossParams
    max_train: int
    num_workers: int
    checkpoint_every_steps: int


class ExtractParams(_Strict):
    """The joint path search that turns class probabilities into curves (evaluation/trace.py)."""

    min_confidence: float
    max_candidates: int
    jump_px: float
    absent_cost: float
    gap_cost: float
    crossing_cost: float
    share_weight: float
    max_gap: int
    mirror: bool


class GateParams(_Strict):
    # None = an open gate: the newest evaluated model always becomes champion (demo and test runs,
    # whose minutes of training cannot meet a real bar but must still exercise inference).
    min_median_r2: float | None


class EvaluateParams(_Strict):
    split: str
    max_logs: int
    tile_width: int
    tile_overlap: int
    gate: GateParams


class InferParams(_Strict):
    model_uri: str
    tile_width: int
    tile_overlap: int


class Settings(_Strict):
    """Every parameter of every stage, after profile and overrides are applied."""

    root: Path
    profile: str
    seed: int
    paths: Paths
    ingest: IngestParams
    validate_: ValidateParams = Field(alias="validate")
    synthesize: SynthesizeParams
    model: ModelParams
    train_binary: TrainParams
    train_multiclass: TrainParams
    extract: ExtractParams
    evaluate: EvaluateParams
    infer: InferParams

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    def path(self, name: str) -> Path:
        """Absolute path of a `paths:` entry, resolved against the params.yaml folder."""
        value = Path(getattr(self.paths, name))
        return value if value.is_absolute() else self.root / value

    def section(self, name: str) -> dict[str, Any]:
        """One stage's parameters as a plain dict (for MLflow params and Dagster metadata)."""
        attr = "validate_" if name == "validate" else name
        return getattr(self, attr).model_dump(mode="json")


def deep_merge(base: Mapping[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    """Return `base` with `override` merged in; nested mappings merge, everything else replaces."""
    merged = copy.deepcopy(dict(base))
    for key, value in override.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = copy.deepcopy(value)
    return merged


def parse_override(item: str) -> dict[str, Any]:
    """Turn `a.b.c=value` into `{"a": {"b": {"c": value}}}`; the value is parsed as YAML."""
    key, sep, raw = item.partition("=")
    if not sep or not key.strip():
        raise ValueError(f"override {item!r} is not of the form section.key=value")
    node: Any = yaml.safe_load(raw)
    for part in reversed(key.strip().split(".")):
        node = {part: node}
    return node


def find_params(start: Path | None = None) -> Path:
    """Locate params.yaml: $VEERNET_PARAMS, else the nearest one in `start` or its parents."""
    if os.environ.get(PARAMS_ENV):
        return Path(os.environ[PARAMS_ENV]).resolve()
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        candidate = folder / "params.yaml"
        if candidate.is_file():
            return candidate
    raise FileNotFoundError(f"no params.yaml in {here} or its parents; set {PARAMS_ENV} to its path")


def load_settings(
    params_path: Path | str | None = None,
    profile: str | None = None,
    overrides: Iterable[str] = (),
) -> Settings:
    """Read params.yaml, apply the profile, then `key=value` overrides.

    Args:
        params_path: the params.yaml to read; default from `find_params`.
        profile: profile name; default $VEERNET_PROFILE, else the file's `profile` key.
        overrides: `section.key=value` strings applied last.

    Returns:
        Validated, immutable settings.
    """
    path = Path(params_path).resolve() if params_path else find_params()
    raw = yaml.safe_load(path.read_text()) or {}
    profiles = raw.pop("profiles", {}) or {}
    for item in overrides:
        raw = deep_merge(raw, parse_override(item))
    chosen = profile or os.environ.get(PROFILE_ENV) or raw.get("profile")
    if chosen not in profiles:
        raise ValueError(f"{path}: profile {chosen!r} is not one of {sorted(profiles)}")
    merged = deep_merge(raw, profiles[chosen] or {})
    # Explicit overrides beat the profile too.
    for item in overrides:
        merged = deep_merge(merged, parse_override(item))
    merged["profile"] = chosen
    merged["root"] = path.parent
    return Settings.model_validate(merged)
