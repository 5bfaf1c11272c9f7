"""Asset checks: each runs one library check (`veernet_pipeline.quality`) and reports its figures.

Each tests something the stage before it did not decide, so each can turn red: pandera and Great
Expectations run here over the files the validated rows point at and their pixel statistics, not
over the bounds validation already filtered on; a failure names the scans and what was found.
"""

from __future__ import annotations

from dagster import AssetCheckResult, AssetCheckSeverity, MetadataValue, asset_check

from assets.resources import PipelineResource
from veernet_pipeline.quality import (
    CheckOutcome,
    champion_gate,
    digitized_accounting,
    manifest_accounting,
    model_sanity,
    quarantine_summary,
    validated_expectations,
    validated_schema,
)


def _result(outcome: CheckOutcome, severity: AssetCheckSeverity = AssetCheckSeverity.ERROR) -> AssetCheckResult:
    metadata = {k: MetadataValue.json(v) if isinstance(v, dict | list) else v for k, v in outcome.metadata.items()}
    return AssetCheckResult(passed=outcome.passed, severity=severity, metadata=metadata,
                            description=outcome.description)


@asset_check(asset="validated_scans", description="Every scan file in paths.raw now is validated or quarantined "
             "exactly once; no row whose file left the archive.")
def scans_accounted_for(pipeline: PipelineResource) -> AssetCheckResult:
    return _result(manifest_accounting(pipeline.settings()))


@asset_check(asset="validated_scans", description="pandera on the files rows point at: decoded scan readable, "
             "one uint8 page of the row's landscape shape; path, sha256 unique; sidecar exists.")
def validated_scans_schema(pipeline: PipelineResource) -> AssetCheckResult:
    return _result(validated_schema(pipeline.settings()))


@asset_check(asset="validated_scans", description="Great Expectations on pixel statistics: paper light "
             "(median gray >= 150), ink share 0.5-45 %, no repeated sha256.")
def validated_scans_expectations(pipeline: PipelineResource) -> AssetCheckResult:
    return _result(validated_expectations(pipeline.settings()))


@asset_check(asset="quarantined_scans", description="Warns while scans wait in quarantine; counts by reason code.")
def quarantine_is_empty(pipeline: PipelineResource) -> AssetCheckResult:
    return _result(quarantine_summary(pipeline.settings()), AssetCheckSeverity.WARN)


@asset_check(asset="binary_model", description="Weights load; output shape equals input shape, one curve map; "
             "logits finite.")
def binary_model_sanity(pipeline: PipelineResource) -> AssetCheckResult:
    return _result(model_sanity(pipeline.settings(), "binary"))


@asset_check(asset="multiclass_model", description="Weights load; output shape equals input shape, one map per mask "
             "class; logits finite.")
def multiclass_model_sanity(pipeline: PipelineResource) -> AssetCheckResult:
    return _result(model_sanity(pipeline.settings(), "multiclass"))


@asset_check(asset="model_evaluation", description="Median R^2 met the promotion gate (warns when it did not).")
def champion_gate_passed(pipeline: PipelineResource) -> AssetCheckResult:
    return _result(champion_gate(pipeline.settings()), AssetCheckSeverity.WARN)


@asset_check(asset="digitized_logs", description="Every validated scan indexed once as written or skipped (none "
             "failed), and each LAS it lists exists.")
def every_scan_digitized(pipeline: PipelineResource) -> AssetCheckResult:
    return _result(digitized_accounting(pipeline.settings()))


CHECKS = [
    scans_accounted_for,
    validated_scans_schema,
    validated_scans_expectations,
    quarantine_is_empty,
    binary_model_sanity,
    multiclass_model_sanity,
    champion_gate_passed,
    every_scan_digitized,
]
