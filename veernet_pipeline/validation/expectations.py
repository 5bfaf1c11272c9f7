"""Great Expectations report of the accepted scan layout.

The suite is built from `schema.bound_rules`, the same bounds pandera enforces, and run in an
ephemeral context (nothing written to disk, no project folder). Its result is reduced to plain
JSON types so it can go into ``report.json`` and Dagster metadata; it documents, per bound, what
was accepted and which scans missed it.
"""

from __future__ import annotations

import logging
from typing import Any

import great_expectations as gx
import great_expectations.expectations as gxe
import pandas as pd
from great_expectations.data_context.types.base import ProgressBarsConfig

from veernet_pipeline.config import ValidateParams
from veernet_pipeline.validation.schema import BoundRule, bound_rules

SUITE_NAME = "veernet_scan_layout"

# This GX module pins its own logger at INFO on import, overriding the package-level WARNING set in
# `veernet_pipeline.validation`; without this every run logs a temporary docs-site folder.
logging.getLogger("great_expectations.data_context.types.base").setLevel(logging.WARNING)


def _expectation(rule: BoundRule) -> gxe.Expectation:
    if rule.allowed is not None:
        return gxe.ExpectColumnValuesToBeInSet(column=rule.column, value_set=list(rule.allowed))
    return gxe.ExpectColumnValuesToBeBetween(column=rule.column, min_value=rule.min_value, max_value=rule.max_value)


def build_suite(params: ValidateParams) -> gx.ExpectationSuite:
    """One expectation per `BoundRule`, in rule order."""
    suite = gx.ExpectationSuite(name=SUITE_NAME)
    for rule in bound_rules(params):
        suite.add_expectation(_expectation(rule))
    return suite


def _plain(value: Any) -> Any:
    """numpy scalars -> Python scalars, recursively, so json.dumps accepts the result."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if hasattr(value, "item") and callable(value.item):
        return value.item()
    return value


def run_expectations(df: pd.DataFrame, params: ValidateParams) -> dict[str, Any]:
    """Validate a manifest frame against the layout suite.

    Args:
        df: manifest rows (the readable scans); needs the ``path`` column and the bounded ones.
        params: the ``validate:`` section of the settings.

    Returns:
        JSON-serialisable ``{"success", "rows", "suite", "great_expectations_version",
        "statistics", "expectations": [{"expectation", "column", "bound", "reason_code",
        "success", "element_count", "unexpected_count", "unexpected_paths",
        "unexpected_values"}]}``.
    """
    frame = df.reset_index(drop=True)
    context = gx.get_context(mode="ephemeral")
    # Per-metric progress bars would flood the Dagster and CI logs.
    context.variables.progress_bars = ProgressBarsConfig(globally=False, metric_calculations=False)
    asset = context.data_sources.add_pandas("manifest").add_dataframe_asset("scans")
    batch = asset.add_batch_definition_whole_dataframe("all_rows").get_batch(batch_parameters={"dataframe": frame})
    result = batch.validate(build_suite(params), result_format="COMPLETE")
    # Match results to rules by column: GX does not promise to keep the suite's order.
    by_column = {item.expectation_config.kwargs["column"]: item for item in result.results}
    entries = []
    for rule in bound_rules(params):
        item = by_column[rule.column]
        detail = item.result
        unexpected_rows = [int(i) for i in detail.get("unexpected_index_list") or []]
        kwargs = item.expectation_config.kwargs
        entries.append({
            "expectation": item.expectation_config.type,
            "column": rule.column,
            "bound": {k: kwargs[k] for k in ("min_value", "max_value", "value_set") if k in kwargs},
            "reason_code": str(rule.reason),
            "success": bool(item.success),
            "element_count": int(detail.get("element_count") or 0),
            "unexpected_count": int(detail.get("unexpected_count") or 0),
            "unexpected_paths": [str(frame.at[i, "path"]) for i in unexpected_rows],
            "unexpected_values": detail.get("unexpected_list") or [],
        })
    report = {
        "success": bool(result.success),
        "rows": len(frame),
        "suite": SUITE_NAME,
        "great_expectations_version": gx.__version__,
        "statistics": dict(result.statistics),
        "expectations": entries,
    }
    return _plain(report)
