"""Synthetic training sets on disk: `binary/` and `multiclass/`, each with an index.parquet.

Each instance `<id>` is `<id>.tif` (image), `<id>.mask.tif` (classes), `<id>.calib.json` (the
sidecar) and `<id>.las` (ground truth: the window's native samples). Splits are by source well:
the wells are partitioned into train/val/test with `synthesize.splits`, each instance index gets
a split (a seeded permutation in the same shares), and the instance draws its curves only from
that split's wells, so no well feeds two splits. Procedural instances keep their index's split.

The binary set alternates one curve (even index) and two curves (odd index) with every curve
pixel labelled 1; the multiclass set always has two curves labelled 1 and 2.
"""

from __future__ import annotations

import logging
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import tifffile
from matplotlib.figure import Figure

from veernet_pipeline.config import Settings, SplitParams
from veernet_pipeline.io.atomic import atomic_dir, atomic_path
from veernet_pipeline.io.las import LasCurve, write_las
from veernet_pipeline.io.tiff import write_tiff
from veernet_pipeline.progress import progress
from veernet_pipeline.synthetic.curves import Well, load_wells
from veernet_pipeline.synthetic.render import SyntheticLog, render_instance

logger = logging.getLogger(__name__)

SPLITS = ("train", "val", "test")
INDEX_COLUMNS = ["id", "image", "mask", "calibration", "las", "width", "height", "well", "split", "n_curves"]
# Each set renders from its own stream so the two sets never share an instance.
SET_SEED_OFFSETS = {"binary": 0, "multiclass": 1}
_WELL_SPLIT_STREAM = 7
_INSTANCE_SPLIT_STREAM = 8
PREVIEW_COLUMNS = 1200


def assign_well_splits(names: list[str], splits: SplitParams, seed: int) -> dict[str, str]:
    """Partition well names into train/val/test in the given shares (at least one train well)."""
    order = np.random.default_rng([seed, _WELL_SPLIT_STREAM]).permutation(len(names))
    n_val, n_test = _counts(len(names), splits)
    ordered = [sorted(names)[i] for i in order]
    return {name: ("val" if k < n_val else "test" if k < n_val + n_test else "train") for k, name in enumerate(ordered)}


def instance_splits(count: int, splits: SplitParams, seed: int) -> list[str]:
    """The split of each instance index of a set, in the given shares. Shape: (count,)."""
    n_val, n_test = _counts(count, splits)
    labels = ["val"] * n_val + ["test"] * n_test + ["train"] * (count - n_val - n_test)
    result = [""] * count
    for label, index in zip(labels, np.random.default_rng([seed, _INSTANCE_SPLIT_STREAM]).permutation(count),
                            strict=True):
        result[int(index)] = label
    return result


def _counts(n: int, splits: SplitParams) -> tuple[int, int]:
    n_val, n_test = round(splits.val * n), round(splits.test * n)
    # Keep at least one item for training; shrink val then test until there is one.
    while n_val + n_test >= n and n_val + n_test > 0:
        if n_val >= n_test:
            n_val -= 1
        else:
            n_test -= 1
    return n_val, n_test


def wells_by_split(wells: list[Well], splits: SplitParams, seed: int) -> dict[str, list[Well]]:
    """The source wells of each split."""
    assignment = assign_well_splits([w.name for w in wells], splits, seed)
    return {split: [w for w in wells if assignment[w.name] == split] for split in SPLITS}


def write_instance(set_dir: Path, instance_id: str, log: SyntheticLog, binary: bool) -> dict[str, object]:
    """Write one instance's four files into `set_dir`; return its index row (paths relative)."""
    names = {"image": f"{instance_id}.tif", "mask": f"{instance_id}.mask.tif",
             "calibration": f"{instance_id}.calib.json", "las": f"{instance_id}.las"}
    write_tiff(set_dir / names["image"], log.image)
    write_tiff(set_dir / names["mask"], (log.mask > 0).astype(np.uint8) if binary else log.mask)
    log.calibration.write(set_dir / names["calibration"])
    curves = [LasCurve(m, u, v) for m, u, v in zip(log.mnemonics, log.units, log.values, strict=True)]
    notes = [f"Synthetic ground truth for {names['image']}; curves from {log.well}."]
    write_las(set_dir / names["las"], log.depth, log.calibration.depth_unit, curves, log.calibration.well, notes)
    height, width = log.image.shape
    return {"id": instance_id, **names, "width": width, "height": height, "well": log.well}


def synthesize_sets(settings: Settings) -> dict[str, dict[str, int]]:
    """Write the binary and multiclass sets under `paths.synthetic`.

    Returns:
        Instance counts per split for each set, e.g. {"binary": {"train": 4, "val": 1, "test": 1}, ...}.
    """
    params = settings.synthesize
    source = settings.paths.las_source
    wells = load_wells(str(settings.path("las_source")) if source else "")
    pools = wells_by_split(wells, params.splits, settings.seed)
    root = settings.path("synthetic")
    counts: dict[str, dict[str, int]] = {}
    for name, count in (("binary", params.binary_count), ("multiclass", params.multiclass_count)):
        seed = settings.seed + SET_SEED_OFFSETS[name]
        splits = instance_splits(count, params.splits, seed)
        rows = []
        with atomic_dir(root / name) as tmp:
            for index in progress(range(count), desc=f"synthesize {name}", unit="log"):
                n_curves = 2 if name == "multiclass" else 1 + index % 2
                log = render_instance(seed, index, params, pools[splits[index]], n_curves)
                row = write_instance(tmp, f"{index:06d}", log, binary=name == "binary")
                rows.append({**row, "split": splits[index], "n_curves": n_curves})
            index_df = pd.DataFrame(rows, columns=INDEX_COLUMNS)
            with atomic_path(tmp / "index.parquet") as path:
                index_df.to_parquet(path, index=False)
        tally = Counter(splits)
        counts[name] = {split: int(tally.get(split, 0)) for split in SPLITS}
        logger.info("synthesized %s: %s", name, counts[name])
    return counts


def preview_sheet(set_dir: Path, out_png: Path, n: int = 6) -> None:
    """Contact sheet of the first `n` instances of a set: image with curve A red, curve B blue.

    Each row shows the first `PREVIEW_COLUMNS` columns, about one column per output pixel, so a
    1-px trace is not lost to downsampling.
    """
    index = pd.read_parquet(Path(set_dir) / "index.parquet").head(n)
    if index.empty:
        raise ValueError(f"{set_dir}/index.parquet lists no instances; run synthesize first")
    fig = Figure(figsize=(PREVIEW_COLUMNS / 100, 2.8 * len(index)), dpi=100)
    for k, row in enumerate(index.itertuples()):
        image = tifffile.imread(Path(set_dir) / row.image)[:, :PREVIEW_COLUMNS]
        mask = tifffile.imread(Path(set_dir) / row.mask)[:, :PREVIEW_COLUMNS]
        rgb = np.repeat(image[..., None], 3, axis=2)
        rgb[mask == 1] = (200, 0, 0)
        rgb[mask == 2] = (0, 60, 220)
        ax = fig.add_subplot(len(index), 1, k + 1)
        ax.imshow(rgb, aspect="auto", interpolation="antialiased")
        ax.set_title(f"{row.id}  {row.well}  {row.split}  {row.width}x{row.height}", fontsize=8, loc="left")
        ax.set_axis_off()
    fig.tight_layout()
    with atomic_path(out_png) as tmp:
        fig.savefig(tmp, format="png")
