"""Where the net names a broken curve's ink wrong: near other curves, on steep stretches, by dash length, and how long.

    python benchmarks/naming.py [SET_DIR] [--split val] [--max-logs 40] [--profile cpu] [--out DIR]

Reading a curve wrong is mostly naming its style wrong (docs/accuracy.md: read from the net's own
ink with the true styles named, the lowest style reaches 0.943). This asks where. The first
`--max-logs` logs of the split (validation by default: never the test split) are read by the
profile's multiclass model as `evaluate` reads them (tiles, test-time mirroring). A curve's ink
is the true mask's pixels of its class within `BAND_PX` rows of its true row (two curves of one
style closer than that share pixels); the net's name of a pixel is its most likely class. For
every curve of a broken style (dashed, dotted, dash-dot, long-dash), reported per style:

- the share of its ink the net names right, and the two commonest wrong names, by distance
  (rows) from its true row to the nearest other curve's in the same column, and by slope (rows
  per column over 2 x `SLOPE_SPAN` columns);
- the same share by the curve's dash length: the 90th percentile of the column extents of its
  ink's pieces (8-connected), so pieces cut short by crossings, other ink or steep stretches
  fall below it and a whole dash on a flat stretch sets it. A net that names a style by the
  absolute length of its dashes names short long-dashes (a renderer we do not share draws
  20-48 px; the generator 30-90) worse;
- how long the misnamed stretches run: a column of ink is misnamed when fewer than half its
  pixels carry the curve's class, and misnamed columns in a row (columns without the curve's ink
  neither break nor extend a run) make one stretch; the share of the curve's ink columns in
  stretches of each length. Single misnamed pixels would say "noise"; stretches of dashes say the
  net named a piece of curve as something else.

Writes `naming.json` and `naming.md` into `--out` (default: `results/` beside this script).
"""

from __future__ import annotations

import os
import time
from typing import Any

import numpy as np
import tifffile
from _logs import chosen_set, log_parser, read_logs
from _record import machine, markdown_table, write_results
from scipy import ndimage

from veernet_pipeline.config import load_settings
from veernet_pipeline.io.classes import BROKEN_STYLES, CLASSES, style_class

BAND_PX = 3
SLOPE_SPAN = 4
DISTANCE_BINS = (0.0, 4.0, 10.0, 20.0, 50.0, np.inf)  # rows to the nearest other curve
SLOPE_BINS = (0.0, 0.5, 2.0, 5.0, np.inf)  # rows per column
RUN_BINS = (1, 10, 50, 200, 1000, np.inf)  # columns
DASH_BINS = (0.0, 10.0, 20.0, 35.0, 60.0, np.inf)  # a curve's dash length, columns
DASH_PERCENTILE = 90


def curve_ink(mask: np.ndarray, row: np.ndarray, cls: int) -> tuple[np.ndarray, np.ndarray]:
    """Row and column indices of a curve's ink: the true mask's pixels of `cls` within `BAND_PX` rows of its row.

    Shape:
        mask: (H, W) classes. row: (W,) the curve's true row, NaN where it is not drawn. Returns two
        (N,) index arrays.
    """
    height, width = mask.shape
    drawn = np.isfinite(row)
    rows = np.round(np.nan_to_num(row)).astype(np.int64)[None, :] + np.arange(-BAND_PX, BAND_PX + 1)[:, None]
    cols = np.broadcast_to(np.arange(width), rows.shape)
    clipped = np.clip(rows, 0, height - 1)
    ink = drawn[None, :] & (rows >= 0) & (rows < height) & (mask[clipped, cols] == cls)
    return clipped[ink], cols[ink]


def ink_names(mask: np.ndarray, names: np.ndarray, row: np.ndarray, cls: int) -> np.ndarray:
    """Per column, how many of a curve's ink pixels (`curve_ink`) the net gives each class.

    Shape:
        mask, names: (H, W) classes (the truth, the net's most likely). row: (W,) the curve's true
        row, NaN where it is not drawn. Returns (W, C) counts, C = len(CLASSES); a row's sum is the
        column's ink pixels, its entry `cls` the ones named right.
    """
    rows, cols = curve_ink(mask, row, cls)
    counts = np.zeros((mask.shape[1], len(CLASSES)), np.int64)
    np.add.at(counts, (cols, names[rows, cols].astype(np.int64)), 1)
    return counts


def dash_length(mask: np.ndarray, row: np.ndarray, cls: int) -> float:
    """The curve's dash length in columns: the `DASH_PERCENTILE`th percentile of its ink pieces' column extents.

    NaN when the curve has no ink. Shape: mask (H, W); row (W,) as `curve_ink`.
    """
    rows, cols = curve_ink(mask, row, cls)
    if rows.size == 0:
        return float("nan")
    ink = np.zeros(mask.shape, bool)
    ink[rows, cols] = True
    labels, _ = ndimage.label(ink, structure=np.ones((3, 3)))
    extents = [piece[1].stop - piece[1].start for piece in ndimage.find_objects(labels)]
    return float(np.percentile(extents, DASH_PERCENTILE))


def misnamed_runs(counts: np.ndarray, cls: int) -> list[int]:
    """Lengths in columns of the stretches of misnamed ink columns (first to last misnamed column of each).

    Shape:
        counts: (W, C) from `ink_names`.
    """
    ink = counts.sum(axis=1)
    columns = np.flatnonzero(ink > 0)
    wrong = counts[columns, cls] * 2 < ink[columns]
    runs, start, last = [], -1, -1
    for column, bad in zip(columns, wrong, strict=True):
        if bad:
            start = column if start < 0 else start
            last = column
        elif start >= 0:
            runs.append(int(last - start + 1))
            start = -1
    if start >= 0:
        runs.append(int(last - start + 1))
    return runs


def nearest_other(rows: np.ndarray, k: int) -> np.ndarray:
    """Per column, rows from curve `k` to the nearest other curve drawn there (inf where none is).

    Shape:
        rows: (K, W) true rows, NaN where a curve is not drawn. Returns (W,).
    """
    gaps = np.abs(np.delete(rows, k, axis=0) - rows[k])
    return np.min(np.where(np.isfinite(gaps), gaps, np.inf), axis=0, initial=np.inf)


def slope(row: np.ndarray) -> np.ndarray:
    """Rows per column over `SLOPE_SPAN` columns each side (NaN at the ends and where the curve is not drawn)."""
    out = np.full(row.shape, np.nan)
    out[SLOPE_SPAN:-SLOPE_SPAN] = np.abs(row[2 * SLOPE_SPAN:] - row[:-2 * SLOPE_SPAN]) / (2 * SLOPE_SPAN)
    return out


class Tally:
    """The net's names on each broken style's ink, by distance and slope bin, and its misnamed stretches."""

    def __init__(self) -> None:
        self.by_distance = {s: np.zeros((len(DISTANCE_BINS) - 1, len(CLASSES)), np.int64) for s in BROKEN_STYLES}
        self.by_slope = {s: np.zeros((len(SLOPE_BINS) - 1, len(CLASSES)), np.int64) for s in BROKEN_STYLES}
        self.by_dash = {s: np.zeros((len(DASH_BINS) - 1, len(CLASSES)), np.int64) for s in BROKEN_STYLES}
        self.runs: dict[str, list[int]] = {s: [] for s in BROKEN_STYLES}
        self.ink_columns = dict.fromkeys(BROKEN_STYLES, 0)

    def add(self, mask: np.ndarray, names: np.ndarray, rows: np.ndarray, styles: list[str]) -> None:
        """One log: its true mask and the net's names (H, W), its curves' true rows (K, W), their style words."""
        for k, style in enumerate(styles):
            if style not in BROKEN_STYLES:
                continue
            cls = style_class(style)
            counts = ink_names(mask, names, rows[k], cls)
            self.runs[style] += misnamed_runs(counts, cls)
            self.ink_columns[style] += int((counts.sum(axis=1) > 0).sum())
            dash = dash_length(mask, rows[k], cls)
            if np.isfinite(dash):
                self.by_dash[style][np.digitize(dash, DASH_BINS[1:-1])] += counts.sum(axis=0)
            for table, values, bins in ((self.by_distance, nearest_other(rows, k), DISTANCE_BINS),
                                        (self.by_slope, slope(rows[k]), SLOPE_BINS)):
                known = ~np.isnan(values)
                np.add.at(table[style], np.digitize(values[known], bins[1:-1]), counts[known])

    def figures(self) -> dict[str, Any]:
        """Per style: named-right shares and commonest wrong names per bin, and the misnamed-run shares."""
        out: dict[str, Any] = {}
        for style in BROKEN_STYLES:
            cls = style_class(style)
            tables = {}
            for name, table, bins in (("distance", self.by_distance[style], DISTANCE_BINS),
                                      ("slope", self.by_slope[style], SLOPE_BINS),
                                      ("dash", self.by_dash[style], DASH_BINS)):
                tables[name] = [_bin(counts, cls, *edges) for counts, edges in zip(table, _edges(bins), strict=True)]
            runs = np.array(self.runs[style], dtype=np.int64)
            total = max(1, self.ink_columns[style])
            tables["runs"] = [{"from": low, "to": high, "share": float(runs[(runs >= low) & (runs < high)].sum())
                               / total} for low, high in _edges(RUN_BINS)]
            tables["ink_columns"] = self.ink_columns[style]
            out[style] = tables
        return out


def _edges(bins: tuple[float, ...]) -> list[tuple[float, float]]:
    return list(zip(bins[:-1], bins[1:], strict=True))


def _bin(counts: np.ndarray, cls: int, low: float, high: float) -> dict[str, Any]:
    total = int(counts.sum())
    wrong = [j for j in np.argsort(-counts, kind="stable") if j != cls and counts[j] > 0][:2]
    return {"from": low, "to": high, "pixels": total, "right": float(counts[cls] / total) if total else None,
            "wrong": {CLASSES[j]: float(counts[j] / total) for j in wrong}}


def _cell(entry: dict[str, Any]) -> str:
    if not entry["pixels"]:
        return "-"
    wrong = ", ".join(f"{name} {share:.2f}" for name, share in entry["wrong"].items())
    return f"{entry['right']:.2f} ({wrong})"


def markdown(figures: dict[str, Any], n_logs: int, split: str) -> str:
    """The four tables: by distance, by slope, by dash length, misnamed stretches."""
    text = (f"{n_logs} logs of split `{split}`. A cell: the share of the style's ink pixels the net names right "
            f"(two commonest wrong names and their shares).\n\n")
    for name, bins, unit in (("distance", DISTANCE_BINS, "rows to the nearest other curve"),
                             ("slope", SLOPE_BINS, "rows per column"),
                             ("dash", DASH_BINS, "the curve's dash length, columns")):
        header = ["style", *[f"{low:g}-{high:g}" for low, high in _edges(bins)]]
        rows = [[style, *[_cell(e) for e in figures[style][name]]] for style in BROKEN_STYLES]
        text += f"### By {name} ({unit})\n\n" + markdown_table(header, rows, set()) + "\n"
        pixels = (f"{style} " + " / ".join(str(e["pixels"]) for e in figures[style][name]) for style in BROKEN_STYLES)
        text += "Pixels per bin: " + "; ".join(pixels) + ".\n\n"
    header = ["style", "ink columns", *[f"{low}-{high:g}" for low, high in _edges(RUN_BINS)]]
    rows = [[style, str(figures[style]["ink_columns"]), *[f"{e['share']:.3f}" for e in figures[style]["runs"]]]
            for style in BROKEN_STYLES]
    text += ("### Misnamed stretches\n\nShare of a style's ink columns that lie in misnamed stretches of each "
             "length (columns).\n\n" + markdown_table(header, rows, set(range(1, len(header)))))
    return text


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """Read the logs, tally the net's names on broken ink, write the results."""
    args = log_parser(__doc__.splitlines()[0], max_logs=40).parse_args(argv)
    settings = load_settings(None, args.profile)
    set_dir = chosen_set(args, settings)
    load = os.getloadavg()
    started = time.perf_counter()
    tally, n_logs = Tally(), 0
    for log, probs in read_logs(args, settings):
        height = log.image.shape[0]
        tally.add(tifffile.imread(log.mask), probs.argmax(axis=0), log.truth * height - 0.5, log.styles)
        n_logs += 1
    figures = tally.figures()
    document = {"set": str(set_dir), "split": args.split, "n_logs": n_logs, "profile": args.profile,
                "band_px": BAND_PX, "slope_span": SLOPE_SPAN, "dash_percentile": DASH_PERCENTILE,
                "seconds": time.perf_counter() - started,
                "machine": machine(load), "styles": figures}
    write_results(args.out, "naming", document, "Where the net names broken ink wrong",
                  markdown(figures, n_logs, args.split))
    return document


if __name__ == "__main__":
    main()
