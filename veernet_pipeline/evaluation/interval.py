"""How far the gate's figure could move by chance: bootstrap intervals of the per-style median R^2.

Forty test logs hold 16-42 curves of each style, so a style's median R^2 rests on a few dozen
curves at most, and two trainings of one recipe have moved it by up to 0.09 (docs/accuracy.md). The
interval says how much of a difference between two evaluations is the sample's: each style's
curves are resampled with replacement (`scipy.stats.bootstrap`, percentile method), every style
on its own (a stratified bootstrap: the styles are the groups the figure is taken over), and the
lowest of the resampled per-style medians gives the gate figure's interval.

Curves are the resampled unit, not logs: a track's curves mostly differ in style (a log adds at
most a curve or two to any one style), so within a style they are nearly independent draws.
The percentile method rather than BCa: BCa returns NaN where its jackknife is degenerate (a style
whose curves read alike), and scipy warns that it is known to fail for a minimum, which the gate's
figure is (both seen with scipy 1.17).

A style with a single finite R^2 has no spread to resample: its own interval is NaN, and in the
gate figure's statistic it is that one value in every resample (what resampling it would give).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import bootstrap

from veernet_pipeline.config import IntervalParams


def _lowest_median(*samples: np.ndarray, axis: int = -1) -> np.ndarray:
    """The lowest of the samples' medians (vectorised over resamples along the other axes)."""
    return np.min(np.stack([np.median(sample, axis=axis) for sample in samples]), axis=0)


def _interval(samples: list[np.ndarray], params: IntervalParams, seed: int) -> tuple[float, float]:
    """Percentile bootstrap interval of `_lowest_median` over independently resampled samples."""
    rng = np.random.default_rng(seed)
    result = bootstrap(tuple(samples), _lowest_median, n_resamples=params.resamples,
                       confidence_level=params.level, method="percentile", paired=False, vectorized=True, rng=rng)
    return float(result.confidence_interval.low), float(result.confidence_interval.high)


def r2_intervals(frame: pd.DataFrame, params: IntervalParams, seed: int) -> dict[str, Any]:
    """Bootstrap intervals of each style's median R^2 and of the lowest of them (the gate's figure).

    Args:
        frame: one row per (log, curve) with at least `style` and `r2` (`per_log.csv`'s columns).
        params: confidence level and number of resamples.
        seed: seeds the resampling (the params' global seed), so a re-evaluation gives the same interval.

    Returns:
        `level`, `resamples`, `median_r2` ([low, high] of the gate figure; NaN when a style was never
        read, as the figure itself is then) and `styles` ({style: [low, high]}; NaN for a style of
        fewer than two finite R^2).
    """
    finite = frame[np.isfinite(frame["r2"].to_numpy(dtype=np.float64))]
    read = {style: r2.to_numpy(dtype=np.float64) for style, r2 in finite.groupby(finite["style"].astype(str))["r2"]}
    styles = sorted(frame["style"].astype(str).unique())
    samples = {style: read.get(style, np.empty(0)) for style in styles}  # a style never read: no finite R^2
    nan = (float("nan"), float("nan"))
    per_style = {style: list(_interval([values], params, seed) if values.size >= 2 else nan)
                 for style, values in samples.items()}
    if not styles or any(values.size == 0 for values in samples.values()):
        gate = nan
    else:
        # A one-curve style enters as its value: scipy needs two observations to resample a sample.
        fixed = [values[0] for values in samples.values() if values.size == 1]
        varied = [values for values in samples.values() if values.size >= 2]
        if not varied:
            gate = (min(fixed), min(fixed))
        else:
            low, high = _interval(varied, params, seed)
            cap = min(fixed, default=float("inf"))
            gate = (min(low, cap), min(high, cap))
    return {"level": params.level, "resamples": params.resamples, "median_r2": list(gate), "styles": per_style}


def interval_text(low: float | None, high: float | None, level: float) -> str:
    """An interval as text to follow its figure, e.g. " (90 % interval 0.4412 to 0.8013)"; empty where either
    end is missing or NaN (a style never read leaves the gate figure's undefined, and the stage record drops NaN)."""
    if low is None or high is None or not (np.isfinite(low) and np.isfinite(high)):
        return ""
    return f" ({100 * level:.0f} % interval {low:.4f} to {high:.4f})"
