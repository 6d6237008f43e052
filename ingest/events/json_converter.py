"""Serialize keys and values the way Kafka Connect's JsonConverter does.

- schemas.enable=true: {"schema": <schema>, "payload": <payload>}; false: the payload alone.
- A null value (a tombstone) serializes to no bytes at all (None), whatever schemas.enable says.
- Output is compact (Jackson's default: no spaces), UTF-8, keys in insertion order: the builders in this
  package insert struct members in schema order, so the order equals JsonConverter's.
- `bytes` values are written as base64 text, like JsonConverter (and Decimal bytes, which JsonConverter
  writes as base64 with the default decimal.format=BASE64).

- float/double values: Jackson prints them with Java's Float.toString/Double.toString (1.0E10,
  -1.76229696E8, 0.001, 1.0E-4) and non-finite ones as the strings "NaN", "Infinity", "-Infinity".
  orjson cannot print that layout, so connectors pass `java_float(...)`: an orjson.Fragment holding the
  Java text (or the string for a non-finite value).
"""

from __future__ import annotations

import base64
import re
import struct
from typing import Any

import numpy as np
import orjson

from ingest.errors import LakecdcError


def _default(obj: Any) -> Any:
    if isinstance(obj, bytes | bytearray | memoryview):
        return base64.b64encode(bytes(obj)).decode("ascii")
    raise TypeError(f"not JSON serializable: {type(obj).__name__}")


def decimal_bytes(unscaled: int) -> bytes:
    """Kafka Connect Decimal bytes: Java BigInteger.toByteArray(), big-endian two's complement, minimal length
    (-128 is one byte 0x80; Python's bit_length() of a negative number would ask for two)."""
    magnitude = unscaled if unscaled >= 0 else ~unscaled
    return unscaled.to_bytes(magnitude.bit_length() // 8 + 1, "big", signed=True)


def decimal_base64(unscaled: int) -> str:
    """A Connect Decimal value as JsonConverter writes it: base64 of decimal_bytes()."""
    return base64.b64encode(decimal_bytes(unscaled)).decode("ascii")


_F32 = struct.Struct("<f")


def java_number_text(text: str) -> str:
    """A shortest-digits decimal number text (PostgreSQL's float output, Python's repr: '1.5', '1e-05',
    '-1.76229696e+08') in Java's Float/Double.toString layout: plain with at least one fraction digit when
    1e-3 <= |x| < 1e7, else d.dddE<exp> ('1.0E10', '1.0E-4')."""
    sign = ""
    if text[0] in "+-":
        sign, text = ("-" if text[0] == "-" else ""), text[1:]
    mantissa, _, exp_text = text.lower().partition("e")
    exponent = int(exp_text) if exp_text else 0
    whole, _, fraction = mantissa.partition(".")
    digits = (whole + fraction).lstrip("0")
    if not digits:
        return sign + "0.0"
    # value = 0.<digits> * 10^point
    point = len(whole) + exponent - (len(whole + fraction) - len((whole + fraction).lstrip("0")))
    digits = digits.rstrip("0")
    if -2 <= point <= 7:  # 1e-3 <= |x| < 1e7
        if point <= 0:
            return f"{sign}0.{'0' * -point}{digits}"
        if point >= len(digits):
            return f"{sign}{digits}{'0' * (point - len(digits))}.0"
        return f"{sign}{digits[:point]}.{digits[point:]}"
    return f"{sign}{digits[0]}.{digits[1:] or '0'}E{point - 1}"


# JDK 17's FloatingDecimal prints an integral value below 2^63 from its exact long value, dropping this many
# low decimal digits (with rounding) for a value 2^(p2 + significant bits + 1) and above: more digits than
# the shortest form in places (Float.toString(-4.3502684E12f) is "-4.35026841E12").
_INSIGNIFICANT_DIGITS = (0, 0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 5, 5, 5, 6, 6, 6, 6, 7, 7, 7, 8, 8, 8,
                         9, 9, 9, 9, 10, 10, 10, 11, 11, 11, 12, 12, 12, 12, 13, 13, 13, 14, 14, 14, 15, 15, 15,
                         15, 16, 16, 16, 17, 17, 17, 18, 18, 18, 19)
_TWO_63 = 2.0 ** 63


def _java_integral_text(value: float, significant_bits: int) -> str:
    """Float/Double.toString of an integral |value| < 2^63 (JDK 17's long-valued path)."""
    number = int(abs(value))
    bin_exp = number.bit_length() - 1
    p2 = bin_exp - significant_bits - 1
    insignificant = _INSIGNIFICANT_DIGITS[p2] if 1 < p2 < len(_INSIGNIFICANT_DIGITS) else 0
    if insignificant:
        pow10 = 10 ** insignificant
        number, residue = divmod(number, pow10)
        if residue >= pow10 >> 1:
            number += 1
    return java_number_text(f"{'-' if value < 0 else ''}{number}e{insignificant}")


def _java_text(text: str, value: float, significant_bits: int) -> Any:
    if value != value or value in (float("inf"), float("-inf")):
        return "NaN" if value != value else ("Infinity" if value > 0 else "-Infinity")
    if value.is_integer() and abs(value) < _TWO_63 and value != 0:
        return orjson.Fragment(_java_integral_text(value, significant_bits))
    return orjson.Fragment(java_number_text(text))


# Shortest-digits texts that Java prints the same way (0.001 <= |x| < 1e7, with a fraction), and integers
# below 1e7 (Java appends ".0"): the common case, recognised without parsing the number.
PLAIN_FRACTION = re.compile(r"-?(?:[1-9]\d{0,6}\.\d+|0\.(?:[1-9]|0[1-9]|00[1-9])\d*)")  # RE2-safe (Arrow)
PLAIN_INTEGER = re.compile(r"-?(?:[1-9]\d{0,6}|0)")


def java_float(text: str) -> Any:
    """A PostgreSQL real text (shortest float32 digits) as Jackson writes a Connect FLOAT32: an
    orjson.Fragment in Float.toString's layout, or the string "NaN"/"Infinity"/"-Infinity"."""
    if PLAIN_FRACTION.fullmatch(text):
        return orjson.Fragment(text)
    if PLAIN_INTEGER.fullmatch(text):
        return orjson.Fragment(text + ".0")
    value = float(text)
    if value.is_integer() and abs(value) < _TWO_63 and value != 0:
        value = _F32.unpack(_F32.pack(value))[0]
    return _java_text(text, value, 24)


def java_float32(value: Any) -> Any:
    """A number (a float, or server text) as Jackson writes a Connect FLOAT32: Float.toString of the nearest
    4-byte float (0.3, not the double 0.30000001192092896 that the same 4 bytes widen to; -1.7623E8). numpy
    prints the shortest float32 round-trip text, which java_float lays out as Java does."""
    return java_float(str(np.float32(value)))


def java_double_text(text: str) -> Any:
    """A PostgreSQL double precision text (shortest digits) as Jackson writes a Connect FLOAT64."""
    if PLAIN_FRACTION.fullmatch(text):
        return orjson.Fragment(text)
    if PLAIN_INTEGER.fullmatch(text):
        return orjson.Fragment(text + ".0")
    return _java_text(text, float(text), 53)


def java_double(value: float) -> Any:
    """A Python float as Jackson writes a Connect FLOAT64."""
    if 1e-3 <= abs(value) < 1e7:
        # the common case (NaN fails the test): Java's text is the shortest plain digits, which is what
        # orjson writes for the float itself (pinned by test_java_double_fast_path_agrees_with_the_general_path)
        return value
    return _java_text(repr(value), value, 53)


def dumps(obj: Any) -> bytes:
    """Compact JSON bytes, insertion order, bytes as base64."""
    return orjson.dumps(obj, default=_default)


def dumps_str(obj: Any) -> str:
    return orjson.dumps(obj, default=_default).decode("utf-8")


def serialize(schema: dict[str, Any] | None, payload: Any, schemas_enable: bool = True) -> bytes | None:
    """One record part (key or value) as JsonConverter.fromConnectData writes it."""
    if payload is None and schema is None:
        return None
    if payload is None and schema is not None and not schema.get("optional", False):
        # A tombstone has no schema; a null payload under a required schema is a bug in the caller.
        raise LakecdcError(f"null payload for required schema {schema.get('name')!r}")
    if payload is None:
        return None
    if schemas_enable:
        return orjson.dumps({"schema": schema, "payload": payload}, default=_default)
    return orjson.dumps(payload, default=_default)


def deserialize(data: bytes | str | None) -> tuple[dict[str, Any] | None, Any]:
    """JsonConverter.toConnectData, structurally: (schema, payload). Accepts both forms: an object with
    exactly the keys schema and payload is an envelope; anything else is a bare payload."""
    if data is None:
        return None, None
    try:
        obj = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise LakecdcError(f"invalid JSON: {exc}") from None
    if isinstance(obj, dict) and obj.keys() == {"schema", "payload"}:
        return obj["schema"], obj["payload"]
    return None, obj


_KEY_ORDER = ("type", "fields", "items", "keys", "values", "optional", "name", "version", "doc", "parameters",
              "default", "field")
_RANK = {k: i for i, k in enumerate(_KEY_ORDER)}


def jsonconverter_order(schema: Any) -> Any:
    """The same schema with every object's keys in JsonConverter's order (type, fields|items|keys+values,
    optional, name, version, doc, parameters, default, field; anything else after, sorted). Schemas built by
    connect_schema, or parsed from JsonConverter output, are already in this order."""
    if isinstance(schema, list):
        return [jsonconverter_order(x) for x in schema]
    if not isinstance(schema, dict):
        return schema
    keys = sorted(schema, key=lambda k: (_RANK.get(k, len(_RANK)), k))
    out = {}
    for k in keys:
        v = schema[k]
        # parameters and default are data, not schemas: keep them as they are
        out[k] = v if k in ("parameters", "default") else jsonconverter_order(v)
    return out


def canonical_schema_json(schema: dict[str, Any] | None) -> str | None:
    """Compact JSON of the schema in JsonConverter's key order: the exact text JsonConverter would embed,
    and equal for equal schemas whatever key order they arrived in, so it identifies the schema (the bronze
    writer hashes it into S_schemas.schema_id)."""
    if schema is None:
        return None
    return orjson.dumps(jsonconverter_order(schema)).decode("utf-8")
