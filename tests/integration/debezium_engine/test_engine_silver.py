"""Source -> silver through the real Debezium connector in the embedded engine (`connector: debezium`): the
same database, workloads and comparison as the native PostgreSQL source's end-to-end test
(tests/support/e2e.py), with Debezium's own postgres connector capturing."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.e2e import PG_SOURCE, Project, pg_drop_slot, pg_pipeline, pg_properties, pg_setup

pytestmark = [pytest.mark.integration, pytest.mark.slow]

POSTGRES_CONNECTOR = "io.debezium.connector.postgresql.PostgresConnector"


def test_postgresql_through_the_embedded_debezium_connector_gives_silver_equal_to_source(
        pg_dsn: str, tmp_path: Path) -> None:
    dsn = pg_setup(pg_dsn)
    project = Project(tmp_path, PG_SOURCE, "debezium", {
        **pg_properties(pg_dsn), "connector.class": POSTGRES_CONNECTOR, "plugin.name": "pgoutput"})
    try:
        # no column rename: Debezium's postgres connector emits no schema change events, so silver sees a renamed
        # column as a new one (docs/connectors/debezium-engine.md, "Limits")
        pg_pipeline(project, dsn, project.dbt_build_local, rename=False)
    finally:
        pg_drop_slot(pg_dsn)
