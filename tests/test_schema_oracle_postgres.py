"""Oracle check: every statement of the PostgreSQL corpus (tests/ddl_corpus/postgres.sql) runs on the real
PostgreSQL (own database `schemahist_pg`); after each one the parsed state (SchemaState.apply(ddl, "postgres"))
must equal pg_catalog: tables, column names, order, format_type() (length/precision/scale), NOT NULL, default
(normalized), generated (stored) columns, identity columns and the primary key with its column order. One
connection, one catalog query per statement."""

from __future__ import annotations

import re

import psycopg2
import pytest

from ingest.schema import Column, SchemaState, Table, TableId
from tests.schema_oracle import norm_default, read_corpus, table_diff

pytestmark = pytest.mark.integration

DB = "schemahist_pg"
# Statements whose parsed state is known to differ from the server (documented in docs/schema-history.md).
# CREATE TABLE ... AS takes its column types from the query: recorded as parse errors (the table is flagged).
KNOWN_GAPS: set[str] = {"CREATE TABLE ctas_t AS SELECT id, v FROM with_opts",
                        "CREATE TABLE ctas_cols (a, b) AS VALUES (1, 'x')"}

_CATALOG = """
SELECT n.nspname, c.relname, a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull,
       pg_get_expr(d.adbin, d.adrelid), a.attgenerated <> '', a.attidentity <> '',
       (SELECT array_agg(k.attname ORDER BY u.o) FROM pg_constraint p, unnest(p.conkey) WITH ORDINALITY u(n, o),
               pg_attribute k WHERE p.conrelid = c.oid AND p.contype = 'p' AND k.attrelid = c.oid AND k.attnum = u.n)
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
LEFT JOIN pg_attrdef d ON d.adrelid = c.oid AND d.adnum = a.attnum
WHERE c.relkind IN ('r', 'p') AND n.nspname NOT IN ('pg_catalog', 'information_schema')
  AND n.nspname NOT LIKE 'pg\\_toast%%' AND n.nspname NOT LIKE 'pg\\_temp%%'
ORDER BY n.nspname, c.relname, a.attnum
"""
_NUMERIC = ("smallint", "integer", "bigint", "numeric", "real", "double precision", "money", "boolean")


def _default(value: str | None, type_text: str, literal: bool) -> str | None:
    if value is not None and literal:
        value = "'" + value.replace("'", "''") + "'"
    norm = norm_default(value, type_text.startswith(_NUMERIC) and not type_text.endswith("]"))
    if norm is not None and value is not None and not value.lstrip("(").startswith("'"):
        norm = norm.lower()  # keywords such as CURRENT_DATE
    return norm


def _server_tables(cur) -> dict[tuple[str, str], tuple]:
    cur.execute(_CATALOG)
    tables: dict[tuple[str, str], tuple] = {}
    for schema, table, name, type_text, notnull, default, generated, identity, pk in cur.fetchall():
        cols, _ = tables.setdefault((schema, table), ([], list(pk or [])))
        cols.append((name, type_text, not notnull, None if generated else _default(default, type_text, False),
                     generated, identity))
    return tables


def _parsed_tables(state: SchemaState) -> dict[tuple[str, str], tuple]:
    out = {}
    for tid, table in state.tables.items():
        cols = []
        for c in table.columns:
            default = None
            if c.has_default and not c.generation_expression:
                default = _default(c.default, c.source_type, c.default_is_literal)
            serial = c.has_default and (c.default or "").startswith("nextval(")
            cols.append((c.name, c.source_type, c.nullable, default, bool(c.generation_expression),
                         c.auto_increment and not serial))
        out[(tid.schema or "", tid.table)] = (cols, list(table.primary_key))
    return out


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _resync(state: SchemaState, cur, keys: set[tuple[str, str]]) -> None:
    """After a mismatch, re-create the differing tables from the catalog so later statements start equal."""
    server = _server_tables(cur)
    for schema, table in keys:
        tid = TableId(DB, schema, table)
        state.tables.pop(tid, None)
        if (schema, table) not in server:
            continue
        cur.execute("SELECT a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull, pg_get_expr(d.adbin, "
                    "d.adrelid), a.attgenerated, a.attidentity <> '' FROM pg_attribute a JOIN pg_class c "
                    "ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace "
                    "LEFT JOIN pg_attrdef d ON d.adrelid = c.oid AND d.adnum = a.attnum "
                    "WHERE n.nspname = %s AND c.relname = %s AND a.attnum > 0 AND NOT a.attisdropped "
                    "ORDER BY a.attnum", (schema, table))
        elements = []
        rows = [(n, t, nn, d, g == "s", i) for n, t, nn, d, g, i in cur.fetchall()]
        for name, type_text, notnull, default, generated, _identity in rows:
            text = f"{_quote(name)} {type_text}" + (" NOT NULL" if notnull else "")
            if default is not None:
                text += f" GENERATED ALWAYS AS ({default}) STORED" if generated else f" DEFAULT {default}"
            elements.append(text)
        pk = server[(schema, table)][1]
        if pk:
            elements.append("PRIMARY KEY (" + ", ".join(_quote(k) for k in pk) + ")")
        version = state._versions.get(tid, 0)
        state.apply(f"CREATE TABLE {_quote(schema)}.{_quote(table)} ({', '.join(elements)})", "postgres", DB)
        state._versions[tid] = version
        # the re-parse may repeat the parser's mistake (or fail): take the compared attributes from the server
        if tid not in state.tables:
            state.tables[tid] = Table(tid, [Column(name, type_text, 1111) for name, type_text, *_ in rows], list(pk))
        for col, (_name, type_text, notnull, default, generated, identity) in zip(state.tables[tid].columns, rows,
                                                                                 strict=True):
            col.source_type, col.nullable, col.auto_increment = type_text, not notnull, identity
            col.has_default, col.default, col.default_is_literal = default is not None, default, False
            col.generation_expression = default if generated else None
        state.tables[tid].primary_key = list(pk)
        state.tables[tid].renumber()


def test_postgres_corpus_matches_catalog(pg_dsn):
    statements = read_corpus("postgres.sql")
    assert len(statements) >= 100
    admin = psycopg2.connect(pg_dsn)
    admin.autocommit = True
    with admin.cursor() as cur:
        cur.execute(f"DROP DATABASE IF EXISTS {DB} WITH (FORCE)")
        cur.execute(f"CREATE DATABASE {DB}")
    dsn = re.sub(r"dbname=\S+", f"dbname={DB}", pg_dsn) if "dbname=" in pg_dsn else f"{pg_dsn} dbname={DB}"
    conn = psycopg2.connect(dsn)
    conn.autocommit = True
    state = SchemaState()
    mismatches: dict[str, str] = {}
    errors: dict[str, str] = {}
    try:
        cur = conn.cursor()
        for stmt in statements:
            try:
                cur.execute(stmt)
            except psycopg2.Error as exc:
                raise AssertionError(f"corpus statement fails on the server: {stmt[:200]!r}: {exc}") from None
            for change in state.apply(stmt, "postgres", default_database=DB):
                if change.kind == "ERROR":
                    errors[stmt] = change.detail or ""
            server, parsed = _server_tables(cur), _parsed_tables(state)
            if server != parsed:
                mismatches[stmt] = table_diff(server, parsed)
                _resync(state, cur, {k for k in set(server) | set(parsed) if server.get(k) != parsed.get(k)})
        cur.close()
    finally:
        conn.close()
        with admin.cursor() as cur:
            cur.execute(f"DROP DATABASE IF EXISTS {DB} WITH (FORCE)")
        admin.close()
    report = "\n".join(f"- {s[:160]!r}\n    {d}" for s, d in mismatches.items())
    exact = 1 - len(mismatches) / len(statements)
    print(f"\nPostgreSQL oracle: {len(statements)} statements, {len(mismatches)} mismatches, exact {exact:.1%}\n"
          f"{report}\nparse errors: {errors}")
    assert exact >= 0.98, report
    assert set(mismatches) <= KNOWN_GAPS, "new mismatches:\n" + report
    assert set(errors) <= KNOWN_GAPS, errors
    assert all(stmt in mismatches for stmt in KNOWN_GAPS), "a known gap now matches: remove it from KNOWN_GAPS"
