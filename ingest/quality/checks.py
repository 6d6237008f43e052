"""What gets validated: a `ValidationBatch` is one Spark DataFrame plus the great-expectations expectations run on
it; a report suite groups the batches of one table (or of one source, for the source-level CDC checks)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ingest.quality.suites import ExpectationSpec

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

# Builds the DataFrame of offending rows for one failed expectation (sampled with a LIMIT on Spark).
Sampler = Callable[[], "DataFrame"]


@dataclass
class ValidationBatch:
    suite: str                       # report suite this batch belongs to
    name: str                        # batch name within the suite: table, reconciliation, freshness, ...
    frame: Callable[[], DataFrame]   # lazily built, so a missing table becomes a reported error
    expectations: list[ExpectationSpec]
    index_columns: list[str] = field(default_factory=list)  # key columns shown beside unexpected values
    samplers: dict[int, Sampler] = field(default_factory=dict)  # expectation position -> offending rows
    # expectation position -> the suite expectation it stands for, when the rule is evaluated on an
    # equivalent Spark aggregate (reported under the suite expectation's type, arguments and severity)
    stands_for: dict[int, ExpectationSpec] = field(default_factory=dict)
    # a small aggregate (a few rows): computed once on Spark, then validated from its collected rows, so
    # that great-expectations' several metric queries do not each recompute the aggregate
    aggregate: bool = False
    order_by: list[str] = field(default_factory=list)  # order of the offending-row samples (default: index)

    @property
    def gx_suite_name(self) -> str:
        return self.suite if self.name == "table" else f"{self.suite}.{self.name}"


@dataclass
class SuiteInfo:
    """Report metadata of one suite."""

    name: str
    table: str | None
    kind: str
    file: str | None  # suite file relative to the project, or None (generated default / CDC checks)
    batches: list[ValidationBatch] = field(default_factory=list)
