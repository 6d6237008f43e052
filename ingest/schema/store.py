"""Delta I/O for the schema history: read bronze S_schema_changes, (re)write S_schema_history, append the
parse errors to S_rejects. SQL and DataFrame APIs only (Sail / Spark Connect / Databricks)."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

from ingest.bronze.contract import BRONZE_SCHEMA, REJECTS_COLUMNS, BronzeReject, ddl_columns, table_name
from ingest.config import EngineSettings
from ingest.engine import table_location
from ingest.errors import LakecdcError
from ingest.schema.history import HISTORY_COLUMNS, SchemaChangeRecord
from ingest.sqlutil import qualified, quote_literal


def _path(settings: EngineSettings, source: str, kind: str) -> str:
    return str(table_location(settings, BRONZE_SCHEMA, table_name(source, kind)))


def _exists(settings: EngineSettings, source: str, kind: str) -> bool:
    return (table_location(settings, BRONZE_SCHEMA, table_name(source, kind)) / "_delta_log").is_dir()


def read_schema_changes(spark: Any, settings: EngineSettings, source: str) -> list[SchemaChangeRecord]:
    if not _exists(settings, source, "schema_changes"):
        raise LakecdcError(f"bronze.{table_name(source, 'schema_changes')} does not exist under "
                           f"{settings.warehouse}: nothing to rebuild from")
    df = spark.read.format("delta").load(_path(settings, source, "schema_changes"))
    rows = df.select("seq", "ddl", "database_name", "schema_name", "table_changes", "position").collect()
    return [SchemaChangeRecord(seq=r["seq"], ddl=r["ddl"], database_name=r["database_name"],
                               schema_name=r["schema_name"], table_changes=r["table_changes"],
                               position=r["position"]) for r in rows]


def recorded_connector(spark: Any, settings: EngineSettings, source: str) -> str | None:
    """The Debezium connector named in the landed schema change events (`source.connector`), for sources
    that land other systems' records as they are (debezium-json)."""
    if not _exists(settings, source, "schema_changes"):
        return None
    df = spark.read.format("delta").load(_path(settings, source, "schema_changes"))
    row = (df.selectExpr("get_json_object(event, '$.source.connector') AS connector")
           .where("connector IS NOT NULL").limit(1).collect())
    return row[0]["connector"] if row else None


def _register(spark: Any, settings: EngineSettings, source: str, kind: str) -> None:
    spark.sql(f"CREATE SCHEMA IF NOT EXISTS {qualified(BRONZE_SCHEMA)}")
    spark.sql(f"CREATE TABLE IF NOT EXISTS {qualified(BRONZE_SCHEMA, table_name(source, kind))} USING delta "
              f"LOCATION {quote_literal(_path(settings, source, kind))}")


def write_history(spark: Any, settings: EngineSettings, source: str, rows: list[dict[str, Any]]) -> None:
    """Replace S_schema_history with `rows` (a rebuild is a full replay, so overwrite is exact)."""
    names = [n for n, _ in HISTORY_COLUMNS]
    data = [tuple(r.get(n) for n in names) for r in rows]
    df = spark.createDataFrame(data, schema=ddl_columns(HISTORY_COLUMNS))
    df.write.format("delta").mode("overwrite").option("overwriteSchema", "true").save(
        _path(settings, source, "schema_history"))
    _register(spark, settings, source, "schema_history")


def append_rejects(spark: Any, settings: EngineSettings, source: str, rejects: list[BronzeReject]) -> int:
    """Append schema rejects not already recorded (same seq, stage and error), so rebuilds do not duplicate."""
    if not rejects:
        return 0
    existing: set[tuple[str | None, str]] = set()
    if _exists(settings, source, "rejects"):
        df = spark.read.format("delta").load(_path(settings, source, "rejects"))
        for r in df.filter("stage = 'schema'").select("seq", "error", "raw_text").collect():
            existing.add((r["seq"], (r["error"] or "") + "\0" + (r["raw_text"] or "")))
    now = dt.datetime.now(dt.UTC).replace(tzinfo=None)
    new = []
    for rej in rejects:
        text = rej.raw.decode("utf-8", "replace")
        if (rej.seq, rej.error + "\0" + text) in existing:
            continue
        new.append((source, rej.seq, rej.stage, rej.error, bytearray(rej.raw), text, rej.position, None, now))
    if new:
        df = spark.createDataFrame(new, schema=ddl_columns(REJECTS_COLUMNS))
        df.write.format("delta").mode("append").save(_path(settings, source, "rejects"))
        _register(spark, settings, source, "rejects")
    return len(new)


def read_history(spark: Any, settings: EngineSettings, source: str, table_id: str) -> list[dict[str, Any]]:
    if not _exists(settings, source, "schema_history"):
        raise LakecdcError(f"bronze.{table_name(source, 'schema_history')} does not exist: run "
                           f"`lakecdc schema rebuild --source {source}` first")
    df = spark.read.format("delta").load(_path(settings, source, "schema_history"))
    rows = df.filter(df["table_id"] == table_id).collect()
    return [r.asDict() for r in rows]


def history_table_ids(spark: Any, settings: EngineSettings, source: str) -> list[str]:
    """Every table id the schema history of `source` knows, sorted (for "no schema for X" messages)."""
    if not _exists(settings, source, "schema_history"):
        return []
    df = spark.read.format("delta").load(_path(settings, source, "schema_history"))
    return sorted(r[0] for r in df.select("table_id").distinct().collect() if r[0])


def version_at(rows: list[dict[str, Any]], at_seq: str | None) -> dict[str, Any] | None:
    """The version of a table valid at `at_seq` (inclusive; None = latest), ignoring error rows."""
    good = [r for r in rows if r["parse_status"] != "error" and (at_seq is None or r["valid_from_seq"] <= at_seq)]
    if not good:
        return None
    return max(good, key=lambda r: (r["valid_from_seq"], r["statement_index"], r["version"]))


def columns_of(row: dict[str, Any]) -> list[dict[str, Any]]:
    return json.loads(row["columns"] or "[]")
