"""Unit tests of ingest.events: schema builders, source blocks, topics, envelopes, the JsonConverter
serializer, transaction metadata, heartbeats and the bronze mapping."""

from __future__ import annotations

import base64
import json

import orjson
import pytest

from ingest.bronze.contract import BronzeEvent, BronzeSchemaChange
from ingest.errors import LakecdcError
from ingest.events import connect_schema as cs
from ingest.events import envelope as ev
from ingest.events import json_converter as jc
from ingest.events import source_info as si
from ingest.events import to_bronze as tb
from ingest.events import topics as tp
from ingest.schema.interpreter import parse_debezium_ids
from ingest.schema.model import TableId

pytestmark = pytest.mark.unit


# ---------------------------------------------------------------- connect_schema

@pytest.mark.parametrize(("schema", "expected"), [
    (cs.int8(), {"type": "int8", "optional": False}),
    (cs.int16(True), {"type": "int16", "optional": True}),
    (cs.int32(), {"type": "int32", "optional": False}),
    (cs.int64(True, default=0), {"type": "int64", "optional": True, "default": 0}),
    (cs.float32(), {"type": "float", "optional": False}),
    (cs.float64(True), {"type": "double", "optional": True}),
    (cs.boolean(True, default=False), {"type": "boolean", "optional": True, "default": False}),
    (cs.string(), {"type": "string", "optional": False}),
    (cs.bytes_(True, name="org.apache.kafka.connect.data.Decimal", version=1,
               parameters={"scale": 2, "connect.decimal.precision": "10"}),
     {"type": "bytes", "optional": True, "name": "org.apache.kafka.connect.data.Decimal", "version": 1,
      "parameters": {"scale": "2", "connect.decimal.precision": "10"}}),
    (cs.int32(name="io.debezium.time.Date", version=1, doc="days", default=0),
     {"type": "int32", "optional": False, "name": "io.debezium.time.Date", "version": 1, "doc": "days", "default": 0}),
    (cs.array(cs.string(), True), {"type": "array", "items": {"type": "string", "optional": False}, "optional": True}),
    (cs.map_(cs.string(), cs.int32(True)),
     {"type": "map", "keys": {"type": "string", "optional": False}, "values": {"type": "int32", "optional": True},
      "optional": False}),
    (cs.struct([("id", cs.int32()), ("j", cs.debezium_json())], False, name="a.b.Key"),
     {"type": "struct", "fields": [{"type": "int32", "optional": False, "field": "id"},
                                   {"type": "string", "optional": True, "name": "io.debezium.data.Json", "version": 1,
                                    "field": "j"}],
      "optional": False, "name": "a.b.Key"}),
])
def test_schema_builders_emit_jsonconverter_form_and_order(schema: dict, expected: dict) -> None:
    assert schema == expected
    # key order, not only content: the serialized text must be identical
    assert jc.dumps(schema) == orjson.dumps(expected)


def test_struct_field_key_comes_last_and_nested_struct_keeps_order() -> None:
    inner = cs.struct([("x", cs.int32())], True, name="n.Value")
    outer = cs.struct([("before", inner)], False, name="n.Envelope")
    assert list(outer["fields"][0]) == ["type", "fields", "optional", "name", "field"]
    assert list(outer) == ["type", "fields", "optional", "name"]


@pytest.mark.parametrize("bad", [lambda: cs.primitive("int128"),
                                 lambda: cs.struct([("a", cs.int32()), ("a", cs.int32())])])
def test_schema_builder_errors(bad) -> None:
    with pytest.raises(LakecdcError):
        bad()


def test_with_optional_and_with_name_keep_order() -> None:
    s = cs.int32(name="io.debezium.time.Date", version=1)
    o = cs.with_optional(s, True)
    assert list(o) == list(s) and o["optional"] is True and s["optional"] is False
    n = cs.with_name(cs.string(True), "x.Y")
    assert list(n) == ["type", "optional", "name"]


@pytest.mark.parametrize(("schema", "value", "ok"), [
    (cs.int8(), 127, True), (cs.int8(), 128, False), (cs.int16(), -32768, True), (cs.int32(), 2**31, False),
    (cs.int64(), 2**63 - 1, True), (cs.int64(), True, False), (cs.int32(), "1", False),
    (cs.boolean(), 1, False), (cs.boolean(), False, True), (cs.string(), None, False), (cs.string(True), None, True),
    (cs.boolean(True, default=False), None, True), (cs.float64(), 1, True), (cs.bytes_(), "AAE=", True),
    (cs.array(cs.int32()), [1, "2"], False), (cs.map_(cs.string(), cs.int32()), {"a": 1}, True),
    (cs.struct([("a", cs.int32()), ("b", cs.string(True))]), {"a": 1, "b": None}, True),
    (cs.struct([("a", cs.int32()), ("b", cs.string(True))]), {"b": None, "a": 1}, False),   # order matters
    (cs.struct([("a", cs.int32()), ("b", cs.string(True))]), {"a": 1}, False),              # every member written
])
def test_validate(schema: dict, value: object, ok: bool) -> None:
    if ok:
        cs.validate(schema, value)
    else:
        with pytest.raises(LakecdcError):
            cs.validate(schema, value)


# ---------------------------------------------------------------- source blocks

@pytest.mark.parametrize("connector", si.CONNECTORS)
def test_source_builders_match_schema_and_generic_builder(connector: str) -> None:
    schema = si.source_schema(connector)
    assert schema["name"] == si.SOURCE_SCHEMA_NAMES[connector]
    assert tuple(cs.field_names(schema)) == si.SOURCE_FIELDS[connector]
    required = {f["field"] for f in schema["fields"] if not f["optional"]} - {"connector"}
    sample = {"int64": 7, "int32": 3, "string": "s", "boolean": True}
    kwargs = {f["field"]: sample[f["type"]] for f in schema["fields"] if f["field"] in required}
    payload = si.SOURCE_BUILDERS[connector](**kwargs)
    cs.validate(schema, payload)
    assert payload["connector"] == connector
    generic = si.build_source(connector, **kwargs)
    assert list(generic) == list(payload)
    # the generic builder leaves every unspecified field None; the typed one fills its defaults
    assert all(generic[k] == payload[k] for k in kwargs) and generic["connector"] == connector
    assert generic["snapshot"] is None


def test_build_source_rejects_unknown_fields() -> None:
    with pytest.raises(LakecdcError, match="no field"):
        si.build_source("postgresql", lsn=1, commit_lsn=2)
    with pytest.raises(LakecdcError, match="unknown connector"):
        si.source_schema("db2")


@pytest.mark.parametrize(("connector", "given", "expected"), [
    ("sqlserver", True, "true"), ("sqlserver", False, "false"), ("oracle", "incremental", "incremental"),
    ("mariadb", "last", "last"), ("mysql", True, "true"), ("mysql", "last", "last"), ("postgresql", False, "false"),
    ("postgresql", "first_in_data_collection", "first_in_data_collection"), ("mongodb", None, None),
])
def test_snapshot_value(connector: str, given: object, expected: object) -> None:
    assert si.snapshot_value(connector, given) == expected


@pytest.mark.parametrize(("given", "text"), [(True, "true"), (False, "false"), ("incremental", "incremental"),
                                            (None, None)])
def test_snapshot_text(given: object, text: str | None) -> None:
    assert si.snapshot_text(given) == text


def test_mariadb_source_is_the_binlog_layout_of_mysql() -> None:
    """Debezium 3.x builds MariaDB's source with the binlog connectors' shared struct maker: the MySQL
    fields in the MySQL order, schema version 1, under its own name (not the ts_us/ts_ns-first
    layout of Debezium's MariaDB connector documentation)."""
    mysql, mariadb = si.source_schema("mysql"), si.source_schema("mariadb")
    assert mariadb["fields"] == mysql["fields"] and mariadb["version"] == mysql["version"] == 1
    assert mariadb["name"] == "io.debezium.connector.mariadb.Source"
    s = si.mariadb_source(version=si.VERSION, name="n", ts_ms=1, db="d", server_id=1, file="f", pos=4)
    assert list(s) == list(si.SOURCE_FIELDS["mariadb"]) and s["connector"] == "mariadb"
    assert si.VERSION == "lakecdc-0.1.0"


def test_mariadb_source_derives_us_ns_from_ms() -> None:
    s = si.mariadb_source(version="v", name="n", ts_ms=1651535750218, db="d", table="t", server_id=1, file="f",
                          pos=4)
    assert (s["ts_us"], s["ts_ns"]) == (1651535750218000, 1651535750218000000)


# ---------------------------------------------------------------- topics

@pytest.mark.parametrize(("connector", "kw", "topic", "table_id"), [
    ("sqlserver", dict(db="testDB", schema="dbo", table="customers"), "p.dbo.customers", "testDB.dbo.customers"),
    ("sqlserver", dict(db="testDB", schema="dbo", table="customers", include_database=True),
     "p.testDB.dbo.customers", "testDB.dbo.customers"),
    ("oracle", dict(db="ORCLPDB1", schema="DEBEZIUM", table="CUSTOMERS"), "p.DEBEZIUM.CUSTOMERS",
     "ORCLPDB1.DEBEZIUM.CUSTOMERS"),
    ("postgresql", dict(db="postgres", schema="public", table="customers"), "p.public.customers",
     "postgres.public.customers"),
    ("mysql", dict(db="inventory", table="orders"), "p.inventory.orders", "inventory.orders"),
    ("mariadb", dict(db="inventory", table="orders"), "p.inventory.orders", "inventory.orders"),
    ("mongodb", dict(db="inventory", table="customers"), "p.inventory.customers", "inventory.customers"),
])
def test_topic_naming(connector: str, kw: dict, topic: str, table_id: str) -> None:
    assert tp.data_topic(connector, "p", **kw) == topic
    kw.pop("include_database", None)
    assert tp.table_id(connector, **kw) == table_id


def test_other_topics_and_names() -> None:
    assert tp.schema_change_topic("fulfillment") == "fulfillment"
    assert tp.transaction_topic("fulfillment") == "fulfillment.transaction"
    assert tp.transaction_topic("f", "tx") == "f.tx"
    assert tp.heartbeat_topic("server1") == "__debezium-heartbeat.server1"
    assert tp.heartbeat_topic("server1", "hb") == "hb.server1"
    assert tp.key_schema_name("server1.dbo.customers") == "server1.dbo.customers.Key"
    assert tp.envelope_schema_name("mariadb-server-1.inventory.c") == "mariadb-server-1.inventory.c.Envelope"
    with pytest.raises(LakecdcError, match="needs a schema"):
        tp.data_topic("postgresql", "p", db="x", table="t")
    with pytest.raises(LakecdcError):
        tp.check_prefix("bad prefix!")
    assert tp.check_prefix("mariadb-server-1") == "mariadb-server-1"


@pytest.mark.parametrize(("name", "mode", "out"), [
    ("mariadb-server-1.inventory.customers.Key", "none", "mariadb-server-1.inventory.customers.Key"),
    ("mariadb-server-1.inventory.customers.Key", "avro", "mariadb_server_1.inventory.customers.Key"),
    ("1srv.db.t", "avro", "_srv.db.t"),
    ("srv.my-db.t", "avro_unicode", "srv.my_u002ddb.t"),
])
def test_schema_name_adjustment(name: str, mode: str, out: str) -> None:
    assert tp.adjust_schema_name(name, mode) == out


# ---------------------------------------------------------------- envelopes

def pg_table(**kw) -> ev.TableSchemas:
    return ev.table_schemas("postgresql", "inv", db="postgres", schema="public", table="customers",
                            columns=[("id", cs.int32()), ("email", cs.string(True))], key_columns=["id"], **kw)


def pg_source(**kw) -> dict:
    return si.postgresql_source(version="2.0", name="inv", ts_ms=1000, db="postgres", schema="public",
                                table="customers", txId=7, lsn=99, **kw)


@pytest.mark.parametrize(("connector", "ts", "fields"), [
    ("postgresql", None, ["before", "after", "source", "transaction", "op", "ts_ms", "ts_us", "ts_ns"]),
    ("mysql", None, ["before", "after", "source", "transaction", "op", "ts_ms", "ts_us", "ts_ns"]),
    ("mariadb", None, ["before", "after", "source", "transaction", "op", "ts_ms", "ts_us", "ts_ns"]),
    ("oracle", False, ["before", "after", "source", "transaction", "op", "ts_ms"]),
])
def test_envelope_fields(connector: str, ts: bool | None, fields: list[str]) -> None:
    """Debezium 3.6.3's envelope (measured on the postgres connector): transaction right after source,
    present whether or not transaction metadata is on; struct version 2."""
    for metadata in (False, True):
        t = ev.table_schemas(connector, "p", db="d", schema="s", table="t", columns=[("id", cs.int32())],
                             key_columns=["id"], ts_us_ns=ts, provide_transaction_metadata=metadata)
        assert cs.field_names(t.envelope_schema) == fields
        assert cs.field_schema(t.envelope_schema, "transaction")["optional"] is True
        assert t.envelope_schema["version"] == 2


def test_change_event_ops_keys_and_values() -> None:
    t = pg_table()
    c = ev.change(t, "c", after={"id": 1, "email": None}, source=pg_source(), ts_ms=5)
    assert c.key == {"id": 1} and c.value() == {"before": None, "after": {"id": 1, "email": None},
                                                "source": pg_source(), "transaction": None, "op": "c", "ts_ms": 5,
                                                "ts_us": 5000, "ts_ns": 5_000_000}
    assert list(c.value()) == ["before", "after", "source", "transaction", "op", "ts_ms", "ts_us", "ts_ns"]
    d = ev.change(t, "d", before={"id": 2, "email": "x"}, source=pg_source(), ts_ms=6)
    assert d.key == {"id": 2}
    trunc = ev.change(t, "t", source=pg_source(), ts_ms=7)
    assert trunc.key is None and trunc.value()["before"] is None and trunc.value()["op"] == "t"
    with pytest.raises(LakecdcError, match="unknown op"):
        ev.change(t, "x", source=pg_source())
    # ts defaults to the processing time, one clock reading for ms/us/ns
    now = ev.change(pg_table(ts_us_ns=True), "r", after={"id": 1, "email": None}, source=pg_source())
    assert now.ts_ms == now.ts_us // 1000 == now.ts_ns // 1_000_000 and now.ts_ms > 1_600_000_000_000


def test_keyless_table_delete_has_a_null_key_tombstone() -> None:
    """Debezium 3.6.3 follows a keyless table's delete (REPLICA IDENTITY FULL) with a tombstone whose key and
    value are both null (measured)."""
    t = ev.table_schemas("postgresql", "inv", db="d", schema="public", table="log", columns=[("msg", cs.string())])
    d = ev.change(t, "d", before={"msg": "x"}, source=pg_source(), ts_ms=1)
    assert d.key is None and t.key_schema is None
    assert [e.op for e in ev.with_tombstones([d])] == ["d", None]
    assert ev.record(d)[1] is None
    assert ev.record(ev.tombstone(d)) == (t.topic, None, None)


def test_tombstones_follow_deletes_only() -> None:
    t = pg_table()
    events = [ev.change(t, op, before=row if op != "c" else None, after=row if op != "d" else None,
                        source=pg_source(), ts_ms=1)
              for op, row in [("c", {"id": 1, "email": None}), ("u", {"id": 1, "email": "a"}),
                              ("d", {"id": 1, "email": "a"}), ("c", {"id": 2, "email": None}),
                              ("d", {"id": 2, "email": None})]]
    out = list(ev.with_tombstones(events))
    assert [(e.op, e.key) for e in out] == [("c", {"id": 1}), ("u", {"id": 1}), ("d", {"id": 1}), (None, {"id": 1}),
                                            ("c", {"id": 2}), ("d", {"id": 2}), (None, {"id": 2})]
    assert len(list(ev.with_tombstones(events, tombstones_on_delete=False))) == 5


def test_table_schema_errors() -> None:
    with pytest.raises(LakecdcError, match="not among the columns"):
        ev.table_schemas("mysql", "p", db="d", table="t", columns=[("a", cs.int32())], key_columns=["b"])
    with pytest.raises(LakecdcError, match="duplicate"):
        ev.table_schemas("mysql", "p", db="d", table="t", columns=[("a", cs.int32()), ("a", cs.int32())])
    with pytest.raises(LakecdcError, match="mongodb_table_schemas"):
        ev.table_schemas("mongodb", "p", db="d", table="t", columns=[])


def test_key_schema_fields_reuse_column_schemas() -> None:
    dec = cs.bytes_(name="org.apache.kafka.connect.data.Decimal", version=1, parameters={"scale": "2"})
    t = ev.table_schemas("mysql", "p", db="d", table="t", columns=[("a", cs.int32()), ("amount", dec)],
                         key_columns=["amount", "a"])
    assert cs.field_names(t.key_schema) == ["amount", "a"]
    assert cs.field_schema(t.key_schema, "amount")["name"] == "org.apache.kafka.connect.data.Decimal"
    assert cs.field_schema(t.envelope_schema, "before")["optional"] is True


# ---------------------------------------------------------------- converter

def test_serialize_schemas_on_and_off_and_tombstone() -> None:
    schema = cs.struct([("id", cs.int32()), ("b", cs.bytes_(True))], False, name="k")
    payload = {"id": 1, "b": b"\x00\x01"}
    on = jc.serialize(schema, payload, True)
    off = jc.serialize(schema, payload, False)
    assert on == b'{"schema":' + jc.dumps(schema) + b',"payload":{"id":1,"b":"AAE="}}'
    assert off == b'{"id":1,"b":"AAE="}'
    assert base64.b64decode(json.loads(off)["b"]) == b"\x00\x01"
    assert jc.serialize(None, None) is None and jc.serialize(None, None, False) is None
    assert jc.serialize(None, {"a": 1}, True) == b'{"schema":null,"payload":{"a":1}}'
    with pytest.raises(LakecdcError, match="required"):
        jc.serialize(schema, None)


def test_serialize_unicode_and_compact() -> None:
    out = jc.serialize(cs.string(), "caf\u00e9 \u65e5\u672c", False)
    assert out == '"caf\u00e9 \u65e5\u672c"'.encode()   # UTF-8, not \\u escapes, no spaces
    with pytest.raises(TypeError):
        jc.dumps({"x": object()})


@pytest.mark.parametrize(("data", "expected"), [
    (b'{"schema":{"type":"int32","optional":false},"payload":5}', ({"type": "int32", "optional": False}, 5)),
    (b'{"id":5}', (None, {"id": 5})),
    (b'{"schema":null,"payload":null}', (None, None)),
    (None, (None, None)),
])
def test_deserialize(data: bytes | None, expected: tuple) -> None:
    assert jc.deserialize(data) == expected


def test_deserialize_rejects_garbage() -> None:
    with pytest.raises(LakecdcError, match="invalid JSON"):
        jc.deserialize(b"{nope")


def test_canonical_schema_json_is_order_independent() -> None:
    ours = cs.struct([("id", cs.int32())], False, name="a.Key")
    shuffled = {"name": "a.Key", "optional": False, "fields": [{"field": "id", "optional": False, "type": "int32"}],
                "type": "struct"}
    assert jc.canonical_schema_json(ours) == jc.canonical_schema_json(shuffled) == jc.dumps_str(ours)
    other = cs.struct([("id", cs.int64())], False, name="a.Key")
    assert jc.canonical_schema_json(ours) != jc.canonical_schema_json(other)
    assert jc.canonical_schema_json(None) is None


# ---------------------------------------------------------------- transaction metadata and heartbeat

def test_transaction_tracker_numbers_events() -> None:
    tr = ev.TransactionTracker("mariadb", "p")
    begin = tr.begin("0-1-10", ts_ms=100)
    blocks = [tr.block("inv.a"), tr.block("inv.b"), tr.block("inv.a")]
    end = tr.end(ts_ms=200)
    assert begin.value() == {"status": "BEGIN", "id": "0-1-10", "event_count": None, "data_collections": None,
                             "ts_ms": 100}
    assert [(b["total_order"], b["data_collection_order"]) for b in blocks] == [(1, 1), (2, 1), (3, 2)]
    # data_collections in java.util.HashMap iteration order, as Debezium writes them (checked against the JVM)
    assert end.value() == {"status": "END", "id": "0-1-10", "ts_ms": 200, "event_count": 3, "data_collections": [
        {"data_collection": "inv.b", "event_count": 1}, {"data_collection": "inv.a", "event_count": 2}]}

    assert end.topic == "p.transaction" and end.key == {"id": "0-1-10"}
    cs.validate(end.value_schema, end.value())
    with pytest.raises(LakecdcError):
        tr.block("x")
    tr.begin("t2")
    with pytest.raises(LakecdcError, match="still open"):
        tr.begin("t3")


def test_transaction_events_have_the_3x_layout() -> None:
    """Debezium 3.6.3 (measured): status, id, event_count, data_collections, ts_ms for every connector (SQL
    Server's 1.2 documentation shows no ts_ms); key and value schemas version 1, items event.collection."""
    e = ev.TransactionEvent("sqlserver", "server1", "BEGIN", "00000025:00000d08:0025")
    assert list(e.value()) == cs.field_names(e.value_schema) == ["status", "id", "event_count", "data_collections",
                                                                   "ts_ms"]
    assert isinstance(e.value()["ts_ms"], int)
    assert e.value_schema["version"] == e.key_schema["version"] == 1
    items = cs.field_schema(e.value_schema, "data_collections")["items"]
    assert (items["name"], items["version"], items["optional"]) == ("event.collection", 1, True)
    with pytest.raises(LakecdcError):
        ev.TransactionEvent("mysql", "p", "COMMIT", "x")


def test_heartbeat_record() -> None:
    hb = ev.HeartbeatEvent("server1", 1700000000000)
    topic, key, value = ev.record(hb)
    assert topic == "__debezium-heartbeat.server1"
    assert orjson.loads(key)["payload"] == {"serverName": "server1"}
    assert orjson.loads(value) == {"schema": {"type": "struct", "fields": [
        {"type": "int64", "optional": False, "field": "ts_ms"}], "optional": False,
        "name": "io.debezium.connector.common.Heartbeat", "version": 1}, "payload": {"ts_ms": 1700000000000}}
    assert ev.record(hb, schemas_enable=False)[2] == b'{"ts_ms":1700000000000}'


def test_schema_change_event_layouts() -> None:
    col = ev.Column(name="id", jdbc_type=4, type_name="INT", position=1, optional=False, auto_incremented=True)
    tc = ev.TableChange("CREATE", ev.quoted_table_id("inventory", None, "t"), [col], ["id"], "utf8mb4")
    assert tc.id == '"inventory"."t"'
    src = si.mysql_source(version="v", name="p", ts_ms=1, db="inventory", table="t", server_id=1, file="f", pos=4)
    e = ev.SchemaChangeEvent("mysql", "p", src, "inventory", None, "CREATE TABLE t (id INT)", [tc])
    v = e.value()
    # Debezium 3.6.3's layout (its jar): ts_ms after source, comment / defaultValueExpression / enumValues
    assert list(v) == ["source", "ts_ms", "databaseName", "schemaName", "ddl", "tableChanges"]
    assert isinstance(v["ts_ms"], int)
    assert list(v["tableChanges"][0]["table"]) == ["defaultCharsetName", "primaryKeyColumnNames", "columns", "comment"]
    assert v["tableChanges"][0]["table"]["columns"][0]["typeExpression"] == "INT"
    assert list(v["tableChanges"][0]["table"]["columns"][0])[-3:] == ["comment", "defaultValueExpression",
                                                                       "enumValues"]
    cs.validate(e.value_schema, v)
    assert e.topic == "p" and e.key == {"databaseName": "inventory"}
    m = ev.SchemaChangeEvent("mariadb", "p", si.mariadb_source(version="v", name="p", ts_ms=1, db="inventory",
                                                               table="t", server_id=1, file="f", pos=4),
                             "inventory", None, "x", [tc])
    # MariaDB: the same 3.6.3 layout (Debezium's MariaDB connector shares SchemaFactory), not the older layout
    # of Debezium's MariaDB connector documentation
    assert list(m.value()) == list(v) and "attributes" not in m.value()["tableChanges"][0]["table"]
    cs.validate(m.value_schema, m.value())
    assert m.value() == m.value()   # processing time fixed once
    with pytest.raises(LakecdcError, match="no schema change"):
        ev.SchemaChangeEvent("mongodb", "p", {}, "d", None, None, [])
    with pytest.raises(LakecdcError, match="CREATE, ALTER or DROP"):
        ev.TableChange("RENAME", "x", []).payload()


# ---------------------------------------------------------------- bronze mapping

def test_change_and_tombstone_to_bronze() -> None:
    t = pg_table(provide_transaction_metadata=True)
    tr = ev.TransactionTracker("postgresql", "inv")
    tr.begin("777")
    d = ev.change(t, "d", before={"id": 3, "email": "x"}, source=pg_source(snapshot=False), ts_ms=2000,
                  transaction=tr.block(t.table_id))
    rows = [tb.to_bronze(e, seq=f"s{i}", position='{"lsn":99}') for i, e in enumerate(ev.with_tombstones([d]))]
    delete, tomb = rows
    assert isinstance(delete, BronzeEvent)
    assert (delete.topic, delete.table_id, delete.op, delete.seq) == ("inv.public.customers",
                                                                      "postgres.public.customers", "d", "s0")
    assert json.loads(delete.value) == d.value() and delete.key == '{"id":3}'
    assert (delete.ts_ms, delete.source_ts_ms, delete.txn_id, delete.snapshot) == (2000, 1000, "777", "false")
    assert delete.value_schema == jc.canonical_schema_json(t.envelope_schema)
    assert delete.key_schema == jc.canonical_schema_json(t.key_schema)
    assert delete.position == '{"lsn":99}'
    assert (tomb.op, tomb.value, tomb.value_schema, tomb.key, tomb.seq) == (None, None, None, '{"id":3}', "s1")
    assert tomb.key_schema == delete.key_schema
    # the connector's own txn id wins over the transaction block
    assert tb.change_to_bronze(d, seq="x", position=None, txn_id="pg-7").txn_id == "pg-7"


def test_relational_change_to_bronze_is_change_to_bronze_of_ev_change() -> None:
    """The streaming connectors' per-row path gives the row change_to_bronze(ev.change(...)) gives (all fields
    but the processing times), for every op, with and without a transaction block and an explicit key."""
    import dataclasses

    for metadata in (False, True):
        t = pg_table(provide_transaction_metadata=metadata, ts_us_ns=True)
        block = {"id": "9", "total_order": 1, "data_collection_order": 1} if metadata else None
        for op, before, after, key in [("c", None, {"id": 1, "email": "a"}, None),
                                       ("u", {"id": 1, "email": "a"}, {"id": 1, "email": "b"}, None),
                                       ("d", {"id": 1, "email": "b"}, None, None),
                                       ("c", None, {"id": 2, "email": None}, {"id": 2}),
                                       ("t", None, None, None)]:
            source = pg_source(snapshot=False)
            fast = tb.relational_change_to_bronze(t, op, before=before, after=after, source=source, seq="s",
                                                  position="p", transaction=block, key=key)
            value = json.loads(fast.value)
            slow = tb.change_to_bronze(ev.change(t, op, source=source, before=before, after=after,
                                                 transaction=block, key=key, ts_ms=value["ts_ms"],
                                                 ts_us=value["ts_us"], ts_ns=value["ts_ns"]), seq="s", position="p")
            assert dataclasses.asdict(fast) == {**dataclasses.asdict(slow), "ts_ms": fast.ts_ms}, (op, metadata)
    with pytest.raises(LakecdcError, match="unknown op"):
        tb.relational_change_to_bronze(t, "x", before=None, after=None, source={}, seq="s", position=None)


def test_schema_change_to_bronze() -> None:
    src = si.sqlserver_source(version="1.2.4.Final", name="server1", ts_ms=1588252618953, db="testDB",
                              schema="dbo", table="customers", snapshot=True, commit_lsn="00000025:00000d98:00a2")
    col = ev.Column(name="id", jdbc_type=4, type_name="int identity", position=1, optional=False, length=10, scale=0)
    change = ev.TableChange("CREATE", ev.quoted_table_id("testDB", "dbo", "customers"), [col], ["id"])
    e = ev.SchemaChangeEvent("sqlserver", "server1", src, "testDB", "dbo", None, [change])
    row = tb.to_bronze(e, seq="0001", position='{"commit_lsn":"x"}')
    assert isinstance(row, BronzeSchemaChange)
    assert (row.seq, row.ts_ms, row.database_name, row.schema_name, row.ddl) == ("0001", e.value()["ts_ms"],
                                                                                   "testDB", "dbo", None)
    assert json.loads(row.table_changes) == e.value()["tableChanges"]
    assert json.loads(row.event) == e.value() and row.position == '{"commit_lsn":"x"}'


def test_connect_decimal_bytes_are_java_big_integer_bytes():
    from ingest.events.json_converter import decimal_base64, decimal_bytes

    # BigInteger.valueOf(v).toByteArray() for the boundaries of each length
    cases = {0: b"\x00", 1: b"\x01", -1: b"\xff", 127: b"\x7f", 128: b"\x00\x80", -128: b"\x80",
             -129: b"\xff\x7f", 32767: b"\x7f\xff", -32768: b"\x80\x00", -32769: b"\xff\x7f\xff",
             2**63 - 1: b"\x7f" + b"\xff" * 7, -(2**63): b"\x80" + b"\x00" * 7}
    assert {v: decimal_bytes(v) for v in cases} == cases
    assert decimal_base64(-128) == "gA=="
    for v in range(-70000, 70000, 7):
        raw = decimal_bytes(v)
        assert int.from_bytes(raw, "big", signed=True) == v
        shorter = 8 * (len(raw) - 1)  # bits of one byte less: the value must not fit there (minimal length)
        assert len(raw) == 1 or not -(1 << (shorter - 1)) <= v < 1 << (shorter - 1)


def test_java_hashmap_order() -> None:
    """Iteration orders of java.util.HashMap<String, ?> (recorded from the JVM): buckets of the spread
    String.hashCode at the final capacity, insertion order within a bucket, capacity doubling past 0.75."""
    assert ev.java_hashmap_order(["inv.a", "inv.b"]) == ["inv.b", "inv.a"]
    assert ev.java_hashmap_order(["ORCLPDB1.DEBEZIUM.CUSTOMER", "ORCLPDB1.DEBEZIUM.ORDER"]) == [
        "ORCLPDB1.DEBEZIUM.ORDER", "ORCLPDB1.DEBEZIUM.CUSTOMER"]
    assert ev.java_hashmap_order(["public.a", "public.b"]) == ["public.a", "public.b"]
    assert ev.java_hashmap_order([]) == []


def test_heartbeat_transaction_and_schema_change_schemas_are_debezium_363s() -> None:
    """Equal to the schemas read from the 3.6.3 jars (SchemaFactory; tests/golden/debezium363_schemas.json)."""
    from pathlib import Path

    golden = Path(__file__).resolve().parents[1] / "golden"
    jar = json.loads((golden / "debezium363_schemas.json").read_text(encoding="utf-8"))
    assert ev.HEARTBEAT_KEY_SCHEMA == jar["heartbeat_key"] and ev.HEARTBEAT_VALUE_SCHEMA == jar["heartbeat_value"]
    assert ev.TRANSACTION_KEY_SCHEMA == jar["transaction_key"]
    for connector in ("sqlserver", "oracle", "mysql", "mariadb", "postgresql"):
        if connector == "mariadb":  # no MariaDB jar in the wheel: MySQL's, with MariaDB's source and names
            mariadb = json.loads(jc.canonical_schema_json(ev.SCHEMA_CHANGE_LAYOUTS["mariadb"].value_schema))
            assert mariadb["fields"][0]["name"] == "io.debezium.connector.mariadb.Source"
            mariadb["fields"][0] = json.loads(jc.canonical_schema_json(cs.field("source", si.SOURCE_SCHEMAS["mysql"])))
            mariadb["name"] = mariadb["name"].replace(".mariadb.", ".mysql.")
            assert mariadb == jar["mysql_schema_change_value"]
            continue
        assert ev.TRANSACTION_VALUE_SCHEMAS[connector] == jar["transaction_value"]
        layout = ev.SCHEMA_CHANGE_LAYOUTS[connector]
        assert layout.key_schema == jar[f"{connector}_schema_change_key"], connector
        expected = jar[f"{connector}_schema_change_value"]
        if connector == "postgresql":  # lakecdc's one addition: Debezium's PostgreSQL connector has no schema changes
            expected = _with_missing_value(expected)
        assert jc.canonical_schema_json(layout.value_schema) == jc.dumps_str(expected)


def _with_missing_value(value_schema: dict) -> dict:
    """The jar's schema change value schema with the optional string missingValue after each column's fields."""
    import copy

    out = copy.deepcopy(value_schema)
    changes = next(f for f in out["fields"] if f["field"] == "tableChanges")
    table = next(f for f in changes["items"]["fields"] if f["field"] == "table")
    columns = next(f for f in table["fields"] if f["field"] == "columns")
    columns["items"]["fields"].append({"type": "string", "optional": True, "field": "missingValue"})
    return out


def test_java_double_fast_path_agrees_with_the_general_path() -> None:
    """java_double's plain-range shortcut gives the text of the full Double.toString emulation."""
    import random

    from ingest.events import json_converter as jc

    rng = random.Random(11)
    values = [rng.uniform(-1e7, 1e7) for _ in range(5000)] + [rng.uniform(-0.01, 0.01) for _ in range(5000)]
    values += [0.001, -0.001, 0.0009999999999999998, 9999999.999999998, 1e7, -1e7, 5.0, 0.0, -0.0, 1e-300]
    values += [10 ** rng.uniform(-3, 7) for _ in range(20000)]
    values += [float(rng.randint(-10**7, 10**7)) for _ in range(5000)]
    values += [v for v in (jc.struct.unpack("<d", rng.getrandbits(64).to_bytes(8, "little"))[0] for _ in range(200000))
               if 1e-3 <= abs(v) < 1e7]   # every bit pattern the plain range holds
    for v in values:
        assert jc.orjson.dumps(jc.java_double(v)) == jc.orjson.dumps(jc._java_text(repr(v), v, 53)), v


@pytest.mark.parametrize(("parts", "quoted"), [
    (("inventory", None, "customers"), '"inventory"."customers"'),
    (("db", None, 'we"ird'), '"db"."we""ird"'),                 # Debezium's TableId doubles embedded quotes
    (("db", "s", 'a""b'), '"db"."s"."a""""b"'),
    (("db", None, '"quoted"'), '"db"."quoted"'),                # already quoted: unchanged, as Debezium's
])
def test_table_ids_quote_as_debezium_and_read_back(parts: tuple, quoted: str) -> None:
    assert ev.quoted_table_id(*parts) == quoted
    table_id = TableId(*parts)
    assert table_id.debezium_id() == quoted
    if not parts[2].startswith('"'):
        assert parse_debezium_ids(quoted, "mariadb" if parts[1] is None else "postgresql") == [table_id]
