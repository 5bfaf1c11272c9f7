"""The mask classes: what a training mask says of each pixel, and which classes a curve's ink may carry.

A reader tells the curves of one track apart the way the log's legend does: by line style. So
the net's classes are line styles, not curve positions, and a track may hold any number of
curves; the calibration sidecar says which style each mnemonic is printed in (`CurveScale.style`).
Which classes are evidence of one sidecar curve's ink is the reader's rule (`reading.styles.curve_classes`).

| class | name | pixels |
|---|---|---|
| 0 | background | paper and the printed grid (depth and value lines, track borders) |
| 1 | other_ink | ink that is no curve the sidecar asks for: text, header boxes, banners, flags, hatching |
| 2 | solid | a curve drawn as a continuous line, whatever its width |
| 3 | dashed | dashes with gaps shorter than the dashes or comparable |
| 4 | dotted | dots |
| 5 | dash_dot | dash, dot, dash... |
| 6 | long_dash | long dashes with short gaps |

This contract sits in `io` because the generator writes it, and training, reading and evaluation
read it.
"""

from __future__ import annotations

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
