"""Instance sizes: uniform over `synthesize.width`/`height`, or the empirical sizes of an ingested archive.

With `synthesize.size_source: archive` each candidate takes the (height, width) of one validated
scan of `paths.validated/validated.parquet`, chosen uniformly over the scans (so a size that
occurs often in the archive occurs as often in the set). The choice is drawn from the instance's
own stream `default_rng([seed, index, SIZE_STREAM])`, so instance i stays reproducible alone.
With `uniform`, the renderer draws the size itself from `synthesize.width`/`height`.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pandas as pd

# `validation.validate.VALIDATED_FILE`; not imported from there because that module pulls in Great
# Expectations (seconds of import time in every generation worker).
VALIDATED_FILE = "validated.parquet"
# Stream id of the size draw, apart from the renderer's own (seed, index) stream.
SIZE_STREAM = 11


def archive_sizes(validated_dir: Path) -> np.ndarray:
    """The (height, width) of every validated scan on the net's grid (`io.resolution`), in the file's row order.

    Args:
        validated_dir: the validate stage's folder (holds `validated.parquet`).

    Returns:
        Landscape sizes. Shape: (N, 2) int64, columns (height, width).

    Raises:
        FileNotFoundError: `validated.parquet` is missing.
        ValueError: it lists no scan.
    """
    path = Path(validated_dir) / VALIDATED_FILE
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing: synthesize.size_source is 'archive', which takes sizes from the "
                                "validated scans; run `veernet ingest` and `veernet validate` first, or set "
                                "synthesize.size_source to uniform")
    # The sizes the net reads them at: a 300-dpi scan's strip is drawn at its size on the net's grid.
    frame = pd.read_parquet(path, columns=["net_height", "net_width"])
    if frame.empty:
        raise ValueError(f"{path} lists no validated scan, so there is no size distribution to draw from; add scans "
                         "to the archive or set synthesize.size_source to uniform")
    return frame.to_numpy(dtype=np.int64)


def sizes_digest(sizes: np.ndarray | None) -> str:
    """Identity of a size distribution for fingerprints ("" for uniform sizes)."""
    if sizes is None:
        return ""
    return hashlib.sha256(np.ascontiguousarray(sizes, dtype=np.int64).tobytes()).hexdigest()[:16]


def draw_size(seed: int, index: int, sizes: np.ndarray | None) -> tuple[int, int] | None:
    """The (height, width) of instance `index`, or None to let the renderer draw a uniform size.

    Args:
        seed: the set's stream seed.
        index: candidate index.
        sizes: archive sizes from `archive_sizes`, or None for uniform sizes.
    """
    if sizes is None:
        return None
    height, width = sizes[int(np.random.default_rng([seed, index, SIZE_STREAM]).integers(len(sizes)))]
    return int(height), int(width)
