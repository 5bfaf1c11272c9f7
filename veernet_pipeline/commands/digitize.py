"""`veernet digitize SCAN --out OUT.las`: one scan to a LAS file, outside the pipeline.

With `--layout`, SCAN is a whole-log page and `--out` a folder: the page is cut into track strips
by its layout and each log section becomes one LAS (`<scan>.las`, `<scan>.<section>.las`).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from veernet_pipeline.config import load_settings
from veernet_pipeline.inference.digitize import digitize_file
from veernet_pipeline.inference.page import digitize_page_file
from veernet_pipeline.io.resolution import Resampling
from veernet_pipeline.model.veernet import load_model
from veernet_pipeline.tracking import store

HELP = "digitise one scan (or, with --layout, one whole-log page) to LAS (outside the pipeline)"
# `--layout` without a file: the scan's <scan>.layout.json over its folder's tranche.layout.json.
BESIDE_THE_SCAN = "beside the scan"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("scan", type=Path, help="a track-strip TIFF, or a whole-log page with --layout")
    parser.add_argument("--out", type=Path, required=True,
                        help="the LAS file to write; with --layout, the folder for one LAS per log section")
    parser.add_argument("--calibration", type=Path,
                        help="sidecar JSON (default: <scan>.calib.json or tranche.calib.json beside it)")
    parser.add_argument("--layout", nargs="?", const=BESIDE_THE_SCAN, metavar="LAYOUT.json",
                        help="read SCAN as a whole-log page cut by this layout; without a file, the "
                        "<scan>.layout.json / tranche.layout.json beside the scan")
    parser.add_argument("--model", help="models:/NAME@ALIAS, models:/NAME/VERSION or a folder with weights.pt "
                        "(default: params infer.model_uri)")
    parser.add_argument("--qc", type=Path, help="also write a QC overlay PNG here (with --layout: a folder, "
                        "one picture per strip)")


def run(args: argparse.Namespace) -> dict[str, Any]:
    settings = load_settings(args.params, args.profile, args.set)
    if args.model and Path(args.model).is_dir():
        model_dir, label = Path(args.model), str(Path(args.model).resolve())
    else:
        uri = args.model or settings.infer.model_uri
        model_dir, version = store.download_model(settings.root, uri, settings.path("models") / "registry")
        label = f"{uri} (version {version})"
    model = load_model(model_dir)
    if args.layout is not None:
        layout = None if args.layout == BESIDE_THE_SCAN else Path(args.layout)
        written = digitize_page_file(args.scan, args.out, model, label, settings.infer.tile_width,
                                     settings.infer.tile_overlap, settings.extract, layout, args.qc,
                                     Resampling.from_params(settings.infer), settings.infer.low_confidence)
        return {"las": [str(p) for p in written], "qc": str(args.qc) if args.qc else None, "model": label}
    result = digitize_file(args.scan, args.out, model, label, settings.infer.tile_width,
                           settings.infer.tile_overlap, settings.extract, args.calibration, args.qc,
                           settings.infer.max_height, Resampling.from_params(settings.infer),
                           settings.infer.low_confidence)
    return {"las": str(args.out), "qc": str(args.qc) if args.qc else None, "calibrated": result.calibrated,
            "columns": len(result.depth), "curves": [c.mnemonic for c in result.curves], "model": label}
