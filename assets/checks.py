"""Asset checks: each runs one library check and reports its figures.

pandera and Great Expectations run here, over the files the validate stage wrote, so a check
failure in the UI points at the exact scans and bounds.
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


@asset_check(asset="validated_scans", description="Files in equals validated plus quarantined.")
def scans_accounted_for(pipeline: PipelineResource) -> AssetCheckResult:
    return _result(manifest_accounting(pipeline.settings()))


@asset_check(asset="validated_scans", description="pandera schema from params' bounds holds for every row.")
def validated_scans_schema(pipeline: PipelineResource) -> AssetCheckResult:
    return _result(validated_schema(pipeline.settings()))


@asset_check(asset="validated_scans", description="Great Expectations suite from the same bounds succeeds.")
def validated_scans_expectations(pipeline: PipelineResource) -> AssetCheckResult:
    return _result(validated_expectations(pipeline.settings()))


@asset_check(asset="quarantined_scans", description="Warns while scans wait in quarantine; counts by reason code.")
def quarantine_is_empty(pipeline: PipelineResource) -> AssetCheckResult:
    return _result(quarantine_summary(pipeline.settings()), AssetCheckSeverity.WARN)


@asset_check(asset="binary_model", description="Weights load; output shape equals input shape; logits finite.")
def binary_model_sanity(pipeline: PipelineResource) -> AssetCheckResult:
    return _result(model_sanity(pipeline.settings(), "binary"))


@asset_check(asset="multiclass_model", description="Weights load; output shape equals input shape; logits finite.")
def multiclass_model_sanity(pipeline: PipelineResource) -> AssetCheckResult:
    return _result(model_sanity(pipeline.settings(), "multiclass"))


@asset_check(asset="model_evaluation", description="Median R^2 met the promotion gate (warns when it did not).")
def champion_gate_passed(pipeline: PipelineResource) -> AssetCheckResult:
    return _result(champion_gate(pipeline.settings()), AssetCheckSeverity.WARN)


@asset_check(asset="digitized_logs", description="Every validated scan was written, skipped as done, or recorded.")
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
