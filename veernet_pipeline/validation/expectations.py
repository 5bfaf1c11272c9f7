"""Great Expectations suites over manifest rows: the accepted layout, and the scans' content.

Two suites, each run in an ephemeral context (nothing written to disk, no project folder), their
results reduced to plain JSON types (`json_safe`) for ``report.json`` and Dagster metadata:

- the layout suite (`build_suite`, run by `run_expectations`) is built from `schema.bound_rules`,
  the same bounds pandera enforces; the validate stage's report uses it to document, per bound,
  what was accepted and which scans missed it;
- the content suite (`content_suite`, run by `run_content_expectations`) looks at what validation
  never filters on: the pixel statistics ingest records per decoded scan (``paper_level``,
  ``ink_share``) and that no two validated rows hold the same bytes. The validated-scans check runs
  it, so it fails on a tranche of negative, blank or black pages that fit every layout bound.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import great_expectations as gx
import great_expectations.expectations as gxe
import pandas as pd
from great_expectations.data_context.types.base import ProgressBarsConfig

from veernet_pipeline.config import ValidateParams
from veernet_pipeline.io.atomic import json_safe
from veernet_pipeline.validation.schema import BoundRule, bound_rules

SUITE_NAME = "veernet_scan_layout"
CONTENT_SUITE_NAME = "veernet_scan_content"

# Paper is light: decoded scans hold ink dark on light paper and the net reads dark as ink, so a
# scan whose median gray is dark is a negative, or a MINISWHITE tag that lies, and would be read as
# one big curve. 750 synthetic renders (test and demo sizes, every style and artefact, uneven
# lighting dimming by up to 20 %) have paper levels of 187 and up; 150 leaves room for yellowed or
# grey paper and stays well above mid-gray (128).
PAPER_LEVEL_MIN = 150
# A track strip is paper with a grid and one or two curves on it. In the same renders the share of
# pixels darker than mid-gray ran from 1.1 % to 34 %. Under 0.5 % the page is (nearly) blank: the
# back of a sheet, an empty track. Over 45 % dark is no longer the exception: a black page or a
# dark border eating the track (past 50 % the median is dark too).
INK_SHARE_MIN = 0.005
INK_SHARE_MAX = 0.45

# This GX module pins its own logger at INFO on import, overriding the package-level WARNING set in
# `veernet_pipeline.validation`; without this every run logs a temporary docs-site folder.
logging.getLogger("great_expectations.data_context.types.base").setLevel(logging.WARNING)


def _expectation(rule: BoundRule) -> gxe.Expectation:
    if rule.allowed is not None:
        return gxe.ExpectColumnValuesToBeInSet(column=rule.column, value_set=list(rule.allowed))
    return gxe.ExpectColumnValuesToBeBetween(column=rule.column, min_value=rule.min_value, max_value=rule.max_value)


def build_suite(params: ValidateParams) -> gx.ExpectationSuite:
    """The layout suite: one expectation per `BoundRule`, in rule order."""
    suite = gx.ExpectationSuite(name=SUITE_NAME)
    for rule in bound_rules(params):
        suite.add_expectation(_expectation(rule))
    return suite


def content_suite() -> gx.ExpectationSuite:
    """The content suite: light paper, a plausible share of ink, and distinct bytes on every row."""
    suite = gx.ExpectationSuite(name=CONTENT_SUITE_NAME)
    suite.add_expectation(gxe.ExpectColumnValuesToBeBetween(column="paper_level", min_value=PAPER_LEVEL_MIN))
    suite.add_expectation(gxe.ExpectColumnValuesToBeBetween(column="ink_share", min_value=INK_SHARE_MIN,
                                                            max_value=INK_SHARE_MAX))
    suite.add_expectation(gxe.ExpectColumnValuesToBeUnique(column="sha256"))
    return suite


def _report(df: pd.DataFrame, make_suite: Callable[[], gx.ExpectationSuite]) -> dict[str, Any]:
    """Run the suite `make_suite` builds on `df`; describe each expectation, in suite order, with the rows it flags.

    The suite is built only once the context exists: GX refuses to build one without an active context.
    """
    frame = df.reset_index(drop=True)
    context = gx.get_context(mode="ephemeral")
    # Per-metric progress bars would flood the Dagster and CI logs.
    context.variables.progress_bars = ProgressBarsConfig(globally=False, metric_calculations=False)
    suite = make_suite()
    asset = context.data_sources.add_pandas("manifest").add_dataframe_asset("scans")
    batch = asset.add_batch_definition_whole_dataframe("all_rows").get_batch(batch_parameters={"dataframe": frame})
    result = batch.validate(suite, result_format="COMPLETE")
    # Match results to the suite by (type, column): GX does not promise to keep the suite's order.
    by_key = {(item.expectation_config.type, item.expectation_config.kwargs["column"]): item for item in result.results}
    entries = []
    for expectation in suite.expectations:
        item = by_key[(expectation.expectation_type, expectation.column)]
        detail = item.result
        unexpected_rows = [int(i) for i in detail.get("unexpected_index_list") or []]
        kwargs = item.expectation_config.kwargs
        entries.append({
            "expectation": item.expectation_config.type,
            "column": expectation.column,
            "bound": {k: kwargs[k] for k in ("min_value", "max_value", "value_set") if kwargs.get(k) is not None},
            "success": bool(item.success),
            "element_count": int(detail.get("element_count") or 0),
            "unexpected_count": int(detail.get("unexpected_count") or 0),
            "unexpected_paths": [str(frame.at[i, "path"]) for i in unexpected_rows],
            "unexpected_values": detail.get("unexpected_list") or [],
        })
    return json_safe({
        "success": bool(result.success),
        "rows": len(frame),
        "suite": suite.name,
        "great_expectations_version": gx.__version__,
        "statistics": dict(result.statistics),
        "expectations": entries,
    })


def run_expectations(df: pd.DataFrame, params: ValidateParams) -> dict[str, Any]:
    """Validate manifest rows against the layout suite.

    Args:
        df: manifest rows (the readable scans); needs the ``path`` column and the bounded ones.
        params: the ``validate:`` section of the settings.

    Returns:
        JSON-serialisable ``{"success", "rows", "suite", "great_expectations_version",
        "statistics", "expectations": [{"expectation", "column", "bound", "reason_code",
        "success", "element_count", "unexpected_count", "unexpected_paths",
        "unexpected_values"}]}``.
    """
    report = _report(df, lambda: build_suite(params))
    reasons = {rule.column: str(rule.reason) for rule in bound_rules(params)}
    for entry in report["expectations"]:
        entry["reason_code"] = reasons[entry["column"]]
    return report


def run_content_expectations(df: pd.DataFrame) -> dict[str, Any]:
    """Validate manifest rows against the content suite.

    Args:
        df: manifest rows of decoded scans; needs ``path``, ``sha256``, ``paper_level``, ``ink_share``.

    Returns:
        The same JSON-serialisable layout as `run_expectations`, without ``reason_code``: validation
        never sets a scan aside for its content, so there is no quarantine reason to name.
    """
    return _report(df, content_suite)
