"""Silver equals the source on the real databases for what the change events alone do not carry (issue 17):
a primary-key change of a row whose TOASTed value stays unchanged (PostgreSQL, REPLICA IDENTITY DEFAULT).
Captured with `lakecdc run`, then `schema rebuild`, `generate`, `dbt build` in fresh processes (the harness of
tests/test_e2e_silver.py), first build and incremental build, compared row for row with the source."""

from __future__ import annotations

from tests.test_e2e_silver import (
    BIG_TEXT,
    PG_JSON,
    PG_TABLES,
    Project,
    compare_source,
    events_of,
    pg_execute,
    pg_project,  # noqa: F401 - the fixture
    pg_source_rows,
    run_pipeline,
)

PLACEHOLDER = "__debezium_unavailable_value"


def test_postgresql_key_change_keeps_the_toasted_value(pg_project: tuple[Project, str]) -> None:  # noqa: F811
    """notes 1-3 hold a 20,000-character body stored out of line. Their keys change while the body does not:
    the create of the new key carries the placeholder; silver takes the body from the old key's row, also
    through chains of key changes, an update after the change and key changes spread over two builds."""
    project, dsn = pg_project

    def workload_1() -> None:
        pg_execute(dsn,
                   "UPDATE shop.notes SET id = 600 WHERE id = 1",                    # one key change
                   "UPDATE shop.notes SET id = 700 WHERE id = 2",                    # a chain of two
                   "UPDATE shop.notes SET id = 701 WHERE id = 700",
                   "UPDATE shop.notes SET n = 42 WHERE id = 701",                    # and an update after it
                   "BEGIN; UPDATE shop.notes SET id = 800 WHERE id = 3; "
                   "UPDATE shop.notes SET title = 'moved' WHERE id = 800; COMMIT")   # one transaction

    def workload_2() -> None:
        pg_execute(dsn,
                   "UPDATE shop.notes SET id = 601 WHERE id = 600",                  # its lineage began in build 1
                   "UPDATE shop.notes SET id = 702 WHERE id = 701",
                   "INSERT INTO shop.notes (id, title, body) VALUES (1, 'key 1 reused', 'short')",
                   "UPDATE shop.accounts SET code = 'k' WHERE id = 3")  # the harness wants a MERGE on every table

    def compare(stage: str) -> None:
        compare_source(project, PG_TABLES, PG_JSON, lambda t: pg_source_rows(dsn, t), stage)

    def placeholder_path_taken() -> None:
        create = events_of(project, "notes", {"id": 600})[0]
        assert create[0] == "c" and create[1]["after"]["body"] == PLACEHOLDER, create
        delete = events_of(project, "notes", {"id": 1})[-1]
        assert delete[0] == "d" and delete[1]["before"]["body"] is None, delete

    run_pipeline(project, project.dbt_build_local, workload_1, workload_2, compare, between=placeholder_path_taken)
    history = [r for r in project.read_silver("notes_history") if r["id"] in (701, 702)]
    assert history and all(r["body"] == BIG_TEXT for r in history), [(r["id"], len(r["body"] or "")) for r in history]
