"""Section headers and repeat-section banners: bands across the whole track that interrupt the curves.

A whole log is not one unbroken strip. A repeat section opens with a banner and a repeat of the
track headers; section headers (a new run, a casing shoe, a scale change) cross every track. Cut out
as a strip, each is a band of columns across the full track height: paper with ruled edges and
turned text, the curves stopping at one edge and going on at the other. A repeat banner also
carries the track's legend: per curve its scale ends, name and unit, and a sample of its line
style running across the track.

`banners.per_10k` banners per 10,000 columns, each `banners.columns` wide; `banners.repeat_share`
of them are repeat banners with the legend, the rest section headers (one to three titles). They
are drawn after the curves: the band is blanked (no curve ink, so no curve label), then its rules,
text and legend samples are printed as other ink. The legend samples are ink in a curve's style
that belongs to no curve, labelled other ink: what a reader skips when it reads the header.
"""

from __future__ import annotations

import numpy as np

from veernet_pipeline.config import BannerParams
from veernet_pipeline.synthetic.canvas import Canvas
from veernet_pipeline.synthetic.styles import CurveStyle, pattern_on
from veernet_pipeline.synthetic.text import blank, fill, region, stamp, text_alpha

REPEAT_TITLES = ("REPEAT SECTION", "REPEAT PASS", "REPEAT SECTION - FIELD PRINT")
SECTION_TITLES = ("MAIN PASS", "MAIN LOG", "RUN ONE", "RUN TWO", "CASING SHOE", "SCALE CHANGE", "LOGGED INTERVAL",
                  "CORRELATION SECTION", "BOREHOLE COMPENSATED SONIC", "DUAL INDUCTION LOG", "TOOL STRING")
PAD = 4


def _legend_sample(canvas: Canvas, col0: int, style: CurveStyle, top: np.ndarray) -> None:
    # The sample runs across the track (down the image rows) in the curve's own pattern and width.
    height = canvas.shape[0]
    rows = height - 4 * PAD
    ys, xs, ok = region(2 * PAD, col0, rows, style.width, top, height)
    along = np.broadcast_to(np.arange(rows)[:, None], ys.shape).astype(np.float64)
    on = ok & pattern_on(along, style.pattern, style.phase)
    canvas.print_other(ys[on], xs[on], style.gray)


def _lines(repeat: bool, rng: np.random.Generator) -> list[str]:
    if repeat:
        return [REPEAT_TITLES[int(rng.integers(len(REPEAT_TITLES)))]]
    picks = rng.choice(len(SECTION_TITLES), size=int(rng.integers(1, 4)), replace=False)
    return [SECTION_TITLES[int(i)] for i in picks]


def draw_banners(canvas: Canvas, top: np.ndarray, legend: list[tuple[str, CurveStyle]], font: int, size: int,
                 gray: float, params: BannerParams, rng: np.random.Generator) -> list[tuple[str, int, int, int, int]]:
    """Draw the instance's banners.

    Args:
        canvas: the strip, curves already drawn.
        top: `strokes.track_top`. Shape: (W,).
        legend: per curve, its legend text (scale ends, name, unit) and its style.
        font, size, gray: the instance's print font, size (px) and gray.
        params: `banners`.
        rng: the banners' own stream.

    Returns:
        Each banner as (kind, track row 0, column, rows = the track height, columns).
    """
    height, width = canvas.shape
    drawn = []
    for _ in range(int(rng.poisson(params.per_10k * width / 10_000.0))):
        cols = int(rng.integers(params.columns.min, params.columns.max + 1))
        col0 = int(rng.integers(0, max(1, width - cols)))
        repeat = rng.random() < params.repeat_share
        rule = int(rng.integers(1, 4))
        blank(canvas, 0, col0, height, cols, top)
        fill(canvas, 0, col0, height, rule, top, gray)
        fill(canvas, 0, col0 + cols - rule, height, rule, top, gray)
        x, end = col0 + rule + PAD, col0 + cols - rule - PAD
        entries: list[tuple[str, CurveStyle | None]] = [(line, None) for line in _lines(repeat, rng)]
        entries += legend if repeat else []
        for text, style in entries:
            alpha = text_alpha(text, font, size)[: max(0, height - 2 * PAD)]
            needed = alpha.shape[1] + (style.width + PAD if style is not None else 0)
            if x + needed > end:
                break
            stamp(canvas, alpha, max(PAD, (height - alpha.shape[0]) // 2), x, gray, top)
            x += alpha.shape[1] + PAD
            if style is not None:
                _legend_sample(canvas, x, style, top)
                x += style.width + 2 * PAD
        drawn.append(("repeat_banner" if repeat else "section_header", 0, col0, height, cols))
    return drawn
