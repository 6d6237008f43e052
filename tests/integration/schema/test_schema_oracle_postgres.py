"""Oracle check: every statement of the PostgreSQL corpus (tests/ddl_corpus/postgres.sql) runs on the real
PostgreSQL (own database `schemahist_pg`); after each one the parsed state (SchemaState.apply(ddl, "postgres"))
must equal pg_catalog: tables, column names, order, format_type() (length/precision/scale), NOT NULL, default
(normalized), generated (stored) columns, identity columns and the primary key with its column order. One
connection, one catalog query per statement."""

from __future__ import annotations

import pytest

from tests.support.schema_oracle import PgOracle, read_corpus, table_diff

pytestmark = pytest.mark.integration

DB = "schemahist_pg"
# Statements whose parsed state is known to differ from the server (documented in docs/schema-history.md).
# CREATE TABLE ... AS takes its column types from the query: recorded as parse errors (the table is flagged).
KNOWN_GAPS: set[str] = {"CREATE TABLE ctas_t AS SELECT id, v FROM with_opts",
                        "CREATE TABLE ctas_cols (a, b) AS VALUES (1, 'x')"}


def test_postgres_corpus_matches_catalog(pg_dsn):
    statements = read_corpus("postgres.sql")
    assert len(statements) >= 100
    oracle = PgOracle(pg_dsn, DB)
    state = oracle.new_state()
    mismatches: dict[str, str] = {}
    errors: dict[str, str] = {}
    try:
        for stmt in statements:
            refused = oracle.execute(stmt)
            assert refused is None, f"corpus statement fails on the server: {stmt[:200]!r}: {refused}"
            for change in state.apply(stmt, "postgres", default_database=DB):
                if change.kind == "ERROR":
                    errors[stmt] = change.detail or ""
            server, parsed = oracle.server_tables(), oracle.parsed_tables(state)
            if server != parsed:
                mismatches[stmt] = table_diff(server, parsed)
                oracle.resync(state, {k for k in set(server) | set(parsed) if server.get(k) != parsed.get(k)})
    finally:
        oracle.close()
    report = "\n".join(f"- {s[:160]!r}\n    {d}" for s, d in mismatches.items())
    exact = 1 - len(mismatches) / len(statements)
    print(f"\nPostgreSQL oracle: {len(statements)} statements, {len(mismatches)} mismatches, exact {exact:.1%}\n"
          f"{report}\nparse errors: {errors}")
    assert exact >= 0.98, report
    assert set(mismatches) <= KNOWN_GAPS, "new mismatches:\n" + report
    assert set(errors) <= KNOWN_GAPS, errors
    assert all(stmt in mismatches for stmt in KNOWN_GAPS), "a known gap now matches: remove it from KNOWN_GAPS"
