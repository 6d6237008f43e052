"""Random DDL (tests/support/ddl_fuzz.py, fixed seed) executed on the real MariaDB and PostgreSQL and fed to the schema
history: after every statement the server accepts, the parsed tables must equal the catalog for >= 99.5% of the
statements, and the deliberately invalid statements the server refuses (unknown column, duplicate column, second
primary key, BLOB/TEXT key without a length) must be flagged (ERROR, catalog unchanged) for >= 99%.
The long form: `.venv/bin/python bench/ddl.py --fuzz mariadb postgres --seeds 1 2 3 --statements 2000`."""

from __future__ import annotations

import pytest

from tests.support.ddl_fuzz import run_fuzz
from tests.support.schema_oracle import MariaOracle, PgOracle

pytestmark = [pytest.mark.integration, pytest.mark.slow]

SEED = 17


def _check(result) -> None:
    print("\n" + result.report())
    assert result.exact_share >= 0.995, result.report()
    assert sum(result.invalid.values()) >= 20
    assert result.invalid_flagged_share >= 0.99, result.report()


def test_random_mariadb_ddl_matches_information_schema(mariadb_params):
    oracle = MariaOracle(mariadb_params, "schemahist_fuzz")
    try:
        result = run_fuzz(oracle, "mariadb", SEED, accepted=800)
    finally:
        oracle.close()
    assert result.accepted == 800
    _check(result)


def test_random_postgres_ddl_matches_catalog(pg_dsn):
    oracle = PgOracle(pg_dsn, "schemahist_fuzz")
    try:
        result = run_fuzz(oracle, "postgres", SEED, accepted=1000)
    finally:
        oracle.close()
    assert result.accepted == 1000
    _check(result)
