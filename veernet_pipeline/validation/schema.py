"""The accepted scan layout, as one list of bounds shared by pandera and Great Expectations.

`bound_rules` turns ``params.yaml``'s ``validate:`` section into `BoundRule` objects. The pandera
schema (`manifest_schema`), the Great Expectations suite (`expectations.build_suite`) and the
quarantine messages are all built from that one list, so they cannot disagree about a bound.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pandera.pandas as pa

from veernet_pipeline.config import ValidateParams
from veernet_pipeline.io.manifest import MANIFEST_DTYPES
from veernet_pipeline.validation.quarantine import ReasonCode


@dataclass(frozen=True)
class BoundRule:
    """One column's accepted values: a closed range, or a set when ``allowed`` is given.

    A size bound checks the size on the net's grid (``net_height``) and names it after the scan's own
    size column (``height``, its `scanned` column), which the message gives as well where the two differ.
    """

    column: str
    reason: ReasonCode
    unit: str
    fix: str
    min_value: int | None = None
    max_value: int | None = None
    allowed: tuple[int, ...] | None = None
    scanned: str | None = None

    def describe(self) -> str:
        """The bound in words, e.g. ``outside 256-1280`` or ``below 1024`` (what a failing value is)."""
        if self.allowed is not None:
            return "not one of " + ", ".join(str(v) for v in self.allowed)
        if self.max_value is None:
            return f"below {self.min_value}"
        return f"outside {self.min_value}-{self.max_value}"

    def message(self, row: Mapping[str, Any]) -> str:
        """Quarantine message for a manifest row: the file, the value, the bound and the fix."""
        unit = f" {self.unit}" if self.unit else ""
        value = row[self.column]
        if self.scanned is None:
            return f"{row['path']}: {self.column} {value}{unit} is {self.describe()}; {self.fix}"
        scanned = row[self.scanned]
        size = f"{value}{unit}" if value == scanned else f"{value}{unit} on the net's grid ({scanned}{unit} as scanned)"
        return f"{row['path']}: {self.scanned} {size} is {self.describe()}; {self.fix}"

    def check(self) -> pa.Check:
        """The pandera check for this bound."""
        if self.allowed is not None:
            return pa.Check.isin(list(self.allowed))
        if self.max_value is None:
            return pa.Check.ge(self.min_value)
        return pa.Check.in_range(self.min_value, self.max_value)


def bound_rules(params: ValidateParams) -> list[BoundRule]:
    """The accepted layout, in the order reasons are reported when a scan misses several.

    Width and height are the landscape sizes, after a portrait scan is rotated, on the grid the net
    reads (``net_width``, ``net_height``: `io.resolution`). These are what inference reads (any
    length, tiled along depth; one track's height), not the synthetic training sizes.
    """
    return [
        BoundRule(
            "net_width", ReasonCode.WIDTH_OUT_OF_RANGE, "px",
            "a strip this short is a fragment, not a log section: check the scan, or change validate.width "
            "in params.yaml",
            min_value=params.width.min, max_value=params.width.max, scanned="width",
        ),
        BoundRule(
            "net_height", ReasonCode.HEIGHT_OUT_OF_RANGE, "px",
            "a scan taller than one track is a whole page: write its page layout (`veernet layout SCAN`) so "
            "ingest cuts it into track strips; a lower one is no track; a scan at another resolution whose TIFF "
            "does not say so: set infer.untagged_dpi; or change validate.height in params.yaml",
            min_value=params.height.min, max_value=params.height.max, scanned="height",
        ),
        BoundRule(
            "bits", ReasonCode.BITS_UNSUPPORTED, "",
            "re-save the scan at an accepted bit depth, or add it to validate.bits in params.yaml",
            allowed=tuple(params.bits),
        ),
        BoundRule(
            "pages", ReasonCode.TOO_MANY_PAGES, "",
            "split the file into single-page TIFFs, one scan each, or raise validate.max_pages to read its first "
            "page only",
            min_value=1, max_value=params.max_pages,
        ),
    ]


def manifest_schema(params: ValidateParams) -> pa.DataFrameSchema:
    """Row-wise schema of a manifest's readable scans.

    Every manifest column gets its dtype; the bounded columns also get their `BoundRule` check.
    Rows with an ingest error are quarantined before this schema runs.

    Args:
        params: the ``validate:`` section of the settings.

    Returns:
        A pandera schema; run it with ``lazy=True`` to collect every failing row.
    """
    checks = {rule.column: rule.check() for rule in bound_rules(params)}
    columns = {
        name: pa.Column(dtype if dtype != "object" else str, checks.get(name), nullable=False)
        for name, dtype in MANIFEST_DTYPES.items()
    }
    return pa.DataFrameSchema(columns, name="manifest", strict=False)
