"""A synthetic set's on-disk contract: its `index.parquet` and columns.

The generator (`synthetic.dataset`) writes a set; training and evaluation read it. They meet
here, so neither reader imports the generator (whose code would then count as theirs).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

INDEX_FILE = "index.parquet"
INDEX_COLUMNS = ("id", "image", "mask", "calibration", "las", "width", "height", "well", "split", "n_curves")


def read_split(set_dir: Path, split: str) -> pd.DataFrame:
    """The rows of `split` in a set's index, by id, with a fresh 0..N-1 index.

    Raises:
        FileNotFoundError: the folder holds no index; generate the set first.
        ValueError: the index lacks a contract column; regenerate the set.
    """
    path = Path(set_dir) / INDEX_FILE
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no index; generate the set first (veernet synthesize)")
    index = pd.read_parquet(path)
    missing = [c for c in INDEX_COLUMNS if c not in index.columns]
    if missing:
        raise ValueError(f"{path}: missing columns {missing}; regenerate the set (veernet synthesize)")
    return index[index["split"] == split].sort_values("id").reset_index(drop=True)
