"""The content suite: Great Expectations on what validation never filters, the decoded scans' pixels.

Ingest records two statistics per decoded scan (`io.ingest.image_statistics`): ``paper_level``
(median gray) and ``ink_share`` (share of pixels darker than mid-gray). A tranche of negative,
blank or black pages fits every layout bound, so validation accepts it and inference would
digitise it; this suite fails on it. It also expects no two validated rows to hold the same bytes.
"""

from __future__ import annotations

from typing import Any

import great_expectations as gx
import great_expectations.expectations as gxe
import pandas as pd

from veernet_pipeline.validation.expectations import run_suite

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


def content_suite() -> gx.ExpectationSuite:
    """Light paper, a plausible share of ink, and distinct bytes on every row."""
    suite = gx.ExpectationSuite(name=CONTENT_SUITE_NAME)
    suite.add_expectation(gxe.ExpectColumnValuesToBeBetween(column="paper_level", min_value=PAPER_LEVEL_MIN))
    suite.add_expectation(gxe.ExpectColumnValuesToBeBetween(column="ink_share", min_value=INK_SHARE_MIN,
                                                            max_value=INK_SHARE_MAX))
    suite.add_expectation(gxe.ExpectColumnValuesToBeUnique(column="sha256"))
    return suite


def run_content_expectations(df: pd.DataFrame) -> dict[str, Any]:
    """Validate manifest rows of decoded scans (``path``, ``sha256``, ``paper_level``, ``ink_share``).

    Returns:
        `validation.expectations.run_suite`'s report; no reason codes: validation never sets a scan
        aside for its content.
    """
    return run_suite(df, content_suite)
