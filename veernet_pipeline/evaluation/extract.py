"""Class probabilities -> one subpixel row per column per curve.

For each curve class and each column, the rows where the class probability reaches
`min_confidence` form vertical runs. A thin trace gives one run a few pixels tall; grid hits,
a crossing curve or noise give others. We keep the run with the largest probability mass (the
trace, not a speck), place the curve at the probability-weighted mean row inside that run
(subpixel, so a 2-px trace reads between its pixels) and report the run's peak probability
as the column's confidence. Columns with no run get NaN and confidence 0.
"""

from __future__ import annotations

import numpy as np


def extract_curves(probs: np.ndarray, min_confidence: float = 0.3) -> tuple[np.ndarray, np.ndarray]:
    """Per column, the subpixel row of each curve class's strongest run.

    Args:
        probs: class probabilities; channel 0 is background, channel k >= 1 is curve k.
        min_confidence: a pixel joins a run when its class probability is at least this.

    Returns:
        `(rows, confidence)`: rows are pixel-index rows (pixel centre at row + 0.5), NaN where
        the column has no run; confidence is the peak probability inside the chosen run, 0 where
        there is none.

    Shape:
        probs: (C, H, W) float. rows: (C-1, W) float64. confidence: (C-1, W) float64.
    """
    probs = np.asarray(probs)
    if probs.ndim != 3 or probs.shape[0] < 2:
        raise ValueError(f"probs must be (C, H, W) with C >= 2 (background + curves), got shape {probs.shape}")
    n_classes, _, width = probs.shape
    rows = np.full((n_classes - 1, width), np.nan)
    confidence = np.zeros((n_classes - 1, width))
    for k in range(1, n_classes):
        rows[k - 1], confidence[k - 1] = _strongest_run(probs[k].astype(np.float64), min_confidence)
    return rows, confidence


def _strongest_run(p: np.ndarray, min_confidence: float) -> tuple[np.ndarray, np.ndarray]:
    """Row and peak of the largest-mass run in each column of one class map.

    Shape:
        p: (H, W). Returns two (W,) arrays.
    """
    height, width = p.shape
    inside = p >= min_confidence
    # A run starts wherever a selected pixel has no selected pixel above it; numbering the starts
    # down each column gives every pixel its run id (0 = not in any run).
    starts = inside & ~np.vstack([np.zeros((1, width), dtype=bool), inside[:-1]])
    run_id = np.cumsum(starts, axis=0) * inside
    n_runs = int(run_id.max()) + 1
    # One bin per (column, run) so a single bincount sums every run of every column at once.
    cols = np.broadcast_to(np.arange(width), (height, width))
    keys = (cols * n_runs + run_id)[inside]
    weights = p[inside]
    y = np.broadcast_to(np.arange(height, dtype=np.float64)[:, None], (height, width))[inside]
    mass = np.bincount(keys, weights=weights, minlength=width * n_runs).reshape(width, n_runs)
    moment = np.bincount(keys, weights=weights * y, minlength=width * n_runs).reshape(width, n_runs)
    mass[:, 0] = 0.0  # run id 0 collects nothing (keys come from selected pixels only); keep it out of argmax
    best = mass.argmax(axis=1)
    best_mass = mass[np.arange(width), best]
    found = best_mass > 0
    rows = np.full(width, np.nan)
    rows[found] = moment[np.arange(width), best][found] / best_mass[found]
    peak = np.where(run_id == best[None, :], p, 0.0).max(axis=0)
    return rows, np.where(found, peak, 0.0)
