"""Serialize keys and values the way Kafka Connect's JsonConverter does.

- schemas.enable=true: {"schema": <schema>, "payload": <payload>}; false: the payload alone.
- A null value (a tombstone) serializes to no bytes at all (None), whatever schemas.enable says.
- Output is compact (Jackson's default: no spaces), UTF-8, keys in insertion order: the builders in this
  package insert struct members in schema order, so the order equals JsonConverter's.
- `bytes` values are written as base64 text, like JsonConverter (and Decimal bytes, which JsonConverter
  writes as base64 with the default decimal.format=BASE64).

Known difference, not relevant to integer/string payloads: Jackson prints doubles with Java's
Double.toString (1.0E10), orjson with the shortest round-trip form (10000000000.0). Both parse to the same
number.
"""

from __future__ import annotations

import base64
from typing import Any

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
