"""Which curves to read from a map: the sidecar's curves by style, or as many as the map supports.

With a sidecar, every curve it names is read, on the evidence of its style's class
(`curve_classes`). Without one, the map itself says how many curves of each style the
track holds (`detect_styles`): a style holds n curves when at least `min_support` of the columns
show n or more separate runs of ink dominated by that style. A dashed or dotted curve has ink in
40 % or more of its columns, a stray misclassified run in far fewer, so the count is robust to
both. Detected curves are named CURVE_A, CURVE_B, ... (`Calibration.track_units`).

Models trained before the style classes give three channels (background, curve A, curve B);
`as_style_probs` maps them onto the style classes as solid and dashed, so a registered champion
of that kind keeps reading two-curve sidecars of the seeds' convention.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from veernet_pipeline.config import ExtractParams
from veernet_pipeline.io.calibration import Calibration
from veernet_pipeline.io.classes import BROKEN_STYLES, NUM_CLASSES, STYLES, style_class
from veernet_pipeline.reading.candidates import STYLE_CLASSES, find_candidates

MAX_CURVES = 5  # curves a track may hold when the map decides (real tracks hold 2 to 5)
SEEDS_CHANNELS = 3  # background, curve A, curve B: the classes before line styles


def curve_classes(styles: Sequence[str | None]) -> list[tuple[int, ...]]:
    """For each curve of a track, the classes whose probability is evidence of its ink.

    Args:
        styles: each curve's style as the sidecar gives it, None where it gives none.

    Returns:
        One tuple of class indices per curve: the style's class; for a sidecar naming no style at
        all, the seeds' convention (solid, then any broken style, then any curve style); a curve
        left without a style in a sidecar that names others may be in any curve style.
    """
    named = any(style is not None for style in styles)
    every_curve = tuple(range(2, NUM_CLASSES))
    broken = tuple(style_class(s) for s in BROKEN_STYLES)
    classes: list[tuple[int, ...]] = []
    for k, style in enumerate(styles):
        if style is not None:
            classes.append((style_class(style),))
        elif not named and k == 0:
            classes.append((style_class("solid"),))
        elif not named and k == 1:
            classes.append(broken)
        else:
            classes.append(every_curve)
    return classes


def style_labels(styles: Sequence[str | None]) -> list[str]:
    """A word per curve for tables and LAS descriptions: its style, or what the convention allows.

    Returns:
        The named style; for an unnamed curve "solid", "broken" (any broken style) or "any", after
        `curve_classes`.
    """
    names = {(style_class("solid"),): "solid", tuple(style_class(s) for s in BROKEN_STYLES): "broken"}
    return [style if style is not None else names.get(classes, "any")
            for style, classes in zip(styles, curve_classes(styles), strict=True)]


def as_style_probs(probs: np.ndarray) -> np.ndarray:
    """Probabilities on the style classes; a three-channel map of the seeds' classes becomes solid (A) and dashed (B).

    Shape:
        probs: (C, H, W), C in (2, 3, 7). Returns (C', H, W): unchanged for C = 2 or 7, else C' = 7.
    """
    if probs.shape[0] != SEEDS_CHANNELS:
        return probs
    out = np.zeros((NUM_CLASSES, *probs.shape[1:]), dtype=probs.dtype)
    out[0], out[style_class("solid")], out[style_class("dashed")] = probs
    return out


def style_lines(probs: np.ndarray, params: ExtractParams) -> np.ndarray:
    """How many separate lines of each style every column shows: its runs whose ink that style dominates.

    A run counts for the style holding most of its curve ink, where that is at least half of it.

    Shape:
        probs: (7, H, W). Returns (len(STYLES), W) int, in `STYLES` order.
    """
    singles = [(style_class(style),) for style in STYLES]
    cands = find_candidates(probs, singles, params.max_candidates, params.min_confidence)
    dominant = cands.share.argmax(axis=0)  # (W, M): the style with most of each run's ink
    strong = cands.valid & (cands.share.max(axis=0) >= 0.5)
    return np.stack([((dominant == i) & strong).sum(axis=1) for i in range(len(STYLES))])


def detect_styles(probs: np.ndarray, params: ExtractParams) -> list[str]:
    """The styles of the curves a style-class map supports, one entry per curve, in class order.

    Shape:
        probs: (7, H, W).
    """
    lines = style_lines(probs, params)
    supported: list[tuple[float, int, str]] = []
    for i, style in enumerate(STYLES):
        for n in range(1, MAX_CURVES + 1):
            support = float(np.mean(lines[i] >= n))
            if support < params.min_support:
                break
            supported.append((support, i, style))
    # More than MAX_CURVES: keep the best supported, then restore class order.
    kept = sorted(sorted(supported, key=lambda item: -item[0])[:MAX_CURVES], key=lambda item: item[1])
    return [style for _, _, style in kept]


def count_curves(probs: np.ndarray, params: ExtractParams) -> int:
    """How many curves the map supports when its ink is counted whatever its style.

    The fallback when `detect_styles` finds none: a net unsure of the style (an unseen line style,
    or one trained briefly) spreads a curve's probability over several style classes, so no style
    dominates a run although the ink is plain. Counted like `detect_styles`, on all curve styles at once.

    Shape:
        probs: (7, H, W).
    """
    cands = find_candidates(probs, [STYLE_CLASSES], params.max_candidates, params.min_confidence)
    runs = cands.valid.sum(axis=1)  # runs of curve ink per column
    return sum(1 for n in range(1, MAX_CURVES + 1) if float(np.mean(runs >= n)) >= params.min_support)


@dataclass(frozen=True)
class ReadingPlan:
    """What to read from one map: the calibration to write with, each curve's classes and style label."""

    calibration: Calibration
    classes: list[tuple[int, ...]]
    labels: list[str]
    notes: list[str]
    # Curves whose lines the dash check gave them against the net's names (`dashes.exchange_by_dashes`).
    moved: tuple[int, ...] = ()

    @property
    def colours(self) -> list[str | None]:
        """Each read curve's pen on a colour print (`io.colours`), None where the sidecar names none.

        A binary map reads one curve, whatever the sidecar names: it has no pen.
        """
        if len(self.classes) != len(self.calibration.curves):
            return [None] * len(self.classes)
        return [c.colour for c in self.calibration.curves]

    @property
    def wraps(self) -> list[bool]:
        """Whether each read curve has a backup scale, so its path may leave one edge and re-enter at the other.

        A binary map reads one curve on the first curve's scale, whatever the sidecar names.
        """
        return [c.backup_wraps > 0 for c in self.calibration.curves[:len(self.classes)]]

    @property
    def kinds(self) -> list[tuple[tuple[int, ...], str | None]]:
        """What tells each curve apart: its classes and its pen. Curves of one kind are drawn alike."""
        return list(zip(self.classes, self.colours, strict=True))


def plan_reading(probs: np.ndarray, calibration: Calibration | None, params: ExtractParams) -> ReadingPlan:
    """The curves to read: the sidecar's (all of them), or those the map supports in track units.

    A binary map (C = 2) reads one curve whatever the sidecar names: it cannot tell curves apart.

    Shape:
        probs: (C, H, W) on the style classes (`as_style_probs`) or binary.
    """
    if probs.shape[0] == 2:
        calib = calibration if calibration is not None else Calibration.track_units(1)
        notes = []
        if len(calib.curves) > 1:
            notes.append(f"a binary model reads one curve; {', '.join(c.mnemonic for c in calib.curves[1:])} "
                         "not digitised")
        return ReadingPlan(calib, [(1,)], ["any"], notes)
    if calibration is None:
        styles = detect_styles(probs, params)
        if not styles:
            n_curves = count_curves(probs, params)
            notes = [f"no sidecar: no line style dominates the map's ink; {n_curves} curves of any style found "
                     f"(a separate run of curve ink in >= {params.min_support:.0%} of columns)"]
            return ReadingPlan(Calibration.track_units(n_curves), [STYLE_CLASSES] * n_curves,
                               ["any"] * n_curves, notes)
        calib = Calibration.track_units(len(styles), styles)
        notes = [f"no sidecar: {len(styles)} curves found in the map ({', '.join(styles)}); "
                 f"a style counts a curve where it shows a separate run in >= {params.min_support:.0%} of columns"]
    else:
        calib, notes = calibration, []
    styles = [c.style for c in calib.curves]
    return ReadingPlan(calib, curve_classes(styles), style_labels(styles), notes)

