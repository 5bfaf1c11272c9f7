"""The mask classes: what a training mask says of each pixel, and which classes a curve's ink may carry.

A reader tells the curves of one track apart the way the log's legend does: by line style. So
the net's classes are line styles, not curve positions, and a track may hold any number of
curves; the calibration sidecar says which style each mnemonic is printed in (`CurveScale.style`).

| class | name | pixels |
|---|---|---|
| 0 | background | paper and the printed grid (depth and value lines, track borders) |
| 1 | other_ink | ink that is no curve the sidecar asks for: text, header boxes, banners, flags, hatching |
| 2 | solid | a curve drawn as a continuous line, whatever its width |
| 3 | dashed | dashes with gaps shorter than the dashes or comparable |
| 4 | dotted | dots |
| 5 | dash_dot | dash, dot, dash... |
| 6 | long_dash | long dashes with short gaps |

Sidecars written before styles existed stay valid: when no curve of a sidecar names a style, the
seeds' convention holds (the first curve is solid, the second is in any broken style) and any
further curve may be in any curve style. This contract sits in `io` because the generator writes
it, and training, reading and evaluation read it.
"""

from __future__ import annotations

from collections.abc import Sequence

CLASSES: tuple[str, ...] = ("background", "other_ink", "solid", "dashed", "dotted", "dash_dot", "long_dash")
BACKGROUND, OTHER_INK = 0, 1
STYLES: tuple[str, ...] = CLASSES[2:]
BROKEN_STYLES: tuple[str, ...] = ("dashed", "dotted", "dash_dot", "long_dash")
NUM_CLASSES = len(CLASSES)


def style_class(style: str) -> int:
    """The class of a line style.

    Raises:
        ValueError: not one of `STYLES`; the message lists them.
    """
    if style not in STYLES:
        raise ValueError(f"line style {style!r} is not one of {list(STYLES)}")
    return CLASSES.index(style)


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
