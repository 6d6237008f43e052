"""Every type row of the seed's PostgreSQL mapping tables (seed-003-inventory.md section 2.6), in every
mode, on the real server: each column is read once by the snapshot (COPY) and once by pgoutput streaming,
and both must give the documented Kafka Connect schema and payload."""

from __future__ import annotations

import base64
import json
import struct
from typing import Any

import pytest

from tests.support.pg import Collector, connector, drop_slot_and_publication, ensure_database, execute

pytestmark = pytest.mark.integration

MODES: dict[str, dict[str, str]] = {
    "default": {},  # adaptive, precise, json, numeric, bytes
    "m2": {"time.precision.mode": "adaptive_time_microseconds", "decimal.handling.mode": "double",
           "hstore.handling.mode": "map", "interval.handling.mode": "string", "binary.handling.mode": "base64"},
    "m3": {"time.precision.mode": "connect", "decimal.handling.mode": "string", "binary.handling.mode": "hex"},
}


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def sch(type_: str, name: str | None = None, params: dict | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"type": type_, "optional": True}
    if name:
        out["name"] = name
        out["version"] = 1
    if params:
        out["parameters"] = params
    return out


POINT_SCHEMA = {"type": "struct", "fields": [
    {"type": "double", "optional": False, "field": "x"}, {"type": "double", "optional": False, "field": "y"},
    {"type": "bytes", "optional": True, "field": "wkb"}, {"type": "int32", "optional": True, "field": "srid"}],
    "optional": True, "name": "io.debezium.data.geometry.Point", "version": 1, "doc": "Geometry (POINT)"}
VSD_SCHEMA = {"type": "struct", "fields": [
    {"type": "int32", "optional": False, "field": "scale"}, {"type": "bytes", "optional": False, "field": "value"}],
    "optional": True, "name": "io.debezium.data.VariableScaleDecimal", "version": 1, "doc": "Variable scaled decimal"}
MAP_SCHEMA = {"type": "map", "keys": {"type": "string", "optional": False},
              "values": {"type": "string", "optional": True}, "optional": True}

# (case id, mode, SQL type, SQL literal, expected field schema, expected payload value)
CASES: list[tuple[str, str, str, str, dict, Any]] = [
    ("boolean", "default", "boolean", "true", sch("boolean"), True),
    ("bit1", "default", "bit(1)", "B'1'", sch("boolean"), True),
    ("bit3", "default", "bit(3)", "B'101'", sch("bytes", "io.debezium.data.Bits", {"length": "3"}), b64(b"\x05")),
    ("varbit10", "default", "bit varying(10)", "B'1100000001'",
     sch("bytes", "io.debezium.data.Bits", {"length": "10"}), b64(b"\x01\x03")),
    ("smallint", "default", "smallint", "-7", sch("int16"), -7),
    ("integer", "default", "integer", "2147483647", sch("int32"), 2147483647),
    ("bigint", "default", "bigint", "9007199254740993", sch("int64"), 9007199254740993),
    ("real", "default", "real", "1.5", sch("float"), 1.5),
    ("double", "default", "double precision", "2.25", sch("double"), 2.25),
    ("char", "default", "char(3)", "'ab'", sch("string"), "ab "),
    ("varchar", "default", "varchar(10)", "'hi'", sch("string"), "hi"),
    ("character_varying", "default", "character varying", "'hello'", sch("string"), "hello"),
    ("text", "default", "text", "'tab\there'", sch("string"), "tab\there"),
    ("timestamptz", "default", "timestamptz", "'2018-06-20 15:13:16.945104+02'",
     sch("string", "io.debezium.time.ZonedTimestamp"), "2018-06-20T13:13:16.945104Z"),
    ("timetz", "default", "timetz", "'15:13:16.5+02'", sch("string", "io.debezium.time.ZonedTime"), "13:13:16.5Z"),
    ("interval_numeric", "default", "interval", "'1 year 2 mons 3 days 04:05:06.78'",
     sch("int64", "io.debezium.time.MicroDuration"), 37091106780000),
    ("interval_string", "m2", "interval", "'1 year 2 mons 3 days 04:05:06.78'",
     sch("string", "io.debezium.time.Interval"), "P1Y2M3DT4H5M6.78S"),
    ("interval_string_negative", "m2", "interval", "'-1 years -2 mons +3 days -04:05:06'",
     sch("string", "io.debezium.time.Interval"), "P-1Y-2M3DT-4H-5M-6S"),
    ("bytea_bytes", "default", "bytea", "'\\x0102ff'::bytea", sch("bytes"), b64(b"\x01\x02\xff")),
    ("bytea_base64", "m2", "bytea", "'\\x0102ff'::bytea", sch("string"), b64(b"\x01\x02\xff")),
    ("bytea_hex", "m3", "bytea", "'\\x0102ff'::bytea", sch("string"), "0102ff"),
    ("json", "default", "json", "'{\"a\": [1, 2]}'", sch("string", "io.debezium.data.Json"), '{"a": [1, 2]}'),
    ("jsonb", "default", "jsonb", "'{\"b\":1,\"a\":2}'", sch("string", "io.debezium.data.Json"),
     '{"a": 2, "b": 1}'),
    ("xml", "default", "xml", "'<a>1</a>'", sch("string", "io.debezium.data.Xml"), "<a>1</a>"),
    ("uuid", "default", "uuid", "'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'", sch("string", "io.debezium.data.Uuid"),
     "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"),
    ("point", "default", "point", "'(1,2.5)'", POINT_SCHEMA,
     {"x": 1.0, "y": 2.5, "wkb": b64(struct.pack("<BIdd", 1, 1, 1.0, 2.5)), "srid": None}),
    ("ltree", "default", "ltree", "'a.b.c'", sch("string", "io.debezium.data.Ltree"), "a.b.c"),
    ("citext", "default", "citext", "'AbC'", sch("string"), "AbC"),
    ("inet", "default", "inet", "'192.168.0.1/24'", sch("string"), "192.168.0.1/24"),
    ("cidr", "default", "cidr", "'10.0.0.0/8'", sch("string"), "10.0.0.0/8"),
    ("macaddr", "default", "macaddr", "'08:00:2b:01:02:03'", sch("string"), "08:00:2b:01:02:03"),
    ("macaddr8", "default", "macaddr8", "'08:00:2b:01:02:03:04:05'", sch("string"), "08:00:2b:01:02:03:04:05"),
    ("int4range", "default", "int4range", "'[1,5)'", sch("string"), "[1,5)"),
    ("int8range", "default", "int8range", "'(1,5]'", sch("string"), "[2,6)"),
    ("numrange", "default", "numrange", "'[1.5,2.5]'", sch("string"), "[1.5,2.5]"),
    ("tsrange", "default", "tsrange", "'[2020-01-01 10:00,2020-01-02 00:00)'", sch("string"),
     '["2020-01-01 10:00:00","2020-01-02 00:00:00")'),
    ("tstzrange", "default", "tstzrange", "'[2020-01-01 10:00+02,2020-01-02 00:00+00)'", sch("string"),
     '["2020-01-01 08:00:00+00","2020-01-02 00:00:00+00")'),
    ("daterange", "default", "daterange", "'[2020-01-01,2020-01-05]'", sch("string"), "[2020-01-01,2020-01-06)"),
    ("hstore_json", "default", "hstore", "'a=>1, b=>NULL'", sch("string", "io.debezium.data.Json"),
     '{"a":"1","b":null}'),
    ("hstore_map", "m2", "hstore", "'a=>1, b=>NULL'", MAP_SCHEMA, {"a": "1", "b": None}),
    ("date_adaptive", "default", "date", "'2018-06-20'", sch("int32", "io.debezium.time.Date"), 17702),
    ("date_connect", "m3", "date", "'2018-06-20'", sch("int32", "org.apache.kafka.connect.data.Date"), 17702),
    ("time3_adaptive", "default", "time(3)", "'15:13:16.945'", sch("int32", "io.debezium.time.Time"), 54796945),
    ("time6_adaptive", "default", "time(6)", "'15:13:16.945104'", sch("int64", "io.debezium.time.MicroTime"),
     54796945104),
    ("time_adaptive", "default", "time", "'15:13:16.945104'", sch("int64", "io.debezium.time.MicroTime"),
     54796945104),
    ("time3_microseconds", "m2", "time(3)", "'15:13:16.945'", sch("int64", "io.debezium.time.MicroTime"),
     54796945000),
    ("time_connect", "m3", "time(6)", "'15:13:16.945104'", sch("int32", "org.apache.kafka.connect.data.Time"),
     54796945),
    ("timestamp3_adaptive", "default", "timestamp(3)", "'2018-06-20 15:13:16.945'",
     sch("int64", "io.debezium.time.Timestamp"), 1529507596945),
    ("timestamp6_adaptive", "default", "timestamp(6)", "'2018-06-20 15:13:16.945104'",
     sch("int64", "io.debezium.time.MicroTimestamp"), 1529507596945104),
    ("timestamp_adaptive", "default", "timestamp", "'2018-06-20 15:13:16.945104'",
     sch("int64", "io.debezium.time.MicroTimestamp"), 1529507596945104),
    ("timestamp_microseconds", "m2", "timestamp(6)", "'2018-06-20 15:13:16.945104'",
     sch("int64", "io.debezium.time.MicroTimestamp"), 1529507596945104),
    ("timestamp_connect", "m3", "timestamp(6)", "'2018-06-20 15:13:16.945104'",
     sch("int64", "org.apache.kafka.connect.data.Timestamp"), 1529507596945),
    ("numeric_precise", "default", "numeric(10,2)", "12.34",
     sch("bytes", "org.apache.kafka.connect.data.Decimal", {"scale": "2", "connect.decimal.precision": "10"}),
     b64((1234).to_bytes(2, "big", signed=True))),
    ("numeric_precise_negative", "default", "numeric(10,2)", "-0.01",
     sch("bytes", "org.apache.kafka.connect.data.Decimal", {"scale": "2", "connect.decimal.precision": "10"}),
     b64(b"\xff")),
    ("numeric_double", "m2", "numeric(10,2)", "12.34", sch("double"), 12.34),
    ("numeric_string", "m3", "numeric(10,2)", "12.34", sch("string"), "12.34"),
    ("numeric_variable_precise", "default", "numeric", "12.345", VSD_SCHEMA,
     {"scale": 3, "value": b64((12345).to_bytes(2, "big", signed=True))}),
    ("numeric_variable_double", "m2", "numeric", "12.345", sch("double"), 12.345),
    ("numeric_variable_string", "m3", "numeric", "12.345", sch("string"), "12.345"),
    ("numeric_nan_precise", "default", "numeric", "'NaN'", VSD_SCHEMA, None),
    ("numeric_nan_string", "m3", "numeric", "'NaN'", sch("string"), "NAN"),  # Debezium 3.6.3's enum name
    ("numeric_inf_string", "m3", "numeric", "'-Infinity'", sch("string"), "NEGATIVE_INFINITY"),
    ("decimal_precise", "default", "decimal(5,0)", "42",
     sch("bytes", "org.apache.kafka.connect.data.Decimal", {"scale": "0", "connect.decimal.precision": "5"}),
     b64(b"\x2a")),
    ("money_precise", "default", "money", "12.34",
     sch("bytes", "org.apache.kafka.connect.data.Decimal", {"scale": "2"}), b64((1234).to_bytes(2, "big"))),
    ("money_double", "m2", "money", "'-1234.5'", sch("double"), -1234.5),
    ("money_string", "m3", "money", "1234.5", sch("string"), "1234.50"),
    ("enum", "default", "pgconn_mood", "'happy'",
     sch("string", "io.debezium.data.Enum", {"allowed": "sad,ok,happy"}), "happy"),
    ("domain", "default", "pgconn_positive", "5", sch("int32"), 5),
    ("int_array", "default", "integer[]", "'{1,2,NULL}'",
     {"type": "array", "items": {"type": "int32", "optional": True}, "optional": True}, [1, 2, None]),
    ("text_array", "default", "text[]", "'{\"a b\",c,\"q\\\"x\"}'",
     {"type": "array", "items": {"type": "string", "optional": True}, "optional": True}, ["a b", "c", 'q"x']),
    ("numeric_array", "default", "numeric(4,1)[]", "'{1.5}'",
     {"type": "array", "items": sch("bytes", "org.apache.kafka.connect.data.Decimal",
                                    {"scale": "1", "connect.decimal.precision": "4"}), "optional": True},
     [b64(b"\x0f")]),
    ("uuid_array", "default", "uuid[]", "'{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11}'",
     {"type": "array", "items": sch("string", "io.debezium.data.Uuid"), "optional": True},
     ["a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"]),
]


@pytest.fixture(scope="module")
def captured(pg_dsn: str) -> dict[str, dict[str, list[tuple[dict, dict]]]]:
    """mode -> column -> [(field schema, payload) from the snapshot row, the same from the streamed row]."""
    dsn = ensure_database(pg_dsn)
    execute(dsn, "DO $$ BEGIN CREATE TYPE pgconn_mood AS ENUM ('sad', 'ok', 'happy'); "
                 "EXCEPTION WHEN duplicate_object THEN NULL; END $$",
            "DO $$ BEGIN CREATE DOMAIN pgconn_positive AS integer CHECK (VALUE > 0); "
            "EXCEPTION WHEN duplicate_object THEN NULL; END $$")
    results: dict[str, dict[str, list[tuple[dict, dict]]]] = {}
    for mode, overrides in MODES.items():
        cases = [c for c in CASES if c[1] == mode]
        schema = f"pgconn_types_{mode}"
        name = f"types_{mode}"
        drop_slot_and_publication(dsn, f"pgconn_{name}", f"pgconn_{name}")
        columns = ", ".join(f'"{c[0]}" {c[2]}' for c in cases)
        values = ", ".join(f"({c[3]})::{c[2]}" for c in cases)
        execute(dsn, f"DROP SCHEMA IF EXISTS {schema} CASCADE", f"CREATE SCHEMA {schema}",
                f"CREATE TABLE {schema}.t (id int PRIMARY KEY, {columns})",
                f"INSERT INTO {schema}.t VALUES (1, {values})")
        conn = connector(pg_dsn, name, schema, **overrides)
        try:
            conn.validate()
            collector = Collector(conn).run()
            execute(dsn, f"INSERT INTO {schema}.t VALUES (2, {values})")
            collector.run(until=lambda c: len(c.events) >= 2)
        finally:
            conn.close()
            drop_slot_and_publication(dsn, f"pgconn_{name}", f"pgconn_{name}")
        per_column: dict[str, list[tuple[dict, dict]]] = {}
        assert [e.op for e in collector.events] == ["r", "c"]
        for event in collector.events:
            envelope = json.loads(event.value_schema)
            after_schema = next(f for f in envelope["fields"] if f["field"] == "after")
            fields = {f["field"]: f for f in after_schema["fields"]}
            payload = json.loads(event.value)["after"]
            for case in cases:
                per_column.setdefault(case[0], []).append((fields.get(case[0]), payload.get(case[0], "<missing>")))
        results[mode] = per_column
    return results


def _canonical(schema: dict | None) -> dict | None:
    """Drop "field" and compare structure order-insensitively for the test (key order is checked by the
    events module's own tests)."""
    if schema is None:
        return None
    return {k: v for k, v in schema.items() if k != "field"}


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_type_mapping(captured: dict, case: tuple) -> None:
    case_id, mode, _sql_type, _literal, expected_schema, expected_value = case
    observed = captured[mode][case_id]
    assert len(observed) == 2, "one snapshot and one streamed value"
    for phase, (schema, value) in zip(("snapshot", "streaming"), observed, strict=True):
        assert _canonical(schema) == expected_schema, phase
        assert value == expected_value, phase
