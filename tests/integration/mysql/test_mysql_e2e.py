"""End to end on the real MariaDB: connector -> BronzeWriter (real Delta tables through the engine) while
a concurrent workload runs DML and DDL; replaying bronze in seq order must reproduce every source table;
kill -9 of the ingest process at random moments (snapshot and streaming) must lose and duplicate nothing.
The helpers, the workload and the process the kill -9 test kills are in tests/support/mysql_e2e.py.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import time

import pymysql
import pytest

from ingest.bronze.contract import BatchLimits  # noqa: E402
from tests.support import mysql_e2e
from tests.support.mysql_e2e import (
    Workload,
    assert_bronze_equals_source,
    bronze,
    catalog_tables,
    history_latest,
    history_vs_catalog,
    land,
    prepare,
    source_settings,
)

pytestmark = pytest.mark.integration


def test_concurrent_dml_and_ddl_then_bronze_replay_equals_source(mariadb_params, tmp_path):
    db = "mysqlconn_e2e"
    conn = pymysql.connect(**mariadb_params, autocommit=True)
    prepare(conn, db, 2000)
    warehouse = tmp_path / "wh"
    settings = source_settings(mariadb_params, db, 310_001)
    work = Workload(mariadb_params, db, 400)

    def during_snapshot(table_id: str) -> None:
        # Table a has been read (the snapshot holds its metadata lock), b not yet. DML on both now is after the
        # snapshot's position: streamed, whatever the machine's speed. The workload starts with an ALTER of a,
        # which waits for the snapshot to end, so all its DDL comes after the snapshot (a RENAME racing the
        # snapshot is test_table_renamed_or_dropped_during_the_snapshot).
        if table_id == f"{db}.b":
            with conn.cursor() as cur:
                cur.execute(f"INSERT INTO {db}.a (id, v) VALUES (99000, 'during')")
                cur.execute(f"UPDATE {db}.a SET v = 'snap' WHERE id <= 10")
                cur.execute(f"DELETE FROM {db}.a WHERE id BETWEEN 11 AND 20")
                cur.execute(f"INSERT INTO {db}.b VALUES (3, 'during')")
            work.start()  # runs during the rest of the snapshot and the streaming

    land(warehouse, settings, BatchLimits(max_events=500, max_seconds=1), snapshot_table_hook=during_snapshot)
    assert work.ident is not None
    work.join(60)
    assert work.error is None, work.error
    land(warehouse, settings, BatchLimits(max_events=500, max_seconds=1))
    count = assert_bronze_equals_source(warehouse, conn, db)
    assert count > 2000
    # the acceptance: the schema history's latest version of each table matches information_schema
    history = history_latest(warehouse, db)
    assert set(history) == {f"{db}.a", f"{db}.b2", f"{db}.c"}
    catalog = catalog_tables(conn, db)
    assert history_vs_catalog(history, catalog) == []
    # the comparison sees a different default, nullability or column order
    catalog[f"{db}.c"]["columns"][1]["COLUMN_DEFAULT"] = "'x'"
    catalog[f"{db}.a"]["columns"][1]["IS_NULLABLE"] = "NO"
    catalog[f"{db}.b2"]["columns"].reverse()
    assert [p.split(":")[0].split(" ")[0] for p in history_vs_catalog(history, catalog)] == [
        f"{db}.a.v", f"{db}.b2", f"{db}.c.tag"]
    conn.close()


def test_table_renamed_or_dropped_during_the_snapshot(mariadb_params, tmp_path, caplog):
    """A RENAME and a DROP land after the snapshot took its position but before it reads the tables: the renamed
    table's rows are read under its new name (as of the snapshot) and the RENAME is streamed; the dropped table
    is skipped with a warning and its DROP streamed. Bronze replays to the source, the schema history ends with
    the new name."""
    db = "mysqlconn_midsnap"
    conn = pymysql.connect(**mariadb_params, autocommit=True)
    prepare(conn, db, 300)
    with conn.cursor() as cur:
        cur.execute(f"CREATE TABLE {db}.c (id INT NOT NULL, v VARCHAR(20), PRIMARY KEY (id))")
        cur.execute(f"INSERT INTO {db}.c VALUES (1, 'c1'), (2, 'c2')")
        cur.execute(f"CREATE TABLE {db}.d (id INT NOT NULL, v VARCHAR(20), PRIMARY KEY (id))")
        cur.execute(f"INSERT INTO {db}.d VALUES (1, 'd1')")
    warehouse = tmp_path / "wh"
    settings = source_settings(mariadb_params, db, 310_011)
    seen: list[str] = []

    def ddl_during_snapshot(table_id: str) -> None:
        seen.append(table_id)
        if table_id == f"{db}.b":  # a is read (and locked); b, c and d not yet
            with conn.cursor() as cur:
                cur.execute(f"INSERT INTO {db}.b VALUES (3, 'before rename')")
                cur.execute(f"RENAME TABLE {db}.b TO {db}.b2")
                cur.execute(f"INSERT INTO {db}.b2 VALUES (4, 'after rename')")
                cur.execute(f"DROP TABLE {db}.c")
                cur.execute(f"RENAME TABLE {db}.d TO {db}.d1, {db}.d1 TO {db}.d2")

    with caplog.at_level("WARNING"):
        land(warehouse, settings, BatchLimits(max_events=100, max_seconds=60), snapshot_table_hook=ddl_during_snapshot)
    assert seen == [f"{db}.{t}" for t in ("a", "b", "c", "d")]
    warnings = " ".join(r.getMessage() for r in caplog.records)
    assert f"{db}.b was renamed to {db}.b2" in warnings and f"{db}.c was dropped" in warnings
    assert f"{db}.d was renamed to {db}.d2" in warnings
    events, _ = bronze(warehouse)
    snapshot_rows = sorted((e["table_id"], e["key"]) for e in events if e["op"] == "r" and e["table_id"] != f"{db}.a")
    assert snapshot_rows == [(f"{db}.b", '{"id":1}'), (f"{db}.b", '{"id":2}'), (f"{db}.d", '{"id":1}')]
    assert_bronze_equals_source(warehouse, conn, db)
    history = history_latest(warehouse, db)
    assert set(history) == {f"{db}.a", f"{db}.b2", f"{db}.d2"}
    assert history_vs_catalog(history, catalog_tables(conn, db)) == []
    conn.close()


@pytest.mark.slow
def test_kill_9_during_snapshot_and_streaming_loses_and_duplicates_nothing(mariadb_params, tmp_path):
    db = "mysqlconn_kill"
    conn = pymysql.connect(**mariadb_params, autocommit=True)
    prepare(conn, db, 20_000)
    warehouse = tmp_path / "wh"
    journal = tmp_path / "journal.txt"
    work = Workload(mariadb_params, db, 600, seed=11)
    args = [sys.executable, mysql_e2e.__file__, str(warehouse), json.dumps(mariadb_params), db, str(journal)]
    rng = random.Random(3)
    killed_in: list[str] = []
    def landed() -> list[str]:
        return journal.read_text().split() if journal.exists() else []

    for attempt in range(30):
        before = len(landed())
        proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if attempt == 2:
            work.start()  # DML and DDL while the snapshot is still running, and after
        # Strike once this run has committed a batch of its own, however slow the machine: the first kills
        # mid-snapshot, the later ones once it streams (or when nothing is left to stream).
        mid_snapshot = len(killed_in) < 4
        deadline = time.monotonic() + 180
        while proc.poll() is None and time.monotonic() < deadline:
            mine = landed()[before:]
            if mine and (mid_snapshot or mine[-1] == "stream"):
                break
            if not mid_snapshot and work.ident is not None and not work.is_alive() and "stream" in landed():
                break
            time.sleep(0.1)
        time.sleep(rng.uniform(0.0, 0.5) if mid_snapshot else rng.uniform(0.0, 1.5))
        if proc.poll() is None:
            proc.kill()  # SIGKILL: no cleanup at all
            lines = journal.read_text().split() if journal.exists() else []
            killed_in.append(lines[-1] if lines else "start")
        proc.wait()
        if len(killed_in) >= 10 and not work.is_alive() and killed_in.count("stream") >= 3:
            break
    work.join(120)
    assert work.error is None, work.error
    assert len(killed_in) >= 10, killed_in
    assert killed_in.count("snapshot") >= 2 and killed_in.count("stream") >= 3, killed_in
    done = subprocess.run(args + ["--until-caught-up"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert_bronze_equals_source(warehouse, conn, db)
    conn.close()
