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
from typing import Annotated, Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from veernet_pipeline.errors import BadParams

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
    # Per-tranche runs (Dagster partitions): <tranches>/<tranche>/{ingested,validated,digitized}.
    tranches: Path = Path("data/tranches")
    # The review queue (queue.parquet, queue.md) and the reviewers' marks (marks.jsonl, append-only).
    review: Path = Path("data/review")
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


class SplitParams(_Strict):
    val: float
    test: float


class FloatRange(_Ordered):
    min: float
    max: float


class StyleWeights(_Strict):
    """Relative weights of each curve's line style (`io.classes.STYLES`); a weight of 0 switches that style off."""

    solid: float
    dashed: float
    dotted: float
    dash_dot: float
    long_dash: float

    @model_validator(mode="after")
    def _some_style(self) -> StyleWeights:
        weights = self.model_dump()
        if min(weights.values()) < 0 or sum(weights.values()) <= 0:
            raise ValueError(f"synthesize.styles weights must be >= 0 with a positive sum, got {weights}")
        return self


class PatternRange(_Strict):
    """A broken style's lengths along the curve, px as the eye sees them; each curve draws its own."""

    ink: FloatRange
    gap: FloatRange


class DashDotRange(PatternRange):
    """Dash-dot: a dash (`ink`), a gap, a dot, the same gap again."""

    dot: FloatRange


class PatternParams(_Strict):
    """The broken styles' length ranges, and `scale`: one factor per track, log-uniform in [min, max], that
    multiplies every length of its broken curves, as print scale and scan resolution stretch all of a log's
    dashes alike, so that absolute px stop naming a style; {min: 1, max: 1} (every profile: a one-epoch trial
    made the foreign set worse, docs/accuracy.md) draws nothing and leaves every instance as it was."""

    scale: FloatRange
    dashed: PatternRange
    dotted: PatternRange
    dash_dot: DashDotRange
    long_dash: PatternRange

    @model_validator(mode="after")
    def _positive_scale(self) -> PatternParams:
        if self.scale.min <= 0:
            raise ValueError("synthesize.patterns.scale multiplies dash lengths: min must be > 0, "
                             f"got {self.scale.min}")
        return self


class StraightParams(_Strict):
    """Near-constant curves (tension, line speed): long straight runs near a track edge."""

    share: float  # per curve after the first
    edge: FloatRange  # distance of the line from the nearer track edge, track fraction
    steps_per_10k: float  # level changes (a tool sticking, a new speed) per 10,000 columns


class SteepParams(_Strict):
    """Excursions where a curve crosses most of the track within a few columns."""

    share: float  # per curve (straight curves excepted)
    per_10k: float  # excursions per 10,000 columns on such a curve (at least one)
    samples: Range  # LAS samples the curve stays on the far side
    far: FloatRange  # where it goes: track fraction measured from the edge it starts away from


class TallParams(_Strict):
    """Tracks taller than `height` (whole-log tracks reach 1,000 px): a share of instances drawn this tall."""

    share: float
    height: Range


class HeavyLines(_Strict):
    share: float  # per instance
    px: Range  # thickness of major depth lines, heavy value lines and borders


class DoubledLines(_Strict):
    share: float  # per instance
    gap: Range  # paper between the two lines, px


class FlagKinds(_Strict):
    """Relative weights of a flag's fill; all 0 is not allowed (set `flags.per_10k` to 0 instead)."""

    hatch: float
    cross: float
    halftone: float
    solid: float


class FlagParams(_Strict):
    """Hatched and shaded flags, at a track edge or over the curves in mid-track."""

    per_10k: float
    mid_track: float  # share of flags placed anywhere across the track rather than at an edge
    columns: Range
    rows: FloatRange  # height as a share of the track height
    kinds: FlagKinds


class BannerParams(_Strict):
    """Section headers and repeat-section banners: bands across the whole track that interrupt the curves."""

    per_10k: float
    columns: Range
    repeat_share: float  # share of banners that repeat the track header (curve names, scales, style samples)


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
    major_value_px: Range  # thickness of the middle value line of a linear track, a log track's decades
    value_divisions: Range
    border_px: Range
    heavy: HeavyLines
    doubled: DoubledLines


class TextParams(_Strict):
    depth_numbers: float
    number_every: Range
    font_px: Range
    headers_per_10k: float


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
    tall: TallParams
    splits: SplitParams
    procedural_share: float
    curves_per_track: list[float] = Field(min_length=5, max_length=5)  # weights of 1, 2, 3, 4, 5 curves
    overlay_share: float
    log_scale_share: float
    reversed_share: float
    line_width: Range
    noise_std: float
    ink: Range
    styles: StyleWeights
    distinct_styles: float
    patterns: PatternParams
    straight: StraightParams
    steep: SteepParams
    gaps: StretchParams
    fades: StretchParams
    fade_gray: Range
    backup_share: float
    max_wraps: int
    grid: GridParams
    text: TextParams
    flags: FlagParams
    banners: BannerParams
    artefacts: ArtefactParams

    @model_validator(mode="after")
    def _curve_counts(self) -> SynthesizeParams:
        if min(self.curves_per_track) < 0 or sum(self.curves_per_track) <= 0:
            raise ValueError("synthesize.curves_per_track holds the weights of 1..5 curves per track: five "
                             f"numbers >= 0 with a positive sum, got {self.curves_per_track}")
        if self.line_width.min < 1:
            raise ValueError(f"synthesize.line_width starts at 1 px, got {self.line_width.min}")
        return self


class ForeignParams(_Strict):
    """The foreign test renderer (`veernet_pipeline/foreign`): evaluation scans drawn by other means."""

    count: int  # scans written to paths.synthetic/foreign; 0 = none
    width: Range
    height: Range
    curves_per_track: list[float] = Field(min_length=5, max_length=5)  # weights of 1, 2, 3, 4, 5 curves
    bilevel_share: float  # share stored as 1-bit CCITT G4, like fax scans; the rest 8-bit gray
    # Share printed as a vendor's colour print rasterised to TIFF (RGB, no scanner): each curve in its own pen colour,
    # named in the sidecar (`colour`); such a print is never 1-bit. Drawn from a stream of its own: 0 = the gray set.
    colour_share: float = Field(ge=0.0, le=1.0)
    # deck: the five styles dealt per track, each named in the sidecar. seeds: the seeds' sidecar contract,
    # at most two curves, the first solid and the second one broken style (or a thinner solid), no style named.
    legend: Literal["deck", "seeds"] = "deck"

    @model_validator(mode="after")
    def _seeds_name_two_curves(self) -> ForeignParams:
        if self.legend == "seeds" and any(self.curves_per_track[2:]):
            raise ValueError(f"foreign.legend seeds: the seeds' sidecars name at most two curves (solid, then "
                             f"broken), but curves_per_track {self.curves_per_track} weighs 3-5 curves; set "
                             "their weights to 0, e.g. [0, 1, 0, 0, 0]")
        return self


class ModelParams(_Strict):
    """VeerNet's widths (model/veernet.py): channels of the five levels, 1/2 to 1/32 of the input's sides."""

    channels: list[int] = Field(min_length=5, max_length=5)
    attention_layers: int
    attention_heads: int
    # Column dilations of the depth-context layers at 1/4 of the sides (model/blocks.py DepthContext); [] = none.
    # Defaults to none so model.json files written before it load as the net they were.
    depth_context: list[Annotated[int, Field(ge=1)]] = Field(default_factory=list)


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
    crop_height: int = Field(ge=0)  # rows of a crop across the track, multiple of 32 (0 = the whole track)
    ema_decay: float = Field(ge=0.0, lt=1.0)  # moving average of the weights the stage saves (0 = the last weights)
    loss: LossParams
    max_train: int
    num_workers: int
    checkpoint_every_steps: int


class EnlargeParams(_Strict):
    """A scan read again enlarged where a curve its sidecar names barely shows (reading/enlarge.py)."""

    factor: float = Field(default=1.0, ge=1.0)  # 1 = never
    below: float = Field(default=0.25, gt=0.0, lt=1.0)  # a named curve showing in fewer columns is missing


class ExtractParams(_Strict):
    """The path search that turns class probabilities into curves (reading/extract.py, docs/reading.md)."""

    min_confidence: float
    max_candidates: int = Field(ge=1, le=254)  # states fit uint8 back-pointers, absent included
    jump_px: float
    absent_cost: float
    gap_cost: float
    crossing_cost: float
    share_weight: float
    # Per px of run-height misfit: curves drawn alike are told apart by the runs they leave (reading/run_heights.py).
    height_weight: float = Field(default=0.0, ge=0.0)
    # The same between curves of different styles, in a second search over the whole track (reading/extract.py).
    height_weight_styles: float = Field(default=0.0, ge=0.0)
    max_gap: int
    mirror: bool
    min_support: float = Field(gt=0.0, le=1.0)  # without a sidecar: share of columns a curve must show in
    enlarge: EnlargeParams = EnlargeParams()


class GateParams(_Strict):
    # None = an open gate: the newest evaluated model always becomes champion (demo and test runs,
    # whose minutes of training cannot meet a real bar but must still exercise inference).
    min_median_r2: float | None


class IntervalParams(_Strict):
    level: float = Field(gt=0.0, lt=1.0)  # confidence level of the bootstrap intervals
    resamples: int = Field(ge=100)


class EvaluateParams(_Strict):
    split: str
    max_logs: int
    tile_width: int
    tile_overlap: int
    gate: GateParams
    interval: IntervalParams
    # The evaluation-only set of the foreign renderer, a folder under paths.synthetic; "" = none.
    # Evaluated beside the own split when it exists; never gated on, trained or tuned on.
    foreign: str


class InferParams(_Strict):
    model_uri: str
    tile_width: int
    tile_overlap: int
    # Tallest track read (px); taller ones fail with a message naming the scan. Height is never tiled:
    # the whole track goes through the net at once, so memory grows with it.
    max_height: int = Field(ge=32)
    max_attempts: int = Field(ge=1)
    low_confidence: float = Field(ge=0.0, le=1.0)
    # The resolution the net was trained at: a scan whose tags state another is read resampled to it
    # (io/resolution.py, reading/resolution.py), and ingest holds its size to the validate bounds on
    # that grid; None = every scan read, and held, at its own pixels.
    net_dpi: float | None = Field(default=None, gt=0.0)
    # The resolution of scans whose tags state none (or image software's 72-100): an archive scanned at one
    # resolution and saved without it; None = such scans are read, and held, at their own pixels.
    untagged_dpi: float | None = Field(default=None, gt=0.0)


class ReviewParams(_Strict):
    # Rows of the queue shown in queue.md and in the review_queue asset's metadata (queue.parquet holds all).
    top_n: int = Field(ge=1)


class Settings(_Strict):
    """Every parameter of every stage, after profile and overrides are applied."""

    root: Path
    profile: str
    seed: int
    paths: Paths
    ingest: IngestParams
    validate_: ValidateParams = Field(alias="validate")
    synthesize: SynthesizeParams
    foreign: ForeignParams
    model: ModelParams
    train_binary: TrainParams
    train_multiclass: TrainParams
    extract: ExtractParams
    evaluate: EvaluateParams
    infer: InferParams
    review: ReviewParams

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
        raise BadParams(f"override {item!r} is not of the form section.key=value")
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

    Raises:
        BadParams: an unknown profile, a malformed override, or a value that does not validate.
    """
    path = Path(params_path).resolve() if params_path else find_params()
    raw = yaml.safe_load(path.read_text()) or {}
    profiles = raw.pop("profiles", {}) or {}
    for item in overrides:
        raw = deep_merge(raw, parse_override(item))
    chosen = profile or os.environ.get(PROFILE_ENV) or raw.get("profile")
    if chosen not in profiles:
        raise BadParams(f"{path}: profile {chosen!r} is not one of {sorted(profiles)}")
    merged = deep_merge(raw, profiles[chosen] or {})
    # Explicit overrides beat the profile too.
    for item in overrides:
        merged = deep_merge(merged, parse_override(item))
    merged["profile"] = chosen
    merged["root"] = path.parent
    try:
        return Settings.model_validate(merged)
    except ValidationError as exc:
        raise BadParams(f"{path} (profile {chosen}, overrides {list(overrides)}): {exc}") from exc
