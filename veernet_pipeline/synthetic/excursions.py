"""Steep excursions: a curve that crosses most of the track within a few columns, and comes back.

Real curves jump: a sonic cycle skip, a caliper in a washout, a resistivity spike at a thin bed.
On the print the stroke runs across the track in one or two columns, which a path search with a
smoothness cost is tempted to cut short. With probability `steep.share` per curve (straight lines
excepted), `steep.per_10k` excursions per 10,000 columns (at least one) move a run of
`steep.samples` consecutive LAS samples to the far side of the track: to a fraction drawn from
`steep.far`, measured from the edge opposite to where the run starts. Between two samples the
curve is linear, so the crossing takes one sample spacing: 1.2 to 12 columns.

The values are changed in the window before anything is drawn, so the LAS ground truth, the
sidecar and the mask all hold the excursion; they are rounded like the wells' values.
"""

from __future__ import annotations

import numpy as np

from veernet_pipeline.config import SynthesizeParams
from veernet_pipeline.io.calibration import CurveScale
from veernet_pipeline.synthetic.curves import round_significant

# Within the far range, the run keeps this share of its own wiggle, so it is not a flat bar.
KEPT_WIGGLE = 0.3


def add_excursions(values: np.ndarray, scale: CurveScale, width: int, params: SynthesizeParams,
                   rng: np.random.Generator) -> np.ndarray:
    """A copy of `values` with steep excursions (none when this curve does not get them).

    Args:
        values: the curve's window samples. Shape: (N,).
        scale: the track scale the curve is drawn on (excursions stay on its main scale).
        width: image width, px (sets the count).
        params: `steep` is read.
        rng: the curve's own stream.

    Returns:
        The samples. Shape: (N,).
    """
    steep = params.steep
    applies = rng.random() < steep.share
    count = max(1, int(rng.poisson(steep.per_10k * width / 10_000.0)))
    starts = rng.integers(1, max(2, values.size - 1), count)
    lengths = rng.integers(steep.samples.min, steep.samples.max + 1, count)
    far = rng.uniform(steep.far.min, steep.far.max, count)
    if not applies or values.size < 3:
        return values.copy()
    fraction = np.clip(scale.value_to_fraction(values), 0.0, 1.0)
    out = fraction.copy()
    for start, length, reach in zip(starts, lengths, far, strict=True):
        # The run ends one sample before the window does, so the curve also comes back inside it.
        run = slice(int(start), int(min(values.size - 1, start + length)))
        here = float(np.median(fraction[run]))
        target = 1.0 - reach if here < 0.5 else reach
        out[run] = target + KEPT_WIGGLE * (fraction[run] - here)
    changed = out != fraction
    result = values.copy()
    result[changed] = round_significant(scale.fraction_to_value(np.clip(out[changed], 0.002, 0.998)))
    return result
