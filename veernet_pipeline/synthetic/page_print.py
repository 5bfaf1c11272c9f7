"""What a whole-log page prints besides its tracks: header block, track headers, banners, footer, depth numbers.

Everything is drawn into a portrait ink layer (uint8, 255 = no ink) with horizontal text: glyphs
come from `synthetic.text` (turned back to read left to right) and boxes are plain rectangles.
Contents follow real log prints: a header of well data fields and a parameter table, one box per
track naming its curves with their edge values and a sample of each curve's line style, a banner
across the page ("REPEAT SECTION"...), a footer of remarks, and depth numbers centred on their rows
in the depth column. Each function draws inside the rows and columns it is given.
"""

from __future__ import annotations

import numpy as np

from veernet_pipeline.synthetic.text import FONT_FILES, text_alpha

TITLES = ("DUAL INDUCTION - SFL", "BOREHOLE COMPENSATED SONIC LOG", "COMPENSATED NEUTRON FORMATION DENSITY",
          "RADIOACTIVITY LOG", "DUAL LATEROLOG", "GAMMA RAY - NEUTRON")
FIELDS = ("COMPANY", "WELL", "FIELD", "COUNTY", "STATE", "LOCATION", "PERMANENT DATUM", "LOG MEASURED FROM",
          "DATE", "RUN NO.", "DEPTH - DRILLER", "DEPTH - LOGGER", "BTM. LOG INTERVAL", "TOP LOG INTERVAL",
          "CASING - DRILLER", "BIT SIZE", "TYPE FLUID IN HOLE", "RM @ MEAS. TEMP.", "MAX. REC. TEMP.",
          "RECORDED BY", "WITNESSED BY")
BANNERS = ("REPEAT SECTION", "REPEAT PASS", "REPEAT ANALYSIS", "MAIN PASS", "REPEAT SECTION - 5 IN / 100 FT")
REMARKS = ("ALL INTERPRETATIONS ARE OPINIONS BASED ON INFERENCES FROM ELECTRICAL OR OTHER MEASUREMENTS",
           "CALIBRATION SUMMARY", "BEFORE SURVEY  AFTER SURVEY", "TOOL STRING", "SERIAL NO.", "REMARKS",
           "THANK YOU FOR USING OUR SERVICES")
# Dash patterns (ink, gap px) of the legend's line samples by style.
SAMPLE_PATTERNS = {"solid": (1, 0), "dashed": (14, 8), "dotted": (2, 4), "dash_dot": (12, 4, 2, 4),
                   "long_dash": (30, 10)}


def horizontal_text(text: str, font: int, size: int) -> np.ndarray:
    """Coverage (0..255) of `text` reading left to right. Shape: (text height px, text length px)."""
    return np.rot90(text_alpha(text, font, size), k=-1)


def stamp(ink: np.ndarray, alpha: np.ndarray, row: int, col: int, gray: float) -> None:
    """Darken `ink` by coverage `alpha` with its top-left at (row, col), clipped to the image."""
    height, width = ink.shape
    r0, c0 = max(row, 0), max(col, 0)
    r1, c1 = min(row + alpha.shape[0], height), min(col + alpha.shape[1], width)
    if r0 >= r1 or c0 >= c1:
        return
    cover = alpha[r0 - row:r1 - row, c0 - col:c1 - col].astype(np.float32) / 255.0
    printed = np.rint(255.0 - cover * (255.0 - gray)).astype(np.uint8)
    np.minimum(ink[r0:r1, c0:c1], printed, out=ink[r0:r1, c0:c1])


def write(ink: np.ndarray, text: str, row: int, col: int, size: int, font: int, gray: float,
          max_width: int | None = None) -> int:
    """Print `text` at (row, col), cut to `max_width` px; return its height in px."""
    alpha = horizontal_text(text, font, size)
    if max_width is not None:
        alpha = alpha[:, :max(0, max_width)]
    stamp(ink, alpha, row, col, gray)
    return alpha.shape[0]


def box(ink: np.ndarray, rows: tuple[int, int], cols: tuple[int, int], thickness: int, gray: float) -> None:
    """A rectangle outline over rows [r0, r1) and columns [c0, c1), `thickness` px inside them."""
    (r0, r1), (c0, c1) = rows, cols
    for rs, cs in (((r0, r0 + thickness), (c0, c1)), ((r1 - thickness, r1), (c0, c1)),
                   ((r0, r1), (c0, c0 + thickness)), ((r0, r1), (c1 - thickness, c1))):
        block = ink[max(rs[0], 0):max(rs[1], 0), max(cs[0], 0):max(cs[1], 0)]
        np.minimum(block, np.uint8(gray), out=block)


def header_block(ink: np.ndarray, rows: tuple[int, int], cols: tuple[int, int], rng: np.random.Generator) -> None:
    """A title, a framed list of well data fields and a parameter table."""
    (r0, r1), (c0, c1) = rows, cols
    font, gray = int(rng.integers(len(FONT_FILES))), float(rng.uniform(0, 60))
    box(ink, rows, cols, int(rng.integers(2, 5)), gray)
    row = r0 + 12
    row += write(ink, TITLES[int(rng.integers(len(TITLES)))], row, c0 + 20, int(rng.integers(34, 56)), font, gray,
                 c1 - c0 - 40) + 20
    size = int(rng.integers(16, 26))
    table_top = r0 + (r1 - r0) * 2 // 3
    for name in rng.permutation(FIELDS):
        if row + 2 * size > table_top:
            break
        value = f"{int(rng.integers(1, 9999))} {'ABCDEFGH'[int(rng.integers(8))]}{int(rng.integers(10, 99))}"
        write(ink, str(name), row, c0 + 20, size, font, gray, (c1 - c0) // 2 - 30)
        write(ink, value, row, c0 + (c1 - c0) // 2, size, font, gray, (c1 - c0) // 2 - 20)
        row += int(size * 1.6)
    n_rows, n_cols = int(rng.integers(3, 7)), int(rng.integers(3, 7))
    cell_h = max(4, (r1 - 12 - table_top) // n_rows)
    cell_w = max(4, (c1 - c0 - 40) // n_cols)
    for i in range(n_rows):
        for j in range(n_cols):
            top, left = table_top + i * cell_h, c0 + 20 + j * cell_w
            box(ink, (top, top + cell_h + 1), (left, left + cell_w + 1), 1, gray)
            write(ink, f"{rng.uniform(0, 300):.1f}", top + 4, left + 6, min(size, cell_h - 6), font, gray, cell_w - 10)


def banner(ink: np.ndarray, rows: tuple[int, int], cols: tuple[int, int], rng: np.random.Generator) -> None:
    """A framed band across the page with one large centred line."""
    (r0, r1), (c0, c1) = rows, cols
    font, gray = int(rng.integers(len(FONT_FILES))), float(rng.uniform(0, 60))
    box(ink, rows, cols, int(rng.integers(2, 6)), gray)
    alpha = horizontal_text(BANNERS[int(rng.integers(len(BANNERS)))], font,
                            int(min(rng.integers(30, 64), max(8, (r1 - r0) * 0.6))))
    alpha = alpha[:, :max(0, c1 - c0 - 20)]
    stamp(ink, alpha, (r0 + r1 - alpha.shape[0]) // 2, (c0 + c1 - alpha.shape[1]) // 2, gray)


def _line_sample(ink: np.ndarray, row: int, cols: tuple[int, int], style: str, gray: float) -> None:
    pattern = SAMPLE_PATTERNS.get(style, (1, 0))
    period = sum(pattern)
    x = np.arange(cols[0], cols[1])
    phase = np.cumsum(pattern)
    on = np.searchsorted(phase, (x - cols[0]) % period, side="right") % 2 == 0 if period > 1 else np.ones(x.size, bool)
    for dy in (0, 1):
        if 0 <= row + dy < ink.shape[0]:
            ink[row + dy, x[on]] = np.minimum(ink[row + dy, x[on]], np.uint8(gray))


def track_headers(ink: np.ndarray, rows: tuple[int, int], tracks: list[tuple[int, int, list[tuple[str, str]]]],
                  depth_column: tuple[int, int], rng: np.random.Generator) -> None:
    """One framed box per track over its columns: per curve a legend line (edge values, name) and a line sample.

    `tracks` holds (left, right, [(legend text, style), ...]) per track.
    """
    r0, r1 = rows
    font, gray = int(rng.integers(len(FONT_FILES))), float(rng.uniform(0, 60))
    size = int(min(rng.integers(14, 22), max(6, (r1 - r0) // 6)))
    for left, right, legends in tracks:
        box(ink, rows, (left, right), 2, gray)
        row = r0 + 8
        for text, style in legends:
            if row + 3 * size > r1:
                break
            row += write(ink, text, row, left + 8, size, font, gray, right - left - 16) + 6
            _line_sample(ink, row, (left + 8, right - 8), style, gray)
            row += 10
    box(ink, rows, depth_column, 2, gray)
    write(ink, "DEPTH", (r0 + r1) // 2 - size // 2, depth_column[0] + 4, size, font, gray,
          depth_column[1] - depth_column[0] - 8)


def footer(ink: np.ndarray, rows: tuple[int, int], cols: tuple[int, int], rng: np.random.Generator) -> None:
    """A framed block of remark lines."""
    (r0, r1), (c0, c1) = rows, cols
    font, gray = int(rng.integers(len(FONT_FILES))), float(rng.uniform(0, 60))
    box(ink, rows, cols, int(rng.integers(1, 4)), gray)
    size, row = int(rng.integers(16, 26)), r0 + 12
    while row + 2 * size < r1:
        row += write(ink, REMARKS[int(rng.integers(len(REMARKS)))], row, c0 + 16, size, font, gray, c1 - c0 - 32)
        row += int(size * 0.8)


def depth_numbers(ink: np.ndarray, labels: list[tuple[float, str]], cols: tuple[int, int], size: int, font: int,
                  gray: float) -> list[int]:
    """Depth labels centred on their (fractional) rows and across the depth column; return the rows drawn."""
    c0, c1 = cols
    drawn = []
    for row, text in labels:
        alpha = horizontal_text(text, font, size)[:, :max(0, c1 - c0 - 4)]
        top = int(np.floor(row + 0.5)) - alpha.shape[0] // 2
        ink[max(top - 2, 0):top + alpha.shape[0] + 2, c0:c1] = 255  # a white backing over any grid line
        stamp(ink, alpha, top, (c0 + c1 - alpha.shape[1]) // 2, gray)
        drawn.append(int(np.floor(row + 0.5)))
    return drawn
