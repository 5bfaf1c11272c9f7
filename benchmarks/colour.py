"""Vendor colour prints: what reading the print's colour buys, gray conversion and pens.

    python benchmarks/colour.py [--model MODEL_DIR] [--count 24] [--profile cpu]

The foreign renderer draws `--count` of its scans as a vendor's colour print rasterised to TIFF
(`foreign.colour_share` 1: each curve in its own pen, matplotlib's default colours, the sidecar naming
each pen as an operator would: "blue", "orange", ...; never 1-bit). Each is read four ways with the
profile's `extract:` and tiles, as `veernet digitize` reads:

- **gray print**: the same log drawn by the same renderer in black ink, as the foreign set holds it
  (scan i of the gray set): how the net reads this content at all;
- **luma**: the colour print in the gray the pipeline decoded before 2026-12-06 (BT.601 luma, computed
  here), read by style alone;
- **ink gray**: the colour print as `io.tiff.decode_colour` now decodes it (a coloured pen is ink:
  `io.gray`), read by style alone;
- **ink gray + pens**: the same, with the print's colour given to the reading, so each curve is read on
  its pen's ink (`reading.colour`).

Scoring is the evaluate stage's (`evaluate.score_curves`), with one difference that favours the ways
without pens: curves of one style are scored under their best assignment (nothing they read says which
is which), while with pens every curve is scored as labelled. The foreign renderer is evaluation only:
nothing here is tuned on these figures. Writes `results/colour.{json,md}`.
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from _record import load_note, machine, markdown_table, write_results
from tqdm import tqdm

from veernet_pipeline.config import load_settings
from veernet_pipeline.evaluation.evaluate import score_curves
from veernet_pipeline.evaluation.truth import truth_tracks
from veernet_pipeline.foreign.dataset import evaluation_wells, render_foreign, write_scan
from veernet_pipeline.inference.digitize import digitize_scan
from veernet_pipeline.io.classes import STYLES
from veernet_pipeline.model.veernet import load_model
from veernet_pipeline.reading.styles import curve_classes, style_labels

HERE = Path(__file__).resolve().parent
WAYS = ("gray print", "luma", "ink gray", "ink gray + pens")


def luma(rgb: np.ndarray) -> np.ndarray:
    """BT.601 luma rounded half up: the gray `io.gray` gave a colour page before a coloured pen was ink.

    Shape:
        rgb: (H, W, 3) uint8. Returns (H, W) uint8.
    """
    total = rgb.astype(np.uint32) @ np.array([299, 587, 114], dtype=np.uint32)
    return ((total + 500) // 1000).astype(np.uint8)


def read_index(model: Any, settings: Any, colour_settings: Any, wells: list, index: int, folder: Path
               ) -> list[dict[str, Any]]:
    """Scan `index` drawn gray and in colour, read each way; one record per way and curve."""
    printed = render_foreign(colour_settings, index, wells)
    gray = render_foreign(settings, index, wells)
    las = folder / str(write_scan(folder, f"{index:06d}", printed)["las"])
    calibration, n_curves = printed.calibration, len(printed.log.curves)
    styles = [c.style for c in calibration.curves]
    classes, labels = curve_classes(styles)[:n_curves], style_labels(styles)[:n_curves]
    pens = [c.colour for c in calibration.curves][:n_curves]
    repeated = {s for s in labels if labels.count(s) > 1}
    ways = {"gray print": (gray.image, None, gray.calibration), "luma": (luma(printed.rgb), None, calibration),
            "ink gray": (printed.image, None, calibration),
            "ink gray + pens": (printed.image, printed.rgb, calibration)}
    ev, records = settings.evaluate, []
    for way, (image, rgb, calib) in ways.items():
        result = digitize_scan(model, image, calib, ev.tile_width, ev.tile_overlap, settings.extract, rgb=rgb)
        truth = truth_tracks(las, calib, image.shape[1], n_curves, image.shape[0])
        kinds = list(zip(classes, pens, strict=True)) if rgb is not None else classes
        scores, swaps, _ = score_curves(result.rows[:n_curves], truth, kinds, image.shape[0])
        records += [{"way": way, "id": f"{index:06d}", "curve": k, "style": labels[k], "pen": pens[k],
                     "style_repeated": labels[k] in repeated, "n_curves": n_curves, "swap_share": swaps,
                     "r2": m["r2"], "mae": m["mae"], "coverage": m["coverage"]} for k, m in enumerate(scores)]
    return records


def summary(frame: pd.DataFrame) -> dict[str, Any]:
    """Per way: all curves, per style, curves whose style repeats in their track, swaps over scans."""
    out: dict[str, Any] = {}
    for way in WAYS:
        part = frame[frame["way"] == way]
        swaps = part.groupby("id")["swap_share"].first()
        repeated = part[part["style_repeated"]]
        out[way] = {"curves": len(part), "median_r2": float(part["r2"].median()),
                    "p10_r2": float(part["r2"].quantile(0.1)), "median_mae": float(part["mae"].median()),
                    "styles": {s: float(v) for s, v in part.groupby("style")["r2"].median().items()},
                    "repeated_curves": len(repeated), "repeated_median_r2": float(repeated["r2"].median()),
                    "swaps_median": float(swaps.median()), "swaps_mean": float(swaps.mean()),
                    "median_coverage": float(part["coverage"].median())}
    return out


def table(figures: dict[str, Any]) -> str:
    """One row per way."""
    header = ["reading", "all curves: median R² (p10); MAE", "median R² per style (" + ", ".join(STYLES) + ")",
              "curves whose style repeats in the track: n, median R²", "coverage", "swaps median / mean"]
    rows = []
    for way, f in figures.items():
        rows.append([way, f"{f['median_r2']:.3f} ({f['p10_r2']:.2f}); {f['median_mae']:.4f}",
                     " / ".join(f"{f['styles'][s]:.3f}" if s in f["styles"] else "-" for s in STYLES),
                     f"{f['repeated_curves']}, {f['repeated_median_r2']:.3f}", f"{f['median_coverage']:.3f}",
                     f"{100 * f['swaps_median']:.1f} / {100 * f['swaps_mean']:.1f} %"])
    return markdown_table(header, rows, {1, 2, 3, 4, 5})


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", type=Path, help="model folder (default: the profile's multiclass model)")
    parser.add_argument("--count", type=int, default=24)
    parser.add_argument("--profile", default="cpu")
    parser.add_argument("--out", type=Path, default=HERE / "results")
    args = parser.parse_args(argv)
    load_before = os.getloadavg()
    settings = load_settings(HERE.parent / "params.yaml", profile=args.profile)
    colour_settings = load_settings(HERE.parent / "params.yaml", profile=args.profile,
                                    overrides=["foreign.colour_share=1"])
    model = load_model(args.model or settings.path("models") / "multiclass")
    wells = evaluation_wells(settings)
    records: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as folder:
        for index in tqdm(range(args.count), desc="colour prints"):
            records += read_index(model, settings, colour_settings, wells, index, Path(folder))
    frame = pd.DataFrame(records)
    figures = summary(frame)
    document = {"model": str(args.model), "profile": args.profile, "count": args.count, "figures": figures,
                "curves": frame.replace({np.nan: None}).to_dict(orient="records"), "machine": machine(load_before)}
    body = (f"{args.count} foreign scans printed in colour (pens named in the sidecar) and the same logs in gray, "
            f"{figures['luma']['curves']} curves, profile `{args.profile}`.\n\n" + table(figures)
            + "\nWithout pens, curves of one style in a track are scored under their best assignment; with pens, as "
            "labelled.\n\n" + load_note(document["machine"]) + "\n")
    write_results(args.out, "colour", document, "Vendor colour prints", body)
    return document


if __name__ == "__main__":
    main()
