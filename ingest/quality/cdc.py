"""Project-wide CDC checks. All work happens on Spark; great-expectations validates either derived
columns over the full table (placeholders, SCD2 intervals, parse errors) or small aggregates
(reconciliation counts, freshness and lag), and each check knows how to fetch its offending rows.

Derived columns are prefixed `_lakecdc_` and are null on a good row, or say what is wrong."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from ingest.quality.checks import ValidationBatch
from ingest.quality.discover import Lakehouse
from ingest.quality.suites import ExpectationSpec, SuiteSpec
from ingest.sqlutil import quote_ident

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame

PLACEHOLDER_COLUMN = "_lakecdc_placeholder_columns"
SCD2_COLUMN = "_lakecdc_scd2_problem"
PARSE_COLUMN = "_lakecdc_parse_problem"
FAILED_PARSE_STATUSES = ("error", "failed", "failure", "unparsed", "unsupported")
# what the report calls the derived check columns (a sample shows only the failing check's own one)
DERIVED_LABELS = {PLACEHOLDER_COLUMN: "columns with a placeholder", SCD2_COLUMN: "history problem",
                  PARSE_COLUMN: "parse problem"}


def _c(name: str) -> Column:
    from pyspark.sql import functions as F

    return F.col(quote_ident(name))


def _cdc(type_: str, severity: str, description: str, **kwargs: Any) -> ExpectationSpec:
    return ExpectationSpec(type=type_, kwargs=kwargs, severity=severity, description=description, origin="cdc")


def _lower_map(columns: list[str]) -> dict[str, str]:
    return {c.lower(): c for c in columns}


# --- per table: derived columns on the table's own batch ---------------------------------------------

def add_placeholder_check(df: DataFrame, check: dict[str, Any]) -> tuple[DataFrame, ExpectationSpec | None]:
    """`_lakecdc_placeholder_columns`: names of the string/binary columns holding a placeholder."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import BinaryType, StringType

    values = [str(v) for v in check["values"]]
    # binary columns by their bytes, as hex: most binary values are not UTF-8 text (a cast fails on Sail)
    hex_values = [v.encode().hex().upper() for v in values]
    parts = []
    for f in df.schema.fields:
        if isinstance(f.dataType, StringType):
            parts.append(F.when(_c(f.name).isin(values), F.lit(f.name)))
        elif isinstance(f.dataType, BinaryType):
            parts.append(F.when(F.hex(_c(f.name)).isin(hex_values), F.lit(f.name)))
    if not parts:
        return df, None
    derived = F.concat_ws(",", *parts)
    df = df.withColumn(PLACEHOLDER_COLUMN, F.when(derived != "", derived))
    return df, _cdc("expect_column_values_to_be_null", check["severity"],
                    f"no Debezium placeholder values ({', '.join(values)}) in any column", column=PLACEHOLDER_COLUMN)


def add_scd2_check(df: DataFrame, key: list[str], check: dict[str, Any]) -> tuple[DataFrame, ExpectationSpec | None]:
    """`_lakecdc_scd2_problem` on a history table: per key, versions ordered by valid_from must not
    overlap (valid_to <= next valid_from), intervals must not be inverted, only the latest may be current."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    cols = _lower_map(df.columns)
    if not key or not all(k in cols for k in ("valid_from", "valid_to", "is_current")):
        return df, None
    vf, vt, cur = _c(cols["valid_from"]), _c(cols["valid_to"]), _c(cols["is_current"])
    # versions changed within one timestamp tick share valid_from: the source order (valid_from_seq) decides
    order = [_c(cols["valid_from_seq"])] if "valid_from_seq" in cols else []
    window = Window.partitionBy(*[_c(k) for k in key]).orderBy(*order, vf, vt.asc_nulls_last())
    nxt = F.lead(vf).over(window)
    problem = (
        F.when(vt.isNotNull() & (vt < vf), F.lit("valid_to is before valid_from"))
        .when(nxt.isNotNull() & (vt.isNull() | (nxt < vt)),
              # in UTC whatever the session's time zone (a plain cast writes the session's local time)
              F.concat(F.lit("overlaps the next version starting "),
                       F.to_utc_timestamp(nxt, F.current_timezone()).cast("string"), F.lit(" UTC")))
        .when(nxt.isNotNull() & F.coalesce(cur, F.lit(False)), F.lit("is_current but not the latest version"))
    )
    df = df.withColumn(SCD2_COLUMN, problem)
    return df, _cdc("expect_column_values_to_be_null", check["severity"],
                    "SCD2 versions of a key do not overlap and only the latest is current", column=SCD2_COLUMN)


# --- per current-state table: bronze vs silver reconciliation -----------------------------------------

def _bronze_live_keys(lake: Lakehouse, suite: SuiteSpec) -> DataFrame:
    """Keys (as strings, one column per key column) whose latest bronze event is not a delete and is
    later than the table's latest truncate."""
    from pyspark.sql import functions as F

    events = lake.read(lake.bronze(suite.source or "", "events")).where(F.col("table_id") == suite.table_id)
    truncated = events.where(F.col("op") == "t").agg(F.max("seq").alias("truncate_seq"))
    latest = (events.where(F.col("op").isNotNull() & (F.col("op") != "t") & F.col("key").isNotNull())
              .groupBy("key").agg(F.max_by("op", "seq").alias("last_op"), F.max("seq").alias("last_seq")))
    after_truncate = F.col("truncate_seq").isNull() | (F.col("last_seq") > F.col("truncate_seq"))
    live = latest.crossJoin(truncated).where((F.col("last_op") != "d") & after_truncate)
    return live.select(*[F.get_json_object("key", json_path(k)).alias(k) for k in suite.key])


def json_path(field: str) -> str:
    """JSONPath of a top-level key field: `$.id`, or `$['odd.name']` for names that need brackets."""
    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", field):
        return f"$.{field}"
    return "$['" + field.replace("\\", "\\\\").replace("'", "\\'") + "']"


def _silver_live_keys(lake: Lakehouse, suite: SuiteSpec) -> DataFrame:
    from pyspark.sql import functions as F

    df = lake.read(suite.table)
    cols = _lower_map(df.columns)
    if "_is_deleted" in cols:
        df = df.where(~F.coalesce(_c(cols["_is_deleted"]), F.lit(False)))
    return df.select(*[_c(k).cast("string").alias(k) for k in suite.key]).distinct()  # duplicates: unique check


def reconciliation_batch(lake: Lakehouse, suite: SuiteSpec, check: dict[str, Any]) -> ValidationBatch | None:
    if suite.kind != "current" or not suite.key or not suite.source or not suite.table_id:
        return None
    if not lake.exists(lake.bronze(suite.source, "events")):
        return None
    from pyspark.sql import functions as F

    def frame() -> DataFrame:
        bronze = _bronze_live_keys(lake, suite).agg(F.count(F.lit(1)).alias("bronze_live_keys"))
        silver = _silver_live_keys(lake, suite).agg(F.count(F.lit(1)).alias("silver_live_keys"))
        return bronze.crossJoin(silver)

    def offending() -> DataFrame:
        bronze, silver = _bronze_live_keys(lake, suite), _silver_live_keys(lake, suite)
        missing = bronze.join(silver, on=suite.key, how="left_anti").withColumn(
            "problem", F.lit("live in bronze, missing in silver"))
        extra = silver.join(bronze, on=suite.key, how="left_anti").withColumn(
            "problem", F.lit("in silver, deleted or absent in bronze"))
        return missing.unionByName(extra)

    description = (f"live keys in {suite.table} equal keys of {suite.table_id} whose latest bronze event "
                   f"(source {suite.source}) is not a delete")
    exp = _cdc("expect_column_pair_values_to_be_equal", check["severity"], description,
               column_A="silver_live_keys", column_B="bronze_live_keys")
    return ValidationBatch(suite=suite.name, name="reconciliation", frame=frame, expectations=[exp],
                           samplers={0: offending}, aggregate=True)


# --- per source: freshness and lag, rejects, schema-history parse errors -------------------------------

def freshness_batch(lake: Lakehouse, source: str, settings: dict[str, Any]) -> ValidationBatch | None:
    fresh, lag = settings["checks"]["freshness"], settings["checks"]["lag"]
    if not (fresh["enabled"] or lag["enabled"]):
        return None
    from pyspark.sql import functions as F

    events_table = lake.bronze(source, "events")
    changed_at = F.coalesce(F.col("source_ts_ms"), F.col("ts_ms"))
    now_ms = F.unix_millis(F.current_timestamp())

    def frame() -> DataFrame:
        events = lake.read(events_table)
        last_batch = events.agg(F.max("batch_id").alias("last_batch"))
        streamed = F.coalesce(F.col("snapshot"), F.lit("false")) == "false"
        lag_ms = F.when((F.col("batch_id") == F.col("last_batch")) & streamed,
                        F.unix_millis(F.col("ingested_at")) - F.col("source_ts_ms"))
        return (events.crossJoin(last_batch)
                .agg(F.count(F.lit(1)).alias("events"), F.max(changed_at).alias("last_change_ms"),
                     F.max(lag_ms).alias("lag_ms"))
                .select(F.lit(source).alias("source"), "events",
                        F.timestamp_millis(F.col("last_change_ms")).alias("last_change_at"),
                        ((now_ms - F.col("last_change_ms")) / 1000.0).alias("age_seconds"),
                        (F.col("lag_ms") / 1000.0).alias("lag_seconds")))

    def per_table() -> DataFrame:
        streamed = F.coalesce(F.col("snapshot"), F.lit("false")) == "false"
        lag_ms = F.when(streamed, F.unix_millis(F.col("ingested_at")) - F.col("source_ts_ms"))
        return (lake.read(events_table).groupBy("table_id")
                .agg(F.count(F.lit(1)).alias("events"), F.max(changed_at).alias("last_change_ms"),
                     F.max("ingested_at").alias("last_ingested_at"), F.max(lag_ms).alias("max_lag_ms"))
                .select("table_id", "events", F.timestamp_millis(F.col("last_change_ms")).alias("last_change_at"),
                        ((now_ms - F.col("last_change_ms")) / 1000.0).alias("age_seconds"), "last_ingested_at",
                        (F.col("max_lag_ms") / 1000.0).alias("max_lag_seconds"))
                .orderBy(F.col("age_seconds").desc()))

    exps, samplers = [], {}
    if fresh["enabled"]:
        samplers[len(exps)] = per_table
        exps.append(_cdc("expect_column_values_to_be_between", fresh["severity"],
                         f"source {source}: latest change at most {fresh['max_age_seconds']} s old",
                         column="age_seconds", min_value=None, max_value=float(fresh["max_age_seconds"])))
    if lag["enabled"]:
        samplers[len(exps)] = per_table
        exps.append(_cdc("expect_column_values_to_be_between", lag["severity"],
                         f"source {source}: capture lag of the latest batch at most {lag['max_lag_seconds']} s",
                         column="lag_seconds", min_value=None, max_value=float(lag["max_lag_seconds"])))
    return ValidationBatch(suite=f"cdc.{source}", name="freshness", frame=frame, expectations=exps,
                           samplers=samplers, aggregate=True)


def rejects_batch(lake: Lakehouse, source: str, check: dict[str, Any]) -> ValidationBatch | None:
    table = lake.bronze(source, "rejects")
    if not check["enabled"] or not lake.exists(table):
        return None
    from pyspark.sql import functions as F

    def frame() -> DataFrame:
        df = lake.read(table)
        return df.select(*[c for c in df.columns if c != "raw"])  # raw bytes: raw_text is the readable copy

    def latest() -> DataFrame:
        df = frame()
        return df.orderBy(F.col("rejected_at").desc()) if "rejected_at" in df.columns else df

    exp = _cdc("expect_table_row_count_to_be_between", check["severity"],
               f"source {source}: at most {check['max_count']} rejected inputs in bronze",
               min_value=0, max_value=int(check["max_count"]))
    return ValidationBatch(suite=f"cdc.{source}", name="rejects", frame=frame, expectations=[exp], samplers={0: latest})


def parse_errors_batch(lake: Lakehouse, source: str, check: dict[str, Any]) -> ValidationBatch | None:
    table = lake.bronze(source, "schema_history")
    if not check["enabled"] or not lake.exists(table):
        return None
    from pyspark.sql import functions as F

    def frame() -> DataFrame:
        df = lake.read(table)
        cols = _lower_map(df.columns)
        problem = F.lit(None).cast("string")
        if "parse_status" in cols:
            status = _c(cols["parse_status"])
            problem = F.when(F.lower(status).isin(list(FAILED_PARSE_STATUSES)),
                             F.concat(F.lit("parse_status="), status))
        if "parse_error" in cols:
            problem = F.coalesce(_c(cols["parse_error"]).cast("string"), problem)
        return df.withColumn(PARSE_COLUMN, problem)

    exp = _cdc("expect_column_values_to_be_null", check["severity"],
               f"source {source}: every captured DDL statement was parsed into the schema history",
               column=PARSE_COLUMN)
    index = ["table_id", "version"]
    return ValidationBatch(suite=f"cdc.{source}", name="schema_history", frame=frame, expectations=[exp],
                           index_columns=index)


def type_changes_batch(lake: Lakehouse, source: str, check: dict[str, Any]) -> ValidationBatch | None:
    """Columns whose type changed in a way that makes the source convert its stored values without change events
    (ingest.schema.conversions): silver keeps its own cast of the old values for the rows not changed since,
    which may differ (e.g. PostgreSQL `ALTER COLUMN ... TYPE integer USING length(name)`)."""
    table = lake.bronze(source, "schema_history")
    if not check["enabled"] or not lake.exists(table):
        return None
    from ingest.schema.conversions import type_changes

    def frame() -> DataFrame:
        wanted = ["table_id", "version", "valid_from_seq", "change_kind", "columns"]
        rows = [row.asDict() for row in lake.read(table).select(*wanted).collect()]
        found = [(c.table_id, c.version, c.valid_from_seq, c.column, c.old_type, c.new_type)
                 for c in type_changes(rows)]
        return lake.spark.createDataFrame(found, "table_id STRING, version INT, valid_from_seq STRING, "
                                                 "column_name STRING, old_type STRING, new_type STRING")

    exp = _cdc("expect_table_row_count_to_be_between", check["severity"],
               f"source {source}: no column changed type in a way that converts stored values (the source "
               f"rewrites them without change events: re-snapshot the table)",
               min_value=0, max_value=0)
    return ValidationBatch(suite=f"cdc.{source}", name="type_changes", frame=frame, expectations=[exp],
                           samplers={0: frame})
