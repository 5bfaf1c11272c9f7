"""Scans at another resolution: read as they are, and resampled to the net's (`reading.resolution`).

    python benchmarks/resolution.py [SET_DIR] [--model DIR] [--split val] [--max-logs 20] [--scales 1.5]
                                    [--foreign 0] [--profile cpu] [--out DIR]

Each of the first `--max-logs` logs of the split (validation by default: never the test split) is
drawn again at `scale` times its pixels along both axes, as the same print scanned at 200 x scale
dpi would be (1-bit scans by pixel replication, gray ones bilinear; a simulation: a real scanner's
blur and thresholds differ), and read three ways with `inference.digitize.digitize_scan`, the
profile's `extract:` and tiles and test-time mirroring:

- **native**: the log as drawn (the reference);
- **as is**: the enlarged scan at its own pixels (`infer.net_dpi` null, or a scan without resolution tags);
- **resampled**: the enlarged scan resampled to the net's grid and read back onto its own (what
  `digitize_scan` does with `scale` = `io.resolution.net_scale`).

With `--foreign N`, the first N scans of the foreign renderer (`foreign.dataset.render_foreign`, evaluation
wells only) are also drawn natively at each scale: the same print, every pen, dash and font in points,
rasterised at the larger grid and then scanned (blur, noise, threshold at its own pixels), which is
nearer a real 300-dpi scan than an enlargement. They are read the same three ways ("foreign" rows); the
foreign set itself stays at 200 dpi.

Each reading is scored against the truth drawn at its own grid (`evaluation.truth.truth_tracks`
from the log's LAS and sidecar), curves drawn alike under their best assignment
(`evaluate.score_curves`), and summarised per style: median R^2 and MAE (track units) over the
curves read at all, and how many were not read anywhere.

Writes `resolution.json` and `resolution.md` into `--out` (default: `results/` beside this script).
"""

from __future__ import annotations

import os
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
from _logs import chosen_set, log_parser
from _record import machine, markdown_table, write_results
from PIL import Image
from tqdm import tqdm

from veernet_pipeline.config import load_settings
from veernet_pipeline.evaluation.evaluate import score_curves, select_logs
from veernet_pipeline.evaluation.truth import truth_tracks
from veernet_pipeline.foreign.dataset import evaluation_wells, render_foreign, write_scan
from veernet_pipeline.inference.digitize import digitize_scan
from veernet_pipeline.io.calibration import Calibration
from veernet_pipeline.io.tiff import decode_scan
from veernet_pipeline.model.veernet import load_model
from veernet_pipeline.reading.styles import curve_classes, style_labels


def enlarge(image: np.ndarray, scale: float) -> np.ndarray:
    """The scan drawn at `scale` times its pixels: replicated where 1-bit (0 and 255 only), bilinear where gray."""
    height, width = image.shape
    bilevel = bool(np.isin(image, (0, 255)).all())
    size = (round(width * scale), round(height * scale))
    return np.asarray(Image.fromarray(image).resize(size, Image.NEAREST if bilevel else Image.BILINEAR))


def curve_scores(rows: np.ndarray, truth: np.ndarray, classes: list[tuple[int, ...]], styles: list[str],
                 height: int) -> list[dict[str, Any]]:
    """Each curve's R^2 and MAE, the read rows assigned to the truths as `evaluate` assigns them."""
    scores, _, _ = score_curves(rows[:len(truth)], truth, classes, height)
    return [{"style": style, "r2": float(m["r2"]), "mae": float(m["mae"])} for style, m in zip(styles, scores,
                                                                                                 strict=True)]


def read_ways(model: Any, settings: Any, readings: dict[str, tuple[np.ndarray, tuple[float, float], Path]],
              calibration: Calibration, n_curves: int, scores: dict[str, list[dict[str, Any]]]) -> None:
    """Read each `readings` way (scan, scale, its LAS) with `digitize_scan`; add its curves' scores to `scores`."""
    styles = [c.style for c in calibration.curves]
    classes, labels = curve_classes(styles)[:n_curves], style_labels(styles)[:n_curves]
    ev = settings.evaluate
    for way, (scan, net_scale, las) in readings.items():
        result = digitize_scan(model, scan, calibration, ev.tile_width, ev.tile_overlap, settings.extract,
                               scale=net_scale)
        truth = truth_tracks(las, calibration, scan.shape[1], n_curves, scan.shape[0])
        scores[way] += curve_scores(result.rows, truth, classes, labels, scan.shape[0])


def read_foreign(model: Any, settings: Any, count: int, scales: list[float],
                 scores: dict[str, list[dict[str, Any]]]) -> None:
    """The first `count` foreign scans drawn at 1 and natively at each scale, read as they are and resampled."""
    wells = evaluation_wells(settings)
    with tempfile.TemporaryDirectory() as folder:
        for index in tqdm(range(count), desc="foreign"):
            readings = {}
            for scale in (1.0, *scales):
                found = render_foreign(settings, index, wells, scale)
                row = write_scan(Path(folder), f"{index:06d}_{scale:g}", found)
                las = Path(folder) / str(row["las"])
                if scale == 1.0:
                    readings["foreign native"] = (found.image, (1.0, 1.0), las)
                    continue
                readings[f"foreign drawn at {scale:g}x, as is"] = (found.image, (1.0, 1.0), las)
                readings[f"foreign drawn at {scale:g}x, resampled"] = (found.image, (1.0 / scale, 1.0 / scale), las)
            read_ways(model, settings, readings, found.calibration, len(found.log.curves), scores)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    """Read each log three ways at each scale, score them, write the JSON and the table."""
    parser = log_parser(__doc__, 20)
    parser.add_argument("--scales", type=float, nargs="+", default=[1.5])
    parser.add_argument("--foreign", type=int, default=0, help="foreign scans also drawn natively at each scale")
    args = parser.parse_args(argv)
    settings = load_settings(None, args.profile)
    set_dir, load = chosen_set(args, settings), os.getloadavg()
    model = load_model(args.model or settings.path("models") / "multiclass", map_location="cpu")
    scores: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in tqdm(list(select_logs(set_dir, args.split, args.max_logs).itertuples(index=False)), desc="logs"):
        calibration = Calibration.from_file(set_dir / row.calibration)
        image, las = decode_scan(set_dir / row.image), set_dir / row.las
        readings = {"native": (image, (1.0, 1.0), las)}
        for scale in args.scales:
            big = enlarge(image, scale)
            readings[f"{scale:g}x as is"] = (big, (1.0, 1.0), las)
            readings[f"{scale:g}x resampled"] = (big, (1.0 / scale, 1.0 / scale), las)
        read_ways(model, settings, readings, calibration, min(int(row.n_curves), len(calibration.curves)), scores)
    if args.foreign:
        read_foreign(model, settings, args.foreign, args.scales, scores)
    summary = {way: {style: {"curves": len(group), "unread": sum(not np.isfinite(s["r2"]) for s in group),
                             **{f"median {m}": float(np.nanmedian([s[m] for s in group])) for m in ("r2", "mae")}}
                     for style, group in [("all", rows), *sorted(_by_style(rows).items())]}
               for way, rows in scores.items()}
    styles = sorted({s for way in summary.values() for s in way if s != "all"})
    table = markdown_table(["reading", "curves (none read)", "all: median R² / MAE", *styles],
                           [[way, f"{by['all']['curves']} ({by['all']['unread']})",
                             f"{by['all']['median r2']:.3f} / {by['all']['median mae']:.4f}",
                             *(f"{by[s]['median r2']:.3f} / {by[s]['median mae']:.4f}" if s in by else "-"
                               for s in styles)] for way, by in summary.items()], right=set(range(1, len(styles) + 3)))
    note = (f"{args.max_logs or 'all'} logs of split `{args.split}` of `{set_dir.name}`, profile `{args.profile}`, "
            f"model `{args.model or 'paths.models/multiclass'}`, each drawn again at {args.scales} times its pixels "
            "and read as it is and resampled to the net's grid"
            + (f"; the first {args.foreign} foreign scans drawn natively at those scales ('foreign' rows)"
               if args.foreign else "") + "; per style: median R² / median MAE (track units).")
    document = {"settings": vars(args) | {"set_dir": str(set_dir), "out": str(args.out), "model": str(args.model)},
                "summary": summary, "machine": machine(load)}
    write_results(args.out, "resolution", document, "Scans at another resolution", f"{note}\n\n{table}\n")
    return document


def _by_style(rows: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        groups[row["style"]].append(row)
    return groups


if __name__ == "__main__":
    main()
