"""Hatched and shaded flags: blocks of other ink at a track edge or across the curves.

Logs flag intervals with hatched or shaded blocks (washouts, cased hole, tool overpull), and a
reader must follow a curve straight through them. `flags.per_10k` flags per 10,000 columns, each
`flags.columns` wide and `flags.rows` of the track high, reach in from an edge or, with
probability `flags.mid_track`, sit anywhere across the track, over the curves. The fill is drawn
from `flags.kinds`:

- `hatch`: diagonal lines (either direction), 1-2 px thick, every 3-8 px;
- `cross`: both diagonals;
- `halftone`: a grid of 1-2 px dots every 2-4 px, as shading prints and survives a bilevel scan;
- `solid`: a filled block, printed at gray 0-20: a curve under it does not show.

Flags are drawn before the curves and labelled other ink where inked. A curve over a hatch,
cross or halftone keeps its class at every pixel it inks (its ink shows between the pattern's
marks, and owns a pixel it shares with one); under a solid flag its pixels stay other ink.
"""

from __future__ import annotations

import numpy as np

from veernet_pipeline.config import FlagParams
from veernet_pipeline.synthetic.canvas import Canvas
from veernet_pipeline.synthetic.text import region

KINDS = ("hatch", "cross", "halftone", "solid")
SOLID_GRAY = (0.0, 20.0)


def _pattern(kind: str, local_y: np.ndarray, local_x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    period, thick = int(rng.integers(3, 9)), int(rng.integers(1, 3))
    direction = 1 if rng.random() < 0.5 else -1
    dot_period, dot = int(rng.integers(2, 5)), int(rng.integers(1, 3))
    if kind == "hatch":
        return (local_y + direction * local_x) % period < thick
    if kind == "cross":
        return ((local_y + local_x) % period < thick) | ((local_y - local_x) % period < thick)
    if kind == "halftone":
        # Alternate rows of dots are offset by half a period, as a printed screen is.
        shift = (local_y // dot_period) % 2 * (dot_period // 2)
        return (local_y % dot_period < min(dot, dot_period - 1)) & ((local_x + shift) % dot_period < dot)
    return np.ones(local_y.shape, dtype=bool)


def draw_flags(canvas: Canvas, top: np.ndarray, gray: float, params: FlagParams,
               rng: np.random.Generator) -> list[tuple[str, int, int, int, int]]:
    """Draw the instance's flags.

    Returns:
        Each flag as (kind, track row, column, rows, columns).
    """
    height, width = canvas.shape
    weights = np.array([getattr(params.kinds, kind) for kind in KINDS], dtype=np.float64)
    count = int(rng.poisson(params.per_10k * width / 10_000.0)) if weights.sum() > 0 else 0
    drawn = []
    for _ in range(count):
        kind = KINDS[int(rng.choice(len(KINDS), p=weights / weights.sum()))]
        cols = int(rng.integers(params.columns.min, params.columns.max + 1))
        rows = max(2, round(height * rng.uniform(params.rows.min, params.rows.max)))
        col0 = int(rng.integers(0, max(1, width - cols)))
        edge = 0 if rng.random() < 0.5 else height - rows
        row0 = int(rng.integers(0, max(1, height - rows))) if rng.random() < params.mid_track else edge
        ys, xs, ok = region(row0, col0, rows, cols, top, height)
        local_y, local_x = np.nonzero(ok)
        on = _pattern(kind, local_y, local_x, rng)
        ys, xs = ys[ok][on], xs[ok][on]
        solid_gray = rng.uniform(*SOLID_GRAY)
        canvas.print_other(ys, xs, solid_gray if kind == "solid" else gray)
        if kind == "solid":
            canvas.hide(ys, xs)
        drawn.append((kind, row0, col0, rows, cols))
    return drawn
