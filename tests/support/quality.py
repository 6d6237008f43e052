"""A seeded lakehouse for the quality tests: bronze (source `inv`), silver current and history and one gold
table, with one optional defect; the expectations project file; a ProjectConfig for a warehouse."""

from __future__ import annotations

import json
import time
from pathlib import Path

import yaml

from ingest.config import EngineSettings, ProjectConfig

PH = "__debezium_unavailable_value"


def _sql_value(v: object) -> str:
    if v is None:
        return "NULL"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int | float):
        return str(v)
    if isinstance(v, tuple) and v[0] == "sql":  # a raw SQL expression
        return str(v[1])
    return "'" + str(v).replace("\\", "\\\\").replace("'", "\\'") + "'"


def create_table(spark, warehouse: Path, table: str, columns: str, rows: list[tuple]) -> None:
    schema, name = table.split(".")
    spark.sql(f"CREATE SCHEMA IF NOT EXISTS {schema}")
    spark.sql(f"CREATE TABLE {schema}.{name} ({columns}) USING delta LOCATION '{warehouse}/{schema}/{name}'")
    if rows:
        values = ", ".join("(" + ", ".join(_sql_value(v) for v in row) + ")" for row in rows)
        spark.sql(f"INSERT INTO {schema}.{name} VALUES {values}")


def seed_lakehouse(spark, warehouse: Path, suffix: str = "", defect: str | None = None) -> dict[str, str]:
    """Bronze (source `inv`), silver current + history and one gold table, with one optional defect.
    Returns the schema names (bronze/silver/gold) for expectations/project.yml."""
    bronze, silver, gold = f"bronze{suffix}", f"silver{suffix}", f"gold{suffix}"
    now_ms = int(time.time() * 1000)
    changed = now_ms - (3 * 86400 * 1000 if defect == "stale_source" else 60_000)
    ts = ("sql", "current_timestamp()")
    t = "inv.public.customers"

    def event(op, key_id, seq, value=None):
        key = None if op == "t" else json.dumps({"id": key_id})
        return ("inv", "inv.public.customers", t, op, seq, key, value or "{}", "k1", "v1", changed + 5, changed,
                None, "false", None, 1, ("sql", f"timestamp_millis({changed + 1500})"))

    events = [event("r", 1, "0001"), event("r", 2, "0002"), event("r", 3, "0003"), event("c", 4, "0004"),
              event("u", 1, "0005"), event("d", 3, "0006")]  # live keys: 1, 2, 4
    create_table(spark, warehouse, f"{bronze}.inv_events",
                 "source STRING, topic STRING, table_id STRING, op STRING, seq STRING, key STRING, value STRING, "
                 "key_schema_id STRING, value_schema_id STRING, ts_ms BIGINT, source_ts_ms BIGINT, txn_id STRING, "
                 "snapshot STRING, position STRING, batch_id BIGINT, ingested_at TIMESTAMP", events)
    columns = json.dumps([
        {"name": "id", "source_type": "integer", "nullable": False, "key": True, "position": 1},
        {"name": "name", "source_type": "varchar(255)", "nullable": True, "key": False, "position": 2},
        {"name": "status", "source_type": "enum('active','closed')", "nullable": False, "key": False, "position": 3},
    ])
    history = [(t, 1, "0001", "create", columns, '["id"]', "CREATE TABLE customers (...)", "ok", None)]
    if defect == "parse_error":
        history.append((t, 2, "0007", "alter", columns, '["id"]', "ALTER TABLE customers FROBNICATE x",
                        "error", "unsupported statement: ALTER TABLE customers FROBNICATE x"))
    if defect == "type_change":  # ALTER COLUMN name TYPE integer USING length(name): values rewritten
        retyped = json.loads(columns)
        retyped[1]["source_type"] = "integer"
        history.append((t, 2, "0007", "ALTER", json.dumps(retyped), '["id"]', None, "ok", None))
    create_table(spark, warehouse, f"{bronze}.inv_schema_history",
                 "table_id STRING, version INT, valid_from_seq STRING, change_kind STRING, columns STRING, "
                 "primary_key STRING, ddl STRING, parse_status STRING, parse_error STRING", history)
    rejects = [("inv", f"00{i}", "decode", f"cannot decode event {i}: bad JSON", ("sql", "X'7B7B'"), "{{",
                None, 1, ts) for i in range(2)] if defect == "rejects" else []
    create_table(spark, warehouse, f"{bronze}.inv_rejects",
                 "source STRING, seq STRING, stage STRING, error STRING, raw BINARY, raw_text STRING, "
                 "position STRING, batch_id BIGINT, rejected_at TIMESTAMP", rejects)

    # photo: bytes that are not UTF-8 (the check must not read them as text), and the placeholder's bytes
    photo_ph = ("sql", f"X'{PH.encode().hex()}'") if defect == "placeholder" else ("sql", "X'00'")
    current = [(1, "ada", "active", ("sql", "X'FF00FEC3'"), "0005", ("sql", "current_timestamp()"), "u"),
               (2, "grace", "closed", None, "0002", ts, "r"),
               (4, PH if defect == "placeholder" else "edsger", "active", photo_ph, "0004", ts, "c")]
    if defect == "duplicate_key":
        current.append((2, "grace h.", "active", None, "0003", ts, "u"))
    if defect == "reconciliation":
        current = [row for row in current if row[0] != 4]
    create_table(spark, warehouse, f"{silver}.inv_customers",
                 "id INT, name STRING, status STRING, photo BINARY, _seq STRING, _source_ts TIMESTAMP, _op STRING",
                 current)

    def d(day: int) -> tuple[str, str]:
        return ("sql", f"TIMESTAMP'2024-01-{day:02d} 00:00:00'")

    versions = [(1, "ada", "active", d(1), d(5), False), (1, "ada", "active", d(5), None, True),
                (2, "grace", "closed", d(1), None, True), (3, "alan", "active", d(1), d(3), False),
                (4, "edsger", "active", d(2), None, True)]
    if defect == "scd2_overlap":
        versions[0] = (1, "ada", "active", d(1), d(9), False)  # ends after the next version starts on the 5th
    create_table(spark, warehouse, f"{silver}.inv_customers_history",
                 "id INT, name STRING, status STRING, valid_from TIMESTAMP, valid_to TIMESTAMP, is_current BOOLEAN",
                 versions)
    create_table(spark, warehouse, f"{gold}.customers_by_status", "status STRING, customers BIGINT",
                 [("active", 2), ("closed", 1)])
    return {"bronze": bronze, "silver": silver, "gold": gold}


def write_project(exp_dir: Path, schemas: dict[str, str], **checks: dict) -> None:
    exp_dir.mkdir(parents=True, exist_ok=True)
    (exp_dir / "project.yml").write_text(yaml.safe_dump({"schemas": schemas, "checks": checks}))


def config_for(warehouse: Path) -> ProjectConfig:
    return ProjectConfig(engine=EngineSettings(profile="local", warehouse=warehouse), sources={}, path=None)
