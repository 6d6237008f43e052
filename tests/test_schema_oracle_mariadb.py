"""Oracle check: every statement of the MySQL/MariaDB corpus runs on the real MariaDB; after each one the parsed
state must equal information_schema (names, order, COLUMN_TYPE, nullability, default, charset, primary key)."""

from __future__ import annotations

import re

import pymysql
import pytest

from ingest.schema import SchemaState
from tests.schema_oracle import norm_default, read_corpus, table_diff

pytestmark = pytest.mark.integration

DB = "schemahist_oracle"
# Statements whose parsed state is known to differ from the server (documented in docs/schema-history.md).
KNOWN_GAPS: set[str] = set()


def _server_tables(cur) -> dict[str, tuple]:
    cur.execute("SELECT c.TABLE_NAME, COLUMN_NAME, COLUMN_TYPE, IS_NULLABLE, COLUMN_DEFAULT, CHARACTER_SET_NAME "
                "FROM information_schema.COLUMNS c JOIN information_schema.TABLES t USING (TABLE_SCHEMA, TABLE_NAME) "
                "WHERE TABLE_SCHEMA = %s AND t.TABLE_TYPE IN ('BASE TABLE', 'SYSTEM VERSIONED') "
                "ORDER BY c.TABLE_NAME, ORDINAL_POSITION", (DB,))
    tables: dict[str, list] = {}
    for table, name, ctype, nullable, default, charset in cur.fetchall():
        numeric = ctype.startswith(("tinyint", "smallint", "mediumint", "int", "bigint", "decimal", "float",
                                    "double", "year", "bit("))
        numeric = numeric and not ctype.startswith("bit(")
        default = None if default in (None, "NULL") else default
        if default and ctype.startswith("binary("):  # the server shows BINARY(n) defaults zero-padded
            default = re.sub(r"(\\0)+'$", "'", default)
        tables.setdefault(table, []).append(
            (name, ctype.lower(), nullable == "YES", norm_default(default, numeric), _cs(charset)))
    cur.execute("SELECT TABLE_NAME, COLUMN_NAME FROM information_schema.KEY_COLUMN_USAGE WHERE TABLE_SCHEMA = %s "
                "AND CONSTRAINT_NAME = 'PRIMARY' ORDER BY TABLE_NAME, ORDINAL_POSITION", (DB,))
    pks: dict[str, list] = {}
    for table, name in cur.fetchall():
        pks.setdefault(table, []).append(name)
    return {t: (cols, pks.get(t, [])) for t, cols in tables.items()}


def _cs(charset: str | None) -> str | None:
    return "utf8mb3" if charset == "utf8" else charset


def _parsed_tables(state: SchemaState) -> dict[str, tuple]:
    out = {}
    for tid, table in state.tables.items():
        if tid.database != DB:
            continue
        cols = []
        for c in table.columns:
            numeric = c.source_type.startswith(("tinyint", "smallint", "mediumint", "int", "bigint", "decimal",
                                                "float", "double", "year"))
            default = c.default if c.has_default and not c.auto_increment else None
            if default is not None and c.default_is_literal:
                default = "'" + default.replace("'", "''") + "'"
            cols.append((c.name, c.source_type.lower(), c.nullable, norm_default(default, numeric), _cs(c.charset)))
        out[tid.table] = (cols, list(table.primary_key))
    return out


def test_mariadb_corpus_matches_information_schema(mariadb_params):
    statements = read_corpus("mariadb_handwritten.sql") + read_corpus("mariadb_type_matrix.sql")
    assert len(statements) >= 300
    conn = pymysql.connect(**mariadb_params, autocommit=True)
    cur = conn.cursor()
    cur.execute("SELECT @@character_set_server")
    server_charset = cur.fetchone()[0]
    for db in (DB, "schemahist_other"):
        cur.execute(f"DROP DATABASE IF EXISTS {db}")
    cur.execute(f"CREATE DATABASE {DB}")
    cur.execute(f"USE {DB}")
    state = SchemaState(server_charset=server_charset)
    mismatches: dict[str, str] = {}
    errors: dict[str, str] = {}
    try:
        for stmt in statements:
            try:
                cur.execute(stmt)
            except pymysql.MySQLError as exc:
                raise AssertionError(f"corpus statement fails on the server: {stmt[:200]!r}: {exc}") from None
            changes = state.apply(stmt, "mariadb", default_database=DB)
            for change in changes:
                if change.kind == "ERROR":
                    errors[stmt] = change.detail or ""
            server, parsed = _server_tables(cur), _parsed_tables(state)
            if server != parsed:
                mismatches[stmt] = table_diff(server, parsed)
                state = _resync(state, server_charset, cur)  # judge each statement on its own
    finally:
        for db in (DB, "schemahist_other"):
            cur.execute(f"DROP DATABASE IF EXISTS {db}")
        conn.close()
    report = "\n".join(f"- {s[:160]!r}\n    {d}" for s, d in mismatches.items())
    exact = 1 - len(mismatches) / len(statements)
    print(f"\nMariaDB oracle: {len(statements)} statements, {len(mismatches)} mismatches, exact {exact:.1%}\n{report}")
    assert exact >= 0.98, report
    assert set(mismatches) <= KNOWN_GAPS, "new mismatches:\n" + report
    assert not errors, errors


def _resync(state: SchemaState, server_charset: str, cur) -> SchemaState:
    """After a mismatch, rebuild the parsed state from SHOW CREATE TABLE so later statements start equal."""
    fresh = SchemaState(server_charset=server_charset)
    fresh.databases = state.databases
    cur.execute(f"SHOW TABLES FROM {DB}")
    for (name,) in cur.fetchall():
        cur.execute(f"SHOW CREATE TABLE `{DB}`.`{name}`")
        fresh.apply(cur.fetchone()[1], "mariadb", default_database=DB)
    for tid, table in fresh.tables.items():  # keep version counters increasing
        table.version = state._versions.get(tid, 0)
    fresh._versions = dict(state._versions)
    return fresh
