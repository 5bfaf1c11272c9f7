"""`veernet sample`: write the embedded sample archive into paths.raw if it holds no scan."""

from __future__ import annotations

import argparse
from typing import Any

from veernet_pipeline.config import load_settings
from veernet_pipeline.synthetic.sample import build_sample_archive

HELP = "write the embedded sample archive into paths.raw if it holds no scan"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """No options of its own: paths.raw and the profile come from params.yaml."""


def run(args: argparse.Namespace) -> dict[str, Any]:
    settings = load_settings(args.params, args.profile, args.set)
    raw = settings.path("raw")
    extensions = {e.lower() for e in settings.ingest.extensions}
    existing = [p for p in raw.rglob("*") if p.suffix.lower() in extensions] if raw.exists() else []
    if existing:
        return {"raw": str(raw), "written": 0, "existing_scans": len(existing)}
    written = build_sample_archive(raw, settings)
    return {"raw": str(raw), "written": len(written), "files": [p.name for p in written]}
