"""The rows behind a failed expectation, fetched on Spark with a LIMIT (never a whole table), and made
JSON-safe for the report."""

from __future__ import annotations

import base64
import datetime as dt
import decimal
from typing import TYPE_CHECKING, Any

from ingest.quality.suites import ExpectationSpec
from ingest.sqlutil import quote_ident

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame


def _col(name: str) -> Column:
    from pyspark.sql import functions as F

    return F.col(quote_ident(name))


def _duplicates(df: DataFrame, columns: list[str]) -> DataFrame:
    keys = [quote_ident(c) for c in columns]
    dups = df.groupBy(*keys).count().where("count > 1").drop("count")
    return df.join(dups, on=columns, how="inner")


def offending_frame(df: DataFrame, exp: ExpectationSpec) -> DataFrame | None:
    """Rows of `df` that break `exp`, for the expectation types whose rule maps to a row filter;
    None for others (the report then shows great-expectations' own sampled values)."""
    kw = exp.kwargs
    if kw.get("row_condition") and kw.get("condition_parser") == "spark":
        df = df.where(str(kw["row_condition"]))
    column = kw.get("column")
    t = exp.type
    if t == "expect_column_values_to_not_be_null":
        return df.where(_col(column).isNull())
    if t == "expect_column_values_to_be_null":
        return df.where(_col(column).isNotNull())
    if t == "expect_column_values_to_be_in_set":
        return df.where(_col(column).isNotNull() & ~_col(column).isin(list(kw["value_set"])))
    if t == "expect_column_values_to_not_be_in_set":
        return df.where(_col(column).isin(list(kw["value_set"])))
    if t == "expect_column_values_to_be_between":
        cond = None
        if kw.get("min_value") is not None:
            cond = _col(column) < kw["min_value"]
        if kw.get("max_value") is not None:
            upper = _col(column) > kw["max_value"]
            cond = upper if cond is None else (cond | upper)
        return df.where(cond) if cond is not None else None
    if t == "expect_column_values_to_match_regex":
        return df.where(_col(column).isNotNull() & ~_col(column).rlike(kw["regex"]))
    if t == "expect_column_values_to_not_match_regex":
        return df.where(_col(column).rlike(kw["regex"]))
    if t == "expect_column_values_to_be_unique":
        return _duplicates(df, [column])
    if t in ("expect_compound_columns_to_be_unique", "expect_multicolumn_values_to_be_unique"):
        return _duplicates(df, list(kw["column_list"]))
    return None


def sample_rows(frame: DataFrame, limit: int, order_by: list[str] | None = None) -> dict[str, Any]:
    """{"columns": [...], "rows": [[...], ...]} of at most `limit` rows, ordered by `order_by` when given."""
    if order_by:
        usable = [c for c in order_by if c in frame.columns]
        if usable:
            frame = frame.orderBy(*[_col(c) for c in usable])
    rows = frame.limit(limit).collect()
    return {"columns": list(frame.columns), "rows": [[json_safe(v) for v in row] for row in rows]}


def json_safe(value: Any, max_len: int = 300) -> Any:
    if value is None or isinstance(value, bool | int | float):
        return value
    if isinstance(value, str):
        return value if len(value) <= max_len else value[:max_len] + "…"
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, bytes | bytearray):
        try:
            return json_safe(bytes(value).decode("utf-8"), max_len)
        except UnicodeDecodeError:
            return "base64:" + base64.b64encode(bytes(value)).decode()[:max_len]
    if isinstance(value, dict):
        return {str(k): json_safe(v, max_len) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(v, max_len) for v in value]
    if hasattr(value, "asDict"):
        return json_safe(value.asDict(recursive=True), max_len)
    return json_safe(str(value), max_len)
