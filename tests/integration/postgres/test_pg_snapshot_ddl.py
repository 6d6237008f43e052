"""A table renamed or dropped while the PostgreSQL snapshot runs (issue 17), raced deterministically: the DDL
runs from SourceConnector.snapshot_table_hook, just before the snapshot reads a table.

What the server does (checked here): the exported snapshot holds no lock on a table until the snapshot reads
it, so a table not read yet can be dropped or renamed at once; a table already read (locked) cannot."""

from __future__ import annotations

import json

import psycopg2
import psycopg2.errors
import pytest

from ingest.bronze.contract import BatchLimits
from tests.support.pg import Collector, connector, drop_slot_and_publication, ensure_database, execute

pytestmark = pytest.mark.integration


def test_table_renamed_or_dropped_during_the_snapshot(pg_dsn: str, caplog: pytest.LogCaptureFixture) -> None:
    dsn = ensure_database(pg_dsn)
    name, s = "midsnap", "pgconn_midsnap"
    drop_slot_and_publication(dsn, f"pgconn_{name}", f"pgconn_{name}")
    execute(dsn, f"DROP SCHEMA IF EXISTS {s} CASCADE", f"CREATE SCHEMA {s}",
            *[f"CREATE TABLE {s}.{t} (id int PRIMARY KEY, v text)" for t in "abcd"],
            f"INSERT INTO {s}.a SELECT g, 'a' FROM generate_series(1, 50) g",
            f"INSERT INTO {s}.b VALUES (1, 'b1'), (2, 'b2')", f"INSERT INTO {s}.c VALUES (1, 'c1')",
            f"INSERT INTO {s}.d VALUES (1, 'd1')", f"ANALYZE {s}.a, {s}.b, {s}.c")  # d: never analyzed
    conn = connector(pg_dsn, name, s)
    seen: list[str] = []
    progress_lines: list[str] = []
    drop_of_read_table: list[str] = []

    def ddl_during_snapshot(table_id: str) -> None:
        seen.append(table_id)
        assert conn.snapshot_progress is not None
        progress_lines.append(conn.snapshot_progress.describe().split(", ETA")[0])
        if table_id != f"{s}.b":
            return
        # a has been read, b, c and d not yet
        execute(dsn, f"INSERT INTO {s}.b VALUES (3, 'before rename')", f"ALTER TABLE {s}.b RENAME TO b2",
                f"INSERT INTO {s}.b2 VALUES (4, 'after rename')", f"DROP TABLE {s}.c",
                f"ALTER TABLE {s}.d RENAME TO d1")
        other = psycopg2.connect(dsn)
        other.autocommit = True
        with other.cursor() as cur:
            cur.execute("SET lock_timeout = '200ms'")
            try:
                cur.execute(f"DROP TABLE {s}.a")
            except psycopg2.errors.LockNotAvailable:
                drop_of_read_table.append("waits for the snapshot")
        other.close()

    conn.snapshot_table_hook = ddl_during_snapshot
    try:
        conn.validate()
        with caplog.at_level("WARNING"):
            c = Collector(conn, limits=BatchLimits(max_events=100, max_seconds=60)).run(
                until=lambda c: sum(e.op == "c" for e in c.events) >= 2)
    finally:
        conn.close()
        drop_slot_and_publication(dsn, f"pgconn_{name}", f"pgconn_{name}")
        execute(dsn, f"DROP SCHEMA IF EXISTS {s} CASCADE")
    assert seen == [f"{s}.{t}" for t in "abcd"]
    # the progress display's line as each table begins (estimates from ANALYZE; d has none)
    assert progress_lines == [f"snapshot table 1/4 {s}.a: 0 rows read of ~53 (0%)",
                              f"snapshot table 2/4 {s}.b: 50 rows read of ~53 (94%)",
                              f"snapshot table 3/4 {s}.c: 52 rows read of ~53 (98%)",
                              f"snapshot table 4/4 {s}.d: 52 rows read"]
    assert conn.snapshot_progress.finished and conn.snapshot_progress.rows_read == 53
    assert drop_of_read_table == ["waits for the snapshot"]
    warnings = " ".join(r.getMessage() for r in caplog.records)
    assert f"{s}.b was renamed to {s}.b2" in warnings and f"{s}.d was renamed to {s}.d1" in warnings
    assert f"{s}.c was dropped" in warnings

    def rows(op: str) -> list[tuple[str, int, str]]:
        return sorted((e.table_id.rsplit(".", 1)[-1], json.loads(e.key)["id"], json.loads(e.value)["after"]["v"])
                      for e in c.events if e.op == op and e.table_id.rsplit(".", 1)[-1] != "a")

    # the snapshot's rows of the renamed tables, under their names at the snapshot; nothing of the dropped one
    assert rows("r") == [("b", 1, "b1"), ("b", 2, "b2"), ("d", 1, "d1")]
    assert sum(e.op == "r" and e.table_id.endswith(".a") for e in c.events) == 50
    # changes after the snapshot's position are streamed under the name the table had then
    assert rows("c") == [("b", 3, "before rename"), ("b2", 4, "after rename")]
