"""MySQL/MariaDB column types -> Debezium Kafka Connect field schemas and JSON payload values.

Table-driven after the data type mappings of Debezium's MariaDB and MySQL connector documentation. Values
arrive from two decoders: PyMySQL (snapshot; the session runs with time_zone '+00:00') and mysql-replication (binlog).
Both are normalised here: BIT arrives as big-endian bytes or as a '0101' string, SET as a string or a Python
set, zero dates as None or as a '0000-00-00' string, TIMESTAMP as a naive UTC datetime.

Column descriptions are `ingest.schema.model.Column` objects (duck-typed: name, type_name, source_type,
length, scale, nullable, enum_values).
"""

from __future__ import annotations

import base64
import datetime as dt
import decimal
import re
import struct
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ingest.events import connect_schema as cs
from ingest.events.json_converter import decimal_base64, java_double, java_float32

Converter = Callable[[Any], Any]
EPOCH = dt.datetime(1970, 1, 1)
EPOCH_DATE = dt.date(1970, 1, 1)

INT_TYPES = {"TINYINT", "SMALLINT", "MEDIUMINT", "INT", "INTEGER", "BIGINT", "INT1", "INT2", "INT3", "INT4",
             "INT8", "MIDDLEINT"}
STRING_TYPES = {"CHAR", "VARCHAR", "TINYTEXT", "TEXT", "MEDIUMTEXT", "LONGTEXT", "NCHAR", "NVARCHAR",
                "NATIONAL CHAR", "NATIONAL VARCHAR", "CHARACTER", "CHARACTER VARYING", "LONG", "LONG VARCHAR",
                "UUID", "INET4", "INET6", "XMLTYPE"}
BINARY_TYPES = {"BINARY", "VARBINARY", "TINYBLOB", "BLOB", "MEDIUMBLOB", "LONGBLOB", "LONG VARBINARY"}
GEOMETRY_TYPES = {"GEOMETRY", "LINESTRING", "POLYGON", "MULTIPOINT", "MULTILINESTRING", "MULTIPOLYGON",
                  "GEOMETRYCOLLECTION", "GEOMCOLLECTION"}
DECIMAL_TYPES = {"DECIMAL", "NUMERIC", "DEC", "FIXED"}

_BASE = re.compile(r"^\s*([A-Za-z][A-Za-z0-9 ]*?)\s*(?:\(|$|\s+(?:UNSIGNED|SIGNED|ZEROFILL)\b)", re.IGNORECASE)


@dataclass(frozen=True)
class TypeOptions:
    time_precision_mode: str = "adaptive_time_microseconds"
    decimal_mode: str = "precise"
    bigint_unsigned_mode: str = "long"
    binary_mode: str = "bytes"


def base_type(column: Any) -> tuple[str, bool]:
    """(upper-case base type name without length/UNSIGNED, unsigned flag) of a column."""
    text = str(column.type_name or column.source_type or "").strip()
    unsigned = "UNSIGNED" in text.upper() or "UNSIGNED" in str(column.source_type or "").upper()
    match = _BASE.match(text)
    name = (match.group(1) if match else text).upper().strip()
    name = re.sub(r"\s+(UNSIGNED|SIGNED|ZEROFILL)$", "", name)
    return name, unsigned


def _bytes_json(raw: bytes) -> str:
    """Kafka JsonConverter writes bytes as base64 text."""
    return base64.b64encode(raw).decode("ascii")


def _binary_converter(mode: str, pad_to: int = 0) -> Converter:
    """`pad_to`: BINARY(n) length. The binlog stores BINARY values without their trailing zero bytes; the
    snapshot (and Debezium, in both) gives them padded to the column length."""

    def to_bytes(v: Any) -> bytes:
        raw = v if isinstance(v, bytes | bytearray) else str(v).encode("utf-8", "surrogateescape")
        return raw.ljust(pad_to, b"\0") if len(raw) < pad_to else raw

    if mode == "base64":
        return lambda v: base64.b64encode(to_bytes(v)).decode("ascii")
    if mode == "base64-url-safe":
        return lambda v: base64.urlsafe_b64encode(to_bytes(v)).decode("ascii")
    if mode == "hex":
        return lambda v: to_bytes(v).hex()
    return lambda v: _bytes_json(to_bytes(v))


_EXACT = decimal.Context(prec=200)  # DECIMAL has up to 65 digits: the default 28-digit context would round them


def _decimal_bytes(value: decimal.Decimal, scale: int) -> str:
    """Connect Decimal: the unscaled value as big-endian two's complement, base64 in JSON."""
    unscaled = int(value.scaleb(scale, _EXACT).to_integral_value(rounding=decimal.ROUND_HALF_UP, context=_EXACT))
    return decimal_base64(unscaled)


_F32 = struct.Struct("<f")


def float32_widened(v: Any) -> float:
    """The 4-byte float nearest to `v` (server text or a binlog float), as an exact double."""
    return _F32.unpack(_F32.pack(float(v)))[0]


def double_value(v: Any) -> Any:
    """A DOUBLE (or DECIMAL in double mode) value as Debezium writes it: Double.toString (1.0E300)."""
    return java_double(float(v))


def float32_widened_value(v: Any) -> Any:
    """FLOAT(M,D): the 4-byte float widened to a double, written by Double.toString."""
    return java_double(float32_widened(v))


def _to_decimal(v: Any) -> decimal.Decimal:
    return v if isinstance(v, decimal.Decimal) else decimal.Decimal(str(v))


def _bits_int(v: Any) -> int:
    if isinstance(v, bytes | bytearray):
        return int.from_bytes(v, "big")
    if isinstance(v, str):
        return int(v, 2) if v else 0
    return int(v)


def _is_zero_date(v: Any) -> bool:
    return isinstance(v, str | bytes) and (v[:4] in ("0000", b"0000") or v[5:7] in ("00", b"00"))


def _days(v: dt.date) -> int:
    return (v - EPOCH_DATE).days if not isinstance(v, dt.datetime) else (v.date() - EPOCH_DATE).days


def _micros(v: dt.datetime) -> int:
    delta = v.replace(tzinfo=None) - EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def _time_micros(v: Any) -> int:
    if isinstance(v, dt.timedelta):
        return (v.days * 86_400 + v.seconds) * 1_000_000 + v.microseconds
    if isinstance(v, dt.time):
        return ((v.hour * 60 + v.minute) * 60 + v.second) * 1_000_000 + v.microsecond
    raise TypeError(f"not a TIME value: {v!r}")


def _time_of_day_millis(v: Any) -> int | None:
    micros = _time_micros(v)
    return micros // 1000 if 0 <= micros < 86_400_000_000 else None


def _is_zero_timestamp(v: Any) -> bool:
    """A binlog TIMESTAMP of 0 seconds: the zero TIMESTAMP (a real one starts at 1970-01-01 00:00:01 UTC)."""
    return isinstance(v, dt.datetime) and v.replace(tzinfo=None) == EPOCH and (
        v.tzinfo is None or v.utcoffset() == dt.timedelta(0))


def _temporal(convert: Callable[[Any], Any], nullable: bool, zero: Any, timestamp: bool = False) -> Converter:
    """Zero dates: null when the column is nullable, else the epoch (Debezium's MariaDB documentation, temporal
    types). `timestamp`: the epoch itself is the zero TIMESTAMP as well (how the binlog carries it)."""

    def run(v: Any) -> Any:
        if v is None or _is_zero_date(v) or (timestamp and _is_zero_timestamp(v)):
            return None if nullable else zero
        return convert(v)

    run.handles_null = True  # type: ignore[attr-defined]
    return run


def _zoned(fsp: int, shortest: bool = False) -> Converter:
    """ZonedTimestamp text. Debezium writes a binlog value with exactly `fsp` fraction digits, a snapshot
    value (read through JDBC) in ISO-8601's shortest form (`shortest`: no trailing zeros, no fraction for a
    whole second): '2020-01-01T00:00:00.000Z' streamed is '2020-01-01T00:00:00Z' in the snapshot."""

    def run(v: Any) -> str:
        if isinstance(v, dt.datetime) and v.tzinfo is not None:
            v = v.astimezone(dt.UTC).replace(tzinfo=None)
        text = v.strftime("%Y-%m-%dT%H:%M:%S")
        if fsp > 0:
            digits = f"{v.microsecond:06d}"[:fsp]
            if shortest:
                digits = digits.rstrip("0")
            if digits:
                text += "." + digits
        return text + "Z"

    return run


def snapshot_converter(column: Any, convert: Converter) -> Converter:
    """The converter of a column's snapshot values: column_type's, but TIMESTAMP in its snapshot form."""
    name, _ = base_type(column)
    if name != "TIMESTAMP":
        return convert
    shortest = _zoned(column.length or 0, shortest=True)
    return _temporal(shortest, bool(column.nullable), shortest(EPOCH))


def _year(v: Any) -> int:
    year = int(v.year if isinstance(v, dt.date) else v)
    if 0 <= year < 70:  # enable.time.adjuster: two-digit years map to 1970-2069, and year 0 ('0000') to 2000
        return year + 2000
    if 70 <= year < 100:
        return year + 1900
    return year


def _set_value(allowed: list[str]) -> Converter:
    def run(v: Any) -> str:
        members = v if isinstance(v, set | frozenset | list | tuple) else [m for m in str(v).split(",") if m]
        chosen = set(members)
        return ",".join(m for m in allowed if m in chosen)

    return run


def _srid(raw: bytes) -> int | None:
    """The 4-byte little-endian SRID in front of MySQL's internal geometry value; 0 (none given) is null, as
    Debezium writes it."""
    return int.from_bytes(raw[:4], "little") or None


def _geometry(v: Any) -> dict[str, Any]:
    """MySQL's internal geometry value: 4-byte little-endian SRID then WKB."""
    raw = bytes(v)
    return {"wkb": _bytes_json(raw[4:]), "srid": _srid(raw)}


def _text(v: Any) -> str:
    return v.decode("utf-8", "replace") if isinstance(v, bytes | bytearray) else str(v)


def _json_text(v: Any) -> str:
    if isinstance(v, bytes | bytearray):
        return v.decode("utf-8", "replace")
    if isinstance(v, dict | list):  # MySQL binary JSON decoded by mysql-replication
        import json

        return json.dumps(v, separators=(",", ":"), default=_text)
    return str(v)


def _bool(v: Any) -> bool:
    if isinstance(v, str):
        return v not in ("", "0")
    if isinstance(v, bytes | bytearray):
        return any(v)
    return bool(v)


def column_type(column: Any, options: TypeOptions) -> tuple[cs.Schema, Converter]:
    """(Connect field schema without the field name, value converter) for one column. The converter maps
    SQL NULL to None; temporal converters also map zero dates (null, or the epoch for NOT NULL columns)."""
    schema, convert = _column_type(column, options)
    if getattr(convert, "handles_null", False):
        return schema, _zero_as_default(column, options, convert)
    return schema, lambda v: None if v is None else convert(v)


def _zero_as_default(column: Any, options: TypeOptions, convert: Converter) -> Converter:
    """A zero date in a NOT NULL column with a DEFAULT: Debezium converts it to null, then writes the field
    schema's default for the required field (measured: DATE NOT NULL DEFAULT '2000-01-01' -> 10957); without
    a default, the epoch (_temporal's `zero`)."""
    name, _ = base_type(column)
    if column.nullable or name not in ("DATE", "DATETIME", "TIMESTAMP"):
        return convert
    default = default_value(column, snapshot_converter(column, convert), options)
    if default is None:
        return convert
    timestamp = name == "TIMESTAMP"

    def run(v: Any) -> Any:
        if v is None or _is_zero_date(v) or (timestamp and _is_zero_timestamp(v)):
            return default
        return convert(v)

    run.handles_null = True  # type: ignore[attr-defined]
    return run


def zero_date_value(column: Any, options: TypeOptions, snapshot: bool = False) -> Any:
    """What a zero date ('0000-00-00 ...') is in this temporal column: null (nullable), else the column's
    default or the epoch (for the bulk and binlog fast paths, which detect zero dates themselves).
    `snapshot`: in the snapshot's form (snapshot_converter)."""
    convert = column_type(column, options)[1]
    return (snapshot_converter(column, convert) if snapshot else convert)(None)


def _column_type(column: Any, options: TypeOptions) -> tuple[cs.Schema, Converter]:
    name, unsigned = base_type(column)
    optional = bool(column.nullable)
    length = column.length
    scale = column.scale
    tpm = options.time_precision_mode

    if name in ("BOOLEAN", "BOOL"):
        return cs.boolean(optional), _bool
    if name == "BIT":
        bits = length or 1
        if bits == 1:
            return cs.boolean(optional), _bool
        nbytes = bits // 8 + (0 if bits % 8 == 0 else 1)
        return (cs.bytes_(optional, name="io.debezium.data.Bits", version=1, parameters={"length": str(bits)}),
                lambda v: _bytes_json(_bits_int(v).to_bytes(nbytes, "little")))
    if name in INT_TYPES:
        return _integer(name, unsigned, optional, options)
    if name in ("REAL",):
        return cs.float32(optional), java_float32
    if name in ("FLOAT", "FLOAT4"):
        if length is not None and length > 23 and scale is None:  # FLOAT(24..53) is a DOUBLE
            return cs.float64(optional), double_value
        if scale is not None:  # FLOAT(M,D): a 4-byte float, widened to a double as Debezium does (Java float -> double)
            return cs.float64(optional), float32_widened_value
        return cs.float32(optional), java_float32
    if name in ("DOUBLE", "DOUBLE PRECISION", "FLOAT8"):
        return cs.float64(optional), double_value
    if name in DECIMAL_TYPES:
        return _decimal(length, scale, optional, options.decimal_mode)
    if name in STRING_TYPES:
        return cs.string(optional), _text
    if name in BINARY_TYPES:
        kind = cs.bytes_(optional) if options.binary_mode == "bytes" else cs.string(optional)
        return kind, _binary_converter(options.binary_mode, (length or 1) if name == "BINARY" else 0)
    if name == "JSON":
        return cs.string(optional, name="io.debezium.data.Json", version=1), _json_text
    if name == "ENUM":
        allowed = list(column.enum_values or [])
        return cs.debezium_enum(",".join(allowed), optional), _text
    if name == "SET":
        allowed = list(column.enum_values or [])
        return (cs.string(optional, name="io.debezium.data.EnumSet", version=1,
                          parameters={"allowed": ",".join(allowed)}), _set_value(allowed))
    if name == "YEAR":
        return cs.int32(optional, name="io.debezium.time.Year", version=1), _year
    if name == "TIMESTAMP":
        fsp = length or 0
        return (cs.string(optional, name="io.debezium.time.ZonedTimestamp", version=1),
                _temporal(_zoned(fsp), optional, _zoned(fsp)(EPOCH), timestamp=True))
    if name == "DATE":
        semantic = "org.apache.kafka.connect.data.Date" if tpm == "connect" else "io.debezium.time.Date"
        return cs.int32(optional, name=semantic, version=1), _temporal(_days, optional, 0)
    if name == "DATETIME":
        fsp = length or 0
        if tpm == "connect":
            return (cs.int64(optional, name="org.apache.kafka.connect.data.Timestamp", version=1),
                    _temporal(lambda v: _micros(v) // 1000, optional, 0))
        if fsp <= 3:
            return (cs.int64(optional, name="io.debezium.time.Timestamp", version=1),
                    _temporal(lambda v: _micros(v) // 1000, optional, 0))
        return cs.int64(optional, name="io.debezium.time.MicroTimestamp", version=1), _temporal(_micros, optional, 0)
    if name == "TIME":
        fsp = length or 0
        if tpm == "connect" or (tpm == "adaptive" and fsp <= 3):
            semantic = "org.apache.kafka.connect.data.Time" if tpm == "connect" else "io.debezium.time.Time"
            if tpm == "connect":  # Kafka Connect's Time is a time of day: Debezium writes null outside one day
                return cs.int32(optional, name=semantic, version=1), _time_of_day_millis
            return cs.int32(optional, name=semantic, version=1), lambda v: _time_micros(v) // 1000
        return cs.int64(optional, name="io.debezium.time.MicroTime", version=1), _time_micros
    if name == "POINT":
        return _point(optional)
    if name in GEOMETRY_TYPES:
        schema = cs.struct([("wkb", cs.bytes_(False)), ("srid", cs.int32(True))], optional,
                           name="io.debezium.data.geometry.Geometry", version=1,
                           doc="Geometry")
        return schema, _geometry
    # Unknown types are carried as text rather than dropped.
    return cs.string(optional), _text


def _integer(name: str, unsigned: bool, optional: bool, options: TypeOptions) -> tuple[cs.Schema, Converter]:
    if name in ("TINYINT", "INT1"):
        return cs.int16(optional), int
    if name in ("SMALLINT", "INT2"):
        return (cs.int32(optional) if unsigned else cs.int16(optional)), int
    if name in ("MEDIUMINT", "INT3", "MIDDLEINT"):
        return cs.int32(optional), int
    if name in ("INT", "INTEGER", "INT4"):
        return (cs.int64(optional) if unsigned else cs.int32(optional)), int
    if not unsigned:
        return cs.int64(optional), int
    if options.bigint_unsigned_mode == "precise":
        return (cs.bytes_(optional, name="org.apache.kafka.connect.data.Decimal", version=1,
                          parameters={"scale": "0", "connect.decimal.precision": "20"}),
                lambda v: _decimal_bytes(decimal.Decimal(int(v)), 0))
    # long: values >= 2**63 wrap to negative like a Java long
    return cs.int64(optional), lambda v: int(v) - (1 << 64) if int(v) >= 1 << 63 else int(v)


def _decimal(length: int | None, scale: int | None, optional: bool, mode: str) -> tuple[cs.Schema, Converter]:
    precision = length if length is not None else 10
    places = scale if scale is not None else 0
    if mode == "double":
        return cs.float64(optional), double_value
    if mode == "string":
        return cs.string(optional), lambda v: format(_to_decimal(v), "f")
    return (cs.bytes_(optional, name="org.apache.kafka.connect.data.Decimal", version=1,
                      parameters={"scale": str(places), "connect.decimal.precision": str(precision)}),
            lambda v: _decimal_bytes(_to_decimal(v), places))


def _point(optional: bool) -> tuple[cs.Schema, Converter]:
    import struct as _struct

    schema = cs.struct([("x", cs.float64(False)), ("y", cs.float64(False)), ("wkb", cs.bytes_(True)),
                        ("srid", cs.int32(True))], optional, name="io.debezium.data.geometry.Point", version=1,
                       doc="Geometry (POINT)")

    def run(v: Any) -> dict[str, Any]:
        raw = bytes(v)
        wkb = raw[4:]
        order = "<" if wkb[0] == 1 else ">"
        x, y = _struct.unpack(order + "dd", wkb[5:21])
        return {"x": x, "y": y, "wkb": _bytes_json(wkb), "srid": _srid(raw)}

    return schema, run


# ---------------------------------------------------------------------------------------------- defaults
_TIME_TEXT = re.compile(r"^\s*(-)?(\d+):(\d{1,2}):(\d{1,2})(?:\.(\d{1,6}))?\s*$")
_BIT_LITERAL = re.compile(r"^[bB]'([01]*)'$")


_ESCAPES = str.maketrans({"\\": "\\\\", "\0": "\\0", "\n": "\\n", "\r": "\\r", "\x1a": "\\Z", "'": "''"})


def _as_written(text: str) -> str:
    """A string default as SHOW CREATE TABLE writes it between its quotes: Debezium takes that text as the
    value without undoing the escapes ('it''s' -> it''s, BINARY(2) 'a' -> 'a\\0' -> a\\0)."""
    return text.translate(_ESCAPES)


def default_value(column: Any, convert: Converter, options: TypeOptions) -> Any:
    """The Connect schema `default` of a column, in JSON form, as Debezium's MySQL connector derives it from
    the DEFAULT clause; None when the schema has none (no default, DEFAULT NULL, or an expression)."""
    if not getattr(column, "has_default", False) or column.default is None:
        return None
    text = str(column.default)
    name, unsigned = base_type(column)
    try:
        if not column.default_is_literal:
            if name == "BIT" and _BIT_LITERAL.match(text):
                return convert(_BIT_LITERAL.match(text).group(1) or "0")  # type: ignore[union-attr]
            if text.lower().startswith(("current_timestamp", "now(", "localtimestamp")):
                # CURRENT_TIMESTAMP: the epoch for DATETIME; for TIMESTAMP only when the column is NOT NULL
                if name == "DATETIME":
                    return 0
                if name == "TIMESTAMP" and not column.nullable:
                    return convert(EPOCH)
            return None
        if name in INT_TYPES and name in ("BIGINT", "INT8") and unsigned and options.bigint_unsigned_mode == "long":
            return min(int(text), (1 << 63) - 1)  # Debezium saturates what a long cannot hold
        if name in STRING_TYPES:
            return convert(_as_written(text))
        if name == "DATE":
            return convert(text if _is_zero_date(text) else dt.date.fromisoformat(text))
        if name in ("DATETIME", "TIMESTAMP"):
            return convert(text if _is_zero_date(text) else dt.datetime.fromisoformat(text))
        if name == "TIME":
            match = _TIME_TEXT.match(text)
            if match is None:
                return None
            sign, h, m, sec, frac = match.groups()
            micros = ((int(h) * 60 + int(m)) * 60 + int(sec)) * 1_000_000 + int((frac or "0").ljust(6, "0"))
            return convert(dt.timedelta(microseconds=-micros if sign else micros))
        if name in BINARY_TYPES:
            return convert(_as_written(text).encode("utf-8"))
        if name in GEOMETRY_TYPES or name in ("POINT", "JSON"):
            return None
        return convert(text)
    except (ValueError, TypeError, ArithmeticError):
        return None  # a default this mapping cannot read: the schema goes without one
