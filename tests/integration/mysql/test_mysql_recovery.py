"""snapshot.mode=recovery on the real MariaDB (shared server, databases mysqlrec_*): a bronze whose schema
history (S_schema_changes) lost records is repaired from the current catalog, and streaming continues from
the stored position with the right table structures; the history rebuilt from bronze then matches
information_schema. Debezium (seed 004, snapshot.mode): "restore a database schema history topic that is lost
or corrupted. After a restart, the connector runs a snapshot that rebuilds the topic from the source tables"
-- valid only when no schema change was committed after the connector stopped.
Also: a run killed between a batch's schema-change commit and its events commit (bronze/writer.py order) must
not lose the events emitted with a DDL (the truncate events of a TRUNCATE) when it comes back."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import pymysql
import pytest

from ingest.bronze.contract import BatchLimits
from ingest.config import EngineSettings
from ingest.errors import LakecdcError
from tests.support.mysql_e2e import (
    SOURCE,
    assert_bronze_equals_source,
    bronze,
    catalog_tables,
    history_latest,
    history_vs_catalog,
    land,
    source_settings,
)

pytestmark = pytest.mark.integration

DB = "mysqlrec_t"
LIMITS = BatchLimits(max_events=500, max_seconds=1)


def schema_changes_table(warehouse: Path):
    from deltalake import DeltaTable

    return DeltaTable(str(warehouse / "bronze" / f"{SOURCE}_schema_changes"))


def run(conn, *statements: str) -> None:
    with conn.cursor() as cur:
        for statement in statements:
            cur.execute(statement.format(db=DB))


def after_images(events: list[dict], table: str, newer_than: str) -> dict[int, dict]:
    return {json.loads(e["key"])["id"]: json.loads(e["value"])["after"] for e in sorted(events, key=lambda e: e["seq"])
            if e["table_id"] == f"{DB}.{table}" and e["seq"] > newer_than and e["op"] in ("c", "u")}


def test_recovery_rebuilds_a_corrupted_then_a_lost_schema_history(mariadb_params, tmp_path: Path) -> None:
    conn = pymysql.connect(**mariadb_params, autocommit=True)
    run(conn, f"DROP DATABASE IF EXISTS {DB}", "CREATE DATABASE {db}",
        "CREATE TABLE {db}.a (id INT NOT NULL, v VARCHAR(20), PRIMARY KEY (id))",
        "CREATE TABLE {db}.b (id INT NOT NULL, w TEXT, PRIMARY KEY (id))",
        "INSERT INTO {db}.a VALUES " + ",".join(f"({i}, 'v{i}')" for i in range(1, 51)),
        "INSERT INTO {db}.b VALUES (1, 'x'), (2, 'y'), (3, 'z')")
    warehouse = tmp_path / "wh"
    initial = source_settings(mariadb_params, DB, 340_001)
    recovery = source_settings(mariadb_params, DB, 340_001, **{"snapshot.mode": "recovery"})
    land(warehouse, initial, LIMITS)  # snapshot, then caught up
    run(conn, "ALTER TABLE {db}.a ADD COLUMN extra INT NOT NULL DEFAULT 5 AFTER v",
        "ALTER TABLE {db}.a MODIFY COLUMN v VARCHAR(40) NOT NULL DEFAULT 'q'",
        "INSERT INTO {db}.a (id, v, extra) VALUES (1001, 'x', 11)")
    land(warehouse, initial, LIMITS)  # streams both ALTERs and the insert

    # corrupt the history: the ALTER records are lost, the snapshot's CREATE TABLE records remain
    schema_changes_table(warehouse).delete("ddl LIKE 'ALTER%'")
    events, changes = bronze(warehouse)
    assert len(changes) == 2 and all(json.loads(c["table_changes"])[0]["type"] == "CREATE" for c in changes)
    last_landed = max(e["seq"] for e in events)
    # only DML after the last landed event (recovery's precondition)
    run(conn, "INSERT INTO {db}.a (id, v, extra) VALUES (1002, 'y', 12)", "UPDATE {db}.a SET extra = 13 WHERE id = 1",
        "DELETE FROM {db}.b WHERE id = 2", "UPDATE {db}.b SET w = 'changed' WHERE id = 3")

    # without recovery (on a copy) the corrupted history gives `a` without `extra`: wrong or failing events
    copy = tmp_path / "copy"
    shutil.copytree(warehouse, copy)
    try:
        land(copy, initial, LIMITS)
        wrong = after_images(bronze(copy)[0], "a", last_landed)
        assert wrong and all("extra" not in image for image in wrong.values()), wrong
    except LakecdcError as exc:
        raise AssertionError(f"expected wrong images, not {exc}") from None

    # and an unreadable record (b's CREATE TABLE): a one-line error pointing at recovery
    schema_changes_table(warehouse).update(updates={"event": "'{broken'"}, predicate="ddl LIKE 'CREATE TABLE `b`%'")
    copy = tmp_path / "copy2"
    shutil.copytree(warehouse, copy)
    with pytest.raises(LakecdcError, match=r"schema history record .* is unreadable .*snapshot.mode=recovery"):
        land(copy, initial, LIMITS)

    # recovery: one CREATE record per table from the current catalog, then streaming from the stored position
    land(warehouse, recovery, LIMITS)
    events, changes = bronze(warehouse)
    recovered = sorted((c for c in changes if c["seq"].endswith(tuple(f"{0x80000000 + i:08x}" for i in range(2)))),
                       key=lambda c: c["seq"])
    assert len(recovered) == 2 and len(changes) == 4
    older = [c["seq"] for c in changes if c not in recovered]
    new_events = [e for e in events if e["seq"] > last_landed]
    # the recovered records sort after every older record, at or before the last landed event, before the new ones
    assert max(older) < recovered[0]["seq"] and recovered[-1]["seq"] < last_landed < min(e["seq"] for e in new_events)
    columns = [c["name"] for c in json.loads(recovered[0]["table_changes"])[0]["table"]["columns"]]
    assert columns == ["id", "v", "extra"]
    images = after_images(events, "a", last_landed)
    assert images == {1002: {"id": 1002, "v": "y", "extra": 12}, 1: {"id": 1, "v": "v1", "extra": 13}}
    assert history_vs_catalog(history_latest(warehouse, DB), catalog_tables(conn, DB)) == []
    assert_bronze_equals_source(warehouse, conn, DB)

    # a restart in snapshot.mode=initial reads the history from the recovery records on (not the broken one)
    run(conn, "INSERT INTO {db}.b VALUES (6, 'six')")
    land(warehouse, initial, LIMITS)
    assert after_images(bronze(warehouse)[0], "b", last_landed)[6] == {"id": 6, "w": "six"}

    # recovery again, twice, without new events: one more set of records at the new position, then nothing
    land(warehouse, recovery, LIMITS)
    land(warehouse, recovery, LIMITS)
    _, changes = bronze(warehouse)
    assert len(changes) == 6 and len({c["seq"] for c in changes}) == 6

    # lost entirely: every record deleted; recovery alone rebuilds the history, streaming goes on
    schema_changes_table(warehouse).delete()
    run(conn, "INSERT INTO {db}.a (id, v) VALUES (1003, 'w')", "INSERT INTO {db}.b VALUES (4, 'four')")
    land(warehouse, recovery, LIMITS)
    events, changes = bronze(warehouse)
    assert len(changes) == 2
    assert history_vs_catalog(history_latest(warehouse, DB), catalog_tables(conn, DB)) == []

    # back to snapshot.mode=initial: the restored history (recovery records included) gives the right model
    run(conn, "ALTER TABLE {db}.b ADD COLUMN flag TINYINT NOT NULL DEFAULT 1",
        "INSERT INTO {db}.a (id, v, extra) VALUES (1004, 'u', 14)", "INSERT INTO {db}.b VALUES (5, 'five', 0)")
    land(warehouse, initial, LIMITS)
    events, _ = bronze(warehouse)
    assert after_images(events, "a", last_landed)[1004] == {"id": 1004, "v": "u", "extra": 14}
    assert after_images(events, "b", last_landed)[5] == {"id": 5, "w": "five", "flag": 0}
    assert history_vs_catalog(history_latest(warehouse, DB), catalog_tables(conn, DB)) == []
    assert_bronze_equals_source(warehouse, conn, DB)
    run(conn, f"DROP DATABASE {DB}")
    conn.close()


def land_side_tables_of_first_ddl_batch(warehouse: Path, settings, limits: BatchLimits) -> list:
    """The crash between the two commits of a batch: of the first streamed batch holding a schema change, only
    the schema changes (and schemas) are committed, never its events. Returns that batch's events."""
    from ingest.bronze.writer import BronzeWriter
    from ingest.connectors.mysql import MySqlConnector
    from ingest.engine import start_engine

    engine = start_engine(EngineSettings(profile="local", warehouse=warehouse), reuse=False)
    try:
        writer = BronzeWriter(engine.spark, engine.settings, SOURCE)
        connector = MySqlConnector(settings)
        connector.validate()
        connector.restore_schema_history(writer.schema_change_rows())
        try:
            for batch in connector.batches(writer.resume_state(), limits):
                if batch.schema_changes:
                    writer.write(dataclasses.replace(batch, events=[], blocks=[]))
                    return batch.events
                assert not batch.caught_up, "no batch with a schema change"
        finally:
            connector.close()
    finally:
        engine.stop()
    raise AssertionError("the binlog ended without a schema change")


def test_truncate_survives_a_kill_between_the_schema_change_and_the_events_commit(mariadb_params,
                                                                                   tmp_path: Path) -> None:
    db = "mysqlrec_trunc"
    conn = pymysql.connect(**mariadb_params, autocommit=True)
    with conn.cursor() as cur:
        for sql in (f"DROP DATABASE IF EXISTS {db}", f"CREATE DATABASE {db}",
                    f"CREATE TABLE {db}.t (id INT PRIMARY KEY, v INT)", f"INSERT INTO {db}.t VALUES (1, 1), (2, 2)"):
            cur.execute(sql)
    warehouse = tmp_path / "wh"
    settings = source_settings(mariadb_params, db, 340_002, **{"skipped.operations": "none"})
    limits = BatchLimits(max_events=100, max_seconds=0.5)
    land(warehouse, settings, limits)  # snapshot, then caught up
    _, snapshot_changes = bronze(warehouse)
    with conn.cursor() as cur:
        for sql in (f"ALTER TABLE {db}.t ADD COLUMN w INT NOT NULL DEFAULT 7", f"TRUNCATE TABLE {db}.t",
                    f"INSERT INTO {db}.t VALUES (3, 3, 3)"):
            cur.execute(sql)

    lost = land_side_tables_of_first_ddl_batch(warehouse, settings, limits)
    assert [e.op for e in lost if e.table_id == f"{db}.t"] == ["t", "c"]  # what the killed run had in hand
    _, changes = bronze(warehouse)
    ddl_seqs = {c["seq"] for c in changes} - {c["seq"] for c in snapshot_changes}
    assert len(ddl_seqs) == 2  # the ALTER and the TRUNCATE: committed, their events not

    land(warehouse, settings, limits)  # the restarted run
    events, changes = bronze(warehouse)
    # each schema change once, the truncate (after the TRUNCATE's schema change) and the insert once each
    assert len(changes) == len({c["seq"] for c in changes}) and ddl_seqs <= {c["seq"] for c in changes}
    streamed = sorted((e["seq"], e["op"]) for e in events if e["table_id"] == f"{db}.t" and e["op"] != "r")
    assert [op for _, op in streamed] == ["t", "c"]
    assert streamed[0][0] > max(ddl_seqs)
    assert json.loads(next(e["value"] for e in events if e["op"] == "c"))["after"] == {"id": 3, "v": 3, "w": 3}
    assert_bronze_equals_source(warehouse, conn, db)
    with conn.cursor() as cur:
        cur.execute(f"DROP DATABASE {db}")
    conn.close()
