"""The review_queue stage: every digitised scan ranked for review (`inference.review`), with its latest mark.

Reads the whole archive's index (`paths.digitized/index.parquet`, what `veernet infer` and
`dvc repro` write) and each tranche's (`paths.tranches/<tranche>/digitized/index.parquet`, what
Dagster's partitioned runs write), and the reviewers' marks (`paths.review/marks.jsonl`, appended
by `veernet review`). Writes `queue.parquet` (every output) and `queue.md` (the first
`review.top_n`, QC pictures linked relative to the file). Ranking and marks:
`inference.review`.
"""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd

from veernet_pipeline.config import Settings
from veernet_pipeline.inference.archive import INDEX_FILE
from veernet_pipeline.inference.review import (
    MARKS,
    MARKS_FILE,
    QUEUE_FILE,
    QUEUE_MD,
    queue_markdown,
    rank_queue,
    read_indexes,
    read_marks,
)
from veernet_pipeline.io.atomic import write_parquet_atomic, write_text_atomic
from veernet_pipeline.io.tranches import archive_dirs, run_tranches
from veernet_pipeline.provenance import digest, file_sha256
from veernet_pipeline.reading.confidence import ALIKE, EXCHANGED
from veernet_pipeline.stages.cache import StageResult, files_version, run_cached


def index_files(settings: Settings) -> list[Path]:
    """The digitised indexes on disk: the whole archive's first, then each tranche's by name."""
    candidates = [archive_dirs(settings, None).index / INDEX_FILE]
    candidates += [archive_dirs(settings, t).index / INDEX_FILE for t in run_tranches(settings)]
    return [path for path in candidates if path.is_file()]


def digitized_outputs(settings: Settings) -> pd.DataFrame:
    """Every digitised output of the indexes on disk, one row per LAS path (`inference.review.read_indexes`).

    Raises:
        FileNotFoundError: no digitised index yet; run infer first.
        ValueError: an index lacks a column the queue needs.
    """
    indexes = index_files(settings)
    if not indexes:
        raise FileNotFoundError(f"no digitised index under {settings.path('digitized')} or "
                                f"{settings.path('tranches')}/<tranche>/digitized: run `veernet infer` "
                                "(or materialise digitized_logs) first")
    return read_indexes(indexes)


def review_queue(settings: Settings) -> StageResult:
    """Rank every digitised scan for review and write `queue.parquet` and `queue.md`."""
    out = settings.path("review")
    marks = out / MARKS_FILE
    outputs = [out / QUEUE_FILE, out / QUEUE_MD]
    digitized = digitized_outputs(settings)
    # The inputs are the outputs' rows (not the index files' bytes: a rerun of infer that only turns
    # `written` into `skipped` changes nothing here) and the marks: a new mark rebuilds the queue.
    inputs = {"outputs": digest(digitized.drop(columns="status").to_dict("records")),
              "marks": file_sha256(marks)[0] if marks.is_file() else None}

    def work(_: str) -> StageResult:
        queue = rank_queue(digitized, read_marks(marks))
        write_parquet_atomic(outputs[0], queue)
        # The QC pictures sit under paths.digitized; link them relative to queue.md so the file opens anywhere.
        pictures = os.path.relpath(settings.path("digitized"), out)
        write_text_atomic(outputs[1], queue_markdown(queue, settings.review.top_n,
                                                     lambda qc: f"![QC]({pictures}/{qc})"))
        counts = {"queued": len(queue), "unreviewed": int((queue["mark"] == "").sum())}
        counts.update({mark: int((queue["mark"] == mark).sum()) for mark in MARKS.values()})
        counts["drawn_alike"] = int((queue[ALIKE] > 0).sum())  # scans whose identities rest on continuity alone
        counts["dash_exchanged"] = int((queue[EXCHANGED] > 0).sum())  # ... or on the dash-length rule
        return StageResult("review_queue", counts=counts,
                           paths={"queue": str(outputs[0]), "queue_md": str(outputs[1]), "marks": str(marks)})

    out.mkdir(parents=True, exist_ok=True)
    return run_cached("review_queue", settings, [out], inputs, work, lambda: files_version(outputs))
