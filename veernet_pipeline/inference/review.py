"""The review queue: digitised scans ranked for review (identities in doubt, then least-confident first), and marks.

The queue is built from the digitised indexes (`inference.archive`: the whole archive's and each
tranche's), one row per output (LAS path; a scan in two indexes under the same output counts once),
failed scans left out (they have no LAS; they are in `failures.parquet`). Rows are ordered:

1. unreviewed outputs before those with a mark (accepted or rejected);
2. outputs with curves drawn alike (`alike_curves` > 0: one style and pen for two or more curves of
   the track) before the others: which of them is which mnemonic rests on their lines' continuity
   alone, which a confident reading does not vouch for (on the own test split of 2026-12-06, logs
   with such curves held a curve under R² 0.5 in 20 of 32, the others in 33 of 136;
   docs/accuracy.md, "Curves drawn alike first in the review queue"); with them, outputs with curves
   that took another line than the net named by the length of its dashes (`exchanged_curves` > 0,
   `reading.dashes`): their identities rest on that rule, and the net's confidence is for the line
   under the style it named. An output whose LAS predates a count (NaN) ranks as one without;
3. `conf_median` ascending: the scan whose curves are less sure over half their columns comes first.
   Not `conf_p10`: a broken style's gaps are bridged columns of confidence 0, so `conf_p10` is 0 on
   most scans with a dashed or dotted curve (146 of 168 own test logs) and decides nothing there
   (docs/accuracy.md, same section: chosen on val, as good on test, better on the foreign set);
4. `conf_p10` ascending, `low_conf_share` descending, then `null_share` descending;
5. the LAS path, so equal figures still give one order.

`ORDER` holds steps 2-4, so a benchmark can rank by another order with the same code.

A missing confidence figure (a scan where no curve was read) ranks as least confident: first within its group.

Marks live in an append-only JSON-lines file (`MARKS_FILE`), one object per mark (the scan's
sha256, its LAS path, the mark, a note, who, UTC time), never rewritten: the log is the record of
who decided what. A mark is keyed by the LAS path, which holds the scan's content hash, the model
name and version, the extraction parameters and the sidecar's hash (`archive.output_paths`). So a
mark survives every rerun of infer and of the queue that keeps that output, while a new model or a
corrected sidecar makes a new output that needs its own review. The latest mark of an output wins.
"""

from __future__ import annotations

import io
import json
import logging
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pandas as pd
from PIL import Image

from veernet_pipeline.reading.confidence import ALIKE, EXCHANGED, FIGURES

log = logging.getLogger(__name__)

MARKS_FILE = "marks.jsonl"
QUEUE_FILE = "queue.parquet"
QUEUE_MD = "queue.md"
MARKS = {"accept": "accepted", "reject": "rejected"}
# The order after unreviewed-first (module docstring, steps 2-4): (column, ascending); `_doubt` = identities in doubt
# (curves drawn alike, or lines given by dash length).
ORDER: tuple[tuple[str, bool], ...] = (("_doubt", False), ("conf_median", True), ("conf_p10", True),
                                       ("low_conf_share", False), ("null_share", False))
# What ranking and display read from each index; an index without them cannot be queued.
REQUIRED_COLUMNS = ("path", "sha256", "las", "qc", "status", ALIKE, EXCHANGED, *FIGURES)
QUEUE_COLUMNS = ("rank", "path", "sha256", "las", "qc", ALIKE, EXCHANGED, *FIGURES, "mark", "note", "marked_by",
                 "marked_at")


@dataclass(frozen=True)
class Mark:
    """One reviewer's decision on one output."""

    sha256: str
    las: str
    mark: str
    note: str
    by: str
    at: str


def read_indexes(paths: Iterable[Path]) -> pd.DataFrame:
    """The digitised outputs of these index files, one row per LAS path (first index wins), failed ones left out.

    Raises:
        ValueError: an index lacks a column the queue needs; the message names the file and the columns.
    """
    frames = []
    for path in paths:
        frame = pd.read_parquet(path)
        missing = [c for c in REQUIRED_COLUMNS if c not in frame.columns]
        if missing:
            raise ValueError(f"{path}: index lacks the column(s) {', '.join(missing)} the review queue ranks and "
                             "shows; it was written by an older infer: run `veernet infer` (or materialise "
                             "digitized_logs) again to rewrite it")
        frames.append(frame.loc[frame["status"] != "failed", list(REQUIRED_COLUMNS)])
    if not frames:
        return pd.DataFrame(columns=list(REQUIRED_COLUMNS))
    return pd.concat(frames, ignore_index=True).drop_duplicates(subset="las", keep="first").reset_index(drop=True)


def read_marks(path: Path) -> dict[str, Mark]:
    """The latest mark of each LAS path in a marks log (empty when there is none).

    A line that is not a whole mark (a write cut short by a crash) is skipped with a warning naming
    the file and line: the other marks still count.
    """
    path = Path(path)
    latest: dict[str, Mark] = {}
    if not path.is_file():
        return latest
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        if not line.strip():
            continue
        try:
            mark = Mark(**json.loads(line))
        except (json.JSONDecodeError, TypeError) as exc:
            log.warning("%s line %d: not a mark (%s); skipped", path, number, exc)
            continue
        latest[mark.las] = mark
    return latest


def rank_queue(outputs: pd.DataFrame, marks: dict[str, Mark],
               order: tuple[tuple[str, bool], ...] = ORDER) -> pd.DataFrame:
    """The outputs in review order (module docstring; `order` = its steps 2-4) with each one's latest mark and a
    1-based `rank`."""
    queue = outputs.copy()
    latest = [marks.get(las) for las in queue["las"]]
    queue["mark"] = [m.mark if m else "" for m in latest]
    queue["note"] = [m.note if m else "" for m in latest]
    queue["marked_by"] = [m.by if m else "" for m in latest]
    queue["marked_at"] = [m.at if m else "" for m in latest]
    queue["_reviewed"] = queue["mark"] != ""
    queue["_doubt"] = (queue[ALIKE] > 0) | (queue[EXCHANGED] > 0)  # NaN (not known) compares False
    queue = queue.sort_values(["_reviewed", *(column for column, _ in order), "las"],
                              ascending=[True, *(ascending for _, ascending in order), True], na_position="first",
                              kind="mergesort")
    queue.insert(0, "rank", range(1, len(queue) + 1))
    return queue[list(QUEUE_COLUMNS)].reset_index(drop=True)


def find_output(outputs: pd.DataFrame, scan: str) -> pd.Series:
    """The one output `scan` names: a scan path as the index holds it, a LAS path, or a sha256 (or its prefix).

    Raises:
        LookupError: no output, or several (then pass the LAS path of the one meant).
    """
    text = scan.strip()
    hits = outputs[(outputs["path"] == text) | (outputs["las"] == text)
                   | ((len(text) >= 8) & outputs["sha256"].str.startswith(text.lower()))]
    if hits.empty:
        raise LookupError(f"{scan!r}: no digitised scan of that path, LAS path or sha256 in the index(es); a mark is "
                          "only for a scan infer has digitised (see data/review/queue.md for the names)")
    if len(hits) > 1:
        listed = "\n  ".join(hits["las"])
        raise LookupError(f"{scan!r} names {len(hits)} outputs (other models or sidecars); pass the LAS path of the "
                          f"one you reviewed:\n  {listed}")
    return hits.iloc[0]


def append_mark(path: Path, output: pd.Series, decision: str, note: str, by: str) -> Mark:
    """Append one mark for `output` (an index row) to the log at `path`; return it.

    The log is opened for appending and each mark written as one line and synced: earlier lines
    are never rewritten (an atomic replace would rewrite the whole log).
    """
    if decision not in MARKS.values():
        raise ValueError(f"mark {decision!r}: one of {sorted(MARKS.values())}")
    mark = Mark(sha256=str(output["sha256"]), las=str(output["las"]), mark=decision, note=note, by=by,
                at=datetime.now(UTC).isoformat(timespec="seconds"))
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(mark.__dict__, sort_keys=True) + "\n")
        handle.flush()
        os.fsync(handle.fileno())
    return mark


def thumbnail_png(path: Path, size: tuple[int, int] = (480, 96)) -> bytes:
    """A small PNG of a QC picture, at most `size` (width, height) with its aspect kept."""
    with Image.open(path) as image:
        image.thumbnail(size)
        buffer = io.BytesIO()
        image.save(buffer, format="PNG", optimize=True)
    return buffer.getvalue()


def _figure(value: Any) -> str:
    return "n/a" if pd.isna(value) else f"{float(value):.3f}"


def queue_markdown(queue: pd.DataFrame, top_n: int, picture: Callable[[str], str]) -> str:
    """The first `top_n` rows of a ranked queue as a markdown table.

    Args:
        queue: `rank_queue`'s frame.
        top_n: rows shown.
        picture: a QC path (relative to the digitised folder) -> the markdown of its picture cell.
    """
    unreviewed = int((queue["mark"] == "").sum())
    shown = min(top_n, len(queue))
    lines = [f"Review queue: {len(queue)} digitised scans, {unreviewed} unreviewed; the first {shown}: scans with "
             "curves drawn alike (alike_curves > 0: which is which rests on their lines' continuity) or given "
             "their lines by dash length against the net's styles (exchanged_curves > 0) first, then by least "
             "confidence (conf_median, then conf_p10 ascending; low_conf_share and null_share "
             "descending). In the QC pictures, gold dots mark the columns read on ink below infer.low_confidence: "
             "faint or contested ink, or a curve copying another's line.",
             "", "| rank | scan | LAS | alike_curves | exchanged_curves | conf_median | conf_p10 | null_share "
             "| low_conf_share | mark | QC |",
             "|---:|---|---|---:|---:|---:|---:|---:|---:|---|---|"]
    for row in queue.head(top_n).itertuples(index=False):
        mark = f"{row.mark} by {row.marked_by}" + (f": {row.note}" if row.note else "") if row.mark else "unreviewed"
        counts = ["n/a" if pd.isna(getattr(row, name)) else str(int(getattr(row, name))) for name in (ALIKE, EXCHANGED)]
        figures = " | ".join([*counts, *(_figure(getattr(row, name)) for name in FIGURES)])
        lines.append(f"| {row.rank} | `{row.path}` | `{row.las}` | {figures} | {mark.replace('|', '/')} "
                     f"| {picture(row.qc)} |")
    return "\n".join(lines) + "\n"
