"""The engine-differential lane on real captures (issue 21, docs/engine.md): the type tables of the conformance
workloads (every row of every type, snapshot and streaming, captured by lakecdc from the real PostgreSQL and
MariaDB) built into silver current state on the embedded engine and on Apache Spark, compared value for value.

One run per connector (each build of a type table costs tens of seconds on both engines): PostgreSQL pga
(precise decimals, adaptive times, bytes, hstore as a map, the run with the most events) and MariaDB my_b
(decimals as doubles, Connect times, base64, unsigned bigint as decimal); the other handling modes' decoding
is compared on the edge values of tests/integration/silver/test_engine_lane.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from ingest.config import EngineSettings
from ingest.engine import start_engine
from ingest.generate.catalog import captured_tables
from ingest.generate.render import WriteResult, render_source, write_files
from tests.conformance.capture import Captured
from tests.support.apache_spark import ApacheSpark, assert_same_tables
from tests.support.silver import make_project, run_dbt

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def same_type_silver(captured: Captured, runs: tuple[str, ...], apache_spark: ApacheSpark, tmp_path: Path) -> int:
    warehouse = captured.lakecdc.warehouse
    project = make_project(tmp_path, warehouse)
    engine = start_engine(EngineSettings(profile="local", warehouse=warehouse), reuse=False)
    try:
        models = []
        for run in runs:
            tables = [t for t in captured_tables(engine.spark, run) if t.table_id.endswith(".types")]
            assert tables, f"no type table captured in run {run}"
            write_files(render_source(run, tables, project / "models"), WriteResult([], [], []))
            models += [f"{run}__types"]
        select = ["--select", *models]
        run_dbt(engine, project, "run", *select)
    finally:
        engine.stop()
    apache_spark.reset()
    apache_spark.hand_over_schema(warehouse, "bronze")
    apache_spark.hand_over_schema(warehouse, "silver", as_schema="sail_silver")
    apache_spark.dbt(project, "run", "--threads", "2", *select)
    return assert_same_tables(apache_spark.spark, [(f"sail_silver.{m}", f"silver.{m}") for m in models])


def test_postgresql_type_tables_alike(pg_captured: Captured, apache_spark: ApacheSpark, tmp_path: Path) -> None:
    assert same_type_silver(pg_captured, ("pga",), apache_spark, tmp_path) > 0


def test_mariadb_type_tables_alike(mariadb_captured: Captured, apache_spark: ApacheSpark, tmp_path: Path) -> None:
    assert same_type_silver(mariadb_captured, ("my_b",), apache_spark, tmp_path) > 0
