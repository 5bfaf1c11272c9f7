"""A named curve whose style the net does not see, read on a style that shows a line more than the sidecar names.

The net names a broken style partly by its dash lengths (docs/accuracy.md), so a print whose dashes
are drawn otherwise than the generator's can leave a curve with no ink of its own style: on the
foreign renderer's scans a dash-dot or long-dash line is mostly named dashed. The curve the sidecar
names in that style then reads specks, and a curve named in the style the net did see may ride its
line. The map itself says where the missing line went: some style shows one line more than the
sidecar gives it (a dashed line too many beside a named dashed curve, or a dashed line where no
curve is named dashed).

So, like the seeds' thick and thin pens (`reading.pens`), the track is read again where a curve
named in a broken style found almost none of its style's ink (its confidence averages under
`MISSING_CONFIDENCE` over the track) and a style shows more lines than the sidecar names for it in at
least `min_support` of the columns (`styles.style_lines`), both broken styles: the
missing curve is read on that style's ink, the one with the best-supported spare line. It is then drawn
alike with the curves named in that style (`extract.trace_curves`: read jointly, listed top first),
since the net's names do not tell their lines apart (where one is named dashed and the other long-dash, their
dashes may: `reading.dashes` runs after), and the LAS header says so. (Giving each curve named
in that style the line it read first, on its own evidence, was measured too: no different on the val
logs, and that first reading is often the moved curve's line; docs/accuracy.md.) Solid is left out both ways:
what the net confuses by dash length are the broken styles, and the one solid curve moved on the val logs,
which the net saw nowhere, took another curve's line. The plan keeps the classes
and labels the sidecar names, as `reading.pens` keeps the seeds' where the pens decide: the evaluation
scores such curves as the different curves they are, so a coin toss between them counts as swaps.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from veernet_pipeline.config import ExtractParams
from veernet_pipeline.io.classes import BROKEN_STYLES, NUM_CLASSES, STYLES, style_class
from veernet_pipeline.reading.extract import trace_curves
from veernet_pipeline.reading.styles import ReadingPlan, style_lines

STYLE_OF_CLASS = {style_class(style): style for style in STYLES}
# A curve whose confidence (`extract.trace_curves`, the LAS's _CONF) averages under this over the track found almost
# none of its style's ink. Chosen on the first 80 val logs (docs/accuracy.md): of the curves a first rule (read in
# fewer than `min_support` of the columns at `min_confidence`) moved, the two that read better averaged 0.011 and 0.062,
# three that read worse 0.116-0.150 (read in 43-83 % of the columns all the same); a solid one at 0.000 read worse too
# (it is left out now: only broken styles move).
MISSING_CONFIDENCE = 0.1


def spare_styles(lines: np.ndarray, classes: list[tuple[int, ...]], min_support: float) -> dict[str, float]:
    """The broken styles showing a line more than the plan names in them, each with the share of columns showing it.

    Args:
        lines: separate lines of each style per column (`styles.style_lines`).
        classes: the plan's classes per curve; a curve on one class is named in that style.
        min_support: the share of columns a line must show in.

    Shape:
        lines: (len(STYLES), W).
    """
    spare: dict[str, float] = {}
    for i, style in enumerate(STYLES):
        if style not in BROKEN_STYLES:
            continue
        count = sum(1 for curve in classes if curve == (style_class(style),))
        support = float(np.mean(lines[i] >= count + 1))
        if support >= min_support:
            spare[style] = support
    return spare


def read_on_spare_lines(probs: np.ndarray, plan: ReadingPlan, first_confidence: np.ndarray, params: ExtractParams,
                        rgb: np.ndarray | None = None) -> tuple[ReadingPlan, np.ndarray, np.ndarray] | None:
    """Read the track again with each curve missing in its named style on a style with a line to spare.

    Args:
        probs: class probabilities on the style classes.
        plan: the reading plan (`styles.plan_reading`, or after `pens.read_thick_thin`).
        first_confidence: that reading's confidences (`extract.trace_curves`).
        params: path-search knobs; `min_support` decides "a line to spare".
        rgb: a colour print on the map's grid, as `extract.trace_curves` takes it.

    Returns:
        None where no curve named in a broken style averages a confidence under `MISSING_CONFIDENCE`, or
        no style has a line to spare; else the plan with a note per curve moved (its classes and labels as
        named), the rows and the confidences read with the moved curves on their new styles.

    Shape:
        probs: (7, H, W). first_confidence: (K, W). Returned rows and confidence: (K, W).
    """
    if probs.shape[0] != NUM_CLASSES:
        return None
    named = [STYLE_OF_CLASS.get(curve[0]) if len(curve) == 1 else None for curve in plan.classes]
    found = first_confidence.mean(axis=1)
    missing = [k for k, style in enumerate(named) if style in BROKEN_STYLES and found[k] < MISSING_CONFIDENCE]
    if not missing:
        return None
    lines = style_lines(probs, params)
    classes, notes = list(plan.classes), list(plan.notes)
    for k in missing:
        spare = spare_styles(lines, classes, params.min_support)
        spare.pop(named[k], None)  # its own style's ink is there, but not on a line of its own
        if not spare:
            break
        seen = max(spare, key=lambda style: spare[style])
        classes[k] = (style_class(seen),)
        alike = [plan.calibration.curves[j].mnemonic for j in range(len(classes)) if j != k
                 and classes[j] == classes[k]]
        notes.append(f"{plan.calibration.curves[k].mnemonic} ({named[k]}) found almost no ink of its style (mean "
                     f"confidence {found[k]:.2f}), but the map shows a {seen} line more than the sidecar names in "
                     f"{spare[seen]:.0%}: read on that line"
                     + (f", drawn alike with {', '.join(alike)} (the higher line first)" if alike else "")
                     + "; check it in the QC picture (docs/reading.md)")
    if classes == list(plan.classes):
        return None
    rows, confidence = trace_curves(probs, params, classes, rgb, plan.colours, plan.wraps)
    return replace(plan, notes=notes), rows, confidence

