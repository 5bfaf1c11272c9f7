"""Train/validation/test splits by source well: which wells a model may learn from is a data contract.

The source wells (`io.wells`) are partitioned into train/val/test with `synthesize.splits`, seeded
by `seed` (a well sits in one split only). The synthetic generator draws each candidate's curves
from its split's wells; the foreign test renderer draws only from the test wells, so nothing it
renders comes from a well any model was trained or tuned on. Both take the partition from here,
so neither imports the other.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from veernet_pipeline.config import SplitParams

SPLITS = ("train", "val", "test")
_WELL_SPLIT_STREAM = 7
_INSTANCE_SPLIT_STREAM = 8


def _counts(n: int, splits: SplitParams) -> tuple[int, int]:
    n_val, n_test = round(splits.val * n), round(splits.test * n)
    # Keep at least one item for training; shrink val then test until there is one.
    while n_val + n_test >= n and n_val + n_test > 0:
        if n_val >= n_test:
            n_val -= 1
        else:
            n_test -= 1
    return n_val, n_test


def assign_well_splits(names: Sequence[str], splits: SplitParams, seed: int) -> dict[str, str]:
    """Partition well names into train/val/test in the given shares (at least one train well)."""
    order = np.random.default_rng([seed, _WELL_SPLIT_STREAM]).permutation(len(names))
    n_val, n_test = _counts(len(names), splits)
    ordered = [sorted(names)[i] for i in order]
    return {name: ("val" if k < n_val else "test" if k < n_val + n_test else "train") for k, name in enumerate(ordered)}


def instance_splits(count: int, splits: SplitParams, seed: int) -> list[str]:
    """The split of each candidate index of a set, in the given shares. Shape: (count,)."""
    n_val, n_test = _counts(count, splits)
    labels = ["val"] * n_val + ["test"] * n_test + ["train"] * (count - n_val - n_test)
    result = [""] * count
    for label, index in zip(labels, np.random.default_rng([seed, _INSTANCE_SPLIT_STREAM]).permutation(count),
                            strict=True):
        result[int(index)] = label
    return result
