"""`lakecdc schema rebuild` and `lakecdc schema show` end to end, as a user runs them: a small project
(lakecdc.yml with one MariaDB source), bronze S_schema_changes written as real Delta through the engine (DDL
records plus one record carrying only Debezium tableChanges, built with ingest.schema), then the CLI in fresh
processes reading and writing the same warehouse."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ingest.bronze.contract import SCHEMA_CHANGES_COLUMNS, ddl_columns
from ingest.config import EngineSettings
from ingest.engine import start_engine
from ingest.schema import SchemaState
from tests.conftest import run_lakecdc

pytestmark = pytest.mark.integration

DDL = [
    ("0001", "CREATE TABLE customers (id INT AUTO_INCREMENT PRIMARY KEY, name VARCHAR(50) NOT NULL)"),
    ("0002", "ALTER TABLE customers ADD email VARCHAR(100) DEFAULT 'none' AFTER name"),
    ("0003", "ALTER TABLE customers FROBNICATE name"),
    ("0004", "ALTER TABLE customers DROP COLUMN name, MODIFY email VARCHAR(200) NOT NULL"),
]


def _orders_table_changes() -> str:
    state = SchemaState(server_charset="utf8mb4")
    [change] = state.apply("CREATE TABLE orders (order_no BIGINT NOT NULL, total DECIMAL(10,2), "
                           "PRIMARY KEY (order_no))", "mariadb", "shop")
    return json.dumps([change.to_table_change()])


def _write_schema_changes(project: Path) -> None:
    settings = EngineSettings(profile="local", warehouse=project / "warehouse")
    engine = start_engine(settings, reuse=False)
    try:
        rows = [("shop", seq, 0, "shop", None, ddl, None, "{}", None, 1, None) for seq, ddl in DDL]
        rows.append(("shop", "0005", 0, "shop", None, None, _orders_table_changes(), "{}", None, 1, None))
        df = engine.spark.createDataFrame(rows, schema=ddl_columns(SCHEMA_CHANGES_COLUMNS))
        df.write.format("delta").save(str(project / "warehouse" / "bronze" / "shop_schema_changes"))
    finally:
        engine.stop()


def test_schema_rebuild_and_show(tmp_path: Path):
    project = tmp_path / "proj"
    project.mkdir()
    config = project / "lakecdc.yml"
    config.write_text("engine:\n  profile: local\n  warehouse: ./warehouse\nsources:\n  shop:\n"
                      "    connector: mariadb\n    database.server.charset: utf8mb4\n")
    _write_schema_changes(project)
    env = {"LAKECDC_CONFIG": str(config)}

    rebuild = run_lakecdc("schema", "rebuild", cwd=project, env=env)
    assert rebuild.returncode == 0, rebuild.stderr
    # 3 customers versions + 1 error row + 1 orders version; the FROBNICATE statement becomes one reject
    assert "shop: 5 schema changes -> 5 history rows (1 parse errors, 1 new rejects)" in rebuild.stdout

    latest = run_lakecdc("schema", "show", "shop.customers", cwd=project, env=env)
    assert latest.returncode == 0, latest.stderr
    lines = latest.stdout.splitlines()
    assert lines[0] == "shop.customers version 3 (ALTER, valid from seq 0004, source ddl)"
    assert [line.split()[:3] for line in lines[1:]] == [["1", "id", "int(11)"], ["2", "email", "varchar(200)"]]
    assert lines[1].split()[3:] == ["INT", "PK", "NOT", "NULL"]
    assert lines[2].split()[3:] == ["STRING", "NOT", "NULL"]  # MODIFY replaces the definition: default gone

    # --at: the version valid at seq 0003 is version 2 (the unparseable statement changed nothing)
    earlier = run_lakecdc("schema", "show", "shop.customers", "--at", "0003", cwd=project, env=env)
    assert earlier.returncode == 0, earlier.stderr
    lines = earlier.stdout.splitlines()
    assert lines[0] == "shop.customers version 2 (ALTER, valid from seq 0002, source ddl)"
    assert [line.split()[1] for line in lines[1:]] == ["id", "name", "email"]
    assert lines[3].split()[2:] == ["varchar(100)", "STRING", "NULL", "DEFAULT", "none"]

    orders = run_lakecdc("schema", "show", "shop.orders", "--source", "shop", cwd=project, env=env)
    assert orders.returncode == 0, orders.stderr
    lines = orders.stdout.splitlines()
    assert lines[0] == "shop.orders version 1 (CREATE, valid from seq 0005, source table_changes)"
    assert [line.split() for line in lines[1:]] == [["1", "order_no", "BIGINT", "BIGINT", "PK", "NOT", "NULL"],
                                                    ["2", "total", "DECIMAL(10,2)", "DECIMAL(10,2)", "NULL"]]

    missing = run_lakecdc("schema", "show", "shop.nope", cwd=project, env=env)
    assert missing.returncode == 2
    assert "no schema for shop.nope in the history of shop" in missing.stderr
    # an id without its database (the README once wrote inventory.customers for db.table ids): the close ones
    bare = run_lakecdc("schema", "show", "customers", cwd=project, env=env)
    assert bare.returncode == 2 and "did you mean shop.customers" in bare.stderr, bare.stderr


def test_show_writes_default_null_as_sql() -> None:
    from ingest.schema.commands import column_line

    col = {"position": 2, "name": "note", "source_type": "text", "spark_type": "STRING", "nullable": True,
           "has_default": True, "default": None}
    assert column_line(col, set()).split()[-3:] == ["NULL", "DEFAULT", "NULL"]
    assert column_line({**col, "has_default": False}, set()).split()[-1] == "NULL"
