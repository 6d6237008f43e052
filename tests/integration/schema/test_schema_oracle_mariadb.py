"""Oracle check: every statement of the MySQL/MariaDB corpus runs on the real MariaDB; after each one the parsed
state must equal information_schema (names, order, COLUMN_TYPE, nullability, default, charset, primary key)."""

from __future__ import annotations

import pytest

from tests.support.schema_oracle import MariaOracle, read_corpus, table_diff

pytestmark = pytest.mark.integration

DB = "schemahist_oracle"
# Statements whose parsed state is known to differ from the server (documented in docs/schema-history.md).
KNOWN_GAPS: set[str] = set()


def test_mariadb_corpus_matches_information_schema(mariadb_params):
    statements = read_corpus("mariadb_handwritten.sql") + read_corpus("mariadb_type_matrix.sql")
    assert len(statements) >= 300
    oracle = MariaOracle(mariadb_params, DB, others=("schemahist_other",))
    state = oracle.new_state()
    mismatches: dict[str, str] = {}
    errors: dict[str, str] = {}
    try:
        for stmt in statements:
            refused = oracle.execute(stmt)
            assert refused is None, f"corpus statement fails on the server: {stmt[:200]!r}: {refused}"
            changes = state.apply(stmt, "mariadb", default_database=DB)
            for change in changes:
                if change.kind == "ERROR":
                    errors[stmt] = change.detail or ""
            server, parsed = oracle.server_tables(), oracle.parsed_tables(state)
            if server != parsed:
                mismatches[stmt] = table_diff(server, parsed)
                state = oracle.resync(state)  # judge each statement on its own
    finally:
        oracle.close()
    report = "\n".join(f"- {s[:160]!r}\n    {d}" for s, d in mismatches.items())
    exact = 1 - len(mismatches) / len(statements)
    print(f"\nMariaDB oracle: {len(statements)} statements, {len(mismatches)} mismatches, exact {exact:.1%}\n{report}")
    assert exact >= 0.98, report
    assert set(mismatches) <= KNOWN_GAPS, "new mismatches:\n" + report
    assert not errors, errors
