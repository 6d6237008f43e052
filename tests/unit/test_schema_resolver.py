"""SchemaResolver: change events that came without a schema get one of their table's schemas whose row fields
are theirs (connectors/debezium_json/schema_resolver.py). The derivation from real Debezium tableChanges is
checked against the real connector in tests/conformance/test_schemaless_records.py."""

from __future__ import annotations

import orjson
import pytest

from ingest.bronze.contract import BronzeEvent
from ingest.connectors.debezium_json.records import Decoder
from ingest.connectors.debezium_json.schema_resolver import SchemaResolver
from tests.support.mysql_schema_change import create_table

pytestmark = pytest.mark.unit


def envelope(*fields: str, name: str = "t") -> dict:
    row = {"type": "struct", "optional": True, "name": f"{name}.Value",
           "fields": [{"field": f, "type": "string", "optional": True} for f in fields]}
    return {"type": "struct", "optional": False, "name": f"{name}.Envelope",
            "fields": [{**row, "field": "before"}, {**row, "field": "after"},
                       {"field": "op", "type": "string", "optional": False}]}


KEY = {"type": "struct", "optional": False, "fields": [{"field": "id", "type": "string", "optional": False}]}


def value(pos: int, op: str = "u", **row: str) -> dict:
    return {"before": None, "after": row, "op": op, "ts_ms": 1,
            "source": {"connector": "mariadb", "db": "db", "table": "t", "file": "bin.000001", "pos": pos, "row": 0}}


def record(decoder: Decoder, pos: int, schema: dict | None = None, **row: str) -> BronzeEvent:
    payload = value(pos, **row)
    key = {"id": row.get("id", "1")}
    text = orjson.dumps({"schema": schema, "payload": payload} if schema else payload).decode()
    key_text = orjson.dumps({"schema": KEY, "payload": key} if schema else key).decode()
    return decoder.decode_record("p.db.t", key_text, text)


def canonical(schema: dict) -> str:
    return orjson.dumps(schema, option=orjson.OPT_SORT_KEYS).decode()


def test_events_without_schemas_take_the_newest_matching_schema_not_after_them() -> None:
    resolver = SchemaResolver("p")
    decoder = Decoder("p", event_type=BronzeEvent, resolver=resolver)
    v1, v2 = envelope("id", "a"), envelope("id", "a", "b")
    v1b = {**v1, "name": "t.Envelope.b"}   # same fields, another type history (e.g. a MODIFY COLUMN)
    early = record(decoder, 5, id="1", a="x")              # before any schema, same batch: resolved at close
    record(decoder, 10, v1, id="1", a="x")
    plain = record(decoder, 20, id="2", a="y")
    record(decoder, 30, v2, id="1", a="x", b="z")
    widened = record(decoder, 40, id="3", a="y", b="w")
    record(decoder, 50, v1b, id="1", a="q")
    after_modify = record(decoder, 60, id="4", a="y")
    unknown = record(decoder, 70, id="5", c="?")
    assert plain.value_schema is None   # until the batch closes
    decoder.resolve_schemas()
    assert early.value_schema == canonical(v1)   # none before it: the oldest matching
    assert plain.value_schema == canonical(v1) and plain.key_schema == canonical(KEY)
    assert widened.value_schema == canonical(v2)
    assert after_modify.value_schema == canonical(v1b)
    assert unknown.value_schema is None and resolver.unresolved == {"db.t": 1}


def test_bronze_is_asked_once_and_only_when_a_record_needs_it() -> None:
    asked = []
    landed_schema = canonical(envelope("id", "a"))

    def landed():
        asked.append(1)
        return [("db.t", "0", canonical(KEY), landed_schema)], []

    resolver = SchemaResolver("p", landed=landed)
    decoder = Decoder("p", event_type=BronzeEvent, resolver=resolver)
    record(decoder, 10, envelope("id", "b"), id="1", b="x")
    known = record(decoder, 11, id="1", b="y")
    decoder.resolve_schemas()
    assert not asked and known.value_schema == canonical(envelope("id", "b"))
    first = record(decoder, 12, id="1", a="y")
    second = record(decoder, 13, id="1", c="y")
    decoder.resolve_schemas()
    record(decoder, 14, id="1", c="y")
    decoder.resolve_schemas()
    assert asked == [1]
    assert first.value_schema == landed_schema and second.value_schema is None
    assert resolver.unresolved == {"db.t": 2}


def test_a_mysql_schema_change_gives_the_connectors_schemas() -> None:
    resolver = SchemaResolver("p", {"decimal.handling.mode": "string"})
    decoder = Decoder("p", event_type=BronzeEvent, resolver=resolver)
    change = create_table("db", "t")
    decoder.decode_record("p", None, orjson.dumps(change).decode())
    event = decoder.decode_record("p.db.t", '{"id":1}', orjson.dumps({
        **value(9, op="c"), "after": {"id": 1, "price": "1.50"},
        "source": {**value(9)["source"], "connector": "mysql"}}).decode())
    decoder.resolve_schemas()
    fields = {f["field"]: f for f in next(f for f in orjson.loads(event.value_schema)["fields"]
                                          if f["field"] == "after")["fields"]}
    assert fields["id"] == {"field": "id", "type": "int32", "optional": False}
    assert fields["price"] == {"field": "price", "type": "string", "optional": True}   # decimal.handling.mode
    assert orjson.loads(event.key_schema)["name"] == "p.db.t.Key"
