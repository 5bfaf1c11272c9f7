"""`veernet <stage>`: one thin command per pipeline stage, plus the demo helpers.

Every stage command loads params.yaml (nearest one, or --params / $VEERNET_PARAMS), applies the
profile (--profile / $VEERNET_PROFILE / the file's `profile`) and any `--set key=value`, calls
the one library function of that stage, and prints its result as JSON. DVC stages call these.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from dataclasses import asdict
from pathlib import Path

from veernet_pipeline import stages
from veernet_pipeline.config import Settings, load_settings

log = logging.getLogger("veernet")


def _settings(args: argparse.Namespace) -> Settings:
    return load_settings(args.params, args.profile, args.set)


def _sample(args: argparse.Namespace) -> dict:
    from veernet_pipeline.synthetic.sample import build_sample_archive

    settings = _settings(args)
    raw = settings.path("raw")
    existing = [p for p in raw.rglob("*") if p.suffix.lower() in (".tif", ".tiff")] if raw.exists() else []
    if existing:
        return {"raw": str(raw), "written": 0, "existing_scans": len(existing)}
    written = build_sample_archive(raw, settings)
    return {"raw": str(raw), "written": len(written), "files": [p.name for p in written]}


def _digitize(args: argparse.Namespace) -> dict:
    from veernet_pipeline.inference.digitize import digitize_file
    from veernet_pipeline.model.veernet import load_model
    from veernet_pipeline.tracking import store

    settings = _settings(args)
    if args.model and Path(args.model).is_dir():
        model_dir, label = Path(args.model), str(Path(args.model).resolve())
    else:
        uri = args.model or settings.infer.model_uri
        model_dir, version = store.download_model(settings.root, uri, settings.path("models") / "registry")
        label = f"{uri} (version {version})"
    result = digitize_file(args.scan, args.out, load_model(model_dir), label, settings.infer.tile_width,
                           settings.infer.tile_overlap, settings.extract, args.calibration, args.qc)
    return {"las": str(args.out), "qc": str(args.qc) if args.qc else None, "calibrated": result.calibrated,
            "columns": len(result.depth), "curves": [c.mnemonic for c in result.curves], "model": label}


def _summary(args: argparse.Namespace) -> dict:
    from veernet_pipeline.report import summarize

    return summarize(_settings(args))


def _run_stage(args: argparse.Namespace) -> dict:
    settings = _settings(args)
    name = args.command
    if name in ("train_binary", "train_multiclass"):
        result = getattr(stages, name)(settings, resume=args.resume)
    elif name == "infer":
        result = stages.infer(settings, model_uri=args.model)
    elif name == "synthesize" and args.preview:
        from veernet_pipeline.synthetic.dataset import preview_sheet

        out = Path(args.preview).resolve()
        result = stages.synthesize(settings)
        preview_sheet(settings.path("synthetic") / "multiclass", out)
        result.paths["preview"] = str(out)
    else:
        result = getattr(stages, name)(settings)
    return asdict(result)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="veernet", description=__doc__.splitlines()[0])
    parser.add_argument("--params", type=Path, help="params.yaml to read (default: nearest, or $VEERNET_PARAMS)")
    parser.add_argument("--profile", help="profile under `profiles:` (default: $VEERNET_PROFILE or the file's)")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="override one parameter, e.g. --set train_binary.epochs=3 (repeatable)")
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    sub = parser.add_subparsers(dest="command", required=True)
    for name, doc in (
        ("ingest", "walk the raw archive: manifest + decoded landscape scans"),
        ("validate", "split scans into validated and quarantined, with reason codes"),
        ("synthesize", "generate the binary and multiclass synthetic sets"),
        ("train_binary", "train the binary VeerNet (curve vs background)"),
        ("train_multiclass", "train the 3-class VeerNet from the binary weights"),
        ("evaluate", "measure the multiclass model on held-out logs; gate the champion alias"),
        ("infer", "digitise every validated scan to LAS + QC PNG"),
    ):
        cmd = sub.add_parser(name, help=doc, description=doc)
        cmd.set_defaults(func=_run_stage)
        if name.startswith("train_"):
            cmd.add_argument("--resume", action="store_true", help="continue from the last checkpoint")
        if name == "infer":
            cmd.add_argument("--model", help="model URI (default: params infer.model_uri)")
        if name == "synthesize":
            cmd.add_argument("--preview", metavar="PNG", help="also write a contact sheet of the multiclass set")
    digitize = sub.add_parser("digitize", help="digitise one scan to a LAS file (outside the pipeline)")
    digitize.add_argument("scan", type=Path, help="a track-strip TIFF")
    digitize.add_argument("--out", type=Path, required=True, help="the LAS file to write")
    digitize.add_argument("--calibration", type=Path,
                          help="sidecar JSON (default: <scan>.calib.json or tranche.calib.json beside it)")
    digitize.add_argument("--model", help="models:/NAME@ALIAS, models:/NAME/VERSION or a folder with weights.pt "
                          "(default: params infer.model_uri)")
    digitize.add_argument("--qc", type=Path, help="also write a QC overlay PNG here")
    digitize.set_defaults(func=_digitize)
    sub.add_parser("sample", help="write the embedded sample archive into paths.raw if it holds no scan"
                   ).set_defaults(func=_sample)
    sub.add_parser("summary", help="print what the last run produced").set_defaults(func=_summary)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.INFO,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s", stream=sys.stderr)
    result = args.func(args)
    print(result["text"] if args.command == "summary" else json.dumps(result, indent=2, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
