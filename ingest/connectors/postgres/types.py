"""PostgreSQL type -> Debezium Kafka Connect schema and value, from the type's text output.

pgoutput sends every column as the text output of its type, and the snapshot reads with COPY text, so a
single converter per column serves both phases. The connections set DateStyle=ISO, TimeZone=UTC,
IntervalStyle=postgres and bytea_output=hex (see PostgresProperties.dsn_params), which fixes the text
forms parsed here.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from decimal import Decimal, InvalidOperation
from typing import Any

import orjson

from ingest.connectors.postgres.properties import PostgresProperties
from ingest.events import connect_schema as cs
from ingest.events.json_converter import decimal_base64, java_double, java_double_text, java_float

Converter = Callable[[str], Any]
EPOCH_DATE = date(1970, 1, 1)
EPOCH = datetime(1970, 1, 1)
DAYS_PER_MONTH_AVG = 365.25 / 12.0


class ConversionError(ValueError):
    """A value could not be converted (it goes to the rejects table with its raw text)."""


@dataclass(frozen=True)
class PgType:
    """What the catalog says about a column type (domains resolved to their base type)."""

    oid: int
    name: str                      # pg_type.typname of the (base) type, e.g. int4, numeric, my_enum
    typtype: str = "b"             # b base, e enum, r range, m multirange, d domain (resolved), c composite
    typmod: int = -1
    element: PgType | None = None  # arrays: the element type
    enum_labels: tuple[str, ...] = ()
    domain: str | None = None      # the domain's typname, when the column's type is a domain over this type


@dataclass(frozen=True)
class ColumnConverter:
    name: str
    schema: cs.Schema              # field schema (without "field")
    convert: Converter
    extra: dict[str, Any] = field(default_factory=dict)


# ---------------------------------------------------------------- helpers

def numeric_typmod(typmod: int) -> tuple[int | None, int | None]:
    """(precision, scale) of numeric(p,s); (None, None) without a type modifier."""
    if typmod < 4:
        return None, None
    value = typmod - 4
    scale = ((value & 0x7FF) ^ 1024) - 1024
    return (value >> 16) & 0xFFFF, scale


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def _parse_bytea(text: str) -> bytes:
    if text.startswith("\\x"):
        return bytes.fromhex(text[2:])
    raise ConversionError(f"bytea not in hex format: {text[:20]!r}")


def _split_time(text: str) -> tuple[int, int, int, int]:
    """'HH:MM:SS[.ffffff]' -> hours, minutes, seconds, microseconds."""
    hh, mm, rest = text.split(":")
    if "." in rest:
        ss, frac = rest.split(".")
        micros = int(frac.ljust(6, "0")[:6])
    else:
        ss, micros = rest, 0
    return int(hh), int(mm), int(ss), micros


def time_micros(text: str) -> int:
    h, m, s, us = _split_time(text)
    return ((h * 60 + m) * 60 + s) * 1_000_000 + us


def time_millis(text: str) -> int:
    return time_micros(text) // 1000


def pg_bool(text: str) -> bool:
    return text == "t"


def days_from_civil(year: int, month: int, day: int) -> int:
    """Days since 1970-01-01 in the proleptic Gregorian calendar, for any astronomical year (H. Hinnant)."""
    year -= month <= 2
    era = year // 400  # Python's // floors already (Hinnant's C code adjusts for truncation)
    yoe = year - era * 400
    doy = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


_EPOCH_ORDINAL = EPOCH_DATE.toordinal()


def civil_from_days(days: int) -> tuple[int, int, int]:
    """Days since 1970-01-01 -> (astronomical year, month, day), proleptic Gregorian (H. Hinnant)."""
    z = days + 719468
    era = z // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    day = doy - (153 * mp + 2) // 5 + 1
    month = mp + 3 if mp < 10 else mp - 9
    return yoe + era * 400 + (month <= 2), month, day


def iso_date(days: int) -> str:
    """java.time's ISO date text: 4-digit year, '-' before years before 1 AD (year 0 is 1 BC), '+' after 9999."""
    year, month, day = civil_from_days(days)
    sign = "-" if year < 0 else "+" if year > 9999 else ""
    return f"{sign}{abs(year):04d}-{month:02d}-{day:02d}"


def date_days(text: str) -> int:
    """'YYYY-MM-DD[ BC]' -> days since the epoch (1 BC is astronomical year 0)."""
    if len(text) == 10:  # fast path: years 1000-9999
        return date.fromisoformat(text).toordinal() - _EPOCH_ORDINAL
    if text in ("infinity", "-infinity"):
        raise ConversionError(f"date {text} has no Debezium representation")
    bc = text.endswith(" BC")
    year, month, day = (int(x) for x in (text[:-3] if bc else text).split("-"))
    return days_from_civil(1 - year if bc else year, month, day)


_MICROSECOND = timedelta(microseconds=1)


def timestamp_micros(text: str) -> int:
    """'YYYY-MM-DD HH:MM:SS[.ffffff]' (no zone) read as UTC -> microseconds since the epoch."""
    if 19 <= len(text) <= 26 and text[4] == "-" and text[10] == " " and not text.endswith(" BC"):  # years 0-9999 AD
        return (datetime.fromisoformat(text) - EPOCH) // _MICROSECOND
    if text in ("infinity", "-infinity"):
        raise ConversionError(f"timestamp {text} has no Debezium representation")
    bc = text.endswith(" BC")
    if bc:
        text = text[:-3]
    day_part, time_part = text.split(" ")
    days = date_days(day_part + (" BC" if bc else ""))
    return days * 86_400_000_000 + time_micros(time_part)


def timestamp_millis(text: str) -> int:
    return timestamp_micros(text) // 1000


def _offset_seconds(text: str) -> tuple[str, int]:
    """Split a trailing [+-]HH[:MM[:SS]] offset off a time text."""
    match = re.search(r"([+-])(\d{2})(?::(\d{2}))?(?::(\d{2}))?$", text)
    if not match:
        raise ConversionError(f"no zone offset in {text!r}")
    sign = -1 if match.group(1) == "-" else 1
    seconds = int(match.group(2)) * 3600 + int(match.group(3) or 0) * 60 + int(match.group(4) or 0)
    return text[:match.start()], sign * seconds


def _fraction(micros: int) -> str:
    """Java ISO_LOCAL_TIME fraction: nothing for 0, else the digits without trailing zeros."""
    if micros == 0:
        return ""
    return "." + f"{micros:06d}".rstrip("0")


_SIX_ZEROS = "000000"


def zoned_timestamp(text: str) -> str:
    """timestamptz text (session TimeZone=UTC) -> io.debezium.time.ZonedTimestamp ISO-8601 string in UTC,
    always with 6 fraction digits like Debezium 3.x ('2018-06-20T15:13:16.945000Z')."""
    if text.endswith("+00") and len(text) >= 22 and text[4] == "-" and text[10] == " ":
        # fast path: already UTC; PostgreSQL drops trailing fraction zeros, Debezium writes all six
        if len(text) == 22:
            return f"{text[:10]}T{text[11:19]}.000000Z"
        return f"{text[:10]}T{text[11:20]}{text[20:-3]}{_SIX_ZEROS[:29 - len(text)]}Z"
    if text in ("infinity", "-infinity"):
        raise ConversionError(f"timestamptz {text} has no Debezium representation")
    bc = text.endswith(" BC")
    if bc:
        text = text[:-3]
    local, offset = _offset_seconds(text)
    micros = timestamp_micros(local + (" BC" if bc else "")) - offset * 1_000_000
    days, rem = divmod(micros, 86_400_000_000)
    secs, us = divmod(rem, 1_000_000)
    return f"{iso_date(days)}T{secs // 3600:02d}:{secs // 60 % 60:02d}:{secs % 60:02d}.{us:06d}Z"


def zoned_time(text: str) -> str:
    """timetz text -> io.debezium.time.ZonedTime 'HH:MM:SS[.f]Z' in UTC."""
    local, offset = _offset_seconds(text)
    micros = (time_micros(local) - offset * 1_000_000) % 86_400_000_000
    secs, us = divmod(micros, 1_000_000)
    return f"{secs // 3600:02d}:{secs // 60 % 60:02d}:{secs % 60:02d}{_fraction(us)}Z"


_INTERVAL_UNIT = re.compile(r"([+-]?\d+) (year|mon|day)s?")
_INTERVAL_TIME = re.compile(r"([+-]?)(\d+):(\d{2}):(\d{2}(?:\.\d+)?)")


def parse_interval(text: str) -> tuple[int, int, int, int, int, Decimal]:
    """IntervalStyle=postgres text -> years, months, days, hours, minutes, seconds (signed, like PGInterval)."""
    years = months = days = hours = minutes = 0
    seconds = Decimal(0)
    for amount, unit in _INTERVAL_UNIT.findall(text):
        if unit == "year":
            years = int(amount)
        elif unit == "mon":
            months = int(amount)
        else:
            days = int(amount)
    match = _INTERVAL_TIME.search(text)
    if match:
        sign = -1 if match.group(1) == "-" else 1
        hours = sign * int(match.group(2))
        minutes = sign * int(match.group(3))
        seconds = sign * Decimal(match.group(4))
    elif not _INTERVAL_UNIT.search(text):
        raise ConversionError(f"not an interval: {text!r}")
    return years, months, days, hours, minutes, seconds


def interval_micros(text: str) -> int:
    """io.debezium.time.MicroDuration: Debezium's double arithmetic, month = 365.25/12 days."""
    years, months, days, hours, minutes, seconds = parse_interval(text)
    number_of_days = (years * 12 + months) * DAYS_PER_MONTH_AVG + days
    number_of_seconds = ((number_of_days * 24 + hours) * 60 + minutes) * 60 + float(seconds)
    return int(number_of_seconds * 1e6)


def interval_iso(text: str) -> str:
    """io.debezium.time.Interval: P<y>Y<m>M<d>DT<h>H<m>M<s>S."""
    years, months, days, hours, minutes, seconds = parse_interval(text)
    secs = format(seconds.normalize(), "f") if seconds else "0"
    return f"P{years}Y{months}M{days}DT{hours}H{minutes}M{secs}S"


def _read_quoted(text: str, i: int) -> tuple[str, int]:
    """The double-quoted item starting at text[i] ('"' there), backslash escapes removed, and the index after
    its closing quote (hstore and array literals quote alike)."""
    i += 1
    buf = []
    while text[i] != '"':
        if text[i] == "\\":
            i += 1
        buf.append(text[i])
        i += 1
    return "".join(buf), i + 1


def parse_hstore(text: str) -> dict[str, str | None]:
    """'"a"=>"1", "b"=>NULL' -> {'a': '1', 'b': None}."""
    out: dict[str, str | None] = {}
    pos, n = 0, len(text)

    def quoted(i: int) -> tuple[str, int]:
        if text[i] != '"':
            raise ConversionError(f"hstore: expected a quote at {i}")
        return _read_quoted(text, i)

    while pos < n:
        while pos < n and text[pos] in " ,":
            pos += 1
        if pos >= n:
            break
        key, pos = quoted(pos)
        if text[pos:pos + 2] != "=>":
            raise ConversionError("hstore: expected =>")
        pos += 2
        if text.startswith("NULL", pos):
            out[key] = None
            pos += 4
        else:
            out[key], pos = quoted(pos)
    return out


def parse_array(text: str) -> list[str | None]:
    """One-dimensional array literal '{a,"b c",NULL}' -> element texts (None for NULL)."""
    if text.startswith("["):  # explicit bounds '[0:1]={...}'
        text = text[text.index("=") + 1:]
    if not (text.startswith("{") and text.endswith("}")):
        raise ConversionError(f"not an array literal: {text[:40]!r}")
    body = text[1:-1]
    if not body:
        return []
    if body.startswith("{"):
        raise ConversionError("multi-dimensional arrays are not supported")
    out: list[str | None] = []
    i, n = 0, len(body)
    while i < n:
        if body[i] == '"':
            item, i = _read_quoted(body, i)
            out.append(item)
        else:
            j = body.find(",", i)
            j = n if j < 0 else j
            item = body[i:j]
            out.append(None if item == "NULL" else item)
            i = j
        if i < n and body[i] == ",":
            i += 1
    return out


def _money(text: str) -> Decimal:
    negative = text.startswith("-") or text.startswith("(")
    digits = re.sub(r"[^0-9.]", "", text)
    value = Decimal(digits)
    return -value if negative else value


def _bits_bytes(text: str) -> bytes:
    """io.debezium.data.Bits: the bit string read as a number, in the fewest little-endian bytes (Java's
    BitSet.toByteArray: no bit set, e.g. B'00000000' or an empty varbit, gives no bytes at all)."""
    number = int(text, 2) if text else 0
    return number.to_bytes((number.bit_length() + 7) // 8, "little")


def _point_wkb(x: float, y: float) -> bytes:
    import struct

    return struct.pack("<BIdd", 1, 1, x, y)


def postgis_value(hex_text: str) -> dict[str, Any]:
    """PostGIS text output (hex EWKB) -> {"wkb": the EWKB bytes as they are (SRID flag and SRID kept, like
    Debezium 3.6.3), "srid": the EWKB's SRID or None}."""
    import struct

    raw = bytes.fromhex(hex_text)
    fmt = "<I" if raw[0] == 1 else ">I"
    srid = struct.unpack_from(fmt, raw, 5)[0] if struct.unpack_from(fmt, raw, 1)[0] & 0x20000000 else None
    return {"wkb": _b64(raw), "srid": srid}


# ---------------------------------------------------------------- the mapping

_STRING_TYPES = {"bpchar", "varchar", "text", "name", "char", "citext", "inet", "cidr", "macaddr", "macaddr8",
                 "int4range", "int8range", "numrange", "tsrange", "tstzrange", "daterange",
                 "int4multirange", "int8multirange", "nummultirange", "tsmultirange", "tstzmultirange",
                 "datemultirange", "line", "lseg", "box", "path", "polygon", "circle"}


def element_converter(t: PgType, props: PostgresProperties, optional: bool) -> tuple[cs.Schema, Converter] | None:
    """(schema, converter) for one type, or None for an unknown type (omitted, like Debezium)."""
    name, mod, mode = t.name, t.typmod, props.time_precision_mode
    if t.element is not None:
        el = t.element
        if el.name in ("bit", "varbit") and not (el.name == "bit" and mod == 1):
            # Debezium 3.6.3 (measured): a bit string array gets the element's Bits schema, and always null
            length = mod if mod > 0 else 2_147_483_647
            return (cs.bytes_(optional, name="io.debezium.data.Bits", version=1, parameters={"length": str(length)}),
                    _always_null)
        inner = element_converter(el, props, el.typtype != "e")  # enum items are required (measured)
        if inner is None:
            return None
        inner_schema, inner_conv = inner
        if el.name == "numeric" and numeric_typmod(mod)[1] is None and props.decimal_handling_mode == "precise":
            return cs.array(inner_schema, optional), _always_null  # Debezium writes these arrays as null

        def conv_array(text: str) -> list[Any]:
            return [None if v is None else inner_conv(v) for v in parse_array(text)]

        return cs.array(inner_schema, optional), conv_array
    if t.typtype == "e":
        return (cs.string(optional, name="io.debezium.data.Enum", version=1,
                          parameters={"allowed": ",".join(t.enum_labels)}), str)
    if t.typtype in ("r", "m") or name in _STRING_TYPES:
        return cs.string(optional), str
    if name == "bool":
        return cs.boolean(optional), pg_bool
    if name == "bit" and mod == 1:
        return cs.boolean(optional), lambda s: s == "1"
    if name in ("bit", "varbit"):
        length = mod if mod > 0 else 2_147_483_647
        return (cs.bytes_(optional, name="io.debezium.data.Bits", version=1, parameters={"length": str(length)}),
                lambda s: _b64(_bits_bytes(s)))
    if name == "int2":
        return cs.int16(optional), int
    if name == "int4":
        return cs.int32(optional), int
    if name in ("int8", "oid"):
        return cs.int64(optional), int
    if name == "float4":
        return cs.float32(optional), java_float
    if name == "float8":
        return cs.float64(optional), java_double_text
    if name == "numeric":
        return _numeric(props, optional, mod)
    if name == "money":
        return _money_conv(props, optional)
    if name == "date":
        if mode == "connect":
            return cs.int32(optional, name="org.apache.kafka.connect.data.Date", version=1), date_days
        return cs.int32(optional, name="io.debezium.time.Date", version=1), date_days
    if name == "time":
        precision = 6 if mod < 0 else mod
        if mode == "connect":
            return cs.int32(optional, name="org.apache.kafka.connect.data.Time", version=1), time_millis
        if mode == "adaptive" and precision <= 3:
            return cs.int32(optional, name="io.debezium.time.Time", version=1), time_millis
        return cs.int64(optional, name="io.debezium.time.MicroTime", version=1), time_micros
    if name == "timestamp":
        precision = 6 if mod < 0 else mod
        if mode == "connect":
            return cs.int64(optional, name="org.apache.kafka.connect.data.Timestamp", version=1), timestamp_millis
        if precision <= 3:
            return cs.int64(optional, name="io.debezium.time.Timestamp", version=1), timestamp_millis
        return cs.int64(optional, name="io.debezium.time.MicroTimestamp", version=1), timestamp_micros
    if name == "timestamptz":
        return cs.string(optional, name="io.debezium.time.ZonedTimestamp", version=1), zoned_timestamp
    if name == "timetz":
        return cs.string(optional, name="io.debezium.time.ZonedTime", version=1), zoned_time
    if name == "interval":
        if props.interval_handling_mode == "string":
            return cs.string(optional, name="io.debezium.time.Interval", version=1), interval_iso
        return cs.int64(optional, name="io.debezium.time.MicroDuration", version=1), interval_micros
    if name == "bytea":
        return _binary(props, optional)
    if name in ("json", "jsonb"):
        return cs.string(optional, name="io.debezium.data.Json", version=1), str
    if name == "xml":
        return cs.string(optional, name="io.debezium.data.Xml", version=1), str
    if name == "uuid":
        return cs.string(optional, name="io.debezium.data.Uuid", version=1), str
    if name == "ltree":
        return cs.string(optional, name="io.debezium.data.Ltree", version=1), str
    if name == "point":
        return _point(optional)
    if name == "hstore":
        if props.hstore_handling_mode == "map":
            return cs.map_(cs.string(), cs.string(True), optional), parse_hstore
        return (cs.string(optional, name="io.debezium.data.Json", version=1),
                lambda s: orjson.dumps(parse_hstore(s)).decode())
    if name in ("geometry", "geography"):
        label = name.capitalize()
        schema = cs.struct([("wkb", cs.bytes_()), ("srid", cs.int32(True))], optional,
                           name=f"io.debezium.data.geometry.{label}", version=1, doc=label)
        return schema, postgis_value
    if props.include_unknown_datatypes:
        return cs.bytes_(optional), lambda s: _b64(s.encode("utf-8"))
    return None


def _always_null(text: str) -> None:
    """Types Debezium 3.6.3 declares but always writes as null (bit string arrays, unconstrained numeric
    arrays in precise mode: measured)."""
    return None


def _numeric(props: PostgresProperties, optional: bool, mod: int) -> tuple[cs.Schema, Converter]:
    mode = props.decimal_handling_mode
    if mode == "double":
        return cs.float64(optional), numeric_double
    if mode == "string":
        return cs.string(optional), numeric_string
    precision, scale = numeric_typmod(mod)
    if scale is not None:
        return (cs.bytes_(optional, name="org.apache.kafka.connect.data.Decimal", version=1,
                          parameters={"scale": str(scale), "connect.decimal.precision": str(precision)}),
                FixedDecimal(scale))

    def conv_variable(text: str) -> dict[str, Any] | None:
        if text in ("NaN", "Infinity", "-Infinity"):
            return None
        # Debezium strips trailing fraction zeros (1.500 -> scale 1) but never goes below scale 0 (100)
        whole, _, fraction = text.partition(".")
        fraction = fraction.rstrip("0")
        try:
            unscaled = int(whole + fraction)
        except ValueError:
            raise ConversionError(f"not a numeric: {text!r}") from None
        return {"scale": len(fraction), "value": decimal_base64(unscaled)}

    schema = cs.struct([("scale", cs.int32()), ("value", cs.bytes_())], optional,
                       name="io.debezium.data.VariableScaleDecimal", version=1, doc="Variable scaled decimal")
    return schema, conv_variable


@dataclass(frozen=True)
class FixedDecimal:
    """numeric(p,s) in precise mode -> Connect Decimal bytes (base64). A class, not a closure, so the
    snapshot's columnar path can recognise it and read the scale."""

    scale: int

    def __call__(self, text: str) -> str | None:
        if text in ("NaN", "Infinity", "-Infinity"):
            return None  # not representable as a Connect Decimal (Debezium: null)
        return decimal_base64(unscaled(text, self.scale))


def unscaled(text: str, scale: int) -> int:
    """The exact unscaled integer of a numeric text at `scale` (no decimal context: numeric(38,10) keeps all
    38 digits; the default 28-digit context would round them)."""
    whole, _, fraction = text.partition(".")
    if len(fraction) == scale and "e" not in text and "E" not in text:  # numeric(p,s) text: exactly s digits
        try:
            return int(whole + fraction)
        except ValueError:
            pass
    try:
        value = Decimal(text)
    except InvalidOperation:
        raise ConversionError(f"not a numeric: {text!r}") from None
    sign, digits, exponent = value.as_tuple()
    if not isinstance(exponent, int):
        raise ConversionError(f"not a finite numeric: {text!r}")
    number = int("".join(map(str, digits)) or "0")
    shift = exponent + scale
    number = number * 10 ** shift if shift >= 0 else _round_half_up(number, 10 ** -shift)
    return -number if sign else number


def _round_half_up(number: int, divisor: int) -> int:
    quotient, remainder = divmod(number, divisor)
    return quotient + (2 * remainder >= divisor)


# decimal.handling.mode=string: Debezium writes the special values by their Java enum names (measured)
NUMERIC_SPECIAL_NAMES = {"NaN": "NAN", "Infinity": "POSITIVE_INFINITY", "-Infinity": "NEGATIVE_INFINITY"}


def numeric_string(text: str) -> str:
    """decimal.handling.mode=string: the text as it is, NaN/Infinity/-Infinity as NAN, POSITIVE_INFINITY,
    NEGATIVE_INFINITY."""
    return NUMERIC_SPECIAL_NAMES.get(text, text)


def numeric_double(text: str) -> Any:
    """decimal.handling.mode=double: the value as a Java double (non-finite values as their strings)."""
    if text in ("NaN", "Infinity", "-Infinity"):
        return text
    return java_double(float(text))


def _money_conv(props: PostgresProperties, optional: bool) -> tuple[cs.Schema, Converter]:
    mode, digits = props.decimal_handling_mode, props.money_fraction_digits
    if mode == "double":
        return cs.float64(optional), lambda s: java_double(float(_money(s)))
    if mode == "string":
        return cs.string(optional), lambda s: format(_money(s), "f")
    return (cs.bytes_(optional, name="org.apache.kafka.connect.data.Decimal", version=1,
                      parameters={"scale": str(digits)}),
            lambda s: decimal_base64(unscaled(str(_money(s)), digits)))


def binary_encoding(mode: str, optional: bool) -> tuple[cs.Schema, Callable[[bytes], str]]:
    """binary.handling.mode: the schema of binary data and its JSON value. `bytes` is a Connect bytes field
    (base64 in JSON, as JsonConverter writes it); the other modes are strings Debezium encodes itself.
    Used for bytea columns and for the content of logical decoding messages."""
    if mode == "base64":
        return cs.string(optional), _b64
    if mode == "base64-url-safe":
        return cs.string(optional), lambda data: base64.urlsafe_b64encode(data).decode("ascii")
    if mode == "hex":
        return cs.string(optional), lambda data: data.hex()
    return cs.bytes_(optional), _b64


def _binary(props: PostgresProperties, optional: bool) -> tuple[cs.Schema, Converter]:
    schema, encode = binary_encoding(props.binary_handling_mode, optional)
    return schema, lambda s: encode(_parse_bytea(s))


def _point(optional: bool) -> tuple[cs.Schema, Converter]:
    schema = cs.struct([("x", cs.float64()), ("y", cs.float64()), ("wkb", cs.bytes_(True)), ("srid", cs.int32(True))],
                       optional, name="io.debezium.data.geometry.Point", version=1, doc="Geometry (POINT)")

    def conv(text: str) -> dict[str, Any]:
        x_text, y_text = text.strip("()").split(",")
        x, y = float(x_text), float(y_text)
        return {"x": java_double(x), "y": java_double(y), "wkb": _b64(_point_wkb(x, y)), "srid": None}

    return schema, conv


def column_converter(column: str, t: PgType, props: PostgresProperties, optional: bool,
                     default: str | None = None) -> ColumnConverter | None:
    """`default`: the column's DEFAULT expression (pg_get_expr), put into the field schema as Debezium does."""
    found = element_converter(t, props, optional)
    if found is None:
        return None
    schema, convert = found
    value = default_value(default, t, schema, convert)
    if value is not None:
        schema = {k: v for k, v in schema.items()}
        schema["default"] = value
    return ColumnConverter(column, schema, convert)


_CAST = re.compile(r"::[\w\s\"\[\]().,]+$")
_NOW = {"now()", "current_timestamp", "localtimestamp", "current_date", "current_time", "localtime",
        "statement_timestamp()", "transaction_timestamp()", "clock_timestamp()"}
_NO_DEFAULT = {"bytea", "money", "timetz"}
_EPOCH_TEXT = {"timestamptz": "1970-01-01 00:00:00+00", "timestamp": "1970-01-01 00:00:00", "date": "1970-01-01",
               "time": "00:00:00", "timetz": "00:00:00+00"}


def default_literal(expression: str | None, t: PgType) -> str | None:
    """A DEFAULT expression as the text output of its value, as far as Debezium 3.6.3 evaluates it: literals
    (casts stripped), true/false; now() and its kin give the epoch for temporal types; nextval() gives 0.
    None: no default in the schema (NULL, other expressions)."""
    if expression is None:
        return None
    text = expression.strip()
    while text.startswith("(") and text.endswith(")"):
        text = text[1:-1].strip()
    if text.lower().startswith("nextval("):
        return "0" if t.name in ("int2", "int4", "int8", "numeric") else None
    if text.lower() in _NOW:
        return _EPOCH_TEXT.get(t.name)
    if t.name == "uuid" and re.fullmatch(r"[\w.]+\(\)", text):
        return "00000000-0000-0000-0000-000000000000"  # gen_random_uuid() and kin (measured)
    while True:
        stripped = _CAST.sub("", text)
        if stripped == text:
            break
        text = stripped.strip()
        while text.startswith("(") and text.endswith(")"):
            text = text[1:-1].strip()
    if text.startswith("'") and text.endswith("'") and len(text) >= 2:
        return text[1:-1].replace("''", "'")
    if text in ("true", "false"):
        return "t" if text == "true" else "f"
    if re.fullmatch(r"-?\d+(\.\d+)?([eE][-+]?\d+)?", text):
        return text
    return None


def _at_least_scale(literal: str, scale: int | None) -> str:
    """A numeric(p,s) default at the column's scale (DEFAULT 1.5 on numeric(6,2) is 1.50), as Debezium scales a
    decimal up to the column's scale (never down); the values themselves come from the server at that scale."""
    whole, _, fraction = literal.partition(".")
    if scale is None or scale <= len(fraction) or not re.fullmatch(r"-?\d+(\.\d*)?", literal):
        return literal
    return f"{whole}.{fraction.ljust(scale, '0')}"


def default_value(expression: str | None, t: PgType, schema: cs.Schema, convert: Converter) -> Any:
    """The schema `default` of a column, or None (no default attribute)."""
    if t.element is not None or t.name in _NO_DEFAULT or schema.get("name") == "io.debezium.data.VariableScaleDecimal":
        return None  # Debezium 3.6.3 gives these no default (measured)
    literal = default_literal(expression, t)
    if literal is None:
        return None
    if schema.get("type") == "bytes" and t.name in ("bit", "varbit"):
        literal = literal.lstrip("Bb").strip("'")
    if t.name == "numeric" and schema.get("type") == "string":
        literal = _at_least_scale(literal, numeric_typmod(t.typmod)[1])
    try:
        if schema.get("type") in ("float", "double"):  # Java's layout, like the values (1.0E10)
            return java_float(literal) if schema["type"] == "float" else java_double_text(literal)
        if t.name == "bool" or (t.name == "bit" and schema.get("type") == "boolean"):
            return literal in ("t", "1", "true")
        return convert(literal)
    except (ConversionError, ValueError, ArithmeticError):
        return None
