"""The debezium-json source: decoding Kafka-record JSON lines, seq in source commit order, file tailing,
batches and positions. Event shapes are the documented examples of the Debezium docs (seed inventories)."""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest

from ingest.bronze.contract import BatchLimits, ResumeState
from ingest.config import SourceSettings
from ingest.connectors.debezium_json import DebeziumJsonConnector
from ingest.connectors.debezium_json.records import DecodedEvent, DecodedSchemaChange, Decoder, RecordError
from ingest.connectors.debezium_json.sample import InventoryEvents, kcat_lines
from ingest.connectors.debezium_json.tail import LineTail
from ingest.connectors.registry import connector_class, create
from ingest.errors import ConfigError, LakecdcError
from tests.support.mysql_schema_change import create_table

pytestmark = pytest.mark.unit

KEY_SCHEMA = {"type": "struct", "fields": [{"type": "int32", "optional": False, "field": "id"}],
              "optional": False, "name": "mysql-server-1.inventory.customers.Key"}


def mysql_value(op: str, pos: int, row: int = 0, file: str = "mysql-bin.000003", **extra) -> dict:
    """The MySQL customers examples of the Debezium docs (seed 003), with a chosen binlog position."""
    before = {"id": 1004, "first_name": "Anne", "last_name": "Kretchmar", "email": "annek@noanswer.org"}
    after = {**before, "first_name": "Anne Marie"}
    return {"before": None if op == "c" else before, "after": None if op == "d" else after,
            "source": {"version": "0.10.0.Beta4", "connector": "mysql", "name": "mysql-server-1", "ts_ms": 1465581,
                       "snapshot": False, "db": "inventory", "table": "customers", "server_id": 223344,
                       "gtid": None, "file": file, "pos": pos, "row": row, "thread": 7, "query": None},
            "op": op, "ts_ms": 1465581029523, **extra}


def kcat(value, key=None, topic="mysql-server-1.inventory.customers", offset=0, as_text=True) -> bytes:
    """A kcat -J line: key and value as JSON text in strings (as kcat writes them) or embedded objects."""
    def enc(x):
        return None if x is None else (orjson.dumps(x).decode() if as_text else x)
    return orjson.dumps({"topic": topic, "partition": 0, "offset": offset, "tstype": "create", "ts": 1,
                         "broker": 1, "key": enc(key), "payload": enc(value)})


def test_kcat_line_with_schema_envelope_as_text():
    value_schema = {"type": "struct", "fields": [], "optional": False, "name": "x.Envelope"}
    value = mysql_value("c", 154)
    line = kcat({"schema": value_schema, "payload": value}, {"schema": KEY_SCHEMA, "payload": {"id": 1004}})
    ev = Decoder().decode(line)
    assert isinstance(ev, DecodedEvent)
    assert (ev.topic, ev.table_id, ev.op, ev.snapshot, ev.ts_ms, ev.source_ts_ms) == (
        "mysql-server-1.inventory.customers", "inventory.customers", "c", "false", 1465581029523, 1465581)
    assert json.loads(ev.key) == {"id": 1004}
    assert json.loads(ev.value) == value  # the payload, landed as it is
    assert json.loads(ev.value_schema) == value_schema and json.loads(ev.key_schema) == KEY_SCHEMA
    # canonical form: sorted keys, so the same schema written in another key order has the same text
    reordered = dict(reversed(list(value_schema.items())))
    other = Decoder().decode(kcat({"schema": reordered, "payload": value}))
    assert other.value_schema == ev.value_schema


def test_embedded_objects_and_schemas_off_and_value_field():
    value = mysql_value("u", 484)
    embedded = Decoder().decode(kcat({"schema": {"type": "struct"}, "payload": value}, {"id": 1004}, as_text=False))
    assert json.loads(embedded.value) == value and embedded.value_schema == '{"type":"struct"}'
    assert embedded.key_schema is None and json.loads(embedded.key) == {"id": 1004}
    # schemas off, Kafka record with `value` and `timestamp` instead of kcat's `payload`/`ts`
    line = orjson.dumps({"topic": "t", "partition": 0, "offset": 5, "timestamp": 1, "headers": [],
                         "key": orjson.dumps({"id": 1004}).decode(), "value": orjson.dumps(value).decode()})
    plain = Decoder().decode(line)
    assert plain.value == orjson.dumps(value).decode() and plain.value_schema is None and plain.op == "u"


def test_bare_value_line_gets_debezium_topic():
    ev = Decoder().decode(orjson.dumps(mysql_value("d", 805)))
    assert ev.topic == "mysql-server-1.inventory.customers" and ev.op == "d" and ev.key is None


def test_seq_follows_source_commit_order_not_input_order():
    # delivered late: the update (pos 484) arrives after the delete (pos 805); a later binlog file sorts after
    lines = [kcat(mysql_value("c", 154)), kcat(mysql_value("d", 805)), kcat(mysql_value("u", 484)),
             kcat(mysql_value("c", 4, file="mysql-bin.000010")), kcat(mysql_value("c", 154, row=1))]
    d = Decoder()
    seqs = [d.decode(line).seq for line in lines]
    assert sorted(range(5), key=lambda i: seqs[i]) == [0, 4, 2, 1, 3]
    assert len({len(s) for s in seqs}) == 1  # fixed width
    # a duplicated delivery is the same event: same seq
    assert Decoder().decode(lines[1]).seq == seqs[1]


def source_event(source: dict, op: str = "c", ts_ms: int = 1559729471739) -> bytes:
    return orjson.dumps({"before": None, "after": {"id": 1}, "source": source, "op": op, "ts_ms": ts_ms})


def test_seq_per_connector_from_documented_source_blocks():
    d = Decoder()
    # SQL Server (seed 000): c, u, d of the customers example in commit order; the update is serial 2
    ss = [{"connector": "sqlserver", "name": "server1", "db": "testDB", "schema": "dbo", "table": "customers",
           "change_lsn": ch, "commit_lsn": co, "event_serial_no": n}
          for ch, co, n in [("00000027:00000758:0003", "00000027:00000758:0005", 1),
                            ("00000027:00000ac0:0002", "00000027:00000ac0:0007", 2),
                            ("00000027:00000db0:0005", "00000027:00000db0:0007", 1)]]
    seqs = [d.decode(source_event(s)).seq for s in reversed(ss)]
    assert seqs == sorted(seqs, reverse=True)
    assert d.decode(source_event(ss[0])).table_id == "testDB.dbo.customers"
    # a primary-key update in SQL Server: d and c share both LSNs, serial 1 then 2
    pk = {**ss[1], "event_serial_no": 1}
    assert d.decode(source_event(pk, "d")).seq < d.decode(source_event(ss[1])).seq
    # Oracle (seed 001): commit_scn decides, compared as numbers, not strings ("9" < "10")
    ora = {"connector": "oracle", "name": "server1", "db": "ORCLPDB1", "schema": "DEBEZIUM", "table": "CUSTOMERS",
           "txId": "6.28.807", "scn": "9", "commit_scn": "9", "ssn": 1}
    assert d.decode(source_event(ora)).seq < d.decode(source_event({**ora, "scn": "10", "commit_scn": "10"})).seq
    # MongoDB (seed 003): ts_ms then ord
    mongo = {"connector": "mongodb", "name": "fulfillment", "ts_ms": 1558965508000, "db": "inventory", "rs": "rs0",
             "collection": "customers", "ord": 31}
    assert d.decode(source_event({**mongo, "ord": 6})).seq < d.decode(source_event(mongo)).seq
    assert d.decode(source_event(mongo)).table_id == "inventory.customers"
    # PostgreSQL: [last_commit_lsn, lsn]: a transaction that started earlier (lower lsn) but committed
    # later sorts after the one that committed first
    pg = {"connector": "postgresql", "name": "inv", "db": "postgres", "schema": "inventory", "table": "customers"}
    first_commit = d.decode(source_event({**pg, "lsn": 900, "sequence": '["100","900"]'})).seq
    later_commit = d.decode(source_event({**pg, "lsn": 500, "sequence": '["950","500"]'})).seq
    assert first_commit < later_commit
    assert d.decode(source_event({**pg, "lsn": 900, "sequence": None})).table_id == "postgres.inventory.customers"
    # fallback: no position fields -> source.ts_ms
    assert d.decode(source_event({"connector": "db2", "ts_ms": 5})).seq < \
        d.decode(source_event({"connector": "db2", "ts_ms": 6})).seq


def test_tombstone_inherits_position_of_the_delete_and_its_table():
    d = Decoder(topic_prefix="mysql-server-1")
    delete = d.decode(kcat(mysql_value("d", 805), {"id": 1004}))
    tomb = d.decode(kcat(None, {"id": 1004}))
    assert tomb.op is None and tomb.value is None and tomb.table_id == "inventory.customers"
    later = d.decode(kcat(mysql_value("c", 900), {"id": 1005}))
    assert delete.seq < tomb.seq < later.seq
    # without an earlier event on the topic: the topic without the prefix
    assert Decoder(topic_prefix="mysql-server-1").decode(kcat(None, {"id": 1})).table_id == "inventory.customers"


def test_schema_change_event_and_heartbeat():
    source = {"version": "3.4.0.Alpha1", "connector": "mariadb", "name": "mariadb", "ts_ms": 1651535750218,
              "snapshot": "false", "db": "inventory", "sequence": None, "table": "customers", "server_id": 223344,
              "gtid": None, "file": "mariadb-bin.000003", "pos": 570, "row": 0, "thread": None, "query": None}
    changes = [{"type": "ALTER", "id": '"inventory"."customers"', "table": {"primaryKeyColumnNames": ["id"]}}]
    value = {"source": source, "databaseName": "inventory", "schemaName": None,
             "ddl": "ALTER TABLE customers ADD middle_name varchar(255) AFTER first_name", "tableChanges": changes}
    d = Decoder()
    sc = d.decode(kcat(value, {"databaseName": "inventory"}, topic="mariadb"))
    assert isinstance(sc, DecodedSchemaChange)
    assert (sc.database_name, sc.schema_name, sc.ddl) == ("inventory", None, value["ddl"])
    assert json.loads(sc.table_changes) == changes and json.loads(sc.event) == value
    row_after = d.decode(kcat(mysql_value("c", 900, file="mariadb-bin.000003") | {
        "source": {**source, "pos": 900}}))
    assert sc.seq < row_after.seq
    heartbeat = d.decode(kcat({"ts_ms": 1}, {"serverName": "mariadb"}, topic="__debezium-heartbeat.mariadb"))
    assert heartbeat.op is None and heartbeat.table_id == "__debezium-heartbeat.mariadb"
    assert heartbeat.seq.endswith("-1")
    txn = d.decode(kcat({"status": "END", "id": "571:53195832", "event_count": 2, "ts_ms": 1},
                        topic="mariadb.transaction"))
    assert txn.txn_id == "571:53195832"


def snapshot_ddl(ddl: str, pos: int = 154) -> dict:
    """A schema change of a MySQL connector snapshot: every one carries the snapshot's binlog position."""
    return {"source": {"connector": "mysql", "name": "dbserver1", "snapshot": "true", "db": "inventory",
                       "file": "mysql-bin.000003", "pos": pos, "row": 0, "server_id": 0},
            "databaseName": "inventory", "ddl": ddl, "tableChanges": []}


def test_schema_changes_at_one_position_keep_their_order_before_its_rows_and_across_restarts():
    """A MySQL snapshot's DROP DATABASE, CREATE DATABASE, DROP TABLE, CREATE TABLE... share one binlog position
    with the snapshot's rows: the schema history applies them in arrival order, and a DROP must not end rows the
    snapshot read after it (silver lost random rows when their hash sorted before it)."""
    ddls = ["DROP DATABASE IF EXISTS inventory", "CREATE DATABASE inventory", "USE inventory",
            "DROP TABLE IF EXISTS customers", "CREATE TABLE customers (id int primary key)"]
    d = Decoder("dbserver1")
    first = [d.decode(kcat(snapshot_ddl(ddl), topic="dbserver1")).seq for ddl in ddls[:3]]
    streamed = d.decode(kcat(mysql_value("c", 900)))   # a row of a later position read in between
    resumed = Decoder("dbserver1", d.prev_main)        # a restart goes on from where the decoder was
    rest = [resumed.decode(kcat(snapshot_ddl(ddl), topic="dbserver1")).seq for ddl in ddls[3:]]
    again = resumed.decode(kcat(snapshot_ddl(ddls[4]), topic="dbserver1")).seq   # delivered twice
    seqs = first + rest
    assert seqs == sorted(seqs) and len(set(seqs)) == len(ddls)
    assert again == rest[-1]
    rows = [resumed.decode(kcat(mysql_value("r", 154) | {"after": {"id": i}}, key={"id": i})).seq
            for i in range(300)]
    assert max(seqs) < min(rows) and max(rows) < streamed.seq
    assert resumed.decode(kcat(mysql_value("c", 901))).seq > streamed.seq


def test_a_row_that_disagrees_with_its_schema_is_refused():
    schema = {"type": "struct", "name": "t.Envelope", "optional": False, "fields": [
        {"field": "after", "type": "struct", "optional": True, "name": "t.Value", "fields": [
            {"field": "id", "type": "int32", "optional": False},
            {"field": "name", "type": "string", "optional": True}]},
        {"field": "op", "type": "string", "optional": False}]}
    good = {"schema": schema, "payload": {"after": {"id": 1, "name": None}, "op": "c", "source": {}}}
    assert Decoder().decode_record("t", None, orjson.dumps(good).decode()).op == "c"
    bad = {"schema": schema, "payload": {"after": {"id": 1, "nmae": "x"}, "op": "c", "source": {}}}
    with pytest.raises(RecordError, match=r"after row disagrees with its schema \(missing \['name'\], not in the "
                                          r"schema \['nmae'\]\)"):
        Decoder().decode_record("t", None, orjson.dumps(bad).decode())


@pytest.mark.parametrize("line, stage", [
    (b"{not json", "decode"),
    (b"[1, 2]", "decode"),
    (kcat({"op": "x", "source": {}}), "parse"),
    (kcat({"op": "c", "source": "nope"}), "parse"),
    (kcat({"op": "c", "ts_ms": "soon"}), "parse"),
    (orjson.dumps({"topic": "t", "payload": "{broken"}), "decode"),
    (orjson.dumps({"topic": 5, "payload": None}), "parse"),
])
def test_malformed_lines_raise_record_errors(line, stage):
    with pytest.raises(RecordError) as err:
        Decoder().decode(line)
    assert err.value.stage == stage


def test_tail_growing_directory_partial_lines_and_truncation(tmp_path: Path):
    (tmp_path / "b.jsonl").write_bytes(b'{"a":1}\n{"a":')
    tail = LineTail(tmp_path)
    first = tail.read()
    assert (first.file, first.offset, first.end, first.data) == ("b.jsonl", 0, 8, b'{"a":1}')
    assert tail.read() is None  # incomplete line is left for later
    with open(tmp_path / "b.jsonl", "ab") as f:
        f.write(b'2}')  # complete JSON without newline: taken
    assert tail.read().data == b'{"a":2}'
    (tmp_path / "a.jsonl").write_bytes(b'{"old":1}\n')  # sorts before the current file: not read
    (tmp_path / ".hidden").write_bytes(b'{"h":1}\n')
    (tmp_path / "c.jsonl").write_bytes(b'{"c":1}\n')
    assert tail.read() == ("c.jsonl", 0, 8, b'{"c":1}', False)
    assert tail.read() is None
    # resume inside a file; a file shorter than the position is an error
    resumed = LineTail(tmp_path, start_file="b.jsonl", start_offset=8)
    assert resumed.read().data == b'{"a":2}'
    with pytest.raises(LakecdcError, match="shorter"):
        LineTail(tmp_path, start_file="c.jsonl", start_offset=999).read()
    # an unterminated non-JSON tail is final once a later file exists
    (tmp_path / "d.jsonl").write_bytes(b'garbage')
    (tmp_path / "e.jsonl").write_bytes(b'{"e":1}\n')
    assert [line.data for line in iter(tail.read, None)] == [b"garbage", b'{"e":1}']


def test_tail_too_long_line(tmp_path: Path):
    (tmp_path / "x.jsonl").write_bytes(b'{"a":"' + b"x" * 100 + b'"}\n{"b":1}\n')
    tail = LineTail(tmp_path / "x.jsonl", max_line_bytes=20)
    long = tail.read()
    assert long.too_long and len(long.data) == 20 and long.end == 109
    assert tail.read().data == b'{"b":1}'


def settings(path, **props) -> SourceSettings:
    return SourceSettings("inv", "debezium-json", {"path": str(path), **props})


def test_properties_are_validated():
    with pytest.raises(ConfigError, match="debezium-json\\): unknown property 'topic.prefx'"):
        DebeziumJsonConnector(settings("/x", **{"topic.prefx": "a"}))
    with pytest.raises(ConfigError, match="required property 'path' is missing"):
        DebeziumJsonConnector(SourceSettings("inv", "debezium-json", {}))
    with pytest.raises(ConfigError, match="poll.interval.ms"):
        DebeziumJsonConnector(settings("/x", **{"poll.interval.ms": "soon"}))
    rel = DebeziumJsonConnector(settings("in/events"), base_dir=Path("/base"))
    assert rel.path == Path("/base/in/events")
    with pytest.raises(LakecdcError, match="does not exist"):
        DebeziumJsonConnector(settings("/does/not/exist")).validate()


def test_registry():
    assert connector_class("debezium-json") is DebeziumJsonConnector
    with pytest.raises(ConfigError, match=r"unknown connector 'pulsar' \(known: debezium, debezium-json, kafka, "
                                          r"mariadb, mongodb, mysql"):
        connector_class("pulsar")
    conn = create(settings("rel.jsonl"), base_dir=Path("/cfg"))
    assert conn.path == Path("/cfg/rel.jsonl")


def test_batches_positions_rejects_and_resume(tmp_path: Path):
    lines = list(kcat_lines(30, seed=3, snapshot_rows=5))
    lines.insert(7, b"this is not json\n")
    lines.insert(12, b"\n")  # blank lines are skipped
    lines.insert(15, orjson.dumps({"topic": "t", "payload": {"op": "c", "source": {"connector": "mysql",
                                                                                 "db": {"x": 1}, "table": "t"}}})
                 + b"\n")  # a db that is an object: rejected, the run goes on
    (tmp_path / "00.jsonl").write_bytes(b"".join(lines[:20]))
    (tmp_path / "01.jsonl").write_bytes(b"".join(lines[20:]))
    conn = DebeziumJsonConnector(settings(tmp_path, **{"poll.interval.ms": 1}))
    batches = []
    for batch in conn.batches(ResumeState(), BatchLimits(max_events=8, max_seconds=60)):
        batches.append(batch)
        if batch.caught_up:
            break
    events = [e for b in batches for e in b.events]
    rejects = [r for b in batches for r in b.rejects]
    assert len(events) == 30 and len(rejects) == 2
    assert rejects[0].raw == b"this is not json" and rejects[0].stage == "decode"
    assert rejects[1].stage == "parse" and "unhashable" in rejects[1].error
    assert rejects[0].seq == f"input:00.jsonl:{sum(len(x) for x in lines[:7]):016x}"
    # every row of a batch carries the batch end; `record` is the row's own line
    for batch in batches[:-1]:
        ends = {(json.loads(e.position)["file"], json.loads(e.position)["offset"]) for e in batch.events}
        assert len(ends) == 1
    records = [json.loads(e.position)["record"] for e in events]
    assert len(set(records)) == 30 and records[0] == "00.jsonl:0"
    assert batches[-1].caught_up
    assert json.loads(events[-1].position)["offset"] == sum(len(x) for x in lines[20:])
    # resume from the end of the second batch: exactly the remaining input
    cut = json.loads(batches[1].events[0].position)
    resumed = []
    for batch in conn.batches(ResumeState(position=cut), BatchLimits(max_events=100, max_seconds=60)):
        resumed.extend(batch.events)
        if batch.caught_up:
            break
    landed_before = sum(len(b.events) for b in batches[:2])
    assert [e.value for e in resumed] == [e.value for e in events[landed_before:]]
    assert [e.seq for e in resumed] == [e.seq for e in events[landed_before:]]  # inherited seqs too


def test_files_without_schemas_get_schemas_from_the_schema_change_lines(tmp_path: Path):
    """The debezium-json source resolves schemaless change lines as the kafka source does: here from a MySQL schema
    change line (tableChanges) that comes after them in the file, within the same batch, with the file's
    producer setting decimal.handling.mode=string; a restart learns the schema from bronze."""
    change = create_table("shop", "items")

    def row(i: int) -> bytes:
        value = {"before": None, "after": {"id": i, "price": f"{i}.50"}, "op": "c", "ts_ms": 1,
                 "source": {"connector": "mysql", "db": "shop", "table": "items", "file": "bin.000001",
                            "pos": 100 + i, "row": 0}}
        return orjson.dumps({"topic": "p.shop.items", "key": {"id": i}, "payload": value}) + b"\n"

    (tmp_path / "00.jsonl").write_bytes(row(1) + orjson.dumps({"topic": "p", "payload": change}) + b"\n" + row(2))
    conn = DebeziumJsonConnector(settings(tmp_path, **{"poll.interval.ms": 1, "topic.prefix": "p",
                                                       "decimal.handling.mode": "string"}))
    batch = next(iter(conn.batches(ResumeState(), BatchLimits(max_events=100, max_seconds=60))))
    conn.close()
    assert len(batch.events) == 2 and len(batch.schema_changes) == 1
    schema = batch.events[0].value_schema
    assert schema is not None and all(e.value_schema == schema for e in batch.events)
    after = next(f for f in orjson.loads(schema)["fields"] if f["field"] == "after")
    assert {f["field"]: f["type"] for f in after["fields"]} == {"id": "int32", "price": "string"}
    assert orjson.loads(batch.events[0].key_schema)["name"] == "p.shop.items.Key"
    # a restart after the first batch: the new line's schema comes from what bronze holds (asked once)
    with (tmp_path / "00.jsonl").open("ab") as f:
        f.write(row(3))
    asked = []

    def landed():
        asked.append(1)
        return [("shop.items", batch.events[-1].seq, batch.events[-1].key_schema, schema)], []

    resume = ResumeState(position=json.loads(batch.events[-1].position), landed_schemas=landed)
    conn = DebeziumJsonConnector(settings(tmp_path, **{"poll.interval.ms": 1, "topic.prefix": "p"}))
    more = next(iter(conn.batches(resume, BatchLimits(max_events=100, max_seconds=60))))
    conn.close()
    assert [e.value_schema for e in more.events] == [schema] and asked == [1]


def test_sample_generator_is_commit_ordered_and_deterministic():
    gen = list(InventoryEvents(seed=1).events(500))
    assert gen == list(InventoryEvents(seed=1).events(500))
    d = Decoder()
    seqs = [d.decode(orjson.dumps({"topic": t, "key": k, "payload": v})).seq for t, k, v in gen]
    assert seqs == sorted(seqs)
    shuffled = [orjson.loads(x) for x in kcat_lines(500, seed=1, shuffle_window=20, duplicate_every=50)]
    assert len(shuffled) == 510


def test_tailing_picks_up_appended_lines_and_new_files_while_running(tmp_path: Path):
    lines = list(kcat_lines(9, seed=8, snapshot_rows=3))
    (tmp_path / "0001.jsonl").write_bytes(b"".join(lines[:3]))
    conn = DebeziumJsonConnector(settings(tmp_path, **{"poll.interval.ms": 1}))
    stream = conn.batches(ResumeState(), BatchLimits(max_events=100, max_seconds=60))
    first = next(stream)
    assert (len(first.events), first.caught_up) == (3, True)
    idle = next(stream)
    assert (len(idle), idle.caught_up) == (0, True)
    with open(tmp_path / "0001.jsonl", "ab") as f:
        f.write(b"".join(lines[3:5]) + lines[5][:40])  # two lines and the start of a third
    second = next(stream)
    assert len(second.events) == 2
    (tmp_path / "0002.jsonl").write_bytes(b"".join(lines[6:]))
    with open(tmp_path / "0001.jsonl", "ab") as f:
        f.write(lines[5][40:])
    third = next(stream)
    assert [e.value for e in third.events] == [Decoder().decode(x.rstrip(b"\n")).value for x in lines[5:]]
    conn.close()
