"""The validate stage: split the manifest into validated and quarantined scans with reason codes."""

from __future__ import annotations

from veernet_pipeline.config import Settings
from veernet_pipeline.stages.cache import StageResult, files_version, flat_counts, run_cached, upstream
from veernet_pipeline.validation.expectations import DOCS_DIR
from veernet_pipeline.validation.validate import QUARANTINE_FILE, REPORT_FILE, VALIDATED_FILE, validate_manifest


def validate(settings: Settings) -> StageResult:
    """Split the manifest into validated and quarantined scans with reason codes."""
    src, out = settings.path("ingested"), settings.path("validated")
    files = {"validated": out / VALIDATED_FILE, "quarantine": out / QUARANTINE_FILE, "report": out / REPORT_FILE,
             "data_docs": out / DOCS_DIR / "index.html"}

    def work(_: str) -> StageResult:
        counts = validate_manifest(src, out, settings.validate_)
        return StageResult("validate", counts=flat_counts(counts), paths={k: str(v) for k, v in files.items()})

    # The Data Docs (and report.json) carry run ids and times: not part of the output's identity.
    return run_cached("validate", settings, [out], {"ingested": upstream(src)}, work,
                      lambda: files_version([files["validated"], files["quarantine"]]))
