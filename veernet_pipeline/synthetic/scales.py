"""Track scales for synthetic curves, chosen the way log headers choose them.

Track scales are round numbers: conventional presets per mnemonic (GR 0-150, RHOB 1.95-2.95,
NPHI -0.15..0.45, ...) when they hold the window's values, else a "nice number" fit; logarithmic
tracks span whole decades from a 1 or 2 mantissa (0.2-2000). Which curves are logarithmic or
reversed is drawn from `log_scale_share` / `reversed_share`. A share `backup_share` of curves get a
backup scale: their track is drawn tighter, ending near a high quantile of the values (85-98 %)
instead of past the 99th percentile, so the excursions run off the track and wrap (see
`CurveScale.wrap`), as a printed log's spikes do.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from veernet_pipeline.config import SynthesizeParams
from veernet_pipeline.io.calibration import CurveScale
from veernet_pipeline.synthetic.curves import LINEAR_PRESETS, same_unit_groups

# Share of a window's values a linear preset may clip before the nice-number fit takes over.
MAX_CLIPPED = 0.05
# Share of a linear preset's range the values (1st to 99th percentile) must span for it to be used.
MIN_PRESET_USE = 0.25
# A backup-scale track ends near this quantile of the values (drawn uniformly), so the rest wraps.
TIGHT_QUANTILE = (0.85, 0.98)
# Log tracks only for values spanning at least this ratio (1st to 99th percentile), as resistivities do.
MIN_LOG_RATIO = 5.0


def _tidy(x: float) -> float:
    # Multiples of 0.05 etc. carry binary noise (1.9500000000000002); keep the round number.
    return float(f"{x:.10g}")


def _nice_step(x: float, fine: bool = False) -> float:
    # The smallest 1, 2, 2.5 or 5 x 10^k at or above x. `fine`: the nearest of 1, 1.2, 1.5, 2, 2.5, 3,
    # 4, 5, 6, 8 x 10^k (0-150 has 15 per division), so a backup track ends near its fitted quantile.
    exponent = math.floor(math.log10(x))
    if fine:
        steps = [m * 10.0**exponent for m in (1.0, 1.2, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0)]
        return min(steps, key=lambda s: abs(math.log(s / x)))
    return min(m * 10.0**exponent for m in (1.0, 2.0, 2.5, 5.0, 10.0) if m * 10.0**exponent >= x)


def _linear_range(mnemonic: str, values: np.ndarray, rng: np.random.Generator,
                  tight: bool = False) -> tuple[float, float]:
    lo_q, hi_q = np.quantile(values, [0.01, rng.uniform(*TIGHT_QUANTILE) if tight else 0.99])
    presets = LINEAR_PRESETS.get(mnemonic, ("", ()))[1]
    # A preset must hold the values and give them room: a curve squeezed into a tenth of the track
    # teaches nothing (a printed log would have been rescaled).
    fitting = [p for p in presets if np.mean((values < p[0]) | (values > p[1])) <= MAX_CLIPPED
               and hi_q - lo_q >= MIN_PRESET_USE * (p[1] - p[0])]
    if fitting and not tight:
        return fitting[int(rng.integers(len(fitting)))]
    spread = max(hi_q - lo_q, abs(0.5 * (hi_q + lo_q)) * 0.1, 1e-3)
    step = _nice_step(spread / 10.0, fine=True) if tight else _nice_step(spread * rng.uniform(1.2, 1.8) / 10.0)
    low = (math.floor(lo_q / step) - int(rng.integers(0, 2) if not tight else 0)) * step
    divisions = 10 if tight else max(10, math.ceil((hi_q - low) / step))
    return _tidy(low), _tidy(low + divisions * step)


def _log_range(values: np.ndarray, rng: np.random.Generator, tight: bool = False) -> tuple[float, float]:
    lo_q, hi_q = np.quantile(values, [0.01, rng.uniform(*TIGHT_QUANTILE) if tight else 0.99])
    low = max(m * 10.0 ** math.floor(math.log10(lo_q / m)) for m in (1.0, 2.0))
    if rng.random() < 0.3 and not tight:
        low /= 10.0
    decades = max(1, math.ceil(math.log10(hi_q / low) - 1e-9)) + int(rng.random() < 0.3)
    if tight:
        decades = max(1, round(math.log10(hi_q / low)))
    return _tidy(low), _tidy(low * 10.0**decades)


def choose_scale(
    mnemonic: str, unit: str, values: np.ndarray, rng: np.random.Generator, params: SynthesizeParams
) -> CurveScale:
    """A round-number track scale for a window's values.

    Logarithmic with probability `params.log_scale_share` (only when every value is positive and
    they span a ratio of `MIN_LOG_RATIO` or more),
    reversed (top value > bottom value) with probability `params.reversed_share`, on a tighter track
    with `params.max_wraps` backup scales with probability `params.backup_share`. Values outside
    the track and its backups peg at the track edge when drawn (the LAS keeps them unclipped).
    """
    positive = bool(np.min(values) > 0)
    wide = positive and bool(np.quantile(values, 0.99) >= MIN_LOG_RATIO * np.quantile(values, 0.01))
    use_log = bool(rng.random() < params.log_scale_share) and wide
    flip = bool(rng.random() < params.reversed_share)
    backup = bool(rng.random() < params.backup_share) and params.max_wraps > 0
    low, high = _log_range(values, rng, backup) if use_log else _linear_range(mnemonic, values, rng, backup)
    top, bottom = (high, low) if flip else (low, high)
    return CurveScale(mnemonic, unit, top, bottom, "log" if use_log else "linear",
                      backup_wraps=params.max_wraps if backup else 0)


def shared_scales(mnemonics: tuple[str, ...], units: tuple[str, ...], values: tuple[np.ndarray, ...],
                  scales: tuple[CurveScale, ...], rng: np.random.Generator,
                  params: SynthesizeParams) -> tuple[CurveScale, ...]:
    """The scales with each group of curves sharing a unit drawn on one scale, as a printed log overlays them.

    A resistivity pair (deep and medium, both ohm.m) is printed on one track scale, so the two run
    close together and cross wherever the invasion profile flips: the contacts a reader must name
    apart. The shared scale is `choose_scale` on the group's values taken together.
    """
    out = list(scales)
    for group in same_unit_groups(mnemonics, units):
        joint = np.concatenate([values[k] for k in group])
        shared = choose_scale(mnemonics[group[0]], units[group[0]], joint, rng, params)
        for k in group:
            out[k] = replace(shared, mnemonic=mnemonics[k], unit=units[k])
    return tuple(out)
