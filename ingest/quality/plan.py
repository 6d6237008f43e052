"""Turn suite files, generated defaults and the project-wide CDC settings into the batches to validate,
filtered by `--select`."""

from __future__ import annotations

import fnmatch
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ingest.config import SourceSettings
from ingest.quality import cdc
from ingest.quality.checks import SuiteInfo, ValidationBatch
from ingest.quality.discover import Lakehouse
from ingest.quality.samples import offending_frame
from ingest.quality.source_values import source_values_batch
from ingest.quality.suites import ExpectationSpec, SuiteSpec
from ingest.sqlutil import quote_ident

if TYPE_CHECKING:
    from pyspark.sql import DataFrame


def _table_frame(lake: Lakehouse, suite: SuiteSpec,
                 settings: dict[str, Any]) -> tuple[DataFrame, list[ExpectationSpec]]:
    """The table plus the derived CDC columns, and the CDC expectations on them."""
    checks = settings["checks"]
    df = lake.read(suite.table)
    extra: list[ExpectationSpec | None] = []
    if checks["placeholders"]["enabled"] and suite.table.partition(".")[0] in (
            settings["schemas"]["silver"], settings["schemas"]["gold"]):
        df, exp = cdc.add_placeholder_check(df, checks["placeholders"])
        extra.append(exp)
    if checks["scd2_intervals"]["enabled"] and suite.kind == "history":
        df, exp = cdc.add_scd2_check(df, suite.key, checks["scd2_intervals"])
        extra.append(exp)
    return df, [e for e in extra if e is not None]


UNIQUENESS = {"expect_column_values_to_be_unique": "column", "expect_compound_columns_to_be_unique": "column_list"}
ROWS_PER_KEY = "_lakecdc_rows"


def unique_batch(suite: SuiteSpec, df: DataFrame, spec: ExpectationSpec) -> ValidationBatch:
    """Uniqueness evaluated on a GROUP BY of the key (great-expectations' Spark rule is a window count over
    the whole table, ~10x slower): every key's row count must be at most 1. Reported as the suite's own
    expectation; the duplicated keys appear in the GX Data Docs, the duplicated rows in the sample."""
    from pyspark.sql import functions as F

    value = spec.kwargs[UNIQUENESS[spec.type]]
    columns = [value] if isinstance(value, str) else list(value)
    grouped = df.groupBy(*[F.col(quote_ident(c)) for c in columns]).agg(F.count(F.lit(1)).alias(ROWS_PER_KEY))
    stand_in = ExpectationSpec(
        type="expect_column_values_to_be_between", kwargs={"column": ROWS_PER_KEY, "max_value": 1},
        severity=spec.severity, origin=spec.origin,
        description=f"({', '.join(columns)}) is unique: no key occurs in more than one row")
    return ValidationBatch(suite=suite.name, name="unique_" + "_".join(columns), frame=lambda: grouped,
                           expectations=[stand_in], index_columns=columns,
                           samplers={0: lambda: offending_frame(df, spec)}, stands_for={0: spec})


def table_batches(lake: Lakehouse, suite: SuiteSpec, settings: dict[str, Any]) -> list[ValidationBatch]:
    try:
        df, extra = _table_frame(lake, suite, settings)
    except Exception as exc:  # a missing table becomes a reported error of this suite, not a crash
        error = exc

        def frame() -> DataFrame:
            raise error

        return [ValidationBatch(suite=suite.name, name="table", frame=frame, expectations=list(suite.expectations))]
    row_rules = [e for e in suite.expectations if e.type not in UNIQUENESS]
    # no index columns on the table batch: great-expectations would run one more full-table query per
    # expectation to list unexpected keys, and the report's samples already show the whole offending rows
    batches = [ValidationBatch(suite=suite.name, name="table", frame=lambda: df, expectations=[*row_rules, *extra],
                               order_by=suite.key)]
    batches.extend(unique_batch(suite, df, e) for e in suite.expectations if e.type in UNIQUENESS)
    return batches


def selected(name: str, patterns: list[str] | None) -> bool:
    if not patterns:
        return True
    short = name.partition(".")[2]
    return any(fnmatch.fnmatchcase(name, p) or fnmatch.fnmatchcase(short, p) for p in patterns)


def build_plan(lake: Lakehouse, suites: list[SuiteSpec], settings: dict[str, Any], suites_dir: Path,
               select: list[str] | None = None, sources: dict[str, SourceSettings] | None = None,
               base_dir: Path | None = None) -> list[SuiteInfo]:
    """The batches to validate, per suite. `sources` (lakecdc.yml's) for the opt-in source_values check."""
    plan: list[SuiteInfo] = []
    checks = settings["checks"]
    for suite in sorted(suites, key=lambda s: s.name):
        if not selected(suite.name, select):
            continue
        file = None
        if suite.path is not None:
            try:  # shown as expectations/<schema>/<table>.yml
                file = str(suite.path.resolve().relative_to(suites_dir.resolve().parent))
            except ValueError:
                file = str(suite.path)
        info = SuiteInfo(name=suite.name, table=suite.table, kind=suite.kind, file=file)
        info.batches.extend(table_batches(lake, suite, settings))
        if checks["reconciliation"]["enabled"]:
            batch = cdc.reconciliation_batch(lake, suite, checks["reconciliation"])
            if batch:
                info.batches.append(batch)
        if checks["source_values"]["enabled"]:
            batch = source_values_batch(lake, suite, checks["source_values"], sources or {}, base_dir)
            if batch:
                info.batches.append(batch)
        plan.append(info)
    for source in lake.sources():
        name = f"cdc.{source}"
        if not selected(name, select):
            continue
        info = SuiteInfo(name=name, table=None, kind="cdc", file=None)
        for batch in (cdc.freshness_batch(lake, source, settings),
                      cdc.rejects_batch(lake, source, checks["rejects"]),
                      cdc.parse_errors_batch(lake, source, checks["schema_parse_errors"]),
                      cdc.type_changes_batch(lake, source, checks["type_changes"])):
            if batch and batch.expectations:
                info.batches.append(batch)
        if info.batches:
            plan.append(info)
    return plan
