"""Pen colours: how a sidecar names the colour a curve is printed in, and the RGB it means.

Vendor prints rasterised to TIFF tell a track's three to five curves apart by colour as well as by
line style, as their log header's legend does. A sidecar curve may say `"colour": "red"` (a name
below) or `"colour": "#d62728"` (hex RGB); the reading then takes the curve's ink where the print's
colour is its pen's (`reading.colour`). Names are the pens plotters and log vendors print with; the
RGB of a name is a typical print of it, not an exact match: the reading compares hues, not levels.
"""

from __future__ import annotations

import re

PEN_COLOURS: dict[str, tuple[int, int, int]] = {
    "black": (0, 0, 0),
    "red": (220, 0, 0),
    "blue": (0, 0, 220),
    "green": (0, 150, 0),
    "magenta": (210, 0, 210),
    "orange": (255, 140, 0),
    "cyan": (0, 170, 220),
    "brown": (140, 70, 20),
    "purple": (120, 0, 170),
    "yellow": (230, 200, 0),
}
_HEX = re.compile(r"#[0-9a-f]{6}")


def parse_colour(text: str) -> str:
    """A sidecar's colour, checked and normalised: a name of `PEN_COLOURS` or ``#rrggbb``, lower case.

    Raises:
        ValueError: anything else, naming what is accepted.
    """
    colour = text.strip().lower()
    if colour in PEN_COLOURS or _HEX.fullmatch(colour):
        return colour
    raise ValueError(f"{text!r} is not a pen colour: name one of {sorted(PEN_COLOURS)} or give #rrggbb (hex RGB)")


def colour_rgb(colour: str) -> tuple[int, int, int]:
    """The RGB of a colour `parse_colour` accepts."""
    colour = parse_colour(colour)
    if colour in PEN_COLOURS:
        return PEN_COLOURS[colour]
    return int(colour[1:3], 16), int(colour[3:5], 16), int(colour[5:7], 16)
