"""Thick vs thin: curve B of a sidecar naming no style, printed as a thinner solid line.

The seeds told their two curves apart "solid vs dashed, thick vs thin" (BRIEF), and their sidecars
name no style, so curve A is read on the solid class and curve B on the broken ones
(`styles.curve_classes`). Where B is a thin solid pen it leaves no broken ink: the first reading
finds B in few columns while the solid class shows two separate lines in many. The track is then
read again with both curves on the solid class (the joint search for curves drawn alike,
`extract.trace_curves`), and the pens' widths say which is which: A is the thicker.

A column's run is as tall as the pen where the curve runs flat (where it slopes the run also spans
its travel), so each curve's width is measured over the flat columns whose run it holds alone
(`pen_widths`). Pens less than `MIN_WIDTH_DIFFERENCE` apart are not told apart: the reading keeps
the rule for curves drawn alike (the higher line first), says so, and is scored as curves drawn
alike. Without the fallback such a B reads stray specks: median R^2 -64 over 7 foreign scans
(benchmarks/results/seeds_contract.md before this module).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from veernet_pipeline.config import ExtractParams
from veernet_pipeline.io.classes import style_class
from veernet_pipeline.reading.candidates import Candidates, find_candidates
from veernet_pipeline.reading.extract import trace_curves
from veernet_pipeline.reading.styles import ReadingPlan

SOLID = (style_class("solid"),)
# A curve is flat in a column where its row moves less than this (px) per column: its run is the pen.
FLAT_SLOPE = 0.25
# Flat lone columns a curve needs before its width is trusted.
MIN_FLAT_COLUMNS = 50
# Pens whose widths differ by less than this (px) are taken as one width.
MIN_WIDTH_DIFFERENCE = 0.5
# Heights kept for the width: the middle of the distribution, clear of crossings with grid or text.
TRIM = (0.1, 0.9)


def pen_widths(cands: Candidates, rows: np.ndarray) -> np.ndarray:
    """Each curve's pen width: the mean height of the solid runs it holds alone where it runs flat.

    Args:
        cands: the runs of solid ink (`find_candidates` on `SOLID`, with the path search's knobs).
        rows: curves read (pixel rows, NaN where absent), `extract.trace_curves`.

    Returns:
        Width per curve in px, NaN where a curve has fewer than `MIN_FLAT_COLUMNS` flat lone columns.

    Shape:
        rows: (K, W). Returns (K,).
    """
    heights = cands.height  # (W, M), NaN where a column has fewer runs
    with np.errstate(invalid="ignore"):
        inside = (cands.top[None] - 0.5 <= rows[..., None]) & (rows[..., None] <= cands.bottom[None] + 0.5)
        flat = np.abs(np.gradient(rows, axis=1)) < FLAT_SLOPE  # NaN rows are never flat
    run = np.where(inside.any(axis=-1), inside.argmax(axis=-1), -1)  # (K, W): the run each curve reads
    widths = np.full(rows.shape[0], np.nan)
    for k in range(rows.shape[0]):
        shared = np.any(np.delete(run, k, axis=0) == run[k][None], axis=0)
        cols = np.nonzero((run[k] >= 0) & ~shared & flat[k])[0]
        if cols.size < MIN_FLAT_COLUMNS:
            continue
        held = heights[cols, run[k, cols]]
        lo, hi = np.quantile(held, TRIM)
        widths[k] = float(held[(held >= lo) & (held <= hi)].mean())
    return widths


def read_thick_thin(probs: np.ndarray, plan: ReadingPlan, confidence: np.ndarray, params: ExtractParams,
                    rgb: np.ndarray | None = None) -> tuple[ReadingPlan, np.ndarray, np.ndarray] | None:
    """Read the track again as thick (A) vs thin (B) solid lines where the seeds' broken B found no ink.

    Args:
        probs: class probabilities on the style classes.
        plan: the reading plan (`styles.plan_reading`).
        confidence: the first reading's confidences (`extract.trace_curves`).
        params: path-search knobs.
        rgb: a colour print on the map's grid: where the sidecar names A's and B's pens, they tell the two solid
            lines apart instead of their widths (`reading.colour`).

    Returns:
        None where the plan is not the seeds' convention (solid A, broken B, no style named), B was
        read in at least `min_support` of the columns, or the solid class does not show two lines
        there; else the new plan (labels `solid (thick)` / `solid (thin)` and a note), rows and
        confidences. The plan's classes stay the seeds' (A and B told apart, and scored so) where
        the widths decide; where they do not, both curves are solid, scored as curves drawn alike.

    Shape:
        probs: (7, H, W). confidence: (K, W). Returned rows and confidence: (K, W).
    """
    if plan.labels[:2] != ["solid", "broken"] or confidence.shape[0] < 2:
        return None
    # A curve riding ink of another style keeps a small confidence (its style's share of the run): not read.
    read = float(np.mean(confidence[1] >= params.min_confidence))
    if read >= params.min_support:
        return None
    solid = find_candidates(probs, [SOLID], params.max_candidates, params.min_confidence)
    two_solid = float(np.mean(solid.valid.sum(axis=1) >= 2))
    if two_solid < params.min_support:
        return None
    classes = [SOLID, SOLID, *plan.classes[2:]]
    coloured = rgb is not None and None not in plan.colours[:2]
    # The two solid lines: each on its pen's ink where both are named, else the higher first.
    rows, confidence = trace_curves(probs, params, classes, rgb, plan.colours, plan.wraps)
    widths = pen_widths(solid, rows[:2])
    name = plan.calibration.curves[1].mnemonic
    found = (f"{name} (curve B; the sidecar names no style, so a broken line) found broken ink in {read:.0%} of "
             f"columns, but the map shows two solid lines in {two_solid:.0%}")
    fix = 'name each curve\'s "style" in the sidecar (docs/reading.md) to read them otherwise'
    if coloured:
        note = f"{found}: read as two solid lines told apart by their pens ({', '.join(plan.colours[:2])}); {fix}"
        plan_classes, labels = classes, ["solid", "solid"]
    elif np.all(np.isfinite(widths)) and abs(widths[0] - widths[1]) >= MIN_WIDTH_DIFFERENCE:
        order = np.array([int(np.argmax(widths)), int(np.argmin(widths)), *range(2, rows.shape[0])])
        rows, confidence = rows[order], confidence[order]
        note = (f"{found}: read as thick (A, {widths.max():.1f} px) vs thin (B, {widths.min():.1f} px) solid "
                f"lines, the seeds' other convention; {fix}")
        plan_classes, labels = plan.classes, ["solid (thick)", "solid (thin)"]
    else:
        shown = "unmeasured" if not np.all(np.isfinite(widths)) else f"{widths[0]:.1f} / {widths[1]:.1f} px"
        note = (f"{found}: read as two solid lines whose pens are not told apart ({shown}), the higher line as "
                f"A; {fix}")
        plan_classes, labels = classes, ["solid", "solid"]
    new_plan = replace(plan, classes=plan_classes, labels=[*labels, *plan.labels[2:]], notes=[*plan.notes, note])
    return new_plan, rows, confidence
