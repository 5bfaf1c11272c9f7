"""`veernet layout SCAN... --out DIR`: propose the layout of whole-log pages, as drafts for an operator.

For each page: `DIR/<scan name>.layout.json`, the draft layout with nulls where a person must read
the page (depth values, curve names and scales), and `DIR/<scan name>.layout.png`, the page
reduced for viewing with what was found outlined. A draft already in DIR is never overwritten (an
operator may be filling it in): that page is reported as kept and skipped. A page that cannot
be read is reported with its reason and the others go on. The archive folder is not written to.
"""

from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path
from typing import Any

import numpy as np

from veernet_pipeline.io.atomic import write_text_atomic
from veernet_pipeline.io.tiff import ScanReadError, decode_scan, read_header
from veernet_pipeline.pages.detect import detect_layout
from veernet_pipeline.pages.layout import LAYOUT_SUFFIX
from veernet_pipeline.pages.picture import write_outline_png

HELP = "propose the layout of whole-log pages: a draft JSON to fill in and a picture to check"
PICTURE_SUFFIX = ".layout.png"

logger = logging.getLogger(__name__)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("scans", type=Path, nargs="+", help="whole-log page TIFFs (portrait, depth down the page)")
    parser.add_argument("--out", type=Path, required=True,
                        help="folder for <scan>.layout.json drafts and <scan>.layout.png pictures")


def propose(scan: Path, out_dir: Path) -> dict[str, Any]:
    """Detect one page's layout and write its draft and picture; what was found, for the command's report."""
    draft_path = out_dir / f"{scan.name}{LAYOUT_SUFFIX}"
    if draft_path.exists():
        return {"scan": str(scan), "status": "kept", "draft": str(draft_path),
                "reason": "a draft is already there (delete it to propose again)"}
    header = read_header(scan)
    image = decode_scan(scan)
    # decode_scan turns a portrait page by np.rot90(k=1); layouts speak of the page as stored.
    page = np.ascontiguousarray(np.rot90(image, k=-1)) if header.rotated else image
    found = detect_layout(page)
    draft = found.draft()
    if not header.rotated:
        draft["notes"].insert(0, "the page is stored landscape; a whole-log page is expected portrait (depth down "
                                 "the rows): check the picture")
    write_text_atomic(draft_path, json.dumps(draft, indent=2) + "\n")
    picture = out_dir / f"{scan.name}{PICTURE_SUFFIX}"
    write_outline_png(picture, page, found.outline(), f"{scan.name}: proposed layout (draft)")
    return {"scan": str(scan), "status": "proposed", "draft": str(draft_path), "picture": str(picture),
            "tracks": found.tracks, "depth_column": found.depth_column,
            "sections": [(s.top, s.bottom) for s in found.sections], "skew_deg": found.skew_deg,
            "notes": found.notes}


def run(args: argparse.Namespace) -> dict[str, Any]:
    pages = []
    for scan in args.scans:
        try:
            pages.append(propose(Path(scan), Path(args.out)))
        except (ScanReadError, OSError, ValueError) as exc:
            # One unreadable page is reported with its reason; the others are still laid out.
            logger.warning("%s: no layout proposed: %s", scan, exc)
            pages.append({"scan": str(scan), "status": "failed", "reason": str(exc)})
    counts = {s: sum(p["status"] == s for p in pages) for s in ("proposed", "kept", "failed")}
    return {"pages": pages, "counts": counts}
