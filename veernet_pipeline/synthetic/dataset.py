"""Synthetic training sets on disk: `binary/` and `multiclass/`, each with an index.parquet.

Each kept instance `<id>` is `<id>.tif` (image), `<id>.mask.tif` (classes), `<id>.calib.json`
(the sidecar), `<id>.las` (ground truth: the window's native samples) and `<id>.record.json`
(its index row and verdict, which lets an interrupted run resume; see `generate`). Splits are by
source well (`splits`); sizes are uniform or the archive's (`sizes`).

Both sets draw each instance's curve count (1-5) from `synthesize.curves_per_track`, from the
instance's own stream. The binary set has `binary_count` instances, all kept, with masks in the
classes of `io.classes` like the multiclass set's (the binary stage collapses them to curve vs rest
as it loads them). The multiclass set renders
candidates 0..`multiclass_generated`-1 with the classes of `io.classes` (background, other ink,
five line styles), checks each like an archive scan plus a label sanity rule (`checks`), keeps the
first `multiclass_count` valid ones by index and lists every rejected one in `rejections.parquet`
with its reason. index.parquet is written last, so its presence means a complete set; besides the
contract's columns (`io.sets.INDEX_COLUMNS`) it lists each instance's `styles` and `features`.
"""

from __future__ import annotations

import hashlib
import logging
import math
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import tifffile
from matplotlib.figure import Figure

from veernet_pipeline.config import Settings, SynthesizeParams, ValidateParams
from veernet_pipeline.io.atomic import atomic_path, write_json_atomic, write_parquet_atomic
from veernet_pipeline.io.classes import CLASSES, OTHER_INK, STYLES, style_class
from veernet_pipeline.io.las import LasCurve, write_las
from veernet_pipeline.io.sets import DETAIL_COLUMNS, INDEX_COLUMNS, INDEX_FILE
from veernet_pipeline.io.splits import SPLITS, instance_splits
from veernet_pipeline.io.tiff import decode_scan, write_tiff
from veernet_pipeline.provenance import code_digest, digest
from veernet_pipeline.synthetic.checks import Verdict, check_candidate, pixel_digest
from veernet_pipeline.synthetic.curves import Well, load_wells, wells_by_split
from veernet_pipeline.synthetic.generate import Candidate, candidate_id, generate_set, write_record
from veernet_pipeline.synthetic.render import SyntheticLog, render_instance
from veernet_pipeline.synthetic.sizes import archive_sizes, draw_size, sizes_digest

logger = logging.getLogger(__name__)

REJECTIONS_FILE = "rejections.parquet"
# The generation key of the set's instances: with the index it identifies the set's content.
GENERATION_FILE = "generation.json"
FILE_COLUMNS = ("image", "mask", "calibration", "las")
REJECTION_COLUMNS = ["id", "reason_code", "reason", "width", "height", "well", "split"]
# Each set renders from its own stream so the two sets never share an instance.
SET_SEED_OFFSETS = {"binary": 0, "multiclass": 1}
PREVIEW_COLUMNS = 1200
PREVIEW_TITLE_PX = 22
PREVIEW_GAP_PX = 10
# Overlay colour (name, RGB) of each mask class on the contact sheet (background is the faded scan).
PREVIEW_COLOURS = {OTHER_INK: ("gray", (150, 150, 150)), style_class("solid"): ("red", (220, 0, 0)),
                   style_class("dashed"): ("blue", (0, 80, 255)), style_class("dotted"): ("green", (0, 160, 0)),
                   style_class("dash_dot"): ("magenta", (200, 0, 200)),
                   style_class("long_dash"): ("orange", (255, 140, 0))}
# Stream id of an instance's curve count, apart from the renderer's streams.
CURVE_COUNT_STREAM = 13
# The module whose code (with all it imports) decides an instance's bytes: a change makes earlier
# instances stale for resuming.
_MAKER_MODULE = __name__


def write_instance(set_dir: Path, instance_id: str, log: SyntheticLog) -> dict[str, object]:
    """Write one instance's four files into `set_dir`; return its index row (paths relative)."""
    names = {"image": f"{instance_id}.tif", "mask": f"{instance_id}.mask.tif",
             "calibration": f"{instance_id}.calib.json", "las": f"{instance_id}.las"}
    write_tiff(set_dir / names["image"], log.image)
    # Both sets store the classes of `io.classes`: the binary stage's curve-vs-rest target is made in one
    # place, the training loader (`training.data.SegmentationSet`), whichever set it reads.
    write_tiff(set_dir / names["mask"], log.mask)
    log.calibration.write(set_dir / names["calibration"])
    curves = [LasCurve(m, u, v) for m, u, v in zip(log.mnemonics, log.units, log.values, strict=True)]
    notes = [f"Synthetic ground truth for {names['image']}; curves from {log.well}."]
    write_las(set_dir / names["las"], log.depth, log.calibration.depth_unit, curves, log.calibration.well, notes)
    height, width = log.image.shape
    return {"id": instance_id, **names, "width": width, "height": height, "well": log.well,
            "styles": ",".join(log.styles), "features": ",".join(log.features)}


def curve_count(seed: int, index: int, weights: list[float]) -> int:
    """The number of curves (1-5) of instance `index`, from its own stream and `synthesize.curves_per_track`."""
    p = np.asarray(weights, dtype=np.float64)
    return 1 + int(np.random.default_rng([seed, index, CURVE_COUNT_STREAM]).choice(p.size, p=p / p.sum()))


@dataclass(frozen=True, eq=False)
class SetJob:
    """Everything needed to make any candidate of one set; pickled once to each worker.

    Shape:
        sizes: (N, 2) archive (height, width) pairs, or None for uniform sizes.
    """

    name: str
    set_dir: Path
    seed: int
    split_seed: int
    params: SynthesizeParams
    las_source: str
    splits: tuple[str, ...]
    bounds: ValidateParams | None
    sizes: np.ndarray | None
    key: str


class CandidateMaker:
    """Renders, checks and writes candidate i of a set from (seed, i); loads the wells once per process."""

    def __init__(self, job: SetJob) -> None:
        self.job = job
        self._pools: dict[str, list[Well]] | None = None

    def __getstate__(self) -> dict[str, object]:
        # Workers load their own wells (prepare) rather than receive them pickled.
        return {"job": self.job, "_pools": None}

    def prepare(self) -> None:
        """Load the wells and partition them by split."""
        if self._pools is None:
            wells = load_wells(self.job.las_source)
            self._pools = wells_by_split(wells, self.job.params.splits, self.job.split_seed)

    def __call__(self, index: int) -> Candidate:
        """Make candidate `index`: its files (when valid) and its record."""
        self.prepare()
        job, instance_id, split = self.job, candidate_id(index), self.job.splits[index]
        n_curves = curve_count(job.seed, index, job.params.curves_per_track)
        log = render_instance(job.seed, index, job.params, self._pools[split], n_curves,
                              size=draw_size(job.seed, index, job.sizes))
        height, width = log.image.shape
        row: dict[str, object] = {"id": instance_id, "width": width, "height": height, "well": log.well,
                                  "split": split, "n_curves": n_curves}
        verdict = (check_candidate(instance_id, log, job.bounds) if job.bounds is not None
                   else Verdict("", "", pixel_digest(log.image)))
        files: tuple[str, ...] = ()
        if not verdict.reason_code:
            row.update(write_instance(job.set_dir, instance_id, log))
            files = tuple(str(row[column]) for column in FILE_COLUMNS)
        candidate = Candidate(instance_id, job.key, row, files, verdict.reason_code, verdict.reason, verdict.sha256)
        write_record(job.set_dir, candidate)
        return candidate


def _wells_digest(wells: list[Well]) -> str:
    sha = hashlib.sha256()
    for well in wells:
        sha.update(well.name.encode() + well.depth.tobytes())
        for mnemonic in sorted(well.curves):
            sha.update(mnemonic.encode() + well.curves[mnemonic].tobytes())
    return sha.hexdigest()[:16]


def generation_key(settings: Settings, name: str, wells: list[Well], sizes: np.ndarray | None) -> str:
    """Identity of everything that decides a candidate's bytes and verdict in set `name`.

    Excluded: `workers` (parallel equals serial) and how many are kept, so a larger
    `multiclass_count` or another worker count resumes instead of starting over.
    """
    params = settings.section("synthesize")
    for key in ("workers", "multiclass_count", "multiclass_generated" if name == "binary" else "binary_count"):
        params.pop(key)
    return digest({"code": code_digest([_MAKER_MODULE]), "set": name, "seed": settings.seed,
                    "params": params, "wells": _wells_digest(wells), "sizes": sizes_digest(sizes),
                    "validate": settings.section("validate") if name == "multiclass" else None})


def synthesize_sets(settings: Settings) -> dict[str, dict[str, int]]:
    """Write (or complete) the binary and multiclass sets under `paths.synthetic`.

    Returns:
        Per set, kept instances per split (e.g. {"binary": {"train": 4, "val": 1, "test": 1}}), and
        under "<set>_candidates" the candidate accounting: generated, kept, rejected, not_needed,
        rendered, reused.

    Raises:
        ValueError: fewer than `multiclass_count` candidates passed; the message says how to fix params.
        FileNotFoundError: `size_source` is archive and the validated scans are missing.
    """
    params = settings.synthesize
    source = str(settings.path("las_source")) if settings.paths.las_source else ""
    wells = load_wells(source)
    sizes = archive_sizes(settings.path("validated")) if params.size_source == "archive" else None
    counts: dict[str, dict[str, int]] = {}
    for name, count, generated in (("binary", params.binary_count, params.binary_count),
                                   ("multiclass", params.multiclass_count, params.multiclass_generated)):
        seed = settings.seed + SET_SEED_OFFSETS[name]
        set_dir = settings.path("synthetic") / name
        # The index describes a complete set only; it is rebuilt once this run completes.
        (set_dir / INDEX_FILE).unlink(missing_ok=True)
        job = SetJob(name, set_dir, seed, settings.seed, params, source,
                     tuple(instance_splits(generated, params.splits, seed)),
                     settings.validate_ if name == "multiclass" else None, sizes,
                     generation_key(settings, name, wells, sizes))
        outcome = generate_set(set_dir, CandidateMaker(job), job.key, count, generated, params.workers,
                               f"synthesize {name}")
        rejections = [{**c.row, "reason_code": c.reason_code, "reason": c.reason} for c in outcome.rejected]
        write_parquet_atomic(set_dir / REJECTIONS_FILE, pd.DataFrame(rejections, columns=REJECTION_COLUMNS))
        if len(outcome.kept) < count:
            raise ValueError(_too_few_message(set_dir, name, count, outcome.counts(), outcome.rejected))
        write_json_atomic(set_dir / GENERATION_FILE, {"key": job.key})
        index = pd.DataFrame([c.row for c in outcome.kept], columns=[*INDEX_COLUMNS, *DETAIL_COLUMNS])
        write_parquet_atomic(set_dir / INDEX_FILE, index)
        tally = Counter(str(c.row["split"]) for c in outcome.kept)
        counts[name] = {split: int(tally.get(split, 0)) for split in SPLITS}
        counts[f"{name}_candidates"] = outcome.counts()
        logger.info("synthesized %s: %s, candidates %s", name, counts[name], counts[f"{name}_candidates"])
    return counts


def _too_few_message(set_dir: Path, name: str, count: int, tally: dict[str, int], rejected: list[Candidate]) -> str:
    reasons = dict(Counter(c.reason_code for c in rejected))
    needed = math.ceil(1.1 * count * tally["generated"] / max(tally["kept"], 1))
    fix = (f"raise synthesize.multiclass_generated to about {needed} or lower synthesize.multiclass_count"
           if name == "multiclass" else "lower synthesize.binary_count")
    return (f"{set_dir}: only {tally['kept']} of {tally['generated']} {name} candidates passed validation, "
            f"{count} are needed (rejected by reason: {reasons}; each one is listed in {set_dir / REJECTIONS_FILE}). "
            f"Fix: {fix} in params.yaml; if sizes are rejected, make synthesize.width/height (or the archive's "
            "sizes) fit validate.width/height")


def preview_sheet(set_dir: Path, out_png: Path, n: int = 6, columns: int = PREVIEW_COLUMNS,
                  binary: bool = False) -> None:
    """Contact sheet of the first `n` instances of a set, at native pixels (one image pixel = one PNG pixel).

    Per instance: a title line, the first `columns` columns of the image as stored, and below it
    the same crop with the mask overlaid (paper faded, each class in its `PREVIEW_COLOURS` colour;
    with `binary`, every curve-style class in the solid colour, as the binary stage sees them), so a
    1-px trace and its label can be compared pixel for pixel.
    """
    index = pd.read_parquet(Path(set_dir) / INDEX_FILE).head(n)
    if index.empty:
        raise ValueError(f"{set_dir}/{INDEX_FILE} lists no instances; run `veernet synthesize` first")
    curve = PREVIEW_COLOURS[style_class("solid")]
    colours = {style_class(style): curve for style in STYLES} if binary else PREVIEW_COLOURS
    legend = (f"curve {curve[0]}" if binary
              else ", ".join(f"{CLASSES[cls]} {name}" for cls, (name, _) in colours.items()))
    panels = []
    for row in index.itertuples():
        image = decode_scan(Path(set_dir) / row.image)[:, :columns]
        mask = tifffile.imread(Path(set_dir) / row.mask)[:, :columns]
        scan = np.repeat(image[..., None], 3, axis=2)
        # Fade the scan towards white so the label colours stand out against the grid.
        overlay = (255 - (255 - scan.astype(np.float32)) * 0.35).astype(np.uint8)
        for cls, (_, rgb) in colours.items():
            overlay[mask == cls] = rgb
        styles = getattr(row, "styles", "")
        title = (f"{row.id}  well {row.well}  split {row.split}  {row.width} x {row.height} px  styles {styles}  "
                 f"(columns 0-{image.shape[1] - 1}; below: mask, {legend})")
        panels.append((title, np.concatenate([scan, overlay], axis=0)))
    width = max(panel.shape[1] for _, panel in panels)
    height = sum(PREVIEW_TITLE_PX + panel.shape[0] + PREVIEW_GAP_PX for _, panel in panels)
    canvas = np.full((height, width, 3), 255, dtype=np.uint8)
    fig = Figure(figsize=(width / 100, height / 100), dpi=100)
    top = 0
    for title, panel in panels:
        fig.text(4 / width, 1 - (top + PREVIEW_TITLE_PX - 7) / height, title, fontsize=9, family="monospace")
        top += PREVIEW_TITLE_PX
        canvas[top : top + panel.shape[0], : panel.shape[1]] = panel
        top += panel.shape[0] + PREVIEW_GAP_PX
    fig.figimage(canvas, 0, 0, origin="upper", zorder=0)
    with atomic_path(out_png) as tmp:
        fig.savefig(tmp, format="png", dpi=100)
