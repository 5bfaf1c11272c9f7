"""`veernet review SCAN --accept|--reject [--note TEXT] [--by NAME]`: mark one digitised scan reviewed."""

from __future__ import annotations

import argparse
import getpass
from typing import Any

from veernet_pipeline.config import load_settings
from veernet_pipeline.inference.review import MARKS, MARKS_FILE, append_mark, find_output
from veernet_pipeline.stages.review_queue import digitized_outputs

HELP = ("mark a digitised scan accepted or rejected (appended to data/review/marks.jsonl); "
        "rebuild the queue with `veernet review_queue`")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("scan", help="the scan as data/review/queue.md names it: its path under paths.raw, its LAS "
                                     "path, or its sha256 (8 or more leading hex digits)")
    decision = parser.add_mutually_exclusive_group(required=True)
    decision.add_argument("--accept", dest="decision", action="store_const", const="accept",
                          help="the LAS reads the scan well enough")
    decision.add_argument("--reject", dest="decision", action="store_const", const="reject",
                          help="the LAS is wrong (say why in --note)")
    parser.add_argument("--note", default="", help="why, in words (shown in the queue)")
    parser.add_argument("--by", default=None, help="who reviewed (default: the login name)")


def run(args: argparse.Namespace) -> dict[str, Any]:
    settings = load_settings(args.params, args.profile, args.set)
    try:
        output = find_output(digitized_outputs(settings), args.scan)
    except (LookupError, FileNotFoundError, ValueError) as exc:
        # Refused, with the reason and what to pass instead; nothing is written.
        raise SystemExit(f"veernet review: refused: {exc}") from exc
    marks = settings.path("review") / MARKS_FILE
    mark = append_mark(marks, output, MARKS[args.decision], args.note, args.by or getpass.getuser())
    text = (f"{output['path']} ({mark.las}) marked {mark.mark} by {mark.by} at {mark.at}; appended to {marks}. "
            "Run `veernet review_queue` (or materialise review_queue) to see it in the queue.")
    return {**mark.__dict__, "marks": str(marks), "text": text}
