"""The opt-in `source_values` check: a silver current table compared with its source table, key by key and
value by value, over the source's own connection (PostgreSQL, MariaDB/MySQL sources).

Reconciliation compares keys with bronze; this catches what bronze cannot show: values the source changed
without change events (a column type change that rewrote the table, `type_changes`) and values lost or changed
on the way to silver. It reads both tables whole, so it is off by default; run it when the source is quiet and
silver is built from everything landed (rows changed since the last `dbt build` differ, rightly).

Compared columns: those of silver's types below whose values the source driver and Spark give in the same form
(integers, booleans as integers, decimals, doubles, dates, instants as epoch microseconds, binaries as bytes,
text, JSON parsed on both sides). Other columns (single-precision floats, times, intervals, arrays, sets,
geometries, decimals kept as text) are listed as not compared. A source DATETIME / `timestamp without time
zone` is read as UTC, Debezium's convention."""

from __future__ import annotations

import datetime as dt
import json
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ingest.config import SourceSettings
from ingest.errors import LakecdcError
from ingest.quality.checks import ValidationBatch
from ingest.quality.discover import Lakehouse
from ingest.quality.suites import ExpectationSpec, SuiteSpec
from ingest.sqlutil import quote_ident, quote_source_ident

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

CONNECTORS = ("postgresql", "mariadb", "mysql")
META_COLUMNS = ("_op", "_seq", "_source_ts", "_is_deleted", "_deleted_at", "_batch_id")
SAMPLE_LIMIT = 200  # differences kept for the report


@dataclass
class Comparison:
    rows_compared: int = 0
    differences: list[tuple[str, str, str, str]] = field(default_factory=list)  # key, column, silver, source
    rows_differing: int = 0
    not_compared: list[str] = field(default_factory=list)


def normalise(value: Any) -> Any:
    """One comparable Python form per value, from the source driver or from Spark."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, memoryview | bytearray):
        return bytes(value)
    if isinstance(value, dt.datetime):  # an instant: epoch microseconds (naive: UTC, Debezium's convention)
        if value.tzinfo is None:
            value = value.replace(tzinfo=dt.UTC)
        return (value - dt.datetime(1970, 1, 1, tzinfo=dt.UTC)) // dt.timedelta(microseconds=1)
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, float) and value != value:
        return "NaN"  # NaN equals itself here
    return value


def _comparable(spark_type: Any, source_type: str) -> str | None:
    """How a silver column is read for comparison: 'plain', 'instant', 'json', or None (not compared)."""
    from pyspark.sql import types as T

    base = source_type.lower()
    if isinstance(spark_type, T.TimestampType):
        return "instant"
    if isinstance(spark_type, T.StringType):
        if base.startswith("json"):
            return "json"
        texts = ("char", "varchar", "character", "text", "tinytext", "mediumtext", "longtext", "enum", "uuid",
                 "citext", "name", "bpchar")
        return "plain" if base.split("(")[0].strip() in texts or base.startswith("character varying") else None
    plain = (T.ByteType, T.ShortType, T.IntegerType, T.LongType, T.BooleanType, T.DecimalType, T.DoubleType,
             T.DateType, T.BinaryType)
    return "plain" if isinstance(spark_type, plain) else None


def _source_relation(connector: str, table_id: str) -> str:
    """The quoted source table of a bronze table_id (PostgreSQL: [db.]schema.table, MariaDB/MySQL: db.table)."""
    parts = table_id.split(".")
    if len(parts) < 2:
        raise LakecdcError(f"table_id {table_id!r} does not name a schema and a table")
    return ".".join(quote_source_ident(p, "postgres" if connector == "postgresql" else "mysql") for p in parts[-2:])


def compare_table(lake: Lakehouse, suite: SuiteSpec, settings: SourceSettings, base_dir: Path | None,
                  source_types: dict[str, str]) -> Comparison:
    from pyspark.sql import functions as F

    from ingest.connectors import registry

    silver = lake.read(suite.table)
    lower = {f.name.lower(): f for f in silver.schema.fields}
    keys = [lower[k.lower()].name for k in suite.key]
    out = Comparison()
    modes: dict[str, str] = {}
    for f in silver.schema.fields:
        if f.name in META_COLUMNS or f.name.startswith("_lakecdc"):
            continue
        mode = _comparable(f.dataType, source_types.get(f.name, ""))
        if mode is None:
            out.not_compared.append(f.name)
        else:
            modes[f.name] = mode
    columns = [c for c in modes if c not in keys]
    if "_is_deleted" in silver.columns:
        silver = silver.where(~F.coalesce(F.col("_is_deleted"), F.lit(False)))
    picked = [(F.unix_micros(F.col(quote_ident(c))) if modes.get(c) == "instant" else F.col(quote_ident(c)))
              .alias(c) for c in keys + columns]

    def row_form(values: tuple) -> tuple:
        return tuple(json.loads(v) if v is not None and modes[c] == "json" and isinstance(v, str | bytes)
                     else normalise(v) for c, v in zip(keys + columns, values, strict=True))

    silver_rows = {}
    for row in silver.select(*picked).toLocalIterator():
        values = row_form(tuple(row))
        silver_rows[values[:len(keys)]] = values[len(keys):]

    connector = registry.create(settings, base_dir=base_dir)
    conn = connector.open_query_connection()
    try:
        dialect = "postgres" if settings.connector == "postgresql" else "mysql"
        select = ", ".join(quote_source_ident(c, dialect) for c in keys + columns)
        with conn.cursor() as cur:
            cur.execute(f"SELECT {select} FROM {_source_relation(settings.connector, suite.table_id or '')}")
            source_rows = {}
            for values in cur:
                form = row_form(tuple(values))
                source_rows[form[:len(keys)]] = form[len(keys):]
    finally:
        conn.close()

    def note(key: tuple, column: str, silver_value: Any, source_value: Any) -> None:
        if len(out.differences) < SAMPLE_LIMIT:
            out.differences.append((json.dumps(list(key), default=str), column, repr(silver_value)[:200],
                                    repr(source_value)[:200]))

    for key in sorted(set(source_rows) | set(silver_rows), key=repr):
        mine, theirs = silver_rows.get(key), source_rows.get(key)
        out.rows_compared += 1
        if mine == theirs:
            continue
        out.rows_differing += 1
        if mine is None or theirs is None:
            note(key, "(row)", "missing" if mine is None else "present", "missing" if theirs is None else "present")
            continue
        for column, a, b in zip(columns, mine, theirs, strict=True):
            if a != b:
                note(key, column, a, b)
    return out


def source_values_batch(lake: Lakehouse, suite: SuiteSpec, check: dict[str, Any],
                        sources: dict[str, SourceSettings], base_dir: Path | None) -> ValidationBatch | None:
    if suite.kind != "current" or not suite.key or not suite.source or not suite.table_id:
        return None
    settings = sources.get(suite.source)
    if settings is None or settings.connector not in CONNECTORS:
        return None
    history = lake.bronze(suite.source, "schema_history")
    result: dict[str, Comparison] = {}

    def comparison() -> Comparison:
        if "done" not in result:
            types: dict[str, str] = {}
            if lake.exists(history):  # the latest version's source types (text vs other string columns, JSON)
                from pyspark.sql import functions as F

                latest = (lake.read(history).where(F.col("table_id") == suite.table_id)
                          .orderBy(F.col("version").desc()).select("columns").limit(1).collect())
                if latest and latest[0]["columns"]:
                    types = {c["name"]: str(c.get("source_type") or "") for c in json.loads(latest[0]["columns"])}
            result["done"] = compare_table(lake, suite, settings, base_dir, types)
        return result["done"]

    def frame() -> DataFrame:
        c = comparison()
        return lake.spark.createDataFrame(
            [(c.rows_compared, c.rows_differing, ", ".join(c.not_compared) or None)],
            "rows_compared BIGINT, rows_differing BIGINT, columns_not_compared STRING")

    def offending() -> DataFrame:
        return lake.spark.createDataFrame(comparison().differences,
                                          "key STRING, column_name STRING, silver STRING, source STRING")

    exp = ExpectationSpec(type="expect_column_values_to_be_between", severity=check["severity"], origin="cdc",
                          kwargs={"column": "rows_differing", "min_value": 0, "max_value": 0},
                          description=f"{suite.table} equals {suite.table_id} in source {suite.source}, key by key "
                                      f"and value by value")
    return ValidationBatch(suite=suite.name, name="source_values", frame=frame, expectations=[exp],
                           samplers={0: offending}, aggregate=True)
