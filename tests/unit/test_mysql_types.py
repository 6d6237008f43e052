"""Type mapping table of seed 004 section 5 (MariaDB) / seed 003 section 1.6 (MySQL): Connect schema and
payload per type row and mode. Columns come from ingest.schema's real type resolver."""

from __future__ import annotations

import base64
import datetime as dt
import decimal

import orjson
import pytest

from ingest.connectors.mysql.types import TypeOptions, column_type
from ingest.schema.model import Column
from ingest.schema.types import resolve_type

pytestmark = pytest.mark.unit


def col(words: str, params=(), unsigned=False, nullable=True, name="c"):
    info = resolve_type("mariadb", words.split(), [str(p) for p in params], unsigned=unsigned)
    return Column(name=name, type_name=info.type_name, jdbc_type=info.jdbc_type, source_type=info.source_type,
                  length=info.length, scale=info.scale, nullable=nullable, enum_values=info.enum_values)


def b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode()


# (type words, params, unsigned, options, python value, expected schema subset, expected payload)
DEFAULT = TypeOptions()
ROWS = [
    ("BOOLEAN", (), False, DEFAULT, 1, {"type": "boolean"}, True),
    ("BIT", (1,), False, DEFAULT, b"\x01", {"type": "boolean"}, True),
    ("BIT", (1,), False, DEFAULT, "0", {"type": "boolean"}, False),          # binlog form
    ("BIT", (10,), False, DEFAULT, b"\x02\x05", {"type": "bytes", "name": "io.debezium.data.Bits",
                                                   "parameters": {"length": "10"}}, b64(b"\x05\x02")),
    ("BIT", (10,), False, DEFAULT, "1000000101", {"name": "io.debezium.data.Bits"}, b64(b"\x05\x02")),
    ("TINYINT", (1,), False, DEFAULT, 1, {"type": "int16"}, 1),              # TINYINT(1) from SHOW CREATE
    ("TINYINT", (), True, DEFAULT, 255, {"type": "int16"}, 255),
    ("SMALLINT", (), False, DEFAULT, -3, {"type": "int16"}, -3),
    ("SMALLINT", (), True, DEFAULT, 65535, {"type": "int32"}, 65535),
    ("MEDIUMINT", (), False, DEFAULT, 7, {"type": "int32"}, 7),
    ("INT", (), False, DEFAULT, 7, {"type": "int32"}, 7),
    ("INT", (), True, DEFAULT, 4294967295, {"type": "int64"}, 4294967295),
    ("BIGINT", (), False, DEFAULT, -9, {"type": "int64"}, -9),
    ("BIGINT", (), True, DEFAULT, 18446744073709551615, {"type": "int64"}, -1),  # long: wraps like Java
    ("BIGINT", (), True, TypeOptions(bigint_unsigned_mode="precise"), 18446744073709551615,
     {"type": "bytes", "name": "org.apache.kafka.connect.data.Decimal",
      "parameters": {"scale": "0", "connect.decimal.precision": "20"}},
     b64((18446744073709551615).to_bytes(9, "big", signed=True))),
    ("FLOAT", (10,), False, DEFAULT, 1.5, {"type": "float"}, orjson.Fragment("1.5")),
    ("FLOAT", (30,), False, DEFAULT, 1.5, {"type": "double"}, orjson.Fragment("1.5")),
    ("FLOAT", (10, 2), False, DEFAULT, 1.5, {"type": "double"}, orjson.Fragment("1.5")),
    ("DOUBLE", (), False, DEFAULT, 2.25, {"type": "double"}, orjson.Fragment("2.25")),
    # Java's Float/Double.toString layout (Debezium 3.6.3 writes these; orjson would write 1e+300, ...)
    ("DOUBLE", (), False, DEFAULT, "1e300", {"type": "double"}, orjson.Fragment("1.0E300")),
    ("DOUBLE", (), False, DEFAULT, 123456789012.5, {"type": "double"}, orjson.Fragment("1.234567890125E11")),
    ("FLOAT", (), False, DEFAULT, "-1.7623E8", {"type": "float"}, orjson.Fragment("-1.7623E8")),
    ("FLOAT", (), False, DEFAULT, -176229696.0, {"type": "float"}, orjson.Fragment("-1.76229696E8")),
    ("FLOAT", (), False, DEFAULT, "3.4e38", {"type": "float"}, orjson.Fragment("3.4E38")),
    ("REAL", (), False, DEFAULT, -176229696.0, {"type": "double"}, orjson.Fragment("-1.76229696E8")),
    ("DECIMAL", (38, 10), False, TypeOptions(decimal_mode="double"),
     decimal.Decimal("1234567890123456789012345678.0123456789"), {"type": "double"},
     orjson.Fragment("1.2345678901234569E27")),
    ("DECIMAL", (10, 2), False, DEFAULT, decimal.Decimal("12.34"),
     {"type": "bytes", "name": "org.apache.kafka.connect.data.Decimal", "version": 1,
      "parameters": {"scale": "2", "connect.decimal.precision": "10"}}, b64((1234).to_bytes(2, "big"))),
    ("DECIMAL", (10, 2), False, DEFAULT, decimal.Decimal("-0.01"), {"type": "bytes"}, b64(b"\xff")),
    # negative powers of two take the minimal length of Java's BigInteger.toByteArray (one byte for -128)
    ("DECIMAL", (10, 2), False, DEFAULT, decimal.Decimal("-1.28"), {"type": "bytes"}, b64(b"\x80")),
    ("DECIMAL", (10, 2), False, DEFAULT, decimal.Decimal("-327.68"), {"type": "bytes"}, b64(b"\x80\x00")),
    ("DECIMAL", (10, 2), False, DEFAULT, decimal.Decimal("-327.69"), {"type": "bytes"}, b64(b"\xff\x7f\xff")),
    ("DECIMAL", (10, 2), False, TypeOptions(decimal_mode="double"), decimal.Decimal("12.34"),
     {"type": "double"}, orjson.Fragment("12.34")),
    ("DECIMAL", (10, 2), False, TypeOptions(decimal_mode="string"), decimal.Decimal("12.30"),
     {"type": "string"}, "12.30"),
    ("VARCHAR", (20,), False, DEFAULT, "héllo", {"type": "string"}, "héllo"),
    ("CHAR", (3,), False, DEFAULT, "abc", {"type": "string"}, "abc"),
    ("LONGTEXT", (), False, DEFAULT, "t", {"type": "string"}, "t"),
    ("VARBINARY", (4,), False, DEFAULT, b"\xfb\xff", {"type": "bytes"}, "+/8="),
    ("VARBINARY", (4,), False, TypeOptions(binary_mode="base64"), b"\xfb\xff", {"type": "string"}, "+/8="),
    ("VARBINARY", (4,), False, TypeOptions(binary_mode="base64-url-safe"), b"\xfb\xff", {"type": "string"}, "-_8="),
    ("VARBINARY", (4,), False, TypeOptions(binary_mode="hex"), b"\xfb\xff", {"type": "string"}, "fbff"),
    ("BLOB", (), False, DEFAULT, b"\x00\x01", {"type": "bytes"}, "AAE="),
    ("JSON", (), False, DEFAULT, '{"a": 1}', {"type": "string", "name": "io.debezium.data.Json"}, '{"a": 1}'),
    ("YEAR", (), False, DEFAULT, 2024, {"type": "int32", "name": "io.debezium.time.Year"}, 2024),
    ("YEAR", (), False, DEFAULT, 69, {"type": "int32"}, 2069),              # enable.time.adjuster
    ("DATE", (), False, DEFAULT, dt.date(2018, 6, 20), {"type": "int32", "name": "io.debezium.time.Date"}, 17702),
    ("DATE", (), False, TypeOptions(time_precision_mode="connect"), dt.date(2018, 6, 20),
     {"name": "org.apache.kafka.connect.data.Date"}, 17702),
    ("DATETIME", (), False, DEFAULT, dt.datetime(2018, 6, 20, 6, 37, 3),
     {"type": "int64", "name": "io.debezium.time.Timestamp"}, 1529476623000),
    ("DATETIME", (3,), False, DEFAULT, dt.datetime(2018, 6, 20, 6, 37, 3, 123000),
     {"name": "io.debezium.time.Timestamp"}, 1529476623123),
    ("DATETIME", (6,), False, DEFAULT, dt.datetime(2018, 6, 20, 6, 37, 3, 5),
     {"name": "io.debezium.time.MicroTimestamp"}, 1529476623000005),
    ("DATETIME", (6,), False, TypeOptions(time_precision_mode="connect"), dt.datetime(2018, 6, 20, 6, 37, 3, 999),
     {"name": "org.apache.kafka.connect.data.Timestamp"}, 1529476623000),
    ("TIME", (3,), False, DEFAULT, dt.timedelta(hours=10, minutes=15, seconds=30, microseconds=123000),
     {"type": "int64", "name": "io.debezium.time.MicroTime"}, 36930123000),
    ("TIME", (3,), False, TypeOptions(time_precision_mode="adaptive"), dt.timedelta(seconds=1, microseconds=5000),
     {"type": "int32", "name": "io.debezium.time.Time"}, 1005),
    ("TIME", (), False, TypeOptions(time_precision_mode="connect"), dt.timedelta(seconds=2),
     {"type": "int32", "name": "org.apache.kafka.connect.data.Time"}, 2000),
    ("TIMESTAMP", (), False, DEFAULT, dt.datetime(2018, 6, 20, 13, 37, 3),   # UTC (session time_zone +00:00)
     {"type": "string", "name": "io.debezium.time.ZonedTimestamp"}, "2018-06-20T13:37:03Z"),
    ("TIMESTAMP", (6,), False, DEFAULT, dt.datetime(2018, 6, 20, 13, 37, 3, 120000),
     {"name": "io.debezium.time.ZonedTimestamp"}, "2018-06-20T13:37:03.120000Z"),
]


@pytest.mark.parametrize("words,params,unsigned,options,value,schema,payload", ROWS,
                         ids=[f"{r[0]}{r[1]}{'u' if r[2] else ''}-{i}" for i, r in enumerate(ROWS)])
def test_type_row(words, params, unsigned, options, value, schema, payload):
    out_schema, convert = column_type(col(words, params, unsigned), options)
    for key, expected in schema.items():
        assert out_schema[key] == expected, key
    assert out_schema["optional"] is True
    assert orjson.dumps(convert(value)) == orjson.dumps(payload)
    assert convert(None) is None


def test_enum_and_set_carry_allowed_values():
    enum_schema, enum_conv = column_type(col("ENUM", ("a", "b")), DEFAULT)
    assert enum_schema["name"] == "io.debezium.data.Enum" and enum_schema["parameters"] == {"allowed": "a,b"}
    assert enum_conv("b") == "b"
    set_schema, set_conv = column_type(col("SET", ("x", "y", "z")), DEFAULT)
    assert set_schema["name"] == "io.debezium.data.EnumSet" and set_schema["parameters"] == {"allowed": "x,y,z"}
    assert set_conv({"z", "x"}) == "x,z" and set_conv("z,x") == "x,z"


def test_zero_dates_null_when_nullable_epoch_when_not_null():
    for words in ("DATE", "DATETIME", "TIMESTAMP"):
        _, nullable = column_type(col(words, nullable=True), DEFAULT)
        _, required = column_type(col(words, nullable=False), DEFAULT)
        assert nullable("0000-00-00 00:00:00") is None and nullable(None) is None
        assert required(None) in (0, "1970-01-01T00:00:00Z")
        assert required("0000-00-00") == required(None)


def test_geometry_and_point_as_wkb_with_srid():
    import struct

    wkb = struct.pack("<bIdd", 1, 1, 1.5, -2.0)
    raw = (4326).to_bytes(4, "little") + wkb
    schema, convert = column_type(col("POINT"), DEFAULT)
    assert schema["name"] == "io.debezium.data.geometry.Point"
    assert convert(raw) == {"x": 1.5, "y": -2.0, "wkb": b64(wkb), "srid": 4326}
    schema, convert = column_type(col("POLYGON"), DEFAULT)
    assert schema["name"] == "io.debezium.data.geometry.Geometry"
    assert [f["field"] for f in schema["fields"]] == ["wkb", "srid"]
    assert convert(raw) == {"wkb": b64(wkb), "srid": 4326}


def test_not_null_columns_are_required_in_the_schema():
    schema, _ = column_type(col("INT", nullable=False), DEFAULT)
    assert schema == {"type": "int32", "optional": False}


def test_year_zero_is_2000_like_debezium():
    """Debezium 3.6.3 reads YEAR '0000' (snapshot text 0) as 2000 (its two-digit-year adjustment)."""
    _, convert = column_type(col("YEAR"), DEFAULT)
    assert convert("0") == 2000 and convert(0) == 2000
    assert convert("1901") == 1901 and convert("69") == 2069 and convert("70") == 1970


def test_zero_timestamp_from_the_binlog_is_null_when_nullable():
    """The binlog carries the zero TIMESTAMP as 0 seconds (the epoch): Debezium writes null for a nullable
    column, the epoch text for a NOT NULL one; a real TIMESTAMP is never the epoch itself."""
    _, nullable = column_type(col("TIMESTAMP", nullable=True), DEFAULT)
    _, required = column_type(col("TIMESTAMP", nullable=False), DEFAULT)
    epoch = dt.datetime(1970, 1, 1)
    assert nullable(epoch) is None and nullable(epoch.replace(tzinfo=dt.UTC)) is None
    assert required(epoch) == "1970-01-01T00:00:00Z"
    assert nullable(dt.datetime(1970, 1, 1, 0, 0, 1)) == "1970-01-01T00:00:01Z"


def test_zero_date_in_a_not_null_column_with_a_default_is_the_default():
    """Debezium 3.6.3 converts a zero date to null and writes a required field's schema default instead
    (DATE NOT NULL DEFAULT '2000-01-01' -> 10957, DATETIME ... -> 946684800000); without a default, the
    epoch."""
    date_col = col("DATE", nullable=False)
    date_col.has_default, date_col.default, date_col.default_is_literal = True, "2000-01-01", True
    _, convert = column_type(date_col, DEFAULT)
    assert convert("0000-00-00") == 10957 and convert(dt.date(2020, 1, 1)) == 18262
    dt_col = col("DATETIME", nullable=False)
    dt_col.has_default, dt_col.default, dt_col.default_is_literal = True, "2000-01-01 00:00:00", True
    assert column_type(dt_col, DEFAULT)[1]("0000-00-00 00:00:00") == 946684800000
    assert column_type(col("DATE", nullable=False), DEFAULT)[1]("0000-00-00") == 0
