"""`veernet <stage>`: one thin command per pipeline stage, plus the commands in `commands/`.

Every stage command loads params.yaml (nearest one, or --params / $VEERNET_PARAMS), applies the
profile (--profile / $VEERNET_PROFILE / the file's `profile`) and any `--set key=value`, calls
the one library function of that stage, and prints its result as JSON. DVC stages call these.
This module is part of every stage's code identity (`stages.cache`): keep it to parsing and
dispatch; other commands live in `commands/`, one module each, found at start-up.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

from veernet_pipeline import commands, stages
from veernet_pipeline.config import load_settings

log = logging.getLogger("veernet")


def _run_stage(args: argparse.Namespace) -> dict[str, Any]:
    settings = load_settings(args.params, args.profile, args.set)
    # Each stage's own options (--resume, --model, --preview), named as its function takes them.
    options = {key: getattr(args, key) for key in ("resume", "model_uri", "preview", "tranche") if hasattr(args, key)}
    return asdict(stages.run(args.command, settings, **options))


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="veernet", description=__doc__.splitlines()[0])
    parser.add_argument("--params", type=Path, help="params.yaml to read (default: nearest, or $VEERNET_PARAMS)")
    parser.add_argument("--profile", help="profile under `profiles:` (default: $VEERNET_PROFILE or the file's)")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="override one parameter, e.g. --set train_binary.epochs=3 (repeatable)")
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    sub = parser.add_subparsers(dest="command", required=True)
    for name, doc in stages.DESCRIPTIONS.items():
        cmd = sub.add_parser(name, help=doc, description=doc)
        cmd.set_defaults(func=_run_stage)
        if name.startswith("train_"):
            cmd.add_argument("--resume", action="store_true", help="continue from the last checkpoint")
        if name in ("ingest", "validate", "infer"):
            cmd.add_argument("--tranche", help="only this top-level folder of paths.raw (`_root`: scans directly in "
                             "it); tables go to paths.tranches/<tranche>/")
        if name == "infer":
            cmd.add_argument("--model", dest="model_uri", help="model URI (default: params infer.model_uri)")
        if name == "synthesize":
            cmd.add_argument("--preview", metavar="PNG", type=Path,
                             help="also write contact sheets: the multiclass set's here, the foreign set's as "
                                  "<PNG stem>-foreign.png")
    for module in commands.discover():
        name = module.__name__.rpartition(".")[2]
        cmd = sub.add_parser(name, help=module.HELP, description=module.HELP)
        module.add_arguments(cmd)
        cmd.set_defaults(func=module.run)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.INFO,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s", stream=sys.stderr)
    result = args.func(args)
    print(result["text"] if "text" in result else json.dumps(result, indent=2, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
