"""Near-constant curves: tension and line-speed lines, long straight runs near a track edge.

A real track's header may name curves that hardly move: cable tension and logging speed run as
straight lines a few percent in from a track edge for hundreds of feet, stepping when the tool
sticks or the winch changes speed. A reader that follows the strongest straight ink latches onto
them (or onto a grid line beside them), so the generator draws them as curves of their own: in the
sidecar with a style, in the LAS, and in the mask.

With probability `straight.share` each curve after the first is replaced by such a line (at most
one tension and one speed line per track; the first curve always stays a log curve). Its track
fraction sits at a distance drawn from `straight.edge` from the top or bottom edge, with a slight
wobble and `straight.steps_per_10k` level changes per 10,000 columns; its scale is a round
preset, reversed half the time. Values are rounded like the wells' (4 significant digits).
"""

from __future__ import annotations

import numpy as np

from veernet_pipeline.config import SynthesizeParams
from veernet_pipeline.io.calibration import CurveScale
from veernet_pipeline.synthetic.curves import round_significant

# (mnemonic, unit, round scales as (low, high)).
STRAIGHT_CURVES: tuple[tuple[str, str, tuple[tuple[float, float], ...]], ...] = (
    ("TENS", "LBF", ((0.0, 10000.0), (0.0, 20000.0), (0.0, 5000.0))),
    ("LSPD", "F/MN", ((0.0, 60.0), (0.0, 100.0), (0.0, 150.0))),
)
# Size of one level change, track fraction, and the deepest wobble.
STEP = (0.01, 0.06)
WOBBLE = 0.004


def straight_slots(n_curves: int, params: SynthesizeParams, rng: np.random.Generator) -> list[int]:
    """Which curves (by sidecar index) become straight lines; never the first, at most one of each kind."""
    picks = rng.random(max(n_curves - 1, 0)) < params.straight.share
    return [k + 1 for k in np.flatnonzero(picks)][: len(STRAIGHT_CURVES)]


def straight_curve(kind: int, n_samples: int, width: int, params: SynthesizeParams,
                   rng: np.random.Generator) -> tuple[str, str, np.ndarray, CurveScale]:
    """One near-constant curve of kind `kind` (index into `STRAIGHT_CURVES`) over `n_samples` samples.

    Returns:
        (mnemonic, unit, values (n_samples,), its linear scale).
    """
    mnemonic, unit, presets = STRAIGHT_CURVES[kind]
    low, high = presets[int(rng.integers(len(presets)))]
    top, bottom = (high, low) if rng.random() < 0.5 else (low, high)
    scale = CurveScale(mnemonic, unit, top, bottom, "linear")
    distance = rng.uniform(params.straight.edge.min, params.straight.edge.max)
    level = distance if rng.random() < 0.5 else 1.0 - distance
    fraction = np.full(n_samples, level)
    n_steps = int(rng.poisson(params.straight.steps_per_10k * width / 10_000.0))
    for start, size in zip(rng.integers(0, n_samples, n_steps), rng.uniform(*STEP, n_steps), strict=True):
        # Steps lead away from the edge the line sits at, so it stays near it and inside the track.
        fraction[start:] += size if level < 0.5 else -size
    wobble = np.sin(np.linspace(0.0, rng.uniform(2.0, 40.0), n_samples) + rng.uniform(0.0, 2 * np.pi))
    fraction = np.clip(fraction + rng.uniform(0.0, WOBBLE) * wobble, 0.005, 0.995)
    return mnemonic, unit, round_significant(scale.fraction_to_value(fraction)), scale
