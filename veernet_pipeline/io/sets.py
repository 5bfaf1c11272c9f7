"""A set's on-disk contract: its `index.parquet`, its columns, and which sets may be trained on.

The generator (`synthetic.dataset`) and the foreign test renderer (`foreign`) write sets; training
and evaluation read them. They meet here, so no reader imports a renderer (whose code would then
count as theirs).

An **evaluation-only** set (the foreign renderer's) holds only the "test" split and a marker file
`EVALUATION_ONLY_FILE`; `read_split` refuses any other split of it, so no training or tuning code
can pick it up by pointing at its folder.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from veernet_pipeline.io.atomic import write_text_atomic

INDEX_FILE = "index.parquet"
INDEX_COLUMNS = ("id", "image", "mask", "calibration", "las", "width", "height", "well", "split", "n_curves")
# Optional columns a set may add: each curve's line style in sidecar order, comma-separated (as the
# sidecars name them), and the track features present (e.g. "tall,steep,banners").
DETAIL_COLUMNS = ("styles", "features")
EVALUATION_ONLY_FILE = "evaluation_only.json"
EVALUATION_SPLIT = "test"


def mark_evaluation_only(set_dir: Path, renderer: str) -> None:
    """Mark a set as evaluation-only: `read_split` then serves its test split and nothing else."""
    text = json.dumps({"renderer": renderer, "splits": [EVALUATION_SPLIT],
                       "use": "evaluation only: never train or tune on this set"}, indent=2) + "\n"
    write_text_atomic(Path(set_dir) / EVALUATION_ONLY_FILE, text)


def read_split(set_dir: Path, split: str) -> pd.DataFrame:
    """The rows of `split` in a set's index, by id, with a fresh 0..N-1 index.

    Raises:
        FileNotFoundError: the folder holds no index; generate the set first.
        ValueError: the index lacks a contract column (regenerate the set), or `split` is not
            "test" of an evaluation-only set.
    """
    path = Path(set_dir) / INDEX_FILE
    if (Path(set_dir) / EVALUATION_ONLY_FILE).is_file() and split != EVALUATION_SPLIT:
        raise ValueError(f"{set_dir} is an evaluation-only set ({EVALUATION_ONLY_FILE}): it has no {split!r} split "
                         "and must never be trained or tuned on; train on paths.synthetic/binary or multiclass")
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no index; generate the set first (veernet synthesize)")
    index = pd.read_parquet(path)
    missing = [c for c in INDEX_COLUMNS if c not in index.columns]
    if missing:
        raise ValueError(f"{path}: missing columns {missing}; regenerate the set (veernet synthesize)")
    return index[index["split"] == split].sort_values("id").reset_index(drop=True)
