"""Checks on the scans: the archive against the validate stage's tables, the validated files, quarantine.

Each tests what validation did not itself decide, so each can fail on rows it accepted:

- `manifest_accounting`: the archive on disk, walked as ingest walks it, against validated +
  quarantined rows (a scan added or removed after ingest, a row lost or written twice);
- `validated_schema`: the files the validated rows point at (`quality.files`, pandera);
- `validated_expectations`: the validated scans' pixel statistics (`quality.content`, Great Expectations);
- `quarantine_summary`: what waits in quarantine, by reason.
"""

from __future__ import annotations

import json
from collections import Counter

import pandas as pd

from veernet_pipeline.config import Settings
from veernet_pipeline.io.ingest import scan_files
from veernet_pipeline.io.tranches import archive_dirs
from veernet_pipeline.quality.outcome import (
    LISTED,
    QUARANTINE,
    CheckOutcome,
    accounting,
    read_table,
    validated_rows,
)


def manifest_accounting(settings: Settings, tranche: str | None = None) -> CheckOutcome:
    """Every scan file in the archive is in validated or quarantine exactly once, and every row's file is there.

    The archive is walked with ingest's own `scan_files` (``ingest.extensions``, case-insensitive), not
    read from the manifest, so this fails when a scan was added to or removed from `paths.raw` after
    ingest, or when a row is missing from both tables or appears twice across them. A whole-log page
    counts as its file through its strips' ``page_file``. With `tranche`,
    that tranche's files against that tranche's tables.
    """
    raw = settings.path("raw")
    on_disk = {p.relative_to(raw).as_posix() for p in scan_files(raw, settings.ingest.extensions, tranche)}
    validated = validated_rows(settings, tranche)
    quarantined = read_table(archive_dirs(settings, tranche).validated / QUARANTINE, "quarantined_scans")
    rows = pd.concat([validated[["path", "page_file"]], quarantined[["path", "page_file"]]], ignore_index=True)
    # A whole-log page's rows are its track strips (or one bad_layout row): the page's file is `page_file`.
    listed = set(rows["path"][rows["page_file"] == ""]) | set(rows["page_file"][rows["page_file"] != ""])
    times = rows["path"].value_counts()
    problems = {
        "archive_files_in_neither_table": list(on_disk - listed),
        "rows_listed_twice": list(times[times > 1].index),
        "rows_whose_file_left_the_archive": list(listed - on_disk),
    }
    counts = {"archive": len(on_disk), "validated": len(validated), "quarantined": len(quarantined)}
    return accounting(counts, problems,
                       f"{len(on_disk)} scans in {raw} = {len(validated)} validated + {len(quarantined)} quarantined",
                       "materialise raw_scans and validated_scans again to account for the archive as it is")


def validated_schema(settings: Settings, tranche: str | None = None) -> CheckOutcome:
    """The pandera schema of `quality.files` holds for the files every validated row points at."""
    from veernet_pipeline.quality.files import file_facts, file_failures

    validated = validated_rows(settings, tranche)
    failures = file_failures(file_facts(validated, archive_dirs(settings, tranche).ingested, settings.path("raw")))
    if not failures:
        return CheckOutcome(True, f"{len(validated)} validated scans: each decoded file readable, one uint8 page of "
                                  "the row's landscape shape; paths and hashes unique; sidecars present",
                            {"rows": len(validated)})
    by_check = dict(Counter(f["check"] for f in failures))
    scans = len({f["path"] for f in failures})
    return CheckOutcome(False, f"{scans} of {len(validated)} validated scans fail: {json.dumps(by_check)}",
                        {"rows": len(validated), "by_check": by_check, "failures": failures[:LISTED]})


def validated_expectations(settings: Settings, tranche: str | None = None) -> CheckOutcome:
    """The Great Expectations content suite (light paper, plausible ink share, unique bytes) on validated scans."""
    from veernet_pipeline.quality.content import run_content_expectations

    validated = validated_rows(settings, tranche)
    result = run_content_expectations(validated)
    failed = [{**{k: e[k] for k in ("column", "expectation", "bound", "unexpected_count")},
               "unexpected_paths": e["unexpected_paths"][:LISTED], "unexpected_values": e["unexpected_values"][:LISTED]}
              for e in result["expectations"] if not e["success"]]
    total = len(result["expectations"])
    description = f"{total - len(failed)}/{total} content expectations met on {result['rows']} validated scans"
    if failed:
        description += ": " + "; ".join(f"{e['column']} {json.dumps(e['bound'])} missed by {e['unexpected_count']}"
                                        if e["bound"] else f"{e['column']} repeated in {e['unexpected_count']}"
                                        for e in failed)
    return CheckOutcome(bool(result["success"]), description, {"rows": result["rows"], "failed": failed})


def quarantine_summary(settings: Settings, tranche: str | None = None) -> CheckOutcome:
    """Passes only when nothing waits in quarantine; the figures say why scans were rejected."""
    quarantined = read_table(archive_dirs(settings, tranche).validated / QUARANTINE, "quarantined_scans")
    by_reason = {str(k): int(v) for k, v in quarantined["reason_code"].value_counts().items()}
    return CheckOutcome(quarantined.empty, f"{len(quarantined)} scans in quarantine",
                        {"quarantined": len(quarantined), "by_reason": by_reason,
                         "files": quarantined["path"].tolist()[:50]})
