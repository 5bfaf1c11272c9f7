"""Why a scan is set aside: the reason codes and the quarantine table's columns.

A quarantined scan is never deleted or changed; its row in ``quarantine.parquet`` says what is
wrong (``reason_code``, one of `ReasonCode`) and, in ``reason``, names the file, the bound it
missed and how to fix it, so an operator can repair the input and re-run.
"""

from __future__ import annotations

from enum import StrEnum

from veernet_pipeline.io import scan_errors
from veernet_pipeline.io.manifest import MANIFEST_COLUMNS


class ReasonCode(StrEnum):
    """Quarantine reason codes; the values are what the parquet files and reports hold."""

    # Set by ingest: the file itself could not be read or decoded.
    UNREADABLE = scan_errors.UNREADABLE
    TRUNCATED = scan_errors.TRUNCATED
    UNSUPPORTED = scan_errors.UNSUPPORTED
    TOO_LARGE = scan_errors.TOO_LARGE
    # Set by ingest when the worker reading a file did not come back with a row.
    DECODE_CRASHED = scan_errors.DECODE_CRASHED
    DECODE_TIMEOUT = scan_errors.DECODE_TIMEOUT
    INGEST_ERROR = scan_errors.INGEST_ERROR
    # Set by ingest for a whole-log page whose layout cannot be used (`pages.strips`): one row for the page.
    BAD_LAYOUT = scan_errors.BAD_LAYOUT
    # Set by the schema: the scan's header is outside the accepted layout.
    WIDTH_OUT_OF_RANGE = "width_out_of_range"
    HEIGHT_OUT_OF_RANGE = "height_out_of_range"
    BITS_UNSUPPORTED = "bits_unsupported"
    TOO_MANY_PAGES = "too_many_pages"
    # Within every bound, but ingest (run with other bounds) did not decode it.
    NOT_DECODED = "not_decoded"
    # Set by the cross-row and sidecar checks.
    DUPLICATE = "duplicate"
    BAD_CALIBRATION = "bad_calibration"


QUARANTINE_COLUMNS: tuple[str, ...] = (*MANIFEST_COLUMNS, "reason_code", "reason")
