"""Split the ingest manifest into validated scans and a quarantine, with a report.

Order of checks, first reason wins for a row:

1. an ingest error (unreadable, truncated, unsupported, too_large, decode_crashed, decode_timeout,
   ingest_error; bad_layout for a whole-log page) is quarantined with that code;
2. the pandera schema (`schema.manifest_schema`, lazy) flags scans outside the layout bounds
   (ingest read their headers but did not decode them);
3. a scan within every bound that ingest did not decode (it ran with other bounds) -> ``not_decoded``;
4. a calibration sidecar that `Calibration.from_file` rejects -> ``bad_calibration`` (a page's track strip
   is held to rules 2-5 like any scan, with the sidecar ingest wrote beside it);
5. among the scans still accepted, a repeated sha256 -> ``duplicate`` (the first path is kept).

Duplicates are decided last so that a copy with a good sidecar is kept when the first copy's
sidecar is broken. Nothing is lost: files in == validated + quarantined, checked every run.

The layout suite's results are also written as Great Expectations Data Docs, HTML at
``data_docs/index.html`` in the output folder (`expectations.run_suite`).
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pandas as pd
import pandera.pandas as pa

from veernet_pipeline.config import ValidateParams
from veernet_pipeline.io.atomic import write_parquet_atomic, write_text_atomic
from veernet_pipeline.io.calibration import Calibration, CalibrationError
from veernet_pipeline.io.manifest import MANIFEST_COLUMNS, MANIFEST_FILE, read_manifest, sidecar_path
from veernet_pipeline.validation.expectations import run_expectations
from veernet_pipeline.validation.quarantine import QUARANTINE_COLUMNS, ReasonCode
from veernet_pipeline.validation.schema import bound_rules, manifest_schema

logger = logging.getLogger(__name__)

VALIDATED_FILE = "validated.parquet"
QUARANTINE_FILE = "quarantine.parquet"
REPORT_FILE = "report.json"

Reasons = dict[int, tuple[str, str]]  # manifest index -> (reason code, message)


def _schema_reasons(candidates: pd.DataFrame, params: ValidateParams, source: Path) -> Reasons:
    """Run the pandera schema lazily and turn its failure cases into per-row reasons."""
    try:
        manifest_schema(params).validate(candidates, lazy=True)
        return {}
    except pa.errors.SchemaErrors as exc:
        cases = exc.failure_cases
        if cases["index"].isna().any():
            # A failure without a row is a dtype or missing-column problem: the manifest itself is wrong.
            raise ValueError(f"{source}: manifest does not match the schema ({exc}); re-run the ingest stage") from exc
    rules = bound_rules(params)
    order = {rule.column: i for i, rule in enumerate(rules)}
    messages: dict[int, list[tuple[int, str, str]]] = {}
    for case in cases.itertuples(index=False):
        idx = int(case.index)
        rule = rules[order[case.column]]
        messages.setdefault(idx, []).append((order[case.column], str(rule.reason), rule.message(candidates.loc[idx])))
    reasons: Reasons = {}
    for idx, found in messages.items():
        found.sort()
        reasons[idx] = (found[0][1], "; ".join(m for _, _, m in found))
    return reasons


def _calibration_reasons(rows: pd.DataFrame, raw_dir: Path | None, ingested_dir: Path, source: Path) -> Reasons:
    reasons: Reasons = {}
    for idx, row in rows[rows["calibration"] != ""].iterrows():
        if raw_dir is None:
            raise ValueError(f"{source}: manifest does not record the raw folder; pass raw_dir to validate_manifest")
        sidecar = sidecar_path(row["calibration"], row["page_file"], raw_dir, ingested_dir)
        try:
            Calibration.from_file(sidecar)
        except CalibrationError as exc:
            # The error names the absolute sidecar path; the manifest's relative one is enough here.
            detail = str(exc).removeprefix(f"{sidecar}: ")
            reasons[int(idx)] = (
                str(ReasonCode.BAD_CALIBRATION),
                f"{row['path']}: sidecar {row['calibration']} is unusable ({detail}); fix it or remove it "
                "to digitise in track units",
            )
    return reasons


def _undecoded_reasons(rows: pd.DataFrame) -> Reasons:
    return {int(idx): (str(ReasonCode.NOT_DECODED),
                       f"{row['path']}: within every bound, but ingest did not decode it (it ran with other "
                       "validate bounds); run the ingest stage again")
            for idx, row in rows[rows["decoded"] == ""].iterrows()}


def _duplicate_reasons(rows: pd.DataFrame) -> Reasons:
    first_path = rows.drop_duplicates("sha256").set_index("sha256")["path"]
    reasons: Reasons = {}
    for idx, row in rows[rows["sha256"].duplicated(keep="first")].iterrows():
        kept = first_path[row["sha256"]]
        reasons[int(idx)] = (
            str(ReasonCode.DUPLICATE),
            f"{row['path']}: same bytes (sha256 {row['sha256'][:16]}...) as {kept}, which is kept; remove the copy",
        )
    return reasons


def validate_manifest(
    ingested_dir: Path, out_dir: Path, params: ValidateParams, raw_dir: Path | None = None
) -> dict[str, Any]:
    """Validate the ingest manifest and write the validated set, the quarantine and a report.

    Args:
        ingested_dir: the ingest stage's folder (holds ``manifest.parquet``).
        out_dir: receives ``validated.parquet``, ``quarantine.parquet``, ``report.json`` and the Data
            Docs (``data_docs/``, with the GX project in ``gx/``).
        params: the ``validate:`` section of the settings.
        raw_dir: the archive the sidecar paths are relative to; default the one ingest recorded.

    Returns:
        ``{"files", "validated", "quarantined", "by_reason": {code: count}}``.

    Raises:
        ValueError: the manifest does not match its schema (re-run ingest).
    """
    ingested_dir, out_dir = Path(ingested_dir), Path(out_dir)
    source = ingested_dir / MANIFEST_FILE
    manifest, recorded_raw = read_manifest(ingested_dir)
    manifest = manifest.reset_index(drop=True)
    raw_root = Path(raw_dir) if raw_dir is not None else recorded_raw

    reasons: Reasons = {
        int(idx): (row["error_code"], row["error_message"])
        for idx, row in manifest[manifest["error_code"] != ""].iterrows()
    }
    candidates = manifest[manifest["error_code"] == ""]
    reasons.update(_schema_reasons(candidates, params, source))
    reasons.update(_undecoded_reasons(candidates[~candidates.index.isin(list(reasons))]))
    reasons.update(_calibration_reasons(candidates[~candidates.index.isin(list(reasons))], raw_root, ingested_dir,
                                        source))
    reasons.update(_duplicate_reasons(manifest[~manifest.index.isin(list(reasons))]))

    validated = manifest[~manifest.index.isin(list(reasons))][list(MANIFEST_COLUMNS)]
    order = sorted(reasons)
    quarantine = manifest.loc[order, list(MANIFEST_COLUMNS)].assign(
        reason_code=[reasons[i][0] for i in order], reason=[reasons[i][1] for i in order]
    )[list(QUARANTINE_COLUMNS)].astype({"reason_code": "object", "reason": "object"})
    if len(manifest) != len(validated) + len(quarantine):
        raise AssertionError(
            f"{source}: {len(manifest)} files in but {len(validated)} validated + {len(quarantine)} quarantined"
        )

    by_reason = {str(code): int((quarantine["reason_code"] == code).sum()) for code in ReasonCode}
    counts: dict[str, Any] = {
        "files": len(manifest),
        "validated": len(validated),
        "quarantined": len(quarantine),
        "by_reason": by_reason,
    }
    report = {**counts, "great_expectations": run_expectations(candidates, params, out_dir)}
    write_parquet_atomic(out_dir / VALIDATED_FILE, validated)
    write_parquet_atomic(out_dir / QUARANTINE_FILE, quarantine)
    write_text_atomic(out_dir / REPORT_FILE, json.dumps(report, indent=2, sort_keys=True) + "\n")
    for row in quarantine.itertuples(index=False):
        logger.warning("quarantined %s: %s", row.reason_code, row.reason)
    logger.info("validated %d of %d files, quarantined %d", len(validated), len(manifest), len(quarantine))
    return counts
