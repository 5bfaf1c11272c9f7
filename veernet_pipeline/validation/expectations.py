"""Great Expectations over manifest rows: the accepted-layout suite, and the runner any suite uses.

The layout suite (`build_suite`, run by `run_expectations`) is built from `schema.bound_rules`,
the same bounds pandera enforces; the validate stage's report uses it to document, per bound, what
was accepted and which scans missed it. `run_suite` runs a suite through a GX checkpoint and
reduces its result to plain JSON types (`json_safe`) for ``report.json`` and Dagster metadata; the
asset checks run their own suites with it (`quality.content`).

Given a folder, `run_suite` keeps a file-backed GX project there (``gx/``: suites, checkpoints,
every run's results) and renders the results as Data Docs, HTML at ``data_docs/index.html`` beside
it, one page per run: the validate stage does this in ``data/validated/``. Without one, the context is
ephemeral and nothing is written. Neither folder is part of the stage's data version (run ids
and timestamps make their bytes differ on every run).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import great_expectations as gx
import great_expectations.expectations as gxe
import pandas as pd
from great_expectations.checkpoint import UpdateDataDocsAction
from great_expectations.data_context.types.base import ProgressBarsConfig

from veernet_pipeline.config import ValidateParams
from veernet_pipeline.io.atomic import json_safe
from veernet_pipeline.validation.schema import BoundRule, bound_rules

SUITE_NAME = "veernet_scan_layout"
DOCS_DIR = "data_docs"
DOCS_SITE = "veernet"

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


def _context(project_dir: Path | None) -> Any:
    """An ephemeral context, or a file-backed one in ``project_dir/gx`` whose only Data Docs site is `DOCS_DIR`."""
    if project_dir is None:
        context = gx.get_context(mode="ephemeral")
    else:
        context = gx.get_context(mode="file", project_root_dir=str(project_dir))
        # GX scaffolds a .gitignore for its uncommitted/ folder; data/ is DVC's, never git's, and
        # DVC's outputs carry no .gitignore of their own (tests/pipeline/test_dvc_pipeline.py).
        (Path(context.root_directory) / ".gitignore").unlink(missing_ok=True)
        for name in list(context.variables.data_docs_sites or {}):
            if name != DOCS_SITE:
                context.delete_data_docs_site(name)
        if DOCS_SITE not in (context.variables.data_docs_sites or {}):
            # Relative to the gx/ folder, so the project does not depend on where the repo lives.
            context.add_data_docs_site(site_name=DOCS_SITE, site_config={
                "class_name": "SiteBuilder", "show_how_to_buttons": False,
                "store_backend": {"class_name": "TupleFilesystemStoreBackend", "base_directory": f"../{DOCS_DIR}"},
                "site_index_builder": {"class_name": "DefaultSiteIndexBuilder"}})
    # Per-metric progress bars would flood the Dagster and CI logs.
    context.variables.progress_bars = ProgressBarsConfig(globally=False, metric_calculations=False)
    return context


def run_suite(df: pd.DataFrame, make_suite: Callable[[], gx.ExpectationSuite],
              project_dir: Path | None = None) -> dict[str, Any]:
    """Run the suite `make_suite` builds on `df`; describe each expectation, in suite order, with the rows it flags.

    The suite is built only once the context exists: GX refuses to build one without an active context.

    Args:
        df: manifest rows; needs ``path`` (to name flagged rows) and the columns the suite reads.
        make_suite: builds the suite; each expectation names one column.
        project_dir: keep a GX project and Data Docs here (module docstring); None = write nothing.

    Returns:
        JSON-serialisable ``{"success", "rows", "suite", "great_expectations_version",
        "statistics", "expectations": [{"expectation", "column", "bound", "success",
        "element_count", "unexpected_count", "unexpected_paths", "unexpected_values"}]}``, and
        ``data_docs`` (the index page, relative to `project_dir`) when Data Docs were written.
    """
    frame = df.reset_index(drop=True)
    context = _context(project_dir)
    suite = context.suites.add_or_update(make_suite())
    asset = context.data_sources.add_or_update_pandas("manifest").add_dataframe_asset("scans")
    batch = asset.add_batch_definition_whole_dataframe("all_rows")
    definition = context.validation_definitions.add_or_update(
        gx.ValidationDefinition(name=suite.name, data=batch, suite=suite))
    actions = [] if project_dir is None else [UpdateDataDocsAction(name="data_docs", site_names=[DOCS_SITE])]
    checkpoint = context.checkpoints.add_or_update(gx.Checkpoint(
        name=suite.name, validation_definitions=[definition], actions=actions, result_format="COMPLETE"))
    (result,) = checkpoint.run(batch_parameters={"dataframe": frame}).run_results.values()
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
    report = {
        "success": bool(result.success),
        "rows": len(frame),
        "suite": suite.name,
        "great_expectations_version": gx.__version__,
        "statistics": dict(result.statistics),
        "expectations": entries,
    }
    if project_dir is not None:
        report["data_docs"] = f"{DOCS_DIR}/index.html"
    return json_safe(report)


def run_expectations(df: pd.DataFrame, params: ValidateParams, project_dir: Path | None = None) -> dict[str, Any]:
    """Validate manifest rows against the layout suite.

    Args:
        df: manifest rows (the readable scans); needs the ``path`` column and the bounded ones.
        params: the ``validate:`` section of the settings.
        project_dir: where to keep the GX project and its Data Docs (`run_suite`); None = nowhere.

    Returns:
        `run_suite`'s report, each expectation also naming the ``reason_code`` its bound quarantines with.
    """
    report = run_suite(df, lambda: build_suite(params), project_dir)
    reasons = {rule.column: str(rule.reason) for rule in bound_rules(params)}
    for entry in report["expectations"]:
        entry["reason_code"] = reasons[entry["column"]]
    return report
