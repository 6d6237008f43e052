"""End to end, source database -> silver: a real MariaDB and a real PostgreSQL, ingested with `lakecdc run
--until-caught-up`, then `lakecdc schema rebuild`, `lakecdc generate` and `lakecdc dbt build`, each in a fresh
process with the working directory in a project made by `lakecdc init` (lakecdc's dbt package through
packages.yml, as a user's own project). After a
workload (updates, deletes, primary-key changes, added columns, inserts; TOASTed values on PostgreSQL; a
renamed column on MariaDB)
every silver table must equal its source table row for row and column for column; a second workload and
build checks the incremental path. The PostgreSQL test builds the second time with plain `dbt build` (the
.venv's dbt executable) against `lakecdc serve`.

The project, the workloads and the comparison (with its normalisations) are in tests/support/e2e.py.
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.support.e2e import (
    BIG_TEXT,
    MARIA_JSON,
    MARIA_TABLES,
    PG_JSON,
    PG_SCHEMA,
    PG_SOURCE,
    PG_TABLES,
    Project,
    compare_source,
    events_of,
    maria_execute,
    maria_source_rows,
    maria_workload_1,
    maria_workload_2,
    pg_drop_slot,
    pg_execute,
    pg_pipeline,
    pg_properties,
    pg_setup,
    pg_source_rows,
    pg_workload_1,
    pg_workload_2,
    run_pipeline,
)

pytestmark = [pytest.mark.integration, pytest.mark.slow]


# -- the user's project: a copy of the dbt project with a lakecdc.yml ------------------------------------------


# -- comparison -----------------------------------------------------------------------------------------------


# -- MariaDB --------------------------------------------------------------------------------------------------


def test_mariadb_silver_equals_source(maria_project: Project, mariadb_params: dict) -> None:
    """The workloads, plus a table created by the first and dropped by the second (its silver table must be
    empty then), and one created by the first and renamed by the second, then changed: silver follows the table
    to its new name, rows and all, and the old name's silver is empty (docs/silver.md)."""
    tables = {**MARIA_TABLES, "scratch": ("id",), "moving": ("id",)}
    json_columns = {**MARIA_JSON, "scratch": set(), "moving": set(), "moved": set()}

    def workload_1() -> None:
        maria_workload_1(mariadb_params)
        maria_execute(mariadb_params, "CREATE TABLE scratch (id INT PRIMARY KEY, v VARCHAR(20))",
            "INSERT INTO scratch VALUES (1, 'a'), (2, 'b'), (3, 'c')",
            "CREATE TABLE moving (id INT PRIMARY KEY, v VARCHAR(20))", "INSERT INTO moving VALUES (1, 'x'), (2, 'y')")

    def workload_2() -> None:
        maria_workload_2(mariadb_params)
        maria_execute(mariadb_params, "DROP TABLE scratch", "RENAME TABLE moving TO moved",
                      "UPDATE moved SET v = 'y2' WHERE id = 2", "INSERT INTO moved VALUES (3, 'z')")

    def compare(stage: str) -> None:
        now = {**tables, "moved": ("id",)} if "workload 2" in stage else tables
        compare_source(maria_project, now, json_columns, lambda t: maria_source_rows(mariadb_params, t), stage)

    run_pipeline(maria_project, maria_project.dbt_build_local, workload_1, workload_2, compare)
    # the generated sources carry bronze freshness (loaded_at_field ingested_at): just landed, so it passes
    freshness = maria_project.lakecdc("dbt", "source", "freshness")
    assert re.search(r"PASS freshness of bronze_\w+\.\w+_events", freshness), freshness[-3000:]


# -- PostgreSQL -----------------------------------------------------------------------------------------------


def test_postgresql_silver_equals_source_local_then_served(pg_project: tuple[Project, str]) -> None:
    """The first build is `lakecdc dbt build` (the engine in process), the incremental second one plain
    `dbt build` (the venv's dbt executable) against `lakecdc serve` started after that, while the second
    ingest lands in bronze: both ways of running dbt build the same silver."""
    project, dsn = pg_project
    with contextlib.ExitStack() as stack:
        served: list[Callable[[], str]] = []

        def dbt_build() -> str:
            if served:
                return served[0]()
            output = project.dbt_build_local()
            served.append(stack.enter_context(project.served()))
            return output

        pg_pipeline(project, dsn, dbt_build)
    assert served, "dbt never ran through lakecdc serve"


# -- regression tests for PostgreSQL defects this suite found (fixed) ---------------------------------------


def test_postgresql_full_identity_sends_toasted_value(pg_project: tuple[Project, str]) -> None:
    project, dsn = pg_project
    project.ingest()
    pg_execute(dsn, "UPDATE shop.accounts SET code = 'x' WHERE id = 1",   # name (TOASTed) unchanged
               "UPDATE shop.accounts SET id = 100 WHERE id = 1")          # and a key change
    project.ingest()
    assert [op for op, _ in events_of(project, "accounts", {"id": 1})] == ["r", "u", "d"]
    assert [op for op, _ in events_of(project, "accounts", {"id": 100})] == ["c"]
    update = events_of(project, "accounts", {"id": 1})[1][1]
    create = events_of(project, "accounts", {"id": 100})[0][1]
    assert update["before"]["name"] == BIG_TEXT[::-1]   # the old tuple carries the value...
    assert update["after"]["name"] == BIG_TEXT[::-1]    # ...so Debezium emits it, not the placeholder
    assert create["after"]["name"] == BIG_TEXT[::-1]


def test_postgresql_second_run_does_not_snapshot_again(pg_project: tuple[Project, str]) -> None:
    project, dsn = pg_project
    project.ingest()                                       # the snapshot, nothing streamed yet
    pg_execute(dsn, "INSERT INTO shop.notes (id, title) VALUES (77, 'after the snapshot')")
    project.ingest()
    assert [op for op, _ in events_of(project, "notes", {"id": 77})] == ["c"]


def test_postgresql_schema_history_uses_the_events_table_ids(pg_project: tuple[Project, str]) -> None:
    from deltalake import DeltaTable

    project, _ = pg_project
    project.ingest()
    project.lakecdc("schema", "rebuild", "--source", PG_SOURCE)
    history = DeltaTable(str(project.warehouse / "bronze" / f"{PG_SOURCE}_schema_history")).to_pyarrow_table(
        columns=["table_id"]).to_pylist()
    assert {r["table_id"] for r in history} == {r["table_id"] for r in project.bronze_events()}


def test_postgresql_silver_after_incremental_and_blocking_snapshots(pg_dsn: str, tmp_path: Path) -> None:
    """Issue 16, silver stays correct: the source starts without an initial snapshot (no_data); an incremental
    snapshot (chunks of 3, interleaved with the first workload's changes of the same rows: updates, deletes, key
    changes, an added column, TOASTed values) fills bronze, then a blocking snapshot of accounts reads it again
    before the second workload streams. After each, `dbt build` gives silver equal to the source: no snapshot read
    rolled a row back, none was lost."""
    dsn = pg_setup(pg_dsn)
    pg_execute(dsn, f"CREATE TABLE {PG_SCHEMA}.sig (id varchar(64) PRIMARY KEY, type varchar(32), data varchar(2048))")
    project = Project(tmp_path, PG_SOURCE, "postgresql", {
        **pg_properties(pg_dsn), "table.include.list": f"{PG_SCHEMA}\\.(accounts|notes)",
        "snapshot.mode": "no_data", "signal.data.collection": f"{PG_SCHEMA}.sig", "incremental.snapshot.chunk.size": 3})
    tables = [f"{PG_SCHEMA}.accounts", f"{PG_SCHEMA}.notes"]
    try:
        project.ingest()   # the slot; no rows yet
        project.lakecdc("signal", "execute-snapshot", "--source", PG_SOURCE, "--tables", *tables)
        pg_workload_1(dsn)
        project.ingest()
        project.prepare_models()
        project.dbt_build_local()
        compare_source(project, PG_TABLES, PG_JSON, lambda t: pg_source_rows(dsn, t), "after the incremental one:")
        project.lakecdc("signal", "execute-snapshot", "--type", "blocking", "--source", PG_SOURCE, "--tables",
                        tables[0])
        pg_workload_2(dsn)
        project.ingest()
        project.prepare_models()
        project.dbt_build_local()
        compare_source(project, PG_TABLES, PG_JSON, lambda t: pg_source_rows(dsn, t), "after the blocking one:")
    finally:
        pg_drop_slot(pg_dsn)
    marks = {json.loads(e["value"])["source"]["snapshot"] for e in project.bronze_events() if e["op"] == "r"}
    assert "incremental" in marks and "first" in marks, marks
