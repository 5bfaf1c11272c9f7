"""What validated rows point at, as a pandera schema: the files on disk now, not the bounds that chose them.

Validation chose its rows from the raw files' headers at ingest time. `file_facts` looks at the
files the rows lead to today, reading only TIFF headers (never pixels, so it stays fast on large
archives), and `files_schema` states what must hold of them:

- the decoded scan opens and its image data lies within the file (`tiff.read_header`; a missing or
  cut-short file fails here, with the reason);
- it is one page of ``uint8`` samples, one per pixel (gray) or three (a colour print kept in colour for
  its pens: `io.scanfile.decode_step`): the pipeline's decoded-scan convention;
- its stored shape equals the row's (height, width), and it is landscape (width >= height);
- ``path`` and ``sha256`` are unique across the rows;
- a ``calibration`` sidecar a row names exists in the archive (a page's strip: beside its decoded copy).

So a decoded scan deleted, truncated or replaced by another image since ingest fails the check.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pandera.pandas as pa

from veernet_pipeline.io.manifest import sidecar_path
from veernet_pipeline.io.tiff import ScanReadError, read_header

# The decoded-scan facts that stay unknown (<NA>) when its header cannot be read; only
# ``decoded_error`` then fails, instead of every fact at once.
_HEADER_FACTS = {"decoded_pages": "Int64", "decoded_samples": "Int64", "decoded_dtype": "string",
                 "decoded_height": "Int64", "decoded_width": "Int64"}


def file_facts(validated: pd.DataFrame, ingested_dir: Path, raw_dir: Path) -> pd.DataFrame:
    """One row of facts per validated row, from its decoded scan's TIFF header and its sidecar.

    Args:
        validated: rows of ``validated.parquet`` (path, sha256, height, width, decoded, calibration).
        ingested_dir: the ingest folder the ``decoded`` paths are relative to.
        raw_dir: the archive the ``calibration`` paths are relative to.

    Returns:
        Columns path, sha256, height, width (the row's), decoded_error ("" when the header reads),
        decoded_pages, decoded_samples, decoded_dtype, decoded_height, decoded_width and
        calibration_found, in the rows' order (index 0..n-1).
    """
    facts: list[dict[str, Any]] = []
    for row in validated.itertuples(index=False):
        fact: dict[str, Any] = {"path": row.path, "sha256": row.sha256, "height": row.height, "width": row.width,
                                "decoded_error": "", **dict.fromkeys(_HEADER_FACTS),
                                "calibration_found": not row.calibration or sidecar_path(
                                    row.calibration, row.page_file, raw_dir, ingested_dir).is_file()}
        if not row.decoded:
            fact["decoded_error"] = f"{row.path}: the row names no decoded scan; re-run the ingest stage"
        else:
            try:
                header = read_header(ingested_dir / row.decoded)
            except ScanReadError as exc:
                fact["decoded_error"] = str(exc)
            else:
                fact.update(decoded_pages=header.pages, decoded_samples=header.samples, decoded_dtype=header.dtype,
                            decoded_height=header.height, decoded_width=header.width)
        facts.append(fact)
    columns = ["path", "sha256", "height", "width", "decoded_error", *_HEADER_FACTS, "calibration_found"]
    frame = pd.DataFrame(facts, columns=columns)
    return frame.astype({"path": "object", "sha256": "object", "height": "int64", "width": "int64",
                         "decoded_error": "object", **_HEADER_FACTS, "calibration_found": "bool"})


def _shape_equals_row(facts: pd.DataFrame) -> pd.Series:
    # An unreadable scan has no shape; decoded_error already fails it.
    same = (facts["decoded_height"] == facts["height"]) & (facts["decoded_width"] == facts["width"])
    return same.fillna(True).astype(bool)


def _landscape(facts: pd.DataFrame) -> pd.Series:
    return (facts["decoded_width"] >= facts["decoded_height"]).fillna(True).astype(bool)


def files_schema() -> pa.DataFrameSchema:
    """The schema of `file_facts` (module docstring); run it with ``lazy=True`` to collect every failure."""
    return pa.DataFrameSchema(
        {
            "path": pa.Column(str, unique=True),
            "sha256": pa.Column(str, unique=True),
            "decoded_error": pa.Column(str, pa.Check(lambda error: error.eq(""), name="is_empty")),
            "decoded_pages": pa.Column("Int64", pa.Check.equal_to(1), nullable=True),
            # One gray sample, or a colour print's three (kept in colour for its pens: io.scanfile.decode_step).
            "decoded_samples": pa.Column("Int64", pa.Check.isin([1, 3]), nullable=True),
            "decoded_dtype": pa.Column("string", pa.Check.equal_to("uint8"), nullable=True),
            "calibration_found": pa.Column(bool, pa.Check.equal_to(True)),
        },
        checks=[pa.Check(_shape_equals_row, name="decoded_shape_equals_row"),
                pa.Check(_landscape, name="decoded_scan_landscape")],
        name="validated_files",
    )


def file_failures(facts: pd.DataFrame) -> list[dict[str, str]]:
    """Every failed (row, check) of `files_schema` on `facts`, as ``{"path", "check", "found"}``; [] when all hold.

    ``found`` says what the file showed: the read error, the value of the failing column, or the
    decoded and expected shapes for the shape checks.
    """
    try:
        files_schema().validate(facts, lazy=True)
        return []
    except pa.errors.SchemaErrors as exc:
        if exc.failure_cases["index"].isna().any():
            # A failure without a row is a missing column or a wrong dtype: a bug in `file_facts`, not in a file.
            raise ValueError(f"file facts do not match their schema: {exc}") from exc
        cases = exc.failure_cases
    failures: dict[tuple[int, str], dict[str, str]] = {}
    for case in cases.itertuples(index=False):
        idx, check = int(case.index), str(case.check)
        fact = facts.loc[idx]
        if case.schema_context == "Column":
            name, found = f"{case.column}: {check}", str(case.failure_case)
        else:
            # A frame-wide check reports each column of a failing row; one entry per row is enough.
            name = check
            found = (f"decoded {fact['decoded_height']} x {fact['decoded_width']} px, "
                     f"row {fact['height']} x {fact['width']} px")
        failures[(idx, name)] = {"path": str(fact["path"]), "check": name, "found": found}
    return [failures[key] for key in sorted(failures)]
