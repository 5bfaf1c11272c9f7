"""The accepted scan layout, as one list of bounds shared by pandera and Great Expectations.

`bound_rules` turns ``params.yaml``'s ``validate:`` section into `BoundRule` objects. The pandera
schema (`manifest_schema`), the Great Expectations suite (`expectations.build_suite`) and the
quarantine messages are all built from that one list, so they cannot disagree about a bound.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandera.pandas as pa

from veernet_pipeline.config import ValidateParams
from veernet_pipeline.io.ingest import MANIFEST_DTYPES
from veernet_pipeline.validation.quarantine import ReasonCode


@dataclass(frozen=True)
class BoundRule:
    """One column's accepted values: a closed range, or a set when ``allowed`` is given."""

    column: str
    reason: ReasonCode
    unit: str
    fix: str
    min_value: int | None = None
    max_value: int | None = None
    allowed: tuple[int, ...] | None = None

    def describe(self) -> str:
        """The bound in words, e.g. ``outside 3200-12800`` (what a failing value is)."""
        if self.allowed is not None:
            return "not one of " + ", ".join(str(v) for v in self.allowed)
        return f"outside {self.min_value}-{self.max_value}"

    def message(self, path: str, value: object) -> str:
        """Quarantine message naming the file, the value, the bound and the fix."""
        unit = f" {self.unit}" if self.unit else ""
        return f"{path}: {self.column} {value}{unit} is {self.describe()}; {self.fix}"

    def check(self) -> pa.Check:
        """The pandera check for this bound."""
        if self.allowed is not None:
            return pa.Check.isin(list(self.allowed))
        return pa.Check.in_range(self.min_value, self.max_value)


def bound_rules(params: ValidateParams) -> list[BoundRule]:
    """The accepted layout, in the order reasons are reported when a scan misses several.

    Width and height are the landscape sizes, after a portrait scan is rotated.
    """
    return [
        BoundRule(
            "width", ReasonCode.WIDTH_OUT_OF_RANGE, "px",
            "crop or tile the scan along depth to fit, or change validate.width in params.yaml",
            min_value=params.width.min, max_value=params.width.max,
        ),
        BoundRule(
            "height", ReasonCode.HEIGHT_OUT_OF_RANGE, "px",
            "cut the scan into single tracks by pixel bounds, or change validate.height in params.yaml",
            min_value=params.height.min, max_value=params.height.max,
        ),
        BoundRule(
            "bits", ReasonCode.BITS_UNSUPPORTED, "",
            "re-save the scan at an accepted bit depth, or add it to validate.bits in params.yaml",
            allowed=tuple(params.bits),
        ),
        BoundRule(
            "pages", ReasonCode.TOO_MANY_PAGES, "",
            "split the file into single-page TIFFs, one track strip each",
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
