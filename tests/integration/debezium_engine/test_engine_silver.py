"""Source -> silver through the real Debezium connector in the embedded engine (`connector: debezium`): the
same database, workloads and comparison as the native PostgreSQL source's end-to-end test
(tests/support/e2e.py), with Debezium's own postgres connector capturing."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.e2e import (
    PG_JSON,
    PG_SOURCE,
    PG_TABLES,
    Project,
    compare_source,
    pg_debezium_properties,
    pg_drop_slot,
    pg_setup,
    pg_source_rows,
    pg_workload_1,
)

pytestmark = [pytest.mark.integration, pytest.mark.slow]

def test_postgresql_through_the_embedded_debezium_connector_gives_silver_equal_to_source(
        pg_dsn: str, tmp_path: Path) -> None:
    dsn = pg_setup(pg_dsn)
    project = Project(tmp_path, PG_SOURCE, "debezium", pg_debezium_properties(pg_dsn))
    try:
        # snapshot, then the first workload of the native connector's e2e test (updates with unchanged TOASTed
        # values, deletes, key changes, an added column, inserts) streamed by a second run that resumes from
        # bronze's offsets; the incremental second build is the native test's (the dbt side is the same)
        project.ingest()
        pg_workload_1(dsn)
        project.ingest()
        project.prepare_models()
        project.dbt_build_local()
        compare_source(project, PG_TABLES, PG_JSON, lambda t: pg_source_rows(dsn, t), "after workload 1:")
    finally:
        pg_drop_slot(pg_dsn)
