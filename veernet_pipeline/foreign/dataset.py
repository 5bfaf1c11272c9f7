"""The foreign evaluation set: `paths.synthetic/foreign/`, test wells only, never trained or tuned on.

Scan i depends only on (seed, i) and the params: its content from stream (seed, i, 1)
(`logs.pick_log`), its drawing from (seed, i, 2) (`plot.draw_layers`), its paper and scan from
(seed, i, 3); whether it is stored 1-bit is drawn first from (seed, i), whether it is a vendor's
colour print (`foreign.colour_share`) and its pens from (seed, i, 4). Each scan `<id>` is four
files in the set contract (`io.sets`):

| File | Content |
|---|---|
| `<id>.tif` | 8-bit gray (LZW), 1-bit CCITT G4 like a fax scan (Pillow's libtiff), or a colour print's RGB (LZW) |
| `<id>.mask.tif` | the classes of `io.classes` (`scan.label`) |
| `<id>.calib.json` | the sidecar: depth edges, each curve's scale, backup, style (none if `legend: seeds`) |
| `<id>.las` | the ground truth: the window's native samples of the test well |

`index.parquet` (every row split "test", plus `styles`, `features`, `bits`, `print_scale`) is
written last, and `evaluation_only.json` marks the set so that `io.sets.read_split` refuses any
other split: training code cannot pick it up.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pandas as pd
from PIL import Image

from veernet_pipeline.config import Settings
from veernet_pipeline.foreign.logs import ForeignLog, pick_log
from veernet_pipeline.foreign.plot import draw_layers
from veernet_pipeline.foreign.scan import compose, compose_colour, label, scan
from veernet_pipeline.io.atomic import atomic_path, write_parquet_atomic
from veernet_pipeline.io.calibration import Calibration
from veernet_pipeline.io.gray import Layout, to_gray
from veernet_pipeline.io.las import LasCurve, write_las
from veernet_pipeline.io.sets import DETAIL_COLUMNS, EVALUATION_SPLIT, INDEX_COLUMNS, INDEX_FILE, mark_evaluation_only
from veernet_pipeline.io.splits import assign_well_splits
from veernet_pipeline.io.tiff import write_tiff
from veernet_pipeline.io.wells import SourceWell, load_source_wells
from veernet_pipeline.progress import progress

logger = logging.getLogger(__name__)

FOREIGN_DIR = "foreign"
RENDERER = "veernet_pipeline.foreign (matplotlib)"
# The generator's sets use seed + 0 and + 1; this set draws from its own stream.
SEED_OFFSET = 2
# A vendor's pens as matplotlib's default cycle prints them, each with the name an operator would write in the
# sidecar (`io.colours`): their RGB is not the contract's, as no print's is.
VENDOR_PENS = {"black": (0, 0, 0), "blue": (31, 119, 180), "orange": (255, 127, 14), "green": (44, 160, 44),
               "red": (214, 39, 40), "purple": (148, 103, 189), "brown": (140, 86, 75), "cyan": (23, 190, 207)}
COLUMNS = [*INDEX_COLUMNS, *DETAIL_COLUMNS, "bits", "print_scale"]


@dataclass(frozen=True)
class ForeignScan:
    """One rendered foreign scan.

    Shape:
        image, mask, curves: (H, W) uint8; image 0/255 when `bilevel`, a colour print's gray (`io.gray`) when
        `rgb` holds it; curves 0 or k + 1 (owner); rgb (H, W, 3) uint8.
    """

    log: ForeignLog
    image: np.ndarray
    mask: np.ndarray
    curves: np.ndarray
    calibration: Calibration
    bilevel: bool
    features: tuple[str, ...]
    rgb: np.ndarray | None = None


def evaluation_wells(settings: Settings) -> list[SourceWell]:
    """The source wells of the test split (`io.splits`, the generator's partition).

    Raises:
        ValueError: the partition holds no test well (too few wells or `synthesize.splits.test` 0).
    """
    source = str(settings.path("las_source")) if settings.paths.las_source else ""
    wells = load_source_wells(source)
    split = assign_well_splits([w.name for w in wells], settings.synthesize.splits, settings.seed)
    chosen = [w for w in wells if split[w.name] == EVALUATION_SPLIT]
    if not chosen:
        raise ValueError(f"no test well among {len(wells)} source wells with synthesize.splits "
                         f"{settings.synthesize.splits.model_dump()}; the foreign set renders test wells only: add "
                         "wells or raise synthesize.splits.test")
    return chosen


def render_foreign(settings: Settings, index: int, wells: list[SourceWell], scale: float = 1.0) -> ForeignScan:
    """Render foreign scan `index`; the same settings and index give the same bytes.

    `scale` draws it at that many pixels per pixel of its 200-dpi size (`plot.draw_layers`): 1.5 is the
    same print scanned at 300 dpi (`benchmarks/resolution.py`); the foreign set is drawn at 1.
    """
    seed = settings.seed + SEED_OFFSET
    params = settings.foreign
    colour_rng = np.random.default_rng([seed, index, 4])
    colour = bool(colour_rng.random() < params.colour_share)
    bilevel = not colour and bool(np.random.default_rng([seed, index]).random() < params.bilevel_share)
    log = pick_log(wells, params, np.random.default_rng([seed, index, 1]))
    layers = draw_layers(log, bilevel, np.random.default_rng([seed, index, 2]), scale)
    scan_rng = np.random.default_rng([seed, index, 3])
    pens = [list(VENDOR_PENS)[i] for i in colour_rng.permutation(len(VENDOR_PENS))[:len(log.curves)]]
    rgb = compose_colour(layers, log, [VENDOR_PENS[p] for p in pens], scan_rng) if colour else None
    image = to_gray(rgb, Layout("rgb", 8)) if rgb is not None else scan(compose(layers, log, scan_rng), bilevel,
                                                                            scan_rng)
    mask, owner = label(layers, log, image, bilevel)
    # The seeds' sidecars name no style: the reader takes curve A as solid and curve B as any broken style.
    unstyled = params.legend == "seeds"
    scales = tuple(replace(c.scale, style=None if unstyled else c.scale.style, colour=pen if colour else None)
                   for c, pen in zip(log.curves, pens, strict=False))
    calibration = Calibration(log.top, log.bottom, log.depth_unit, scales, log.header)
    features = {"colour" if colour else "bilevel" if bilevel else "gray", *layers.features}
    features |= {"log"} if any(c.scale.scale == "log" for c in log.curves) else set()
    features |= {"reversed"} if any(c.scale.top_value > c.scale.bottom_value for c in log.curves) else set()
    wrapped = any((c.scale.wrap(c.scale.value_to_fraction(c.values))[1] != 0).any() for c in log.curves)
    features |= {"wrap"} if wrapped else set()
    return ForeignScan(log, image, mask, owner, calibration, bilevel, tuple(sorted(features)), rgb)


def write_scan(set_dir: Path, instance_id: str, found: ForeignScan) -> dict[str, object]:
    """Write one scan's four files; return its index row."""
    names = {"image": f"{instance_id}.tif", "mask": f"{instance_id}.mask.tif",
             "calibration": f"{instance_id}.calib.json", "las": f"{instance_id}.las"}
    if found.bilevel:
        with atomic_path(set_dir / names["image"]) as tmp:
            Image.fromarray(found.image > 0).save(tmp, format="TIFF", compression="group4")
    elif found.rgb is not None:
        write_tiff(set_dir / names["image"], found.rgb, compression="lzw", photometric="rgb")
    else:
        write_tiff(set_dir / names["image"], found.image, compression="lzw")
    write_tiff(set_dir / names["mask"], found.mask)
    found.calibration.write(set_dir / names["calibration"])
    log = found.log
    curves = [LasCurve(c.scale.mnemonic, c.scale.unit, c.values) for c in log.curves]
    write_las(set_dir / names["las"], log.depth, log.depth_unit, curves, log.header,
              [f"Foreign test scan {names['image']}, drawn by {RENDERER}; curves from {log.well}. "
               "Evaluation only: never train or tune on it."])
    height, width = found.image.shape
    return {"id": instance_id, **names, "width": width, "height": height, "well": log.well,
            "split": EVALUATION_SPLIT, "n_curves": len(log.curves),
            "styles": ",".join(c.scale.style or "" for c in log.curves), "features": ",".join(found.features),
            "bits": 1 if found.bilevel else 8, "print_scale": log.print_scale}


def write_foreign_set(settings: Settings) -> dict[str, int]:
    """Render and write `foreign.count` scans into `paths.synthetic/foreign`; return counts by storage."""
    set_dir = settings.path("synthetic") / FOREIGN_DIR
    set_dir.mkdir(parents=True, exist_ok=True)
    # The index describes a complete set only; it is written again once every scan is.
    (set_dir / INDEX_FILE).unlink(missing_ok=True)
    mark_evaluation_only(set_dir, RENDERER)
    wells = evaluation_wells(settings) if settings.foreign.count else []
    rows = []
    for index in progress(range(settings.foreign.count), desc="foreign scans", unit="scan"):
        rows.append(write_scan(set_dir, f"{index:06d}", render_foreign(settings, index, wells)))
    write_parquet_atomic(set_dir / INDEX_FILE, pd.DataFrame(rows, columns=COLUMNS))
    bilevel = sum(r["bits"] == 1 for r in rows)
    colour = sum("colour" in str(r["features"]).split(",") for r in rows)
    counts = {"scans": len(rows), "bilevel": bilevel, "gray": len(rows) - bilevel - colour, "colour": colour}
    logger.info("wrote the foreign evaluation set: %s in %s", counts, set_dir)
    return counts
