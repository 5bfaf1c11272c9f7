"""`veernet digitize SCAN --out OUT.las`: one scan to a LAS file, outside the pipeline."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from veernet_pipeline.config import load_settings
from veernet_pipeline.inference.digitize import digitize_file
from veernet_pipeline.model.veernet import load_model
from veernet_pipeline.tracking import store

HELP = "digitise one scan to a LAS file (outside the pipeline)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("scan", type=Path, help="a track-strip TIFF")
    parser.add_argument("--out", type=Path, required=True, help="the LAS file to write")
    parser.add_argument("--calibration", type=Path,
                        help="sidecar JSON (default: <scan>.calib.json or tranche.calib.json beside it)")
    parser.add_argument("--model", help="models:/NAME@ALIAS, models:/NAME/VERSION or a folder with weights.pt "
                        "(default: params infer.model_uri)")
    parser.add_argument("--qc", type=Path, help="also write a QC overlay PNG here")


def run(args: argparse.Namespace) -> dict[str, Any]:
    settings = load_settings(args.params, args.profile, args.set)
    if args.model and Path(args.model).is_dir():
        model_dir, label = Path(args.model), str(Path(args.model).resolve())
    else:
        uri = args.model or settings.infer.model_uri
        model_dir, version = store.download_model(settings.root, uri, settings.path("models") / "registry")
        label = f"{uri} (version {version})"
    result = digitize_file(args.scan, args.out, load_model(model_dir), label, settings.infer.tile_width,
                           settings.infer.tile_overlap, settings.extract, args.calibration, args.qc,
                           settings.infer.max_height)
    return {"las": str(args.out), "qc": str(args.qc) if args.qc else None, "calibrated": result.calibrated,
            "columns": len(result.depth), "curves": [c.mnemonic for c in result.curves], "model": label}
