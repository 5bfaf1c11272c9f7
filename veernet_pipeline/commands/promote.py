"""`veernet promote --model NAME --version N --reason TEXT`: make a model version `champion` by hand."""

from __future__ import annotations

import argparse
import getpass
from typing import Any

from veernet_pipeline.config import load_settings
from veernet_pipeline.tracking.gate import promote
from veernet_pipeline.tracking.store import MULTICLASS_MODEL

HELP = "make a registered model version `champion` by hand, recording who and why in MLflow"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model", default=MULTICLASS_MODEL, help=f"registered model name (default {MULTICLASS_MODEL})")
    parser.add_argument("--version", required=True, help="the version to promote (see `veernet doctor` or mlflow ui)")
    parser.add_argument("--reason", required=True, help="why, in words: kept on the version as `promotion_reason`")
    parser.add_argument("--by", default=None, help="who promotes (default: the login name)")


def run(args: argparse.Namespace) -> dict[str, Any]:
    settings = load_settings(args.params, args.profile, args.set)
    decision = promote(settings.root, args.model, str(args.version), args.reason, args.by or getpass.getuser())
    text = (f"{args.model} version {decision['version']} is now champion "
            f"(was {decision['previous_champion'] or 'none'}); recorded: promoted_by={decision['promoted_by']}, "
            f"promotion_reason={decision['promotion_reason']!r}, promoted_at={decision['promoted_at']}")
    return {**decision, "text": text}
