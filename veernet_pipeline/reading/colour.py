"""Which named pen a pixel of ink was printed by, on a colour print.

A colour print tells curves apart by colour (`io.colours`); the net reads gray and names line styles,
so two curves drawn alike in style are told apart by nothing it sees. The print itself knows: a
pixel of ink is its pen's colour laid on paper, antialiased or faint, so its darkness (255 - RGB)
points the way its pen's darkness does, whatever its strength: black and gray along (1, 1, 1), red
(220, 0, 0) along (35, 255, 255).

A name is not an RGB, though: one vendor's blue (31, 119, 180) lies nearer the contract's cyan
(0, 170, 220) than its blue (0, 0, 220). So the pens are fitted to the print first (`fit_pens`):
the directions of its darker ink pixels are clustered (spherical k-means, one cluster per named
pen and one for black, started at the names' directions), and clusters are matched to the named pens
by the assignment that fits them best together (Hungarian, `scipy.optimize.linear_sum_assignment`):
a print's blue and cyan are each other's nearest names one at a time, but not both at once. Black
unnamed keeps its own direction: a cluster of it may find no black ink to hold. Then each
ink pixel is given to the pens by the angle between its darkness and theirs (softmax of the cosines
over `TEMPERATURE`). Black is always among the pens, named or not, so a black grid line, lettering
or an unnamed black curve is nobody's colour. `reading.candidates` sums these memberships over each
run of curve ink into each curve's share of the run.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy.optimize import linear_sum_assignment

from veernet_pipeline.io.colours import PEN_COLOURS, colour_rgb

# Softmax temperature on cosines: a vendor's blue and cyan differ by 0.038 in cosine (16 degrees), which this makes a
# factor e^3.8 (98 % to the right pen), red and black by 0.13; noise of a few gray levels on a pixel of full ink moves
# it by < 0.001. Faint pixels (mostly paper) are noisier, and weigh little: shares are weighted by ink probability.
TEMPERATURE = 0.01
BLACK = "black"
FIT_DARKNESS = 96.0  # ink pixels at least this dark (norm of 255 - RGB) say their hue; fainter ones are mostly paper
FIT_PIXELS = 20000  # at most this many of them, evenly spaced, fit the pens
FIT_ITERATIONS = 10
FIT_MIN_COSINE = 0.8  # a fitted cluster further than this from its name (37 degrees) is not that pen: keep the name's


def pen_directions(colours: Sequence[str]) -> np.ndarray:
    """Unit darkness directions of the given pens (distinct, in order), then of black unless it is among them.

    Shape:
        Returns (P, 3), P = number of distinct pens named, plus one unless black is named.
    """
    names = list(dict.fromkeys(colours))
    if not any(colour_rgb(c) == PEN_COLOURS[BLACK] for c in names):
        names.append(BLACK)
    darkness = 255.0 - np.asarray([colour_rgb(c) for c in names], dtype=np.float64)
    return darkness / np.linalg.norm(darkness, axis=1, keepdims=True)


def fit_pens(directions: np.ndarray, nominal: np.ndarray, named: int) -> np.ndarray:
    """The pens' darkness directions as this print draws them (module docstring).

    Args:
        directions: unit darkness directions of the print's darker ink pixels.
        nominal: the pens' directions (`pen_directions`), the named ones first.
        named: how many of them the sidecar names; only these are fitted.

    Returns:
        Per pen its fitted direction, or its nominal one where no cluster lies within `FIT_MIN_COSINE` of it,
        it is not named, or the print has too few ink pixels to say.

    Shape:
        directions: (N, 3); nominal: (P, 3). Returns (P, 3).
    """
    n_pens = len(nominal)
    if len(directions) < 10 * n_pens:
        return nominal
    points = directions[np.linspace(0, len(directions) - 1, min(len(directions), FIT_PIXELS)).astype(np.int64)]
    centres = nominal.copy()
    for _ in range(FIT_ITERATIONS):
        nearest = np.argmax(points @ centres.T, axis=1)
        for p in range(n_pens):
            members = points[nearest == p]
            # An empty cluster restarts on the pixel its own cluster fits worst: two pens one cluster held part.
            total = members.sum(axis=0) if len(members) else points[np.argmin(np.sum(points * centres[nearest],
                                                                                        axis=1))]
            centres[p] = total / np.linalg.norm(total)
    fit = centres @ nominal[:named].T
    clusters, pens = linear_sum_assignment(-fit)
    fitted = nominal.copy()
    for cluster, pen in zip(clusters, pens, strict=True):
        if fit[cluster, pen] >= FIT_MIN_COSINE:
            fitted[pen] = centres[cluster]
    return fitted


def pen_membership(rgb: np.ndarray, colours: Sequence[str | None]) -> np.ndarray:
    """Per curve, how much of each pixel's ink is its pen's: 1 for a curve with no colour named.

    Args:
        rgb: the print's pixels of curve ink.
        colours: per curve, its pen (`io.colours`) or None.

    Shape:
        rgb: (N, 3) uint8. Returns (K, N) float64 in [0, 1], K = len(colours).
    """
    named = [c for c in colours if c is not None]
    out = np.ones((len(colours), len(rgb)))
    if not named:
        return out
    pens = list(dict.fromkeys(named))
    darkness = 255.0 - np.asarray(rgb, dtype=np.float64)
    norm = np.linalg.norm(darkness, axis=1, keepdims=True)
    unit = np.divide(darkness, norm, out=np.zeros_like(darkness), where=norm > 0)
    directions = fit_pens(unit[norm[:, 0] >= FIT_DARKNESS], pen_directions(pens), len(pens))
    # Paper (no darkness) has no colour: it goes to every pen alike (cosine 0 to each).
    cosine = unit @ directions.T
    weights = np.exp((cosine - cosine.max(axis=1, keepdims=True)) / TEMPERATURE)
    weights /= weights.sum(axis=1, keepdims=True)
    for k, colour in enumerate(colours):
        if colour is not None:
            out[k] = weights[:, pens.index(colour)]
    return out
