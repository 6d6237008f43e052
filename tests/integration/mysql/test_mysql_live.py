"""The MySQL/MariaDB connector against the real MariaDB of `make test`, driven through connector.batches()
(snapshot, streaming, DDL, resume, purged binlogs). Databases are named mysqlconn_*; each reader has its
own server id."""

from __future__ import annotations

import base64
import itertools
import json
import os

import pymysql
import pytest

from ingest.bronze.contract import Batch, BatchLimits, ResumeState
from ingest.config import SourceSettings
from ingest.connectors.mysql import MySqlConnector
from ingest.errors import LakecdcError

pytestmark = pytest.mark.integration
_ids = itertools.count(1)


def server_id() -> int:
    return 200_000 + (os.getpid() % 50_000) * 10 + next(_ids) % 10


@pytest.fixture()
def maria(mariadb_params):
    conn = pymysql.connect(**mariadb_params, autocommit=True)
    yield conn
    conn.close()


def run_sql(conn, *statements):
    with conn.cursor() as cur:
        for statement in statements:
            cur.execute(statement)


def fresh_db(conn, name: str) -> None:
    run_sql(conn, f"DROP DATABASE IF EXISTS {name}", f"CREATE DATABASE {name}")


def connector(mariadb_params, db: str, **props) -> MySqlConnector:
    properties = {"database.hostname": mariadb_params["host"], "database.port": mariadb_params["port"],
                  "database.user": mariadb_params["user"], "database.password": mariadb_params["password"],
                  "database.server.id": server_id(), "topic.prefix": "t", "database.include.list": db,
                  "snapshot.chunk.size": 3, **props}
    return MySqlConnector(SourceSettings(name="src", connector="mariadb", properties=properties))


def drain(conn: MySqlConnector, resume: ResumeState | None = None, max_events: int = 5,
          catch_ups: int = 1) -> list[Batch]:
    """Batches until the stream has caught up `catch_ups` times."""
    out = []
    for batch in conn.batches(resume or ResumeState(), BatchLimits(max_events=max_events, max_seconds=5)):
        out.append(batch)
        if batch.caught_up:
            catch_ups -= 1
            if catch_ups == 0:
                break
    return out


def events(batches):
    return [e for b in batches for e in b.all_events()]  # snapshot rows come in columnar blocks


def changes(batches):
    return [c for b in batches for c in b.schema_changes]


def replay(evts) -> dict[str, dict[str, dict]]:
    """Apply events in seq order: table_id -> key JSON -> after image (what silver SCD1 does)."""
    state: dict[str, dict[str, dict]] = {}
    for e in sorted(evts, key=lambda e: e.seq):
        rows = state.setdefault(e.table_id, {})
        if e.op in ("c", "u", "r"):
            rows[e.key] = json.loads(e.value)["after"]
        elif e.op == "d":
            rows.pop(e.key, None)
        elif e.op == "t":
            rows.clear()
    return state


def source_rows(conn, table: str, columns: str = "*") -> dict[str, dict]:
    with conn.cursor(pymysql.cursors.DictCursor) as cur:
        cur.execute(f"SELECT {columns} FROM {table}")
        return {json.dumps({"id": r["id"]}, separators=(",", ":")): r for r in cur.fetchall()}


def test_validate_accepts_the_test_server_and_rejects_a_wrong_flavor(mariadb_params, maria):
    connector(mariadb_params, "mysqlconn_v").validate()
    wrong = MySqlConnector(SourceSettings(name="src", connector="mysql", properties={
        "database.hostname": mariadb_params["host"], "database.port": mariadb_params["port"],
        "database.user": mariadb_params["user"], "database.server.id": server_id(), "topic.prefix": "t"}))
    with pytest.raises(LakecdcError, match="server is mariadb"):
        wrong.validate()


def test_snapshot_then_streaming_dml_and_ddl(mariadb_params, maria):
    db = "mysqlconn_basic"
    fresh_db(maria, db)
    run_sql(maria, f"CREATE TABLE {db}.c (id INT NOT NULL, name VARCHAR(20), qty INT, PRIMARY KEY (id))",
            f"INSERT INTO {db}.c VALUES " + ",".join(f"({i}, 'n{i}', {i * 10})" for i in range(1, 8)))
    conn = connector(mariadb_params, db, **{"include.query": "true"})
    first = drain(conn)
    snap = events(first)
    assert [e.op for e in snap] == ["r"] * 7  # one table: the first row `first`, the last `last` (Debezium's marks)
    assert [e.snapshot for e in snap] == ["first"] + ["true"] * 5 + ["last"]
    assert len({json.loads(e.value)["source"]["pos"] for e in snap}) == 1  # every r at the snapshot position
    assert [c.database_name for c in changes(first)] == [db]
    assert json.loads(changes(first)[0].table_changes)[0]["table"]["primaryKeyColumnNames"] == ["id"]
    assert json.loads(snap[-1].position)["snapshot_completed"] is True

    run_sql(maria, f"INSERT INTO {db}.c VALUES (100, 'new', 1)", f"UPDATE {db}.c SET qty = 99 WHERE id = 2",
            f"DELETE FROM {db}.c WHERE id = 3", f"UPDATE {db}.c SET id = 200 WHERE id = 4",
            f"ALTER TABLE {db}.c ADD COLUMN note VARCHAR(10) AFTER name",
            f"INSERT INTO {db}.c VALUES (101, 'x', 'hello', 5)")
    resume = ResumeState(snap[-1].seq, json.loads(snap[-1].position))
    conn2 = connector(mariadb_params, db, **{"include.query": "true"})
    conn2.restore_schema_history([(c.seq, c.event) for c in changes(first)])
    second = drain(conn2, resume)
    streamed = events(second)
    assert [(e.op, json.loads(e.key)["id"] if e.key else None) for e in streamed] == [
        ("c", 100), ("u", 2), ("d", 3), (None, 3), ("d", 4), (None, 4), ("c", 200), ("c", 101)]
    assert all(s.seq > snap[-1].seq for s in streamed)
    assert [e.seq for e in streamed] == sorted(e.seq for e in streamed)
    created = json.loads(streamed[0].value)
    assert created["source"]["query"] == f"INSERT INTO {db}.c VALUES (100, 'new', 1)"
    assert created["source"]["gtid"] and created["source"]["snapshot"] == "false"
    update = json.loads(streamed[1].value)
    assert update["before"]["qty"] == 20 and update["after"]["qty"] == 99
    assert json.loads(streamed[-1].value)["after"] == {"id": 101, "name": "x", "note": "hello", "qty": 5}
    ddl = changes(second)
    assert len(ddl) == 1 and "ADD COLUMN note" in ddl[0].ddl
    cols = [c["name"] for c in json.loads(ddl[0].table_changes)[0]["table"]["columns"]]
    assert cols == ["id", "name", "note", "qty"]
    state = replay(snap + streamed)[f"{db}.c"]
    source = source_rows(maria, f"{db}.c")
    # a column added later is null in rows written before it (what schema evolution in silver does)
    assert {k: {c: v.get(c) for c in source[k]} for k, v in state.items()} == source


def crash_loop(mariadb_params, db, history, resume, max_events, **props):
    """Commit one batch, "crash" (drop the connector), resume from bronze's last event; until caught up."""
    landed = []
    for _ in range(500):
        c = connector(mariadb_params, db, **props)
        c.restore_schema_history(history)
        batch = next(iter(c.batches(resume, BatchLimits(max_events=max_events, max_seconds=5))))
        c.close()
        got = batch.all_events()
        landed.extend(got)
        history = history + [(x.seq, x.event) for x in batch.schema_changes]
        if got:
            resume = ResumeState(got[-1].seq, json.loads(got[-1].position))
        if batch.caught_up and not got:
            return landed
    raise AssertionError("did not catch up")


def test_resume_mid_transaction_is_exactly_once(mariadb_params, maria):
    db = "mysqlconn_resume"
    fresh_db(maria, db)
    run_sql(maria, f"CREATE TABLE {db}.r (id INT NOT NULL, v INT, PRIMARY KEY (id))",
            f"INSERT INTO {db}.r VALUES " + ",".join(f"({i}, 0)" for i in range(100, 110)))
    base = drain(connector(mariadb_params, db))  # 10 rows in batches of 5: the last batch is exactly full
    snap = events(base)
    assert len(snap) == 10 and json.loads(snap[-1].position)["snapshot_completed"] is True
    history = [(c.seq, c.event) for c in changes(base)]
    run_sql(maria, "BEGIN", *[f"INSERT INTO {db}.r VALUES ({i}, {i})" for i in range(20)], "COMMIT",
            f"UPDATE {db}.r SET v = v + 1", f"DELETE FROM {db}.r WHERE id < 5")
    after_snapshot = ResumeState(snap[-1].seq, json.loads(snap[-1].position))
    reference = events(drain(_restored(mariadb_params, db, history), after_snapshot, max_events=1000))
    assert len(reference) == 20 + 30 + 5 * 2
    # Batches of 7 events split rows events and transactions: every boundary is a crash point.
    landed = crash_loop(mariadb_params, db, history, after_snapshot, 7)
    assert len({e.seq for e in landed}) == len(landed), "duplicates after resume"
    assert [(e.seq, e.op, e.key, e.value and json.loads(e.value)["after"]) for e in landed] == [
        (e.seq, e.op, e.key, e.value and json.loads(e.value)["after"]) for e in reference]
    # Interrupted snapshot: resume by chunk, no duplicate and no missing row.
    resnap = crash_loop(mariadb_params, db, [], ResumeState(), 4)
    rows = [e for e in resnap if e.op == "r"]
    assert len(rows) == len({e.key for e in rows}) == len(source_rows(maria, f"{db}.r"))


def test_resume_mid_transaction_keeps_transaction_metadata(mariadb_params, maria):
    """A transaction split over batches, each followed by a crash: the BEGIN/END markers land once and the
    transaction blocks number every event as an uninterrupted run does."""
    db = "mysqlconn_resume_txn"
    fresh_db(maria, db)
    run_sql(maria, f"CREATE TABLE {db}.r (id INT NOT NULL, PRIMARY KEY (id))",
            f"CREATE TABLE {db}.s (id INT NOT NULL, PRIMARY KEY (id))")
    meta = {"provide.transaction.metadata": "true", "snapshot.mode": "no_data"}
    base = drain(connector(mariadb_params, db, **meta))
    history = [(c.seq, c.event) for c in changes(base)]
    start = ResumeState(changes(base)[-1].seq, json.loads(changes(base)[-1].position))
    run_sql(maria, "BEGIN", *[f"INSERT INTO {db}.{'rs'[i % 2]} VALUES ({i})" for i in range(9)], "COMMIT",
            f"INSERT INTO {db}.r VALUES (100)")
    c = connector(mariadb_params, db, **meta)
    c.restore_schema_history(history)
    reference = events(drain(c, start, max_events=1000))
    landed = crash_loop(mariadb_params, db, history, start, 2, **meta)

    def view(e):
        value = json.loads(e.value)
        return e.seq, e.op, e.table_id, value.get("transaction"), value.get("status"), value.get("event_count")

    assert len(reference) == 2 + 9 + 2 + 1
    assert [view(e) for e in landed] == [view(e) for e in reference]
    orders = [json.loads(e.value)["transaction"]["total_order"] for e in landed if e.op == "c"]
    assert orders == list(range(1, 10)) + [1]


def _restored(mariadb_params, db, history):
    c = connector(mariadb_params, db)
    c.restore_schema_history(history)
    return c


def test_purged_position_fails_initial_and_resnapshots_when_needed(mariadb_params, maria):
    db = "mysqlconn_purged"
    fresh_db(maria, db)
    run_sql(maria, f"CREATE TABLE {db}.p (id INT NOT NULL, PRIMARY KEY (id))", f"INSERT INTO {db}.p VALUES (1)")
    gone = {"file": "binlog.000000", "pos": 4, "gtids": "0-1-1", "snapshot_completed": True}
    with pytest.raises(LakecdcError, match=r"binlog.000000 at position 4 .* new snapshot is required"):
        drain(connector(mariadb_params, db), ResumeState("00000000-0000000004-00000000", gone))
    again = events(drain(connector(mariadb_params, db, **{"snapshot.mode": "when_needed"}),
                         ResumeState("00000000-0000000004-00000000", gone)))
    assert [e.op for e in again] == ["r"]


def test_truncate_and_skipped_operations(mariadb_params, maria):
    db = "mysqlconn_trunc"
    fresh_db(maria, db)
    run_sql(maria, f"CREATE TABLE {db}.t (id INT NOT NULL, PRIMARY KEY (id))", f"INSERT INTO {db}.t VALUES (1), (2)")
    conn = connector(mariadb_params, db, **{"skipped.operations": "none", "snapshot.mode": "no_data",
                                             "tombstones.on.delete": "false"})
    first = drain(conn)
    assert events(first) == [] and len(changes(first)) == 1
    position = json.loads(changes(first)[0].position)
    assert position["snapshot_completed"] is True
    run_sql(maria, f"DELETE FROM {db}.t WHERE id = 1", f"TRUNCATE TABLE {db}.t")
    c2 = connector(mariadb_params, db, **{"skipped.operations": "none", "tombstones.on.delete": "false"})
    c2.restore_schema_history([(c.seq, c.event) for c in changes(first)])
    got = events(drain(c2, ResumeState(changes(first)[0].seq, position)))
    assert [e.op for e in got] == ["d", "t"]          # no tombstone, truncate emitted with a null key
    assert got[1].key is None and json.loads(got[1].value)["before"] is None


def test_types_snapshot_and_stream_agree(mariadb_params, maria):
    db = "mysqlconn_types"
    fresh_db(maria, db)
    run_sql(maria, f"""CREATE TABLE {db}.ty (id INT NOT NULL, b BIT(10), d DECIMAL(10,2), dt DATETIME(6),
                   ts TIMESTAMP(3) NULL, tm TIME(3), y YEAR, e ENUM('a','b'), s SET('x','y','z'),
                   vb VARBINARY(8), u BIGINT UNSIGNED, dd DATE, PRIMARY KEY (id))""")
    row = ("b'1000000101', 12.34, '2018-06-20 06:37:03.000005', '2018-06-20 13:37:03.120', '10:15:30.123', "
           "2024, 'b', 'z,x', x'fbff', 18446744073709551615, '2018-06-20'")
    run_sql(maria, f"INSERT INTO {db}.ty VALUES (1, {row})")
    conn = connector(mariadb_params, db)
    first = drain(conn)
    run_sql(maria, f"INSERT INTO {db}.ty VALUES (2, {row})")
    c2 = connector(mariadb_params, db)
    c2.restore_schema_history([(c.seq, c.event) for c in changes(first)])
    snap = events(first)[0]
    stream = events(drain(c2, ResumeState(snap.seq, json.loads(snap.position))))[0]
    a, b = json.loads(snap.value)["after"], json.loads(stream.value)["after"]
    expected = {"b": base64.b64encode(b"\x05\x02").decode(), "d": base64.b64encode((1234).to_bytes(2, "big")).decode(),
                "dt": 1529476623000005, "ts": "2018-06-20T13:37:03.120Z", "tm": 36930123000, "y": 2024, "e": "b",
                "s": "x,z", "vb": "+/8=", "u": -1, "dd": 17702}
    assert {k: b[k] for k in expected} == expected
    # Debezium writes a snapshot TIMESTAMP in ISO-8601's shortest form, a streamed one with the column's digits
    assert {k: a[k] for k in expected} == {**expected, "ts": "2018-06-20T13:37:03.12Z"}
    assert snap.value_schema == stream.value_schema


def test_table_locks_when_the_global_read_lock_is_refused(mariadb_params, maria):
    """A user without RELOAD cannot FLUSH TABLES WITH READ LOCK (RDS-style): LOCK TABLES is used instead."""
    db = "mysqlconn_locks"
    fresh_db(maria, db)
    run_sql(maria, f"CREATE TABLE {db}.k (id INT NOT NULL, PRIMARY KEY (id))", f"INSERT INTO {db}.k VALUES (1), (2)",
            "DROP USER IF EXISTS 'mysqlconn_user'@'%'", "CREATE USER 'mysqlconn_user'@'%' IDENTIFIED BY 'pw'",
            "GRANT SELECT, LOCK TABLES, SHOW DATABASES, REPLICATION SLAVE, BINLOG MONITOR ON *.* "
            "TO 'mysqlconn_user'@'%'")
    limited = {**mariadb_params, "user": "mysqlconn_user", "password": "pw"}
    with pytest.raises(pymysql.err.OperationalError):
        pymysql.connect(**limited).cursor().execute("FLUSH TABLES WITH READ LOCK")
    got = drain(connector(limited, db))
    assert [json.loads(e.key)["id"] for e in events(got)] == [1, 2]
    assert [c.ddl.startswith("CREATE TABLE `k`") for c in changes(got)] == [True]


def test_locking_mode_none_takes_no_lock(mariadb_params, maria):
    """snapshot.locking.mode=none: no global read lock and no table locks (a user with neither RELOAD nor LOCK
    TABLES can snapshot); the default mode refuses that user with one clear error."""
    db = "mysqlconn_nolock"
    fresh_db(maria, db)
    run_sql(maria, f"CREATE TABLE {db}.k (id INT NOT NULL, PRIMARY KEY (id))", f"INSERT INTO {db}.k VALUES (1), (2)",
            "DROP USER IF EXISTS 'mysqlconn_nolock'@'%'", "CREATE USER 'mysqlconn_nolock'@'%' IDENTIFIED BY 'pw'",
            "GRANT SELECT, SHOW DATABASES, REPLICATION SLAVE, BINLOG MONITOR ON *.* TO 'mysqlconn_nolock'@'%'")
    limited = {**mariadb_params, "user": "mysqlconn_nolock", "password": "pw"}
    with pytest.raises(LakecdcError, match=r"needs the global read lock \(RELOAD privilege\) or LOCK TABLES"):
        drain(connector(limited, db))
    got = drain(connector(limited, db, **{"snapshot.locking.mode": "none"}))
    assert [json.loads(e.key)["id"] for e in events(got)] == [1, 2]
    assert [c.ddl.startswith("CREATE TABLE `k`") for c in changes(got)] == [True]


def test_transaction_metadata_and_gtid_positions(mariadb_params, maria):
    db = "mysqlconn_txn"
    fresh_db(maria, db)
    run_sql(maria, f"CREATE TABLE {db}.x (id INT NOT NULL, PRIMARY KEY (id))",
            f"CREATE TABLE {db}.y (id INT NOT NULL, PRIMARY KEY (id))")
    first = drain(connector(mariadb_params, db, **{"snapshot.mode": "no_data"}))
    position = json.loads(changes(first)[-1].position)
    run_sql(maria, "BEGIN", f"INSERT INTO {db}.x VALUES (1), (2)", f"INSERT INTO {db}.y VALUES (1)", "COMMIT",
            f"INSERT INTO {db}.y VALUES (2)")
    c = connector(mariadb_params, db, **{"provide.transaction.metadata": "true"})
    c.restore_schema_history([(x.seq, x.event) for x in changes(first)])
    everything = sorted(events(drain(c, ResumeState(changes(first)[-1].seq, position))), key=lambda e: e.seq)
    got = [e for e in everything if e.op is not None]
    markers = [(e, json.loads(e.value)) for e in everything if e.table_id == "t.transaction"]
    blocks = [json.loads(e.value)["transaction"] for e in got]
    gtid = json.loads(got[0].value)["source"]["gtid"]
    assert [(b["id"], b["total_order"], b["data_collection_order"]) for b in blocks] == [
        (gtid, 1, 1), (gtid, 2, 2), (gtid, 3, 1), (blocks[3]["id"], 1, 1)]
    assert blocks[3]["id"] != gtid and got[0].txn_id == gtid
    # BEGIN / END markers on <prefix>.transaction around each transaction's data events, in seq order
    assert [e.op for e in everything] == [None, "c", "c", "c", None, None, "c", None]
    assert [(v["status"], v["id"], v["event_count"]) for _, v in markers] == [
        ("BEGIN", gtid, None), ("END", gtid, 3), ("BEGIN", blocks[3]["id"], None), ("END", blocks[3]["id"], 1)]
    assert markers[1][1]["data_collections"] == [{"data_collection": f"{db}.x", "event_count": 2},
                                                 {"data_collection": f"{db}.y", "event_count": 1}]
    assert all(e.key == json.dumps({"id": v["id"]}, separators=(",", ":")) for e, v in markers)
    # the last event's transaction began after the first one committed: its position holds that GTID
    assert gtid in json.loads(got[-1].position)["gtids"].split(",")
