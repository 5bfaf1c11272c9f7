"""What was read, drawn over the scan at native pixels.

Pictures never resample the scan: the figure is exactly one output pixel per scan pixel
(`imshow(..., interpolation="nearest")` on a column window), so a 1-px trace looks in the PNG the
way it looks in the TIFF. Wide scans are cropped to a window instead of shrunk; the window is the
stretch where the reading is worst, since that is what a reviewer needs to see. Evaluation's
overlays and inference's QC pictures are both drawn here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from matplotlib.figure import Figure

from veernet_pipeline.io.atomic import atomic_path

_DPI = 100


@dataclass(frozen=True)
class Series:
    """One line to draw over the scan.

    Shape:
        rows: (W,) pixel-index rows, NaN where absent (the line breaks there).
    """

    rows: np.ndarray
    color: str
    label: str
    linestyle: str = "-"
    marker: str | None = None  # drawn at every present row: a lone column shows, which a line would not draw


def curve_name(k: int) -> str:
    """Name of 0-based curve `k` (class k + 1): "A", "B", ... as the brief calls them."""
    return chr(ord("A") + k)


def choose_window(width: int, max_columns: int, badness: np.ndarray | None = None) -> tuple[int, int]:
    """Column window `[start, stop)` of at most `max_columns`: the worst stretch, else the middle.

    Shape:
        badness: (W,) non-negative, higher = more worth showing; NaN counts as 0.
    """
    if width <= max_columns:
        return 0, width
    if badness is None:
        start = (width - max_columns) // 2
        return start, start + max_columns
    total = np.concatenate([[0.0], np.cumsum(np.nan_to_num(np.asarray(badness, dtype=np.float64)))])
    start = int(np.argmax(total[max_columns:] - total[:-max_columns]))
    return start, start + max_columns


def render_curves_png(
    path: Path,
    image: np.ndarray,
    series: Sequence[Series],
    max_columns: int = 1500,
    badness: np.ndarray | None = None,
) -> tuple[int, int]:
    """Draw `series` over a native-pixel window of `image` and write a PNG atomically.

    Args:
        path: PNG to write.
        image: the scan, ink dark on light.
        series: lines to draw, in pixel rows.
        max_columns: widest window drawn; wider images are cropped, never resized.
        badness: per-column score picking the window (see `choose_window`).

    Returns:
        The window `(start, stop)` drawn.

    Shape:
        image: (H, W) uint8.
    """
    height, width = image.shape
    start, stop = choose_window(width, max_columns, badness)
    fig = Figure(figsize=((stop - start) / _DPI, height / _DPI), dpi=_DPI)
    ax = fig.add_axes((0.0, 0.0, 1.0, 1.0))
    # Gray as explicit RGB: a colormap lookup would shift gray levels by one here and there.
    window = np.repeat(image[:, start:stop, None], 3, axis=2)
    ax.imshow(window, interpolation="nearest", extent=(start - 0.5, stop - 0.5, height - 0.5, -0.5))
    x = np.arange(start, stop)
    for s in series:
        ax.plot(x, s.rows[start:stop], color=s.color, linestyle=s.linestyle, linewidth=1.0, alpha=0.8,
                marker=s.marker, markersize=4, markeredgewidth=0, label=s.label)
    ax.set_xlim(start - 0.5, stop - 0.5)
    ax.set_ylim(height - 0.5, -0.5)
    ax.axis("off")
    ax.text(4, 4, f"columns {start}-{stop} of {width}", va="top", fontsize=7, color="blue",
            bbox={"facecolor": "white", "alpha": 0.7, "linewidth": 0})
    if series:
        ax.legend(loc="upper right", fontsize=7, framealpha=0.7)
    with atomic_path(path) as tmp:
        fig.savefig(tmp, dpi=_DPI)
    return start, stop
