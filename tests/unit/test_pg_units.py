"""PostgreSQL connector pieces that need no server: property validation, the pgoutput decoder on
hand-built protocol messages, text parsers (arrays, hstore, intervals, dates) and PostGIS EWKB (the EWKB
below is the text output PostGIS documents for SRID=4326;POINT(1 2); tests/integration/postgres/test_pg_postgis.py
checks the real extension)."""

from __future__ import annotations

import base64
import json
import struct
from dataclasses import dataclass

import pytest

from ingest.config import SourceSettings
from ingest.connectors.postgres import PostgresConnector
from ingest.connectors.postgres import pgoutput as pg
from ingest.connectors.postgres.properties import parse_properties
from ingest.connectors.postgres.types import (
    PgType,
    date_days,
    element_converter,
    interval_micros,
    parse_array,
    parse_hstore,
    timestamp_micros,
    zoned_timestamp,
)
from ingest.errors import ConfigError

pytestmark = pytest.mark.unit

BASE = {"database.hostname": "h", "database.user": "u", "database.dbname": "d", "topic.prefix": "p"}


# ------------------------------------------------------------------ properties

def test_defaults_follow_debezium() -> None:
    p = parse_properties(BASE)
    assert (p.port, p.slot_name, p.publication_name, p.snapshot_mode) == (5432, "debezium", "dbz_publication",
                                                                          "initial")
    assert (p.time_precision_mode, p.decimal_handling_mode, p.interval_handling_mode) == ("adaptive", "precise",
                                                                                          "numeric")
    assert p.tombstones_on_delete is True and p.skipped_operations == frozenset({"t"})
    assert p.unavailable_value_placeholder == "__debezium_unavailable_value"


@pytest.mark.parametrize(("extra", "message"), [
    ({"database.hostnam": "x"}, "unknown property 'database.hostnam'"),
    ({"plugin.name": "wal2json"}, "'wal2json' is not one of pgoutput"),
    ({"snapshot.mode": "sometimes"}, "snapshot.mode"),
    ({"time.precision.mode": "nanos"}, "time.precision.mode"),
    ({"decimal.handling.mode": "exact"}, "decimal.handling.mode"),
    ({"hstore.handling.mode": "list"}, "hstore.handling.mode"),
    ({"interval.handling.mode": "iso"}, "interval.handling.mode"),
    ({"binary.handling.mode": "b32"}, "binary.handling.mode"),
    ({"publication.autocreate.mode": "some"}, "publication.autocreate.mode"),
    ({"slot.name": "Bad-Slot"}, "slot.name"),
    ({"database.port": "abc"}, "database.port"),
    ({"tombstones.on.delete": "maybe"}, "tombstones.on.delete"),
    ({"skipped.operations": "x"}, "skipped.operations"),
    ({"table.include.list": "a.b", "table.exclude.list": "c.d"}, "cannot both be set"),
    ({"table.include.list": "a.(b"}, "not a valid regular expression"),
    ({"database.server.name": "q"}, "both given"),
])
def test_invalid_properties_fail_before_connecting(extra: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(".", r"\.")):
        PostgresConnector(SourceSettings("s", "postgresql", {**BASE, **extra}))


def test_missing_required_property() -> None:
    props = dict(BASE)
    del props["topic.prefix"]
    with pytest.raises(ConfigError, match="topic.prefix"):
        parse_properties(props)


def test_older_names_and_modes_are_accepted() -> None:
    props = {k: v for k, v in BASE.items() if k != "topic.prefix"}
    p = parse_properties({**props, "database.server.name": "old", "table.whitelist": "public\\.a.*",
                          "snapshot.mode": "never", "toasted.value.placeholder": "hex:00ff"})
    assert p.topic_prefix == "old" and p.snapshot_mode == "no_data"
    assert p.unavailable_value_placeholder == "hex:00ff"
    assert p.captures_table("public", "abc") and not p.captures_table("public", "b")
    assert parse_properties({**BASE, "snapshot.mode": "schema_only"}).snapshot_mode == "no_data"


def test_filters() -> None:
    p = parse_properties({**BASE, "schema.exclude.list": "audit", "column.exclude.list": "public\\.t\\.secret"})
    assert not p.captures_table("audit", "x") and p.captures_table("public", "x")
    assert not p.captures_column("public", "t", "secret") and p.captures_column("public", "t", "name")
    p = parse_properties({**BASE, "column.include.list": "public\\.t\\.(id|name)"})
    assert p.captures_column("public", "t", "id") and not p.captures_column("public", "t", "other")


def test_password_is_not_in_repr() -> None:
    p = parse_properties({**BASE, "database.password": "s3cret"})
    assert "s3cret" not in repr(p)


# ------------------------------------------------------------------ pgoutput

def _s(text: str) -> bytes:
    return text.encode() + b"\x00"


def _tuple(*values: bytes | None | str | tuple[str, bytes]) -> bytes:
    """A pgoutput TupleData: bytes values as text columns, None as NULL, "u" as an unchanged TOASTed value,
    ("b", bytes) as a binary column."""
    out = struct.pack(">h", len(values))
    for v in values:
        if v is None:
            out += b"n"
        elif v == "u":
            out += b"u"
        elif isinstance(v, tuple):
            out += b"b" + struct.pack(">i", len(v[1])) + v[1]
        else:
            assert isinstance(v, bytes)
            out += b"t" + struct.pack(">i", len(v)) + v
    return out


def test_decode_begin_commit() -> None:
    begin = pg.decode(b"B" + struct.pack(">QqI", 0x1529610, 1_000_000, 727))
    assert begin == pg.Begin(0x1529610, 946_684_801_000_000, 727)
    commit = pg.decode(b"C" + struct.pack(">bQQq", 0, 0x1529610, 0x1529640, 0))
    assert commit == pg.Commit(0, 0x1529610, 0x1529640, 946_684_800_000_000)


def test_decode_relation_and_rows() -> None:
    rel = pg.decode(b"R" + struct.pack(">I", 16384) + _s("public") + _s("cdc_t") + b"f" + struct.pack(">h", 2)
                    + b"\x01" + _s("id") + struct.pack(">Ii", 23, -1)
                    + b"\x00" + _s("qty") + struct.pack(">Ii", 1700, 655366))
    assert rel == pg.Relation(16384, "public", "cdc_t", "f", (pg.RelationColumn(True, "id", 23, -1),
                                                               pg.RelationColumn(False, "qty", 1700, 655366)))
    ins = pg.decode(b"I" + struct.pack(">I", 16384) + b"N" + _tuple(b"1", None))
    assert ins == pg.Insert(16384, ["1", None]) and type(ins.new) is list
    upd = pg.decode(b"U" + struct.pack(">I", 16384) + b"O" + _tuple(b"1", b"2") + b"N" + _tuple(b"1", "u"))
    assert upd == pg.Update(16384, "O", ["1", "2"], ["1", pg.UNCHANGED_TOAST])
    upd2 = pg.decode(b"U" + struct.pack(">I", 16384) + b"N" + _tuple(b"2", b"3"))
    assert upd2.old is None and upd2.old_kind is None
    dele = pg.decode(b"D" + struct.pack(">I", 16384) + b"K" + _tuple(b"1", None))
    assert dele == pg.Delete(16384, "K", ["1", None])
    trunc = pg.decode(b"T" + struct.pack(">ib", 2, 1) + struct.pack(">II", 1, 2))
    assert trunc == pg.Truncate(1, (1, 2))
    msg = pg.decode(b"M" + struct.pack(">bQ", 1, 99) + _s("pfx") + struct.pack(">i", 3) + b"abc")
    assert msg == pg.LogicalMessage(True, 99, "pfx", b"abc")
    assert pg.decode(b"Y" + struct.pack(">I", 5) + _s("public") + _s("mood")) == pg.TypeMessage(5, "public", "mood")
    assert pg.decode(b"O" + struct.pack(">Q", 7) + _s("node1")) == pg.Origin(7, "node1")


def test_tuple_texts_are_utf8_decoded_and_other_bytes_kept() -> None:
    ins = pg.decode(b"I" + struct.pack(">I", 1) + b"N" + _tuple("ü €".encode(), b"caf\xe9", None))
    assert ins.new == ["ü €", b"caf\xe9", None] and isinstance(ins.new, pg.UndecodedTuple)
    with pytest.raises(UnicodeDecodeError):   # streaming turns this into a reject of the change
        pg.text_values(ins.new)
    clean = ["1", None, pg.UNCHANGED_TOAST]
    assert pg.text_values(clean) is clean


@pytest.mark.parametrize("raw", [b"", b"Z123", b"I" + struct.pack(">I", 1) + b"X", b"B\x00\x01"])
def test_decode_rejects_malformed(raw: bytes) -> None:
    with pytest.raises(pg.DecodeError):
        pg.decode(raw)


def test_lsn_text_round_trip() -> None:
    assert pg.lsn_to_str(0x16B3748) == "0/16B3748"
    assert pg.str_to_lsn("1/2A") == (1 << 32) | 0x2A


# ------------------------------------------------------------------ text parsers

def test_array_and_hstore_parsers() -> None:
    assert parse_array('{1,NULL,"a,b","q\\"x",""}') == ["1", None, "a,b", 'q"x', ""]
    assert parse_array("[0:1]={7,8}") == ["7", "8"]
    assert parse_array("{}") == []
    assert parse_hstore('"a"=>"1", "b"=>NULL, "c\\"d"=>"x\\\\y"') == {"a": "1", "b": None, 'c"d': "x\\y"}


def test_time_parsers() -> None:
    assert date_days("1970-01-01") == 0 and date_days("1969-12-31") == -1
    assert date_days("0001-01-01 BC") == -719528  # astronomical year 0
    assert timestamp_micros("2018-06-20 15:13:16.945104") == 1529507596945104  # the seed's example
    assert zoned_timestamp("2018-06-20 15:13:16+02:30") == "2018-06-20T12:43:16.000000Z"
    assert zoned_timestamp("2018-06-20 15:13:16.5-01") == "2018-06-20T16:13:16.500000Z"
    assert interval_micros("-1 days +02:00:00") == -22 * 3600 * 1_000_000
    assert interval_micros("00:00:00.000001") == 1


def test_postgis_geometry_keeps_ewkb_and_geography_has_its_own_name() -> None:
    """Debezium 3.6.3 (measured): wkb is PostGIS's EWKB as it is (SRID flag and SRID kept), srid read from
    it; geography columns are io.debezium.data.geometry.Geography, doc "Geography"."""
    props = parse_properties(BASE)
    schema, convert = element_converter(PgType(99999, "geometry"), props, True)
    assert (schema["name"], schema["doc"]) == ("io.debezium.data.geometry.Geometry", "Geometry")
    assert [f["field"] for f in schema["fields"]] == ["wkb", "srid"]
    ewkb = "0101000020E6100000000000000000F03F0000000000000040"  # SRID=4326;POINT(1 2)
    assert convert(ewkb) == {"wkb": "AQEAACDmEAAAAAAAAAAA8D8AAAAAAAAAQA==", "srid": 4326}  # Debezium's bytes
    assert convert("0101000000000000000000F03F0000000000000040") == {"wkb": "AQEAAAAAAAAAAADwPwAAAAAAAABA",
                                                                        "srid": None}
    schema, _ = element_converter(PgType(99998, "geography"), props, True)
    assert (schema["name"], schema["doc"]) == ("io.debezium.data.geometry.Geography", "Geography")


def test_value_regressions_against_debezium_363() -> None:
    """Each value below is what the real Debezium 3.6.3 postgres connector + JsonConverter wrote for the
    same PostgreSQL text (measured; docs/events.md)."""
    from ingest.connectors.postgres.types import FixedDecimal, date_days, timestamp_micros
    from ingest.events.json_converter import decimal_base64, dumps_str

    props = parse_properties(BASE)
    # numeric(38,10) keeps all 38 digits (the default 28-digit decimal context rounded them)
    assert FixedDecimal(10)("1234567890123456789012345678.0123456789") == "CUmw9vACMxPESZBOzGdFFQ=="
    # NaN / infinities of real and double are JSON strings; finite floats use Java's toString layout
    real = element_converter(PgType(700, "float4"), props, True)
    double = element_converter(PgType(701, "float8"), props, True)
    assert (real[0]["type"], double[0]["type"]) == ("float", "double")
    assert [dumps_str(real[1](t)) for t in ("NaN", "Infinity", "-Infinity", "-1.76229696e+08", "0.001", "1e+07",
                                            "3.4028235e+38")] == \
        ['"NaN"', '"Infinity"', '"-Infinity"', "-1.76229696E8", "0.001", "1.0E7", "3.4028235E38"]
    assert [dumps_str(double[1](t)) for t in ("NaN", "1e+10", "0.0001", "1234567", "1e-320")] == \
        ['"NaN"', "1.0E10", "1.0E-4", "1234567.0", "1.0E-320"]
    # BC dates and timestamps: 0044-03-15 BC is day -735160 (one day off before)
    assert date_days("0044-03-15 BC") == -735160
    assert timestamp_micros("0044-03-15 12:00:00 BC") == -63517780800000000
    # bits: fewest little-endian bytes, none for zero
    bits = element_converter(PgType(1560, "bit", typmod=8), props, True)[1]
    varbit = element_converter(PgType(1562, "varbit"), props, True)[1]
    assert [bits("00000000"), varbit(""), varbit("00000"), bits("10000001"), varbit("0000000000000001")] == \
        ["", "", "", "gQ==", "AQ=="]
    assert varbit("1" + "0" * 71 + "1") == "AQAAAAAAAAAAAQ=="
    # unconstrained numeric: trailing fraction zeros stripped, scale never below 0
    vsd = element_converter(PgType(1700, "numeric"), props, True)[1]
    assert [vsd(t) for t in ("1.500", "1.2300", "100", "0.000", "-0.0001")] == [
        {"scale": 1, "value": decimal_base64(15)}, {"scale": 2, "value": decimal_base64(123)},
        {"scale": 0, "value": decimal_base64(100)}, {"scale": 0, "value": "AA=="}, {"scale": 4, "value": "/w=="}]
    # timestamptz: always six fraction digits
    tstz = element_converter(PgType(1184, "timestamptz"), props, True)[1]
    assert [tstz(t) for t in ("2018-06-20 15:13:16.945+00", "2018-06-20 15:13:16+00", "2018-06-20 15:13:16.5+00")] \
        == ["2018-06-20T15:13:16.945000Z", "2018-06-20T15:13:16.000000Z", "2018-06-20T15:13:16.500000Z"]


@dataclass
class RawJson:
    text: str


def test_column_defaults_in_field_schemas() -> None:
    """DEFAULT values as Debezium 3.6.3 put them into the field schemas (measured, as JSON text)."""
    from ingest.connectors.postgres.types import column_converter
    from ingest.events.json_converter import dumps_str

    props = parse_properties(BASE)
    cases = [
        (PgType(23, "int4"), "0", 0), (PgType(23, "int4"), "'-5'::integer", -5),
        (PgType(25, "text"), "'x'::text", "x"), (PgType(1043, "varchar", typmod=9), "'ab'::character varying", "ab"),
        (PgType(1184, "timestamptz"), "now()", "1970-01-01T00:00:00.000000Z"),
        (PgType(1114, "timestamp"), "now()", 0), (PgType(16, "bool"), "true", True),
        (PgType(1700, "numeric", typmod=(5 << 16) + 2 + 4), "1.5", "AJY="),
        (PgType(700, "float4"), "1.5", 1.5), (PgType(701, "float8"), "'10000000000'::double precision",
                                                     RawJson("1.0E10")),
        (PgType(1082, "date"), "'2020-01-02'::date", 18263), (PgType(23, "int4"), "nextval('s'::regclass)", 0),
        (PgType(1700, "numeric"), "1.50", None), (PgType(25, "text"), None, None),
        (PgType(25, "text"), "upper('a'::text)", None), (PgType(23, "int4"), "(1 + 1)", None),
        (PgType(2950, "uuid"), "gen_random_uuid()", "00000000-0000-0000-0000-000000000000"),
        (PgType(17, "bytea"), "'\\x0102'::bytea", None), (PgType(790, "money"), "5", None),
        (PgType(1266, "timetz"), "'10:00:00+01'::time with time zone", None),
    ]
    for t, expression, expected in cases:
        conv = column_converter("c", t, props, True, expression)
        got = dumps_str(conv.schema.get("default"))
        assert got == (expected.text if isinstance(expected, RawJson) else dumps_str(expected)), (t.name, expression)
    # the default sits before "field" in the struct member, where JsonConverter writes it
    from ingest.events import connect_schema as cs

    member = cs.field("c", column_converter("c", PgType(23, "int4"), props, False, "7").schema)
    assert list(member) == ["type", "optional", "default", "field"]


def test_numeric_defaults_at_the_column_scale_in_string_mode() -> None:
    """Debezium scales a numeric(p,s) default up to s (never down) before writing it as a string (measured:
    DEFAULT 1.5 on numeric(6,2) is "1.50" in decimal.handling.mode=string)."""
    from ingest.connectors.postgres.types import column_converter

    props = parse_properties({**BASE, "decimal.handling.mode": "string"})

    def default(typmod: int, expression: str) -> object:
        return column_converter("n", PgType(1700, "numeric", typmod=typmod), props, True, expression).schema["default"]

    assert default((6 << 16) + 2 + 4, "1.5") == "1.50"
    assert default((8 << 16) + 3 + 4, "2") == "2.000"
    assert default((8 << 16) + 3 + 4, "'-0.5'::numeric") == "-0.500"
    assert default((6 << 16) + 2 + 4, "1.25") == "1.25"
    assert default(-1, "1.50") == "1.50"  # unconstrained: as written


def test_binary_handling_modes_for_bytea() -> None:
    raw = "\\xfbff00"
    expected = {"bytes": ("bytes", "+/8A"), "base64": ("string", "+/8A"),
                "base64-url-safe": ("string", "-_8A"), "hex": ("string", "fbff00")}
    for mode, (schema_type, value) in expected.items():
        props = parse_properties({**BASE, "binary.handling.mode": mode})
        schema, convert = element_converter(PgType(17, "bytea"), props, True)
        assert (schema["type"], convert(raw)) == (schema_type, value), mode


def test_unknown_types_are_omitted_unless_asked() -> None:
    assert element_converter(PgType(3614, "tsvector"), parse_properties(BASE), True) is None
    schema, convert = element_converter(PgType(3614, "tsvector"),
                                        parse_properties({**BASE, "include.unknown.datatypes": "true"}), True)
    assert schema["type"] == "bytes" and base64.b64decode(convert("'a'")) == b"'a'"


def test_source_sequence_is_upstream_json_text() -> None:
    import json

    from ingest.events.source_info import postgresql_sequence, postgresql_source

    assert postgresql_sequence(24023119, 24023128) == '["24023119","24023128"]'
    assert postgresql_sequence(None, 24023128) == '[null,"24023128"]'
    assert json.loads(postgresql_sequence(None, 7)) == [None, "7"]
    src = postgresql_source(version="v", name="n", ts_ms=1_700_000_000_123, db="d", schema="s", table="t",
                            sequence=postgresql_sequence(10, 20), ts_us=1_700_000_000_123_456, txId=5, lsn=20)
    assert list(src) == ["version", "connector", "name", "ts_ms", "snapshot", "db", "sequence", "ts_us", "ts_ns",
                         "schema", "table", "txId", "lsn", "xmin", "origin", "origin_lsn"]
    assert src["snapshot"] == "false"
    assert (src["ts_us"], src["ts_ns"]) == (1_700_000_000_123_456, 1_700_000_000_123_456_000)


def test_arrays_as_debezium_363_writes_them() -> None:
    """Measured with the real connector: enum array items are required; bit string arrays get the element's
    Bits schema and are always null; unconstrained numeric arrays (precise mode) are always null."""
    props = parse_properties(BASE)
    mood = PgType(90001, "mood", "e", enum_labels=("sad", "ok"))
    schema, convert = element_converter(PgType(90002, "_mood", element=mood), props, True)
    assert schema["items"]["optional"] is False and convert("{sad,ok}") == ["sad", "ok"]
    schema, convert = element_converter(PgType(1561, "_bit", typmod=3, element=PgType(1560, "bit", typmod=3)),
                                        props, True)
    assert (schema["type"], schema["name"], schema["parameters"]) == ("bytes", "io.debezium.data.Bits",
                                                                       {"length": "3"})
    assert convert("{101,000}") is None
    schema, convert = element_converter(PgType(1231, "_numeric", element=PgType(1700, "numeric")), props, True)
    assert schema["items"]["name"] == "io.debezium.data.VariableScaleDecimal" and convert("{1.5,NaN}") is None
    mod = (6 << 16) + 2 + 4  # numeric(6,2)
    fixed = PgType(1231, "_numeric", typmod=mod, element=PgType(1700, "numeric", typmod=mod))
    assert element_converter(fixed, props, True)[1]("{1.50,NULL}") == ["AJY=", None]


def test_replay_applies_events_in_seq_order() -> None:
    """The test helper that replays events into rows (tests.support.pg.replay)."""
    from ingest.bronze.contract import BronzeEvent
    from tests.support.pg import replay

    def event(seq: str, op: str | None, key: str, after: dict | None) -> BronzeEvent:
        value = None if op is None else json.dumps({"before": None, "after": after, "op": op})
        return BronzeEvent("t", "db.s.t", op, seq, key, value, None, None, None, None, None, None, None)

    events = [event("2", "u", '{"id":1}', {"id": 1, "v": "__debezium_unavailable_value", "w": 2}),
              event("1", "r", '{"id":1}', {"id": 1, "v": "a", "w": 1}),
              event("3", "c", '{"id":2}', {"id": 2, "v": "b", "w": 1}),
              event("4", "d", '{"id":2}', None)]
    assert replay(events) == {"db.s.t": {'{"id":1}': {"id": 1, "v": "a", "w": 2}}}


def test_heartbeat_seqs_count_on_and_sort_before_the_next_transaction() -> None:
    from ingest.connectors.postgres.offsets import heartbeat_seq, make_seq

    end = 0x1000   # end LSN of the last complete transaction
    first = heartbeat_seq(end, last_seq=make_seq(0x0F00, 0x0F80, 3))
    assert first > make_seq(0x0F00, 0x0F80, 3) and first > make_seq(end, end, 0)   # a message at that LSN
    second = heartbeat_seq(end, last_seq=first)
    assert second > first and second[:-8] == first[:-8]
    assert second < make_seq(end + 1, end + 1, 1)          # the next transaction commits after `end`


# ------------------------------------------------------------------ rows read straight from pgoutput tuples

def _captured(*columns: tuple[str, str, int], exclude: str | None = None):
    """A CapturedTable of (name, type name, typmod) columns, the first the key (build_table, no server)."""
    from ingest.connectors.postgres.catalog import CatalogColumn, TableDef
    from ingest.connectors.postgres.properties import parse_properties
    from ingest.connectors.postgres.tables import build_table
    from ingest.connectors.postgres.types import PgType

    defs = tuple(CatalogColumn(name, PgType(1000 + n, type_name, typmod=typmod), type_name, n > 0, n + 1, None)
                 for n, (name, type_name, typmod) in enumerate(columns))
    props = {"database.hostname": "h", "database.user": "u", "database.dbname": "d", "topic.prefix": "p"}
    if exclude:
        props["column.exclude.list"] = exclude
    return build_table(TableDef("s", "t", 1, defs, (columns[0][0],), "d", ()), parse_properties(props))


_TYPES = (("id", "int8", -1), ("n4", "int4", -1), ("n2", "int2", -1), ("txt", "text", -1),
          ("vc", "varchar", 36), ("num", "numeric", (12 << 16 | 2) + 4), ("anynum", "numeric", -1),
          ("f4", "float4", -1), ("f8", "float8", -1), ("flag", "bool", -1), ("day", "date", -1),
          ("at", "timestamp", -1), ("atz", "timestamptz", -1), ("tod", "time", -1), ("u", "uuid", -1),
          ("doc", "jsonb", -1), ("raw", "bytea", -1), ("span", "interval", -1))

_PLAIN_ROWS = (
    (b"1", b"-7", b"3", b"plain", b"abc", b"12.50", b"3.14159", b"1.5", b"0.1", b"t", b"2024-02-29",
     b"2024-01-01 10:11:12.5", b"2024-01-01 10:11:12.123456+00", b"23:59:59.999999",
     b"a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", b'{"a": [1, "\xc3\xbc"]}', b"\\x00ff", b"1 day 02:03:04"),
    (b"-9223372036854775808", b"2147483647", b"-32768", "ü €\t\n\"'\\ 🎉".encode(), b"", b"-0.01", b"0.00001",
     b"-3.4028235e+38", b"1e+300", b"f", b"1970-01-01", b"1900-01-01 00:00:00", b"2000-01-01 00:00:00+00",
     b"00:00:00", b"00000000-0000-0000-0000-000000000000", b"null", b"\\x", b"-1 mons"),
    (b"2",) + (None,) * 17,
    (b"3", b"0", b"0", b"x" * 70_000, b"v", b"NaN", b"NaN", b"NaN", b"-Infinity", b"t", b"0001-01-01",
     b"0001-01-01 00:00:00 BC", b"1969-12-31 23:59:59.999999+00", b"24:00:00", b"ffffffff-ffff-ffff-ffff-ffffffffffff",
     b"{}", b"\\xdeadbeef", b"00:00:00"),
)


@pytest.mark.parametrize("exclude", [None, r"s\.t\.(txt|f4)"])
@pytest.mark.parametrize("values", _PLAIN_ROWS, ids=["typical", "edges", "nulls", "special"])
def test_a_plain_tuple_reads_as_the_general_path_converts_it(values: tuple, exclude: str | None) -> None:
    """CapturedTable.read_row (the stream's path for most changes) gives the payload that decoding the tuple and
    converting its texts one by one gives, for every value of a table of most types, with columns excluded."""
    table = _captured(*_TYPES, exclude=exclude)
    buf = b"prefix" + _tuple(*values)
    from ingest.events.json_converter import dumps_str

    texts = pg.text_values(pg._Reader(buf[5:]).tuple_data())   # the reader starts after a type byte
    general = table.row(texts, "__debezium_unavailable_value")
    table._fast_row = None   # the per-column loop, not the generated row()
    assert dumps_str(table.row(texts, "__debezium_unavailable_value")) == dumps_str(general)
    read = table.read_row(buf, 6)
    assert dumps_str(read) == dumps_str(general) and list(read) == list(general)


@pytest.mark.parametrize("values, outcome", [
    ((b"1", b"x", "u"), None),                    # an unchanged TOASTed value: the placeholder is the general path's
    ((b"1", b"x", ("b", b"\x00\x01")), None),     # a binary column (never requested)
    ((b"1", b"x"), None),                         # fewer columns than the table has
    ((b"1", b"x", b"y", b"z"), None),             # more
    ((b"1", b"caf\xe9", b"y"), UnicodeDecodeError),   # not UTF-8: the general path rejects the change
    ((b"one", b"x", b"y"), ValueError),           # a value the converter refuses: likewise
])
def test_a_tuple_that_is_not_plain_is_left_to_the_general_path(values: tuple, outcome: type | None) -> None:
    table = _captured(("id", "int4", -1), ("a", "text", -1), ("b", "text", -1))
    buf = b"prefix" + _tuple(*values)
    if outcome is None:
        assert table.read_row(buf, 6) is None
    else:
        with pytest.raises(outcome):
            table.read_row(buf, 6)


def test_an_excluded_column_may_be_toasted_and_a_key_outside_the_value_is_not_read() -> None:
    table = _captured(("id", "int4", -1), ("a", "text", -1), ("big", "text", -1), exclude=r"s\.t\.big")
    assert table.read_row(b"prefix" + _tuple(b"5", b"x", "u"), 6) == {"id": 5, "a": "x"}
    assert table.key_in_row
    assert not _captured(("id", "int4", -1), ("a", "text", -1), exclude=r"s\.t\.id").key_in_row
