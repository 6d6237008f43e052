"""S_schema_history on real Delta tables: rebuild from S_schema_changes, rejects, lookup by position."""

from __future__ import annotations

import json

import pytest

from ingest.bronze.contract import SCHEMA_CHANGES_COLUMNS, ddl_columns
from ingest.schema.history import build_history
from ingest.schema.store import (
    append_rejects,
    columns_of,
    read_history,
    read_schema_changes,
    version_at,
    write_history,
)

pytestmark = pytest.mark.integration


def test_rebuild_from_schema_changes_and_lookup(engine, engine_settings):
    spark = engine.spark
    ddls = [("0001", "CREATE TABLE t (id INT PRIMARY KEY, a VARCHAR(10))"), ("0002", "ALTER TABLE t ADD b INT"),
            ("0003", "ALTER TABLE t WIBBLE"), ("0004", "ALTER TABLE t DROP COLUMN a")]
    data = [("s", seq, 0, "db", None, ddl, None, "{}", None, 1, None) for seq, ddl in ddls]
    path = str(engine_settings.warehouse / "bronze" / "s_schema_changes")
    spark.createDataFrame(data, schema=ddl_columns(SCHEMA_CHANGES_COLUMNS)).write.format("delta").save(path)

    records = read_schema_changes(spark, engine_settings, "s")
    rows, rejects, _ = build_history(records, "mariadb", source="s")
    write_history(spark, engine_settings, "s", rows)
    assert append_rejects(spark, engine_settings, "s", rejects) == 1
    assert append_rejects(spark, engine_settings, "s", rejects) == 0  # a second rebuild adds nothing

    history = read_history(spark, engine_settings, "s", "db.t")
    assert sorted((r["version"], r["change_kind"], r["parse_status"]) for r in history) == [
        (1, "CREATE", "ok"), (2, "ALTER", "ok"), (2, "ERROR", "error"), (3, "ALTER", "ok")]
    assert [c["name"] for c in columns_of(version_at(history, "0002"))] == ["id", "a", "b"]
    assert [c["name"] for c in columns_of(version_at(history, "0003"))] == ["id", "a", "b"]
    assert [c["name"] for c in columns_of(version_at(history, None))] == ["id", "b"]
    assert json.loads(version_at(history, "0001")["primary_key"]) == ["id"]
    rejects_df = spark.read.format("delta").load(str(engine_settings.warehouse / "bronze" / "s_rejects"))
    assert [r["raw_text"] for r in rejects_df.collect()] == ["ALTER TABLE t WIBBLE"]
