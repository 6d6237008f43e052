"""The value ADD COLUMN gives the rows that already exist (Column.missing_value, issue 17): MariaDB's from the
statement (defaults.mysql_added_value; each expected value was read back from MariaDB 10.11 after the same
ALTER on a table with one row), PostgreSQL's from tableChanges (missingValue, pg_attribute.attmissingval),
and the history rows that silver reads (S_schema_history.columns[].missing_value)."""

from __future__ import annotations

import json

import pytest

from ingest.schema.defaults import mysql_added_value
from ingest.schema.history import SchemaChangeRecord, build_history
from ingest.schema.interpreter import SchemaState

pytestmark = pytest.mark.unit

CASES = [
    # (column definition, the value of the older rows as a SQL string literal, or None for NULL / unknown)
    ("INT DEFAULT (-887 * 2)", "'-1774'"),
    ("INT DEFAULT (2.5 * 1)", "'3'"),                      # stored rounded half away from zero
    ("INT DEFAULT (-2.5 * 1)", "'-3'"),
    ("BIGINT DEFAULT ((1 + 2) * -3)", "'-9'"),
    ("DECIMAL(10,2) NOT NULL DEFAULT (1.005 * 3)", "'3.02'"),
    ("DOUBLE DEFAULT (0.1 * 3)", "'0.3'"),                 # decimal arithmetic, then the double
    ("INT DEFAULT 7", "'7'"),                              # literals as the server stores them
    ("DECIMAL(8,2) DEFAULT -1.5", "'-1.50'"),
    ("VARCHAR(5) DEFAULT 'it''s'", "'it''s'"),
    ("DATE DEFAULT '2020-02-29'", "'2020-02-29'"),
    ("INT NOT NULL", "'0'"),                               # NOT NULL without a default: the implicit one
    ("DOUBLE NOT NULL", "'0'"),
    ("VARCHAR(3) NOT NULL", "''"),
    ("TEXT NOT NULL", "''"),
    ("INT", None),                                         # NULL
    ("INT DEFAULT NULL", None),
    ("DATETIME DEFAULT now()", None),                      # a function: not known from the statement
    ("INT DEFAULT (2e3 * 1)", None),                       # a double literal: not folded
    ("INT DEFAULT (7 DIV 2)", None),
    ("VARCHAR(9) DEFAULT (1 * 2)", None),                  # an expression into a string column: not folded
    ("INT NOT NULL AUTO_INCREMENT UNIQUE", None),
]


@pytest.mark.parametrize(("definition", "expected"), CASES, ids=[c[0] for c in CASES])
def test_mariadb_added_column_value(definition: str, expected: str | None) -> None:
    state = SchemaState()
    state.apply("CREATE TABLE t (id INT PRIMARY KEY)", "mariadb", "d")
    change = state.apply(f"ALTER TABLE t ADD COLUMN c {definition}", "mariadb", "d")[-1]
    column = next(c for c in change.table.columns if c.name == "c")
    assert column.missing_value == expected
    assert mysql_added_value(column) == expected


def test_only_added_columns_get_a_value() -> None:
    state = SchemaState()
    state.apply("CREATE TABLE t (id INT PRIMARY KEY, a INT NOT NULL DEFAULT 5)", "mariadb", "d")
    statement = "ALTER TABLE t MODIFY a BIGINT NOT NULL DEFAULT 6, ADD b INT DEFAULT (2 * 3)"
    change = state.apply(statement, "mariadb", "d")[-1]
    assert {c.name: c.missing_value for c in change.table.columns} == {"id": None, "a": None, "b": "'6'"}


def _history_columns(records: list[SchemaChangeRecord], dialect: str) -> dict[str, str | None]:
    rows, _, _ = build_history(records, dialect, source="s")
    return {c["name"]: c["missing_value"] for c in json.loads(rows[-1]["columns"])}


def test_history_takes_the_value_from_the_ddl_when_table_changes_lack_it() -> None:
    """MariaDB's tableChanges (Debezium's layout) have no missingValue: the DDL parse supplies it."""
    create = "CREATE TABLE t (id INT PRIMARY KEY)"
    alter = "ALTER TABLE t ADD COLUMN c INT DEFAULT (-887 * 2)"
    state = SchemaState()
    entries = []
    for ddl in (create, alter):
        change = state.apply(ddl, "mariadb", "d")[-1]
        entry = change.table.to_table_change("CREATE" if ddl is create else "ALTER")
        assert all("missingValue" not in c for c in entry["table"]["columns"])
        entries.append(json.dumps([entry]))
    records = [SchemaChangeRecord(seq=f"{i:04d}", ddl=ddl, database_name="d", table_changes=entries[i])
               for i, ddl in enumerate((create, alter))]
    assert _history_columns(records, "mariadb") == {"id": None, "c": "'-1774'"}


def test_history_keeps_postgresqls_missing_value() -> None:
    """PostgreSQL's schema changes have no DDL; their tableChanges carry missingValue."""
    column = {"name": "c", "jdbcType": 4, "typeName": "int4", "typeExpression": "integer", "position": 2,
              "optional": True, "missingValue": "'-1774'"}
    key = {"name": "id", "jdbcType": 4, "typeName": "int4", "typeExpression": "integer", "position": 1,
           "optional": False}
    entry = {"type": "ALTER", "id": '"db"."s"."t"',
             "table": {"primaryKeyColumnNames": ["id"], "columns": [key, column]}}
    record = SchemaChangeRecord(seq="0001", ddl=None, database_name="db", schema_name="s",
                                table_changes=json.dumps([entry]))
    assert _history_columns([record], "postgres") == {"id": None, "c": "'-1774'"}
