"""Small whole-log pages the page tests render: seconds on a CPU, with every printed block a real page has."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from veernet_pipeline.config import Artefact, ArtefactParams, FloatRange, Range, SynthesizeParams
from veernet_pipeline.io.las import read_curves
from veernet_pipeline.synthetic.page import PageParams

_OFF = Artefact(share=0.0, strength=FloatRange(min=0.0, max=0.0))
QUIET = ArtefactParams(paper=_OFF, illumination=_OFF, blur=_OFF, speckle=_OFF, jpeg=_OFF, skew=_OFF, bilevel=_OFF)


def small_page_params(**update: object) -> PageParams:
    """Two narrow tracks, a 480-row main and a 240-row repeat section, header, banner and footer; no artefacts."""
    base = PageParams(
        tracks=Range(min=2, max=2), curves=Range(min=1, max=2), track_width=Range(min=96, max=128),
        main_rows=Range(min=480, max=480), repeat_share=1.0, repeat_rows=Range(min=240, max=240),
        depth_width=Range(min=60, max=60), gutter=Range(min=4, max=12), margin=Range(min=12, max=12),
        header_rows=Range(min=160, max=160), track_header_rows=Range(min=60, max=60),
        banner_rows=Range(min=60, max=60), footer_rows=Range(min=40, max=40), gap_rows=Range(min=6, max=6),
        px_per_foot=(2.0,), depth_font_px=Range(min=14, max=14), artefacts=QUIET, noise_std=0.0)
    return base.model_copy(update=update)


def clean_strip_params(params: SynthesizeParams) -> SynthesizeParams:
    """Strips a per-pixel net reads exactly: solid 1-px curves, no boxes, flags, banners, straight or steep
    stretches, heavy or doubled grid, pen skips, fades or wraps."""
    return params.model_copy(update={
        "line_width": Range(min=1, max=1), "backup_share": 0.0,
        "styles": params.styles.model_copy(update={"dashed": 0.0, "dotted": 0.0, "dash_dot": 0.0, "long_dash": 0.0}),
        "straight": params.straight.model_copy(update={"share": 0.0}),
        "steep": params.steep.model_copy(update={"share": 0.0}),
        "gaps": params.gaps.model_copy(update={"share": 0.0}), "fades": params.fades.model_copy(update={"share": 0.0}),
        "grid": params.grid.model_copy(update={"heavy": params.grid.heavy.model_copy(update={"share": 0.0}),
                                               "doubled": params.grid.doubled.model_copy(update={"share": 0.0})}),
        "flags": params.flags.model_copy(update={"per_10k": 0.0}),
        "banners": params.banners.model_copy(update={"per_10k": 0.0}),
        "text": params.text.model_copy(update={"headers_per_10k": 0.0})})


def detectable_page_params(**update: object) -> PageParams:
    """Pages the layout detector reads, still seconds to render: two 300-450 px tracks, a 1,500-row main section
    and a 600-row repeat, the default artefacts (bilevel, skew, speckle). The detector's thresholds are set for
    real scans at 200 dpi (grid lines at least 100 px long, depth numbers a quarter of the log apart), so the
    `small_page_params` pages are too small for it."""
    base = PageParams(tracks=Range(min=2, max=2), track_width=Range(min=300, max=450),
                      main_rows=Range(min=1500, max=1500), repeat_share=1.0, repeat_rows=Range(min=600, max=600),
                      header_rows=Range(min=400, max=400), footer_rows=Range(min=100, max=100))
    return base.model_copy(update=update)


def check_against_native(las: Path, native: Path, layout_track: object, height: int, tol_px: float = 0.5) -> None:
    """Values read vs the native LAS, in track units, within `tol_px` pixels of the track (half a pixel: the rounding
    to the pixel grid) where the curve is not steep."""
    depth, curves, _ = read_curves(las)
    native_depth, native_curves, _ = read_curves(native)
    curve = layout_track.curves[0]
    true = np.interp(depth, native_depth, native_curves[curve.mnemonic])

    def fraction(value: np.ndarray) -> np.ndarray:  # across the strip from its top edge (the track's right edge)
        ends = np.log10([curve.right_value, curve.left_value]) if curve.scale == "log" else (
            curve.right_value, curve.left_value)
        v = np.log10(value) if curve.scale == "log" else value
        return (v - ends[0]) / (ends[1] - ends[0])

    read, truth = fraction(curves[curve.mnemonic]), fraction(true)
    # Where the drawn row changes by at most a pixel to both neighbours, the stroke is one pixel tall and its
    # centre is the drawn pixel: the reading is off by the rounding to the pixel grid, at most half a pixel.
    drawn = np.round(np.clip(truth, 0, 1) * height - 0.5)
    flat = (np.abs(np.diff(drawn, prepend=np.nan)) <= 1) & (np.abs(np.diff(drawn, append=np.nan)) <= 1)
    shown = (truth > 0) & (truth < 1)
    # A broken line style (the legend's `style`) leaves gaps the reader bridges by a straight line, with
    # <MNEM>_CONF 0 there: only the columns where ink was read are held to half a pixel.
    inked = curves[f"{curve.mnemonic}_CONF"] > 0
    assert np.isfinite(read).mean() > 0.95
    ok = flat & shown & np.isfinite(read) & inked
    assert ok.sum() > 0.5 * (shown & inked).sum() > 0
    np.testing.assert_allclose(read[ok], truth[ok], atol=tol_px / height + 1e-6)
