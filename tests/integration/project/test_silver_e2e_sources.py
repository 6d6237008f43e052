"""Silver equals the source on the real databases for what the change events alone do not carry (issue 17):
a primary-key change of a row whose TOASTed value stays unchanged (PostgreSQL, REPLICA IDENTITY DEFAULT), and
the default of a column added by ALTER TABLE in the rows that existed before (PostgreSQL and MariaDB).
Captured with `lakecdc run`, then `schema rebuild`, `generate`, `dbt build` in fresh processes (the harness of
tests/support/e2e.py), first build and incremental build, compared row for row with the
source."""

from __future__ import annotations

import pytest

from tests.support.e2e import (
    BIG_TEXT,
    MARIA_JSON,
    MARIA_TABLES,
    PG_JSON,
    PG_TABLES,
    Project,
    compare_source,
    events_of,
    maria_execute,
    maria_source_rows,
    pg_execute,
    pg_source_rows,
    run_pipeline,
)

pytestmark = [pytest.mark.integration, pytest.mark.slow]


PLACEHOLDER = "__debezium_unavailable_value"
# 702 -> 710 -> ... -> 724: with 2 -> 700 -> 701 of build 1 and 701 -> 702, a chain of 18 key changes,
# longer than a fixed number of self-joins would follow
LONG_CHAIN = [f"UPDATE shop.notes SET id = {new} WHERE id = {old}"
              for old, new in zip([702, *range(710, 724)], range(710, 725), strict=True)]


def test_postgresql_key_change_keeps_the_toasted_value(pg_project: tuple[Project, str]) -> None:
    """notes 1-3 hold a 20,000-character body stored out of line. Their keys change while the body does not:
    the create of the new key carries the placeholder; silver takes the body from the old key's row, also
    through chains of key changes (one of 18), an update after the change and key changes spread over two builds."""
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
                   *LONG_CHAIN,                                                      # 18 key changes in all
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
    history = [r for r in project.read_silver("notes_history") if r["id"] in (701, 702, 717, 724)]
    assert history and all(r["body"] == BIG_TEXT for r in history), [(r["id"], len(r["body"] or "")) for r in history]


# -- ADD COLUMN ... DEFAULT: the rows that exist at the ADD get the default without a change event ------------

def test_mariadb_added_column_defaults(maria_project: Project, mariadb_params: dict) -> None:
    """Literal defaults (int, string with a quote, decimal, date), constant expressions and implicit defaults
    added while streaming: the rows that predate
    the ADD hold the default in the source and in silver; a column no event has shown yet is in silver at once
    (first build and incremental build)."""
    def run(*statements: str) -> None:
        maria_execute(mariadb_params, *statements)

    def workload_1() -> None:
        run("ALTER TABLE orders ADD COLUMN priority INT NOT NULL DEFAULT 3, "
            "ADD COLUMN label VARCHAR(20) DEFAULT 'it''s'",
            "UPDATE orders SET priority = 9 WHERE order_id = 10000000002",   # one row changes after the ADD
            "ALTER TABLE documents ADD COLUMN lang VARCHAR(5) DEFAULT 'en'",  # no row changes after it
            "ALTER TABLE customers ADD COLUMN since DATE DEFAULT '2020-02-29', ADD COLUMN note TEXT")

    def workload_2() -> None:
        run("ALTER TABLE customers ADD COLUMN credit DECIMAL(8, 2) DEFAULT -1.50, ADD COLUMN visits2 BIGINT DEFAULT 7",
            "UPDATE customers SET name = 'changed' WHERE id = 1",
            "ALTER TABLE orders ADD COLUMN weight DOUBLE DEFAULT 0.25",
            # a constant expression (the server stores -1774 in the older rows), and NOT NULL without a
            # default (the type's implicit 0 and '')
            "ALTER TABLE documents ADD COLUMN twice INT DEFAULT (-887 * 2), ADD COLUMN amount DECIMAL(6,2) "
            "DEFAULT (1.005 * 3), ADD COLUMN zero INT NOT NULL, ADD COLUMN blank VARCHAR(3) NOT NULL",
            "ALTER TABLE documents RENAME COLUMN zero TO zero_r",  # the older rows keep the value under the new name
            "UPDATE orders SET quantity = 1 WHERE order_id = 10000000001",
            "UPDATE documents SET title = 'changed' WHERE flags = 0")

    def compare(stage: str) -> None:
        compare_source(maria_project, MARIA_TABLES, MARIA_JSON, lambda t: maria_source_rows(mariadb_params, t), stage)

    run_pipeline(maria_project, maria_project.dbt_build_local, workload_1, workload_2, compare)


def test_postgresql_added_column_with_an_expression_default(pg_project: tuple[Project, str]) -> None:
    """PostgreSQL announces a new column with the table's next change, and keeps the value of a non-volatile
    default for the older rows (pg_attribute.attmissingval), which lakecdc reads then: silver fills them with
    it ((-887 * 2), 'a' || 'b'). Not filled (the documented limits): timestamps (now()), and a volatile default
    (gen_random_uuid(): one value per row, written by a table rewrite): NULL there, the changed row its value."""
    project, dsn = pg_project
    project.ingest()
    project.prepare_models()
    project.dbt_build_local()
    pg_execute(dsn, "ALTER TABLE shop.notes ADD COLUMN twice int DEFAULT (-887 * 2), ADD COLUMN tag text "
                    "DEFAULT 'a' || 'b', ADD COLUMN seen timestamptz DEFAULT now()",
               "UPDATE shop.notes SET n = 2 WHERE id = 7")
    project.ingest()  # the catalog is read while the older rows' value is still the missing value
    pg_execute(dsn, "ALTER TABLE shop.notes ADD COLUMN token uuid DEFAULT gen_random_uuid()",
               "UPDATE shop.notes SET n = 3 WHERE id = 7")
    project.ingest()
    project.prepare_models()
    project.dbt_build_local()
    silver = {r["id"]: r for r in project.read_silver("notes")}
    source = {r["id"]: r for r in pg_source_rows(dsn, "notes")}
    assert silver[7]["seen"] is not None and str(silver[7]["token"]) == str(source[7]["token"])
    older = [i for i in silver if i != 7]
    assert older and all((silver[i]["twice"], silver[i]["tag"]) == (-1774, "ab")
                         == (source[i]["twice"], source[i]["tag"]) for i in older)
    assert all(silver[i]["seen"] is None and silver[i]["token"] is None for i in older)
    assert all(source[i]["seen"] is not None for i in older)  # what the limit costs: the source has values
