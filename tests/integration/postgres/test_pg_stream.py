"""Snapshot and streaming semantics on the real PostgreSQL, driving connector.batches() directly:
envelopes, REPLICA IDENTITY effects, primary-key changes, TOAST placeholders, truncates, transaction
metadata, logical messages, schema change rows, filters, exact resume of snapshots and streams, and
reconnection after the walsender is terminated (pg_terminate_backend: the shared server is not restarted)."""

from __future__ import annotations

import json
import time

import pytest

from ingest.bronze.contract import BatchLimits
from ingest.connectors.postgres.pgoutput import str_to_lsn
from tests.support.pg import (
    Collector,
    admin_dsn,
    assert_same_rows,
    connector,
    drop_slot_and_publication,
    execute,
    query,
    replay,
)

pytestmark = pytest.mark.integration


def values(events, op=None):
    return [json.loads(e.value) if e.value else None for e in events if op is None or e.op == op]


def test_envelopes_and_replica_identity(pg_dsn, db) -> None:
    dsn, name, s = db
    execute(dsn, f"CREATE TABLE {s}.customers (id serial PRIMARY KEY, first_name text NOT NULL, email text)",
            f"INSERT INTO {s}.customers (first_name, email) VALUES ('Anne', 'annek@noanswer.org')",
            f"CREATE TABLE {s}.full_t (id int PRIMARY KEY, v text)", f"ALTER TABLE {s}.full_t REPLICA IDENTITY FULL",
            f"CREATE TABLE {s}.nokey (a int, b text)")
    conn = connector(pg_dsn, name, s)
    try:
        conn.validate()
        c = Collector(conn).run()
        execute(dsn, f"UPDATE {s}.customers SET first_name = 'Anne Marie' WHERE id = 1",
                f"DELETE FROM {s}.customers WHERE id = 1",
                f"INSERT INTO {s}.full_t VALUES (1, 'a')", f"UPDATE {s}.full_t SET v = 'b'",
                f"DELETE FROM {s}.full_t", f"INSERT INTO {s}.nokey VALUES (1, 'x')")
        c.run(until=lambda c: len(c.events) >= 9)
    finally:
        conn.close()
    ev = c.events
    assert [(e.table_id, e.op) for e in ev] == [
        (f"pgconn_test.{s}.customers", "r"),
        (f"pgconn_test.{s}.customers", "u"), (f"pgconn_test.{s}.customers", "d"), (f"pgconn_test.{s}.customers", None),
        (f"pgconn_test.{s}.full_t", "c"), (f"pgconn_test.{s}.full_t", "u"), (f"pgconn_test.{s}.full_t", "d"),
        (f"pgconn_test.{s}.full_t", None), (f"pgconn_test.{s}.nokey", "c")]
    snap, upd, dele, _tomb, _c, fupd, fdel, _t2, nokey = ev
    assert ev[0].topic == f"{name}.{s}.customers" and ev[0].key == '{"id":1}'
    key_schema = json.loads(snap.key_schema)
    assert key_schema["name"] == f"{name}.{s}.customers.Key"
    # serial: Debezium 3.6.3 gives the nextval() default as 0 (measured)
    assert key_schema["fields"] == [{"type": "int32", "optional": False, "default": 0, "field": "id"}]
    envelope = json.loads(snap.value_schema)
    assert envelope["name"] == f"{name}.{s}.customers.Envelope"
    assert [f["field"] for f in envelope["fields"]] == ["before", "after", "source", "transaction", "op", "ts_ms",
                                                        "ts_us", "ts_ns"]
    assert envelope["version"] == 2
    v = json.loads(snap.value)
    assert v["after"] == {"id": 1, "first_name": "Anne", "email": "annek@noanswer.org"} and v["op"] == "r"
    src = v["source"]
    assert list(src) == ["version", "connector", "name", "ts_ms", "snapshot", "db", "sequence", "ts_us", "ts_ns",
                         "schema", "table", "txId", "lsn", "xmin", "origin", "origin_lsn"]
    assert json.loads(src["sequence"]) == [None, str(src["lsn"])] and src["lsn"] > 0  # snapshot: slot point only
    assert src["ts_us"] // 1000 == src["ts_ms"] and src["ts_ns"] == src["ts_us"] * 1000
    assert (src["connector"], src["name"], src["snapshot"], src["db"], src["schema"], src["table"]) == (
        "postgresql", name, "last", "pgconn_test", s, "customers")  # the snapshot's only row: "last" wins
    assert snap.snapshot == "last"
    # the snapshot fast path assembles the envelope text itself: it must equal ingest.events' envelope
    from ingest.events import envelope as events_envelope
    from ingest.events.json_converter import dumps_str

    table = next(t for t in conn.tables.by_relid.values() if t.definition.table == "customers")
    rebuilt = events_envelope.change(table.schemas, "r", source=v["source"], after=v["after"], ts_ms=v["ts_ms"])
    assert dumps_str(rebuilt.value()) == snap.value
    u = json.loads(upd.value)
    assert u["before"] is None  # REPLICA IDENTITY DEFAULT, key unchanged
    assert u["after"]["first_name"] == "Anne Marie"
    assert u["source"]["snapshot"] == "false" and u["source"]["lsn"] > 0 and u["source"]["txId"] > 0
    # sequence = [end LSN of the previous commit, this change's LSN]; commit time in microseconds
    last_commit, lsn = (int(x) for x in json.loads(u["source"]["sequence"]))
    assert src["lsn"] <= last_commit <= lsn == u["source"]["lsn"]  # a commit record may end where the next begins
    assert u["source"]["ts_us"] // 1000 == u["source"]["ts_ms"] and u["source"]["ts_ns"] == u["source"]["ts_us"] * 1000
    d_commit, d_lsn = (int(x) for x in json.loads(json.loads(dele.value)["source"]["sequence"]))
    assert lsn < d_commit <= d_lsn  # the delete's transaction follows the update's commit
    d = json.loads(dele.value)
    assert d["before"] == {"id": 1, "first_name": None, "email": None} and d["after"] is None  # key only
    assert ev[3].value is None and ev[3].key == '{"id":1}'
    f = json.loads(fupd.value)
    assert f["before"] == {"id": 1, "v": "a"} and f["after"] == {"id": 1, "v": "b"}  # FULL: whole old row
    assert json.loads(fdel.value)["before"] == {"id": 1, "v": "b"}
    assert nokey.key is None and nokey.key_schema is None
    # seq: increasing, snapshot rows before every streamed change
    seqs = [e.seq for e in ev]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
    # one CREATE schema change row per table from the snapshot, ddl null, tableChanges from the catalog
    changes = c.schema_changes
    assert len(changes) == 3 and all(sc.ddl is None for sc in changes)
    tc = json.loads(changes[0].table_changes)[0]
    assert tc["type"] == "CREATE" and tc["id"] == f'"{s}"."customers"'
    assert tc["table"]["primaryKeyColumnNames"] == ["id"]
    cols = {col["name"]: col for col in tc["table"]["columns"]}
    assert cols["id"]["autoIncremented"] is True and cols["first_name"]["optional"] is False
    assert cols["id"]["jdbcType"] == 4 and cols["email"]["typeName"] == "text"


def test_primary_key_change_toast_truncate_and_skips(pg_dsn, db) -> None:
    dsn, name, s = db
    big = "x" * 100_000
    execute(dsn, f"CREATE TABLE {s}.t (id int PRIMARY KEY, small text, big text, blob bytea)",
            f"ALTER TABLE {s}.t ALTER big SET STORAGE EXTERNAL", f"ALTER TABLE {s}.t ALTER blob SET STORAGE EXTERNAL",
            f"INSERT INTO {s}.t VALUES (1, 'a', '{big}', "
            f"decode((SELECT string_agg(md5(g::text), '') FROM generate_series(1, 2000) g), 'hex'))")
    conn = connector(pg_dsn, name, s, **{"skipped.operations": "none"})
    try:
        c = Collector(conn).run()
        execute(dsn, f"UPDATE {s}.t SET small = 'b' WHERE id = 1",      # big unchanged: TOAST placeholder
                f"UPDATE {s}.t SET id = 2 WHERE id = 1",                 # PK change: d, tombstone, c
                f"TRUNCATE {s}.t")
        c.run(until=lambda c: len(c.events) >= 6)
    finally:
        conn.close()
    ops = [e.op for e in c.events]
    assert ops == ["r", "u", "d", None, "c", "t"]
    toast = json.loads(c.events[1].value)["after"]
    assert toast["small"] == "b" and toast["big"] == "__debezium_unavailable_value"
    assert toast["blob"][:100] == "X19kZWJleml1bV91bmF2YWlsYWJsZV92YWx1ZQ=="  # the placeholder's bytes, base64
    assert c.events[2].key == '{"id":1}' and c.events[4].key == '{"id":2}'
    assert json.loads(c.events[4].value)["after"]["big"] == "__debezium_unavailable_value"
    t = json.loads(c.events[5].value)
    assert t["before"] is None and t["after"] is None and c.events[5].key is None


def test_changes_read_from_the_message_and_by_the_general_path_land_alike(pg_dsn, db, monkeypatch) -> None:
    """Most inserts and updates are read straight from the message's bytes (PostgresStreamingSource._plain_change);
    a value the converter refuses, an unchanged TOASTed column and an old tuple go the general way: the refused
    change is a reject, the others land as they always did, in stream order."""
    from ingest.connectors.postgres.streaming import PostgresStreamingSource

    dsn, name, s = db
    execute(dsn, f"CREATE TABLE {s}.m (id int PRIMARY KEY, at timestamptz, note text, body text)",
            f"ALTER TABLE {s}.m ALTER body SET STORAGE EXTERNAL")
    plain = []
    original = PostgresStreamingSource._plain_change

    def spy(self, payload, lsn, txn, pending):
        taken = original(self, payload, lsn, txn, pending)
        plain.append(taken)
        return taken

    monkeypatch.setattr(PostgresStreamingSource, "_plain_change", spy)
    conn = connector(pg_dsn, name, s)
    try:
        c = Collector(conn).run()
        execute(dsn, f"INSERT INTO {s}.m VALUES (1, '2024-01-01 10:00:00.5+00', 'plain', 'x')",
                f"INSERT INTO {s}.m VALUES (2, 'infinity', 'refused', 'y')",
                f"INSERT INTO {s}.m VALUES (3, NULL, 'ü € 🎉 \"q\" \\', repeat('z', 100000))",
                f"UPDATE {s}.m SET note = 'changed' WHERE id = 3",     # body unchanged: TOAST placeholder
                f"UPDATE {s}.m SET id = 4 WHERE id = 1",              # old key tuple: d, tombstone, c
                f"UPDATE {s}.m SET note = 'n' WHERE id = 4")
        c.run(until=lambda c: len(c.events) >= 7)
    finally:
        conn.close()
    rejects = [r for b in c.batches for r in b.rejects]
    assert len(rejects) == 1 and "infinity" in rejects[0].error
    assert [(e.op, e.key) for e in c.events] == [
        ("c", '{"id":1}'), ("c", '{"id":3}'), ("u", '{"id":3}'), ("d", '{"id":1}'), (None, '{"id":1}'),
        ("c", '{"id":4}'), ("u", '{"id":4}')]
    after = [json.loads(e.value)["after"] if e.value else None for e in c.events]
    assert after[0] == {"id": 1, "at": "2024-01-01T10:00:00.500000Z", "note": "plain", "body": "x"}
    assert after[1] == {"id": 3, "at": None, "note": 'ü € 🎉 "q" \\', "body": "z" * 100_000}
    assert after[2]["body"] == "__debezium_unavailable_value" and after[2]["note"] == "changed"
    assert after[5] == {"id": 4, "at": "2024-01-01T10:00:00.500000Z", "note": "plain", "body": "x"}
    assert after[6]["note"] == "n"
    # the first insert, the third and the last update were read from the message; the rest were not
    assert plain == [True, False, True, False, False, True]
    seqs = [e.seq for e in c.events]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)


def test_a_stream_behind_wal_it_does_not_send_is_caught_up_only_once_the_walsender_has_read_it(pg_dsn, db) -> None:
    """A run that resumes behind WAL the walsender reads but does not send (here 20,000 transactions on a table
    outside the publication) hears nothing while the walsender reads through it; quiet polls (10 ms here) are
    not "caught up" until the walsender has read the WAL that existed when the stream started, so the change
    after that WAL lands in the same run."""
    dsn, name, s = db
    execute(dsn, f"CREATE TABLE {s}.kept (id int PRIMARY KEY)", f"CREATE TABLE {s}.other (id int PRIMARY KEY)",
            f"INSERT INTO {s}.kept VALUES (0)")
    settings = {"table.include.list": f"{s}\\.kept", "poll.interval.ms": 10}
    conn = connector(pg_dsn, name, s, **settings)
    try:
        first = Collector(conn).run()
    finally:
        conn.close()
    execute(dsn, f"DO $$ BEGIN FOR i IN 1..20000 LOOP INSERT INTO {s}.other VALUES (i); COMMIT; END LOOP; END $$",
            f"INSERT INTO {s}.kept VALUES (1)")
    conn = connector(pg_dsn, name, s, **settings)
    try:
        second = Collector(conn, resume=first.resume_state()).run()   # until the first caught-up batch
    finally:
        conn.close()
    assert [(e.op, e.key) for e in second.events] == [("c", '{"id":1}')]


def test_skipped_operations_and_no_tombstones(pg_dsn, db) -> None:
    dsn, name, s = db
    execute(dsn, f"CREATE TABLE {s}.t (id int PRIMARY KEY)")
    conn = connector(pg_dsn, name, s, **{"skipped.operations": "u,t", "tombstones.on.delete": "false"})
    try:
        c = Collector(conn).run()
        execute(dsn, f"INSERT INTO {s}.t VALUES (1)", f"UPDATE {s}.t SET id = id", f"DELETE FROM {s}.t",
                f"INSERT INTO {s}.t VALUES (5)", f"TRUNCATE {s}.t", f"INSERT INTO {s}.t VALUES (6)")
        c.run(until=lambda c: len(c.events) >= 4)
    finally:
        conn.close()
    assert [(e.op, e.key) for e in c.events] == [("c", '{"id":1}'), ("d", '{"id":1}'), ("c", '{"id":5}'),
                                                 ("c", '{"id":6}')]


def test_transaction_metadata_messages_and_schema_changes(pg_dsn, db, caplog) -> None:
    from ingest.events import envelope as events_envelope

    dsn, name, s = db
    execute(dsn, f"CREATE TABLE {s}.a (id int PRIMARY KEY)", f"CREATE TABLE {s}.b (id int PRIMARY KEY)")
    conn = connector(pg_dsn, name, s, **{"provide.transaction.metadata": "true"})
    try:
        c = Collector(conn).run()
        execute(dsn, f"BEGIN; INSERT INTO {s}.a VALUES (1); INSERT INTO {s}.b VALUES (1); "
                     f"INSERT INTO {s}.a VALUES (2); SELECT pg_logical_emit_message(true, 'pfx', 'hello'); COMMIT",
                f"ALTER TABLE {s}.a ADD COLUMN note varchar(20)", f"INSERT INTO {s}.a VALUES (3, 'n')",
                # a widening (no warning), then a rewrite whose values no change event carries (a warning)
                f"ALTER TABLE {s}.a ALTER COLUMN id TYPE bigint", f"INSERT INTO {s}.a VALUES (4, 'four')",
                f"ALTER TABLE {s}.a ALTER COLUMN note TYPE integer USING length(note)",
                f"INSERT INTO {s}.a VALUES (5, 5)")
        with caplog.at_level("WARNING"):
            c.run(until=lambda c: len(c.events) >= 15)  # 3 more transactions of BEGIN, insert, END
    finally:
        conn.close()
    warnings = [r.getMessage() for r in caplog.records if "changed type" in r.getMessage()]
    assert len(warnings) == 1 and f"{s}.a.note changed type from character varying(20) to integer" in warnings[0]
    ev = c.events
    assert [e.topic for e in ev[:6]] == [f"{name}.transaction", f"{name}.{s}.a", f"{name}.{s}.b", f"{name}.{s}.a",
                                         f"{name}.message", f"{name}.transaction"]
    begin, a1, b1, a2, message, end = (json.loads(e.value) for e in ev[:6])
    xid = ev[1].txn_id
    # Debezium 3.6.3 (measured): ids are "<xid>:<LSN of the event>", BEGIN takes the first event's, END the
    # Commit's; data collections are schema.table; the message counts in the transaction
    assert begin["status"] == "BEGIN" and begin["id"] == f"{xid}:{a1['source']['lsn']}"
    assert list(begin) == ["status", "id", "event_count", "data_collections", "ts_ms"]
    assert a1["transaction"] == {"id": begin["id"], "total_order": 1, "data_collection_order": 1}
    assert b1["transaction"] == {"id": f"{xid}:{b1['source']['lsn']}", "total_order": 2, "data_collection_order": 1}
    assert a2["transaction"] == {"id": f"{xid}:{a2['source']['lsn']}", "total_order": 3, "data_collection_order": 2}
    assert message["op"] == "m" and message["message"] == {"prefix": "pfx", "content": "aGVsbG8="}
    assert list(message) == ["op", "ts_ms", "source", "transaction", "message"]
    assert message["transaction"] == {"id": f"{xid}:{message['source']['lsn']}", "total_order": 4,
                                      "data_collection_order": 1}
    assert end["status"] == "END" and end["event_count"] == 4 and end["id"].startswith(f"{xid}:")
    assert int(end["id"].split(":")[1]) > message["source"]["lsn"]
    counts = {f"{s}.a": 2, f"{s}.b": 1, f"{name}.message": 1}
    assert end["data_collections"] == [{"data_collection": k, "event_count": counts[k]}
                                       for k in events_envelope.java_hashmap_order(list(counts))]
    a3 = [json.loads(e.value) for e in ev if e.op == "c" and json.loads(e.value)["after"].get("note")]
    assert a3 and a3[0]["after"] == {"id": 3, "note": "n"}
    # the ADD COLUMN arrives as a Relation message: one ALTER schema change row with the new definition
    alters = [sc for sc in c.schema_changes if json.loads(sc.table_changes)[0]["type"] == "ALTER"]
    assert len(alters) == 3 and alters[0].ddl is None
    cols = json.loads(alters[0].table_changes)[0]["table"]["columns"]
    assert [col["name"] for col in cols] == ["id", "note"] and cols[1]["typeExpression"] == "character varying(20)"
    assert alters[0].seq < next(e.seq for e in ev if e.op == "c" and '"note":"n"' in e.value)


@pytest.mark.parametrize(("mode", "content", "content_type"), [
    ("hex", "fbff00", "string"), ("base64", "+/8A", "string"), ("base64-url-safe", "-_8A", "string"),
    ("bytes", "+/8A", "bytes"),  # Connect bytes: base64 in JSON
])
def test_logical_message_content_follows_binary_handling_mode(pg_dsn, db, mode: str, content: str,
                                                              content_type: str) -> None:
    """Debezium 3.6.3 (measured in tests/conformance): a message's content is encoded as bytea columns are,
    with a string schema outside the bytes mode."""
    dsn, name, s = db
    execute(dsn, f"CREATE TABLE {s}.a (id int PRIMARY KEY)")
    conn = connector(pg_dsn, name, s, **{"binary.handling.mode": mode})
    try:
        c = Collector(conn).run()
        execute(dsn, "SELECT pg_logical_emit_message(false, 'pfx', '\\xfbff00'::bytea)")
        c.run(until=lambda c: any(e.topic == f"{name}.message" for e in c.events))
    finally:
        conn.close()
    message = next(e for e in c.events if e.topic == f"{name}.message")
    assert json.loads(message.value)["message"] == {"prefix": "pfx", "content": content}
    fields = {f["field"]: f for f in json.loads(message.value_schema)["fields"]}
    assert {f["field"]: f["type"] for f in fields["message"]["fields"]} == {"prefix": "string",
                                                                            "content": content_type}


def test_filters_and_column_exclusion(pg_dsn, db) -> None:
    dsn, name, s = db
    execute(dsn, f"CREATE TABLE {s}.keep (id int PRIMARY KEY, secret text, v text)",
            f"CREATE TABLE {s}.skip_me (id int PRIMARY KEY)",
            f"INSERT INTO {s}.keep VALUES (1, 'pw', 'x')", f"INSERT INTO {s}.skip_me VALUES (1)")
    conn = connector(pg_dsn, name, s, **{"table.include.list": f"{s}\\.keep",
                                         "column.exclude.list": f"{s}\\.keep\\.secret"})
    try:
        c = Collector(conn).run()
        execute(dsn, f"INSERT INTO {s}.keep VALUES (2, 'pw2', 'y')", f"INSERT INTO {s}.skip_me VALUES (2)")
        c.run(until=lambda c: len(c.events) >= 2)
        time.sleep(0.3)
        c.run()
    finally:
        conn.close()
    assert [e.table_id for e in c.events] == [f"pgconn_test.{s}.keep"] * 2
    assert [json.loads(e.value)["after"] for e in c.events] == [{"id": 1, "v": "x"}, {"id": 2, "v": "y"}]
    pub_tables = query(dsn, f"SELECT tablename FROM pg_publication_tables WHERE pubname = 'pgconn_{name}'")
    assert pub_tables == [("keep",)]  # publication.autocreate.mode=filtered


def test_snapshot_resumes_from_last_committed_chunk(pg_dsn, db) -> None:
    """Interrupt a snapshot after 2 batches, change rows, resume from the committed position: the
    snapshot continues after the last committed key (not from scratch), and replaying snapshot + stream
    gives exactly the source table."""
    dsn, name, s = db
    execute(dsn, f"CREATE TABLE {s}.t (id int PRIMARY KEY, v int)",
            f"INSERT INTO {s}.t SELECT g, g FROM generate_series(1, 1000) g")
    limits = BatchLimits(max_events=100, max_seconds=5)
    conn = connector(pg_dsn, name, s, **{"snapshot.fetch.size": 64})
    first = Collector(conn, limits=limits)
    first.batches.append(next(first.iterator))   # schema row + 99 rows
    first.batches.append(next(first.iterator))
    first.iterator.close()
    conn.close()  # "crash": nothing after these two batches was committed
    committed = first.events
    assert len(committed) == 199 and committed[-1].key == '{"id":199}'  # + the table's schema row
    execute(dsn, f"UPDATE {s}.t SET v = -v WHERE id IN (5, 500)", f"DELETE FROM {s}.t WHERE id IN (6, 600)",
            f"INSERT INTO {s}.t VALUES (2000, 2000)")
    conn2 = connector(pg_dsn, name, s, **{"snapshot.fetch.size": 64})
    second = Collector(conn2, resume=first.resume_state(), limits=limits)
    try:
        second.run(until=lambda c: len(c.events) >= 801 + 7)
    finally:
        conn2.close()
    resumed = [e for e in second.events if e.op == "r"]
    assert json.loads(resumed[0].key)["id"] == 200  # continues after the last committed key
    assert len(resumed) == 801, len(resumed)  # ids 200..1000 minus 600, plus 2000
    assert not second.schema_changes  # the table's schema row was committed before the interruption
    all_events = committed + second.events
    assert len({e.seq for e in all_events}) == len(all_events)
    state = replay(all_events)[f"pgconn_test.{s}.t"]
    source = {json.dumps({"id": i}, separators=(",", ":")): {"id": i, "v": v}
              for i, v in query(dsn, f"SELECT id, v FROM {s}.t")}
    assert_same_rows(state, source)


def test_streaming_resumes_exactly_mid_transaction(pg_dsn, db) -> None:
    dsn, name, s = db
    execute(dsn, f"CREATE TABLE {s}.t (id int PRIMARY KEY, v int)")
    limits = BatchLimits(max_events=7, max_seconds=5)
    conn = connector(pg_dsn, name, s)
    c1 = Collector(conn, limits=limits).run()
    execute(dsn, f"INSERT INTO {s}.t SELECT g, g FROM generate_series(1, 20) g",
            f"UPDATE {s}.t SET v = v + 1 WHERE id <= 10")
    while len(c1.events) < 14:  # two batches of 7 of the 20 inserts of the first transaction
        c1.batches.append(next(c1.iterator))
    assert len(c1.events) == 14
    c1.iterator.close()
    conn.close()  # crash mid-transaction: the ack never passed its commit
    conn2 = connector(pg_dsn, name, s)
    c2 = Collector(conn2, resume=c1.resume_state(), limits=limits)
    try:
        c2.run(until=lambda c: len(c.events) >= 16)
    finally:
        conn2.close()
    all_events = c1.events + c2.events
    assert [e.op for e in all_events] == ["c"] * 20 + ["u"] * 10
    assert [json.loads(e.key)["id"] for e in all_events[:20]] == list(range(1, 21))
    assert len({e.seq for e in all_events}) == 30


def test_reconnects_after_walsender_is_terminated(pg_dsn, db) -> None:
    """The connection loss of a server restart, simulated by pg_terminate_backend on our walsender (the
    shared server must not be restarted): the connector reconnects and continues without loss or dup."""
    dsn, name, s = db
    execute(dsn, f"CREATE TABLE {s}.t (id int PRIMARY KEY)")
    conn = connector(pg_dsn, name, s)
    try:
        c = Collector(conn).run()
        execute(dsn, f"INSERT INTO {s}.t SELECT generate_series(1, 50)")
        c.run(until=lambda c: len(c.events) >= 50)
        for round_ in range(3):
            killed = query(dsn, f"SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots "
                                f"WHERE slot_name = 'pgconn_{name}' AND active_pid IS NOT NULL")
            assert killed == [(True,)]
            base = 51 + round_ * 50
            execute(dsn, f"INSERT INTO {s}.t SELECT generate_series({base}, {base + 49})")
            c.run(until=lambda c, n=base + 49: len(c.events) >= n, timeout=30)
    finally:
        conn.close()
    ids = [json.loads(e.key)["id"] for e in c.events]
    assert ids == list(range(1, 201))


def test_flush_lsn_confirmed_only_after_acknowledge(pg_dsn, db) -> None:
    dsn, name, s = db
    execute(dsn, f"CREATE TABLE {s}.t (id int PRIMARY KEY)")
    conn = connector(pg_dsn, name, s)
    try:
        it = conn.batches(Collector(conn).resume_state(), BatchLimits(max_events=1000, max_seconds=1))
        batch = next(it)
        while not batch.caught_up:
            conn.acknowledge(batch)
            batch = next(it)
        before = query(dsn, f"SELECT confirmed_flush_lsn::text FROM pg_replication_slots "
                            f"WHERE slot_name = 'pgconn_{name}'")
        execute(dsn, f"INSERT INTO {s}.t VALUES (1)")
        batch = next(it)
        while not batch.events:
            batch = next(it)
        next(it)  # the loop runs on without acknowledging
        unconfirmed = query(dsn, f"SELECT confirmed_flush_lsn::text FROM pg_replication_slots "
                                 f"WHERE slot_name = 'pgconn_{name}'")[0][0]
        # while idle the loop may confirm WAL written before the INSERT (the server logs running-xacts
        # records on its own), but never the unacknowledged transaction's commit
        assert str_to_lsn(before[0][0]) <= str_to_lsn(unconfirmed) < batch.ack
        conn.acknowledge(batch)
        next(it)  # the streaming loop sends the feedback
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            confirmed = query(dsn, f"SELECT confirmed_flush_lsn::text FROM pg_replication_slots "
                                   f"WHERE slot_name = 'pgconn_{name}'")[0][0]
            if str_to_lsn(confirmed) >= batch.ack:
                break
            time.sleep(0.05)
        assert str_to_lsn(confirmed) >= batch.ack
    finally:
        conn.close()


def test_slot_advances_while_captured_tables_are_idle(pg_dsn, db) -> None:
    """Changes to tables outside the capture (and outside the filtered publication) must not pin the slot:
    once everything handed out is acknowledged, the idle loop confirms the server's position; the
    heartbeat.action.query runs meanwhile."""
    dsn, name, s = db
    execute(dsn, f"CREATE TABLE {s}.captured (id int PRIMARY KEY)", f"CREATE TABLE {s}.other (id int PRIMARY KEY)",
            f"CREATE TABLE {s}.beats (n int)")
    conn = connector(pg_dsn, name, s, **{"table.include.list": f"{s}\\.captured", "heartbeat.interval.ms": 100,
                                         "heartbeat.action.query": f"INSERT INTO {s}.beats VALUES (1)"})
    try:
        c = Collector(conn).run()
        execute(dsn, f"INSERT INTO {s}.other SELECT generate_series(1, 1000)")
        target = query(dsn, "SELECT pg_current_wal_lsn()::text")[0][0]
        from ingest.connectors.postgres.pgoutput import str_to_lsn

        deadline = time.monotonic() + 20
        confirmed = 0
        while time.monotonic() < deadline:
            c.run(timeout=5)
            confirmed = str_to_lsn(query(dsn, f"SELECT confirmed_flush_lsn::text FROM pg_replication_slots "
                                              f"WHERE slot_name = 'pgconn_{name}'")[0][0])
            if confirmed >= str_to_lsn(target):
                break
        assert confirmed >= str_to_lsn(target)
        assert query(dsn, f"SELECT count(*) FROM {s}.beats")[0][0] >= 1
        # nothing captured changed: only heartbeat events (heartbeat.interval.ms)
        assert c.events and {e.table_id for e in c.events} == {f"__debezium-heartbeat.{name}"}
    finally:
        conn.close()


def _retained_wal(dsn: str, slot: str) -> int:
    """Bytes of WAL the slot keeps on the server (current position - restart_lsn), after a CHECKPOINT (which
    logs the running-transactions record that lets a confirmed slot move its restart_lsn)."""
    execute(dsn, "CHECKPOINT")
    return int(query(dsn, "SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), restart_lsn)::bigint FROM "
                          f"pg_replication_slots WHERE slot_name = '{slot}'")[0][0])


def test_heartbeats_keep_retained_wal_bounded_while_another_database_writes(pg_dsn, db) -> None:
    """Issue 16: the captured database is idle while another database on the same server writes ~40 MB of WAL.
    A stopped connector's slot retains all of it (the control); once the connector streams again with
    heartbeat.interval.ms and heartbeat.action.query, the slot's retained WAL falls below 16 MB and the
    heartbeats (events and the action query's writes) go on."""
    dsn, name, s = db
    slot = f"pgconn_{name}"
    other = admin_dsn(pg_dsn, "pgconn_other")
    if not query(admin_dsn(pg_dsn), "SELECT 1 FROM pg_database WHERE datname = 'pgconn_other'"):
        execute(admin_dsn(pg_dsn), "CREATE DATABASE pgconn_other")
    execute(other, "DROP TABLE IF EXISTS busy", "CREATE TABLE busy (id int, pad text)")
    execute(dsn, f"CREATE TABLE {s}.captured (id int PRIMARY KEY)",
            f"CREATE TABLE {s}.beats (id int PRIMARY KEY, n int)")
    props = {"table.include.list": f"{s}\\.captured", "heartbeat.interval.ms": 200,
             "heartbeat.action.query": f"INSERT INTO {s}.beats VALUES (1, 1) "
                                       f"ON CONFLICT (id) DO UPDATE SET n = {s}.beats.n + 1"}
    conn = connector(pg_dsn, name, s, **props)
    try:
        first = Collector(conn).run()  # the (empty) snapshot: the slot exists from here on
    finally:
        conn.close()
    bound = 16 * 1024 * 1024
    execute(other, "INSERT INTO busy SELECT g, repeat(md5(g::text), 30) FROM generate_series(1, 40000) g")
    stopped = _retained_wal(dsn, slot)
    assert stopped > 2 * bound, f"the other database's writes should be retained by a stopped slot: {stopped}"

    conn = connector(pg_dsn, name, s, **props)
    try:
        c = Collector(conn, resume=first.resume_state())
        deadline = time.monotonic() + 120  # a condition, not a timing: a busy machine only takes longer
        retained = stopped

        def beats() -> list:
            return [e for e in c.events if e.table_id == f"__debezium-heartbeat.{name}"]

        while (retained >= bound or len(beats()) < 2) and time.monotonic() < deadline:
            c.run(timeout=10)
            retained = _retained_wal(dsn, slot)
        print(f"retained WAL: slot stopped {stopped} bytes, streaming with heartbeats {retained} bytes")
        assert retained < bound, f"retained WAL {retained} bytes stayed above {bound}"
        beats = beats()
        assert beats and all(e.op is None for e in beats)
        assert query(dsn, f"SELECT n FROM {s}.beats")[0][0] >= 1  # the action query ran
        assert not [e for e in c.events if e.table_id != f"__debezium-heartbeat.{name}"]  # nothing captured
    finally:
        conn.close()
        execute(other, "DROP TABLE IF EXISTS busy")


def test_snapshot_modes(pg_dsn, db) -> None:
    from ingest.errors import LakecdcError

    dsn, name, s = db
    execute(dsn, f"CREATE TABLE {s}.t (id int PRIMARY KEY)", f"INSERT INTO {s}.t VALUES (1), (2)")
    # initial_only: the snapshot, then the iterator ends
    conn = connector(pg_dsn, name, s, **{"snapshot.mode": "initial_only"})
    batches = list(conn.batches(Collector(conn).resume_state(), BatchLimits()))
    conn.close()
    assert [e.op for b in batches for e in b.all_events()] == ["r", "r"]
    # no_data (and its older name never): schema rows only, then streaming from the slot's creation
    drop_slot_and_publication(dsn, f"pgconn_{name}", f"pgconn_{name}")
    conn = connector(pg_dsn, name, s, **{"snapshot.mode": "never"})
    c = Collector(conn).run()
    assert c.events == [] and len(c.schema_changes) == 1
    execute(dsn, f"INSERT INTO {s}.t VALUES (3)")
    c.run(until=lambda c: len(c.events) >= 1)
    conn.close()
    assert [(e.op, e.key) for e in c.events] == [("c", '{"id":3}')]
    streaming = c.resume_state()
    # always: a new snapshot on every start, even with a streaming position
    conn = connector(pg_dsn, name, s, **{"snapshot.mode": "always"})
    c2 = Collector(conn, resume=streaming).run()
    conn.close()
    assert sorted(e.key for e in c2.events if e.op == "r") == ['{"id":1}', '{"id":2}', '{"id":3}']
    assert min(e.seq for e in c2.events) > streaming.last_seq
    # the slot is gone: initial fails with one clear line, when_needed takes a new snapshot
    drop_slot_and_publication(dsn, f"pgconn_{name}", f"pgconn_{name}")
    conn = connector(pg_dsn, name, s)
    with pytest.raises(LakecdcError, match="no longer exists"):
        next(conn.batches(streaming, BatchLimits()))
    conn.close()
    conn = connector(pg_dsn, name, s, **{"snapshot.mode": "when_needed"})
    c3 = Collector(conn, resume=streaming).run()
    conn.close()
    assert sorted(e.key for e in c3.events if e.op == "r") == ['{"id":1}', '{"id":2}', '{"id":3}']


def _snapshot_marks(events) -> list[tuple[str, int | None, str]]:
    out = []
    for e in events:
        if e.op == "r":
            v = json.loads(e.value)
            row = v["after"]
            out.append((e.table_id.rsplit(".", 1)[1], row.get("id", row.get("a")), v["source"]["snapshot"]))
            assert e.snapshot == v["source"]["snapshot"]
    return out


def test_snapshot_rows_carry_debezium_markers(pg_dsn, db) -> None:
    """source.snapshot per snapshot row as Debezium 3.6.3 writes it (measured): "first" on the first row,
    "first_in_data_collection" / "last_in_data_collection" on each later table's first / last row (a one-row
    table in the middle: "last_in_data_collection"), "true" between, "last" on the last row of the last
    table with rows. Chunk sizes 2 and 3 put table ends exactly on and off chunk boundaries; the keyless
    table is read in one chunk."""
    dsn, name, s = db
    execute(dsn, f"CREATE TABLE {s}.a (id int PRIMARY KEY)", f"INSERT INTO {s}.a SELECT generate_series(1, 4)",
            f"CREATE TABLE {s}.b (id int PRIMARY KEY)", f"INSERT INTO {s}.b VALUES (1)",
            f"CREATE TABLE {s}.c (id int PRIMARY KEY)",
            f"CREATE TABLE {s}.d (a int, t text)", f"INSERT INTO {s}.d VALUES (1, 'x'), (2, 'y'), (3, 'z')",
            f"CREATE TABLE {s}.e (id int PRIMARY KEY)")  # an empty last table: "last" stays on d's last row
    for fetch in (2, 3, 100):
        conn = connector(pg_dsn, name, s, **{"snapshot.fetch.size": fetch, "snapshot.mode": "initial_only"})
        try:
            c = Collector(conn, limits=BatchLimits(max_events=3, max_seconds=1)).run()
        finally:
            conn.close()
        assert _snapshot_marks(c.events) == [
            ("a", 1, "first"), ("a", 2, "true"), ("a", 3, "true"), ("a", 4, "last_in_data_collection"),
            ("b", 1, "last_in_data_collection"),
            ("d", 1, "first_in_data_collection"), ("d", 2, "true"), ("d", 3, "last")], fetch


def test_keyless_full_identity_delete_is_followed_by_a_null_key_tombstone(pg_dsn, db) -> None:
    """Debezium 3.6.3 (measured): a DELETE on a table without key (REPLICA IDENTITY FULL) gives the delete
    and then a tombstone whose key and value are both null."""
    dsn, name, s = db
    execute(dsn, f"CREATE TABLE {s}.nokey (a int, b text)", f"ALTER TABLE {s}.nokey REPLICA IDENTITY FULL",
            f"INSERT INTO {s}.nokey VALUES (1, 'a')")
    conn = connector(pg_dsn, name, s)
    try:
        c = Collector(conn).run()
        execute(dsn, f"DELETE FROM {s}.nokey WHERE a = 1")
        c.run(until=lambda c: sum(e.op is None for e in c.events) >= 1)
    finally:
        conn.close()
    ops = [(e.op, e.key, e.value is None) for e in c.events]
    assert ops == [("r", None, False), ("d", None, False), (None, None, True)]
    assert json.loads(c.events[1].value)["before"] == {"a": 1, "b": "a"}
    assert c.events[0].snapshot == "last"  # the only snapshot row is the last one


def test_a_slot_another_reader_holds_is_not_taken_over(pg_dsn, db) -> None:
    """A fresh start (no bronze position) whose slot another connection is reading (a second `lakecdc run`, a
    Debezium connector) stops with one line naming the holder, after slot.max.retries waits; before, it
    failed with psycopg2's DuplicateObject traceback. The holder's stream is left alone."""
    from psycopg2.extras import LogicalReplicationConnection

    from ingest.bronze.contract import ResumeState
    from ingest.errors import LakecdcError
    from tests.support.pg import dsn_params, psycopg2_connect

    dsn, name, s = db
    execute(dsn, f"CREATE TABLE {s}.t (id int PRIMARY KEY)", f"CREATE PUBLICATION pgconn_{name} FOR TABLE {s}.t")
    params = dsn_params(pg_dsn)
    holder = psycopg2_connect(params, LogicalReplicationConnection)
    try:
        cur = holder.cursor()
        cur.create_replication_slot(f"pgconn_{name}", output_plugin="pgoutput")
        cur.start_replication(slot_name=f"pgconn_{name}", decode=False,
                              options={"proto_version": "1", "publication_names": f"pgconn_{name}"})
        holders = f"SELECT active_pid FROM pg_replication_slots WHERE slot_name = 'pgconn_{name}'"
        pid = query(dsn, holders)[0][0]
        conn = connector(pg_dsn, name, s, **{"slot.max.retries": 1})
        try:
            conn.validate()
            in_use = f"slot pgconn_{name} is in use by another connection \\(pid {pid}\\)"
            with pytest.raises(LakecdcError, match=in_use):
                next(iter(conn.batches(ResumeState(None, None), BatchLimits())))
        finally:
            conn.close()
        assert query(dsn, holders)[0][0] == pid
    finally:
        holder.close()


@pytest.mark.parametrize("ending", ["transaction ends", "cancelled"])
def test_a_slot_creation_held_up_by_an_open_transaction_names_it(pg_dsn, db, caplog, monkeypatch, ending) -> None:
    """PostgreSQL creates a logical slot only once every transaction holding a transaction id has ended, and
    says nothing while it waits. A session left idle in a write transaction holds up a fresh start: the run says
    which session it waits for (pid, database, state) and how to give up; it goes on by itself once that
    transaction ends, or stops with one line when the wait is cancelled as the warning says."""
    import logging
    import re
    import threading

    import psycopg2

    from ingest.bronze.contract import ResumeState
    from ingest.connectors.postgres import setup
    from ingest.errors import LakecdcError

    dsn, name, s = db
    execute(dsn, f"CREATE TABLE {s}.t (id int PRIMARY KEY)", f"INSERT INTO {s}.t VALUES (1)",
            f"CREATE TABLE {s}.other (id int)")
    monkeypatch.setattr(setup, "SLOT_WAIT_NOTICE_AFTER_S", 0.2)
    blocker = psycopg2.connect(dsn)   # not autocommit: the INSERT opens a transaction holding an xid
    first: list = []
    try:
        with blocker.cursor() as cur:
            cur.execute(f"INSERT INTO {s}.other VALUES (1)")
            cur.execute("SELECT pg_backend_pid()")
            blocker_pid = cur.fetchone()[0]
        conn = connector(pg_dsn, name, s)
        try:
            conn.validate()
            caplog.set_level(logging.WARNING, logger=setup.__name__)

            def start() -> None:
                try:
                    first.append(next(iter(conn.batches(ResumeState(None, None), BatchLimits()))))
                except LakecdcError as exc:
                    first.append(exc)

            starting = threading.Thread(target=start)
            starting.start()
            notice = re.compile(rf"creating replication slot pgconn_{name} waits for 1 open transaction\(s\) on the "
                                rf"server to end: pid {blocker_pid} \(database pgconn_test, .*idle in transaction.*; "
                                rf"to give up instead, SELECT pg_cancel_backend\((\d+)\)")
            deadline = time.monotonic() + 120   # a hang detector, not a speed measure
            while not (found := [m for r in caplog.records if (m := notice.search(r.getMessage()))]):
                assert time.monotonic() < deadline and starting.is_alive(), [r.getMessage() for r in caplog.records]
                time.sleep(0.1)
            assert not first   # still waiting for the transaction
            if ending == "cancelled":
                execute(dsn, f"SELECT pg_cancel_backend({found[0].group(1)})")
            else:
                blocker.rollback()
            starting.join(120)
            assert not starting.is_alive() and first
            if ending == "cancelled":
                assert isinstance(first[0], LakecdcError) and "was cancelled while it waited" in str(first[0])
                assert query(dsn, f"SELECT count(*) FROM pg_replication_slots WHERE slot_name = 'pgconn_{name}'") \
                    == [(0,)]
            else:
                assert not isinstance(first[0], Exception) and len(first[0]) > 0
        finally:
            conn.close()
    finally:
        blocker.close()


def test_signals_from_the_signal_file(pg_dsn, db, tmp_path) -> None:
    """Issue 16: signal.enabled.channels=file: an execute-snapshot line appended to signal.file is carried out
    between transactions (its watermarks still go through the signalling table, whose own signal rows are then
    ignored: the source channel is off); the file is emptied; a broken line is a log line."""
    from ingest.connectors.signals import append_signal

    dsn, name, s = db
    execute(dsn, f"CREATE TABLE {s}.t (id int PRIMARY KEY, v text)",
            f"INSERT INTO {s}.t SELECT g, 'v' || g FROM generate_series(1, 50) g",
            f"CREATE TABLE {s}.u (id int PRIMARY KEY)", f"INSERT INTO {s}.u VALUES (1)",
            f"CREATE TABLE {s}.sig (id varchar(64) PRIMARY KEY, type varchar(32) NOT NULL, data varchar(2048))")
    path = tmp_path / "signals.txt"
    conn = connector(pg_dsn, name, s, **{"snapshot.mode": "no_data", "signal.data.collection": f"{s}.sig",
                                         "signal.enabled.channels": "file", "signal.file": str(path),
                                         "incremental.snapshot.chunk.size": 20,
                                         "table.include.list": f"{s}\\.t,{s}\\.u"})

    def completed(c: Collector) -> bool:
        return any(e.table_id.startswith("__debezium-notification") and json.loads(e.value)["type"] == "COMPLETED"
                   for e in c.events)

    try:
        c = Collector(conn).run()
        # the source channel is off: a signal row in the table is not acted on
        row = json.dumps({"data-collections": [f"{s}.u"]})
        execute(dsn, f"INSERT INTO {s}.sig VALUES ('row-1', 'execute-snapshot', '{row}')")
        append_signal(path, "execute-snapshot", {"data-collections": [f"{s}.t"], "type": "incremental"})
        with path.open("a") as handle:
            handle.write("{broken\n")
        c.run(until=completed, timeout=60)
    finally:
        conn.close()
    reads = [e for e in c.events if e.op == "r"]
    assert sorted(json.loads(e.key)["id"] for e in reads) == list(range(1, 51))
    assert {e.table_id.split(".")[-1] for e in reads} == {"t"}
    assert path.read_text() == ""
