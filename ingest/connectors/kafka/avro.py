"""Records that Confluent's AvroConverter wrote (the Confluent wire format: a zero byte, the schema's registry
id as 4 big-endian bytes, the Avro binary datum), turned into the texts Kafka Connect's JsonConverter writes
for the same record: the Connect schema as JSON and the payload as JSON. The `debezium-json` decoder then lands
them exactly as records of JSON producers (`Decoder.decode_payloads`), so bronze and silver do not depend on
the producers' converter.

The Avro schema holds the Connect schema in AvroConverter's properties (`connect.name`, `connect.version`,
`connect.parameters`, `connect.default`, `connect.type` for int8/int16, optional fields as unions with null);
this module reads it back. Payload values as JsonConverter writes them: bytes and Decimal bytes as base64
(the datum is read without Avro logical types, so a Decimal's bytes are the unscaled BigInteger bytes
AvroConverter wrote), FLOAT32/FLOAT64 in Java's Float/Double.toString layout (ingest/events/json_converter.py).
Schemas are fetched once per id from a Confluent-compatible Schema Registry (`GET /schemas/ids/<id>`).
"""

from __future__ import annotations

import base64
import io
import json
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import Any

import orjson

from ingest.connectors.debezium_json.records import RecordError
from ingest.errors import LakecdcError
from ingest.events.json_converter import java_double, java_float32

MAGIC = 0
HEADER = 5                       # magic byte + schema id
REGISTRY_TIMEOUT_S = 30.0
# Avro type -> the Connect type as JsonConverter spells it in a schema (FLOAT32 is "float", FLOAT64 "double")
_PRIMITIVES = {"int": "int32", "long": "int64", "float": "float", "double": "double", "boolean": "boolean",
               "string": "string", "bytes": "bytes"}
_CONNECT_INTS = ("int8", "int16")

Convert = Callable[[Any], Any] | None   # a datum -> its JSON form; None: the datum is its JSON form already


class UnsupportedSchema(Exception):
    """An Avro schema AvroConverter does not write for a Connect schema (lakecdc cannot name its Connect form)."""


class SchemaRegistry:
    """Schemas by id from a Confluent-compatible Schema Registry, each asked once."""

    def __init__(self, url: str, user_info: str | None = None) -> None:
        self.url = url.rstrip("/")
        self._headers = {"Accept": "application/vnd.schemaregistry.v1+json"}
        if user_info:
            self._headers["Authorization"] = "Basic " + base64.b64encode(user_info.encode()).decode()

    def schema(self, schema_id: int) -> str | None:
        """The schema text of an id; None when the registry does not know the id. Raises LakecdcError when the
        registry cannot be asked (the records wait: nothing is rejected for a registry that is down)."""
        request = urllib.request.Request(f"{self.url}/schemas/ids/{schema_id}", headers=self._headers)
        try:
            with urllib.request.urlopen(request, timeout=REGISTRY_TIMEOUT_S) as response:  # noqa: S310 (config URL)
                return str(json.loads(response.read())["schema"])
        except urllib.error.HTTPError as exc:
            if exc.code == 404:
                return None
            raise LakecdcError(f"schema registry {self.url}: schema id {schema_id}: HTTP {exc.code} "
                               f"{exc.reason}") from None
        except (urllib.error.URLError, OSError, ValueError, KeyError) as exc:
            raise LakecdcError(f"schema registry {self.url} did not answer: {exc}") from None


class AvroDecoder:
    """Confluent Avro record parts -> (Connect schema JSON, payload JSON); the schema texts of one id are the
    same str objects every time (the bronze decoder caches by them)."""

    def __init__(self, registry: SchemaRegistry) -> None:
        self.registry = registry
        self._known: dict[int, tuple[Any, str, Convert]] = {}   # id -> (fastavro reader schema, JSON text, convert)

    def decode(self, data: bytes, what: str) -> tuple[str, str | None]:
        """(schema JSON, payload JSON or None for a null datum) of one key or value. Raises RecordError."""
        from fastavro import schemaless_reader

        if len(data) < HEADER or data[0] != MAGIC:
            raise RecordError("decode", f"the record's {what} is not Confluent Avro (it must start with a zero byte "
                                        "and a 4-byte schema id)")
        schema_id = int.from_bytes(data[1:HEADER], "big")
        known = self._known.get(schema_id)
        if known is None:
            known = self._known[schema_id] = self._load(schema_id, what)
        reader, schema_text, convert = known
        body = io.BytesIO(data)
        body.seek(HEADER)
        try:
            datum = schemaless_reader(body, reader, None)
        except Exception as exc:  # noqa: BLE001 (fastavro raises EOFError, ValueError, IndexError, ... on bad bytes)
            raise RecordError("decode", f"the record's {what} does not decode with schema id {schema_id}: "
                                        f"{type(exc).__name__}: {exc}") from None
        left = len(data) - body.tell()
        if left:
            raise RecordError("decode", f"the record's {what} disagrees with schema id {schema_id}: {left} bytes "
                                        "left after the datum")
        if datum is None:
            return schema_text, None
        return schema_text, orjson.dumps(convert(datum) if convert else datum).decode()

    def _load(self, schema_id: int, what: str) -> tuple[Any, str, Convert]:
        from fastavro import parse_schema

        text = self.registry.schema(schema_id)
        if text is None:
            raise RecordError("decode", f"the record's {what} names schema id {schema_id}, which the schema registry "
                                        f"{self.registry.url} does not know")
        try:
            avro = json.loads(text)
            connect, convert = connect_schema(avro)
            reader = parse_schema(_without_logical_types(avro))
        except (UnsupportedSchema, ValueError, TypeError, KeyError) as exc:
            raise RecordError("decode", f"the record's {what}: schema id {schema_id} is not a schema lakecdc can "
                                        f"read: {exc}") from None
        return reader, orjson.dumps(connect).decode(), convert


def _without_logical_types(avro: Any) -> Any:
    """The schema with every `logicalType` removed: the datum then reads as AvroConverter wrote it (a Decimal as
    its unscaled bytes, a Date as its int), which is what JsonConverter prints."""
    if isinstance(avro, dict):
        return {k: _without_logical_types(v) for k, v in avro.items() if k != "logicalType"}
    if isinstance(avro, list):
        return [_without_logical_types(v) for v in avro]
    return avro


# -- Avro schema -> Connect schema (JsonConverter's JSON form) ------------------------------------------------------
def connect_schema(avro: Any) -> tuple[dict[str, Any], Convert]:
    """The Connect schema (as JsonConverter.asJsonSchema writes it) of an Avro schema AvroConverter wrote, and
    the conversion of its datums to JsonConverter's payload JSON."""
    return _Reader().read(avro, None, optional=False)


class _Reader:
    def __init__(self) -> None:
        self.named: dict[str, Any] = {}   # full name -> the Avro schema defined under it

    def read(self, avro: Any, namespace: str | None, optional: bool) -> tuple[dict[str, Any], Convert]:
        if isinstance(avro, list):
            return self._union(avro, namespace)
        if isinstance(avro, str):
            if avro in _PRIMITIVES:
                return self._primitive({"type": avro}, optional)
            named = self.named.get(avro if "." in avro or namespace is None else f"{namespace}.{avro}")
            if named is None:
                named = self.named.get(avro)
            if named is None:
                raise UnsupportedSchema(f"unknown type name {avro!r}")
            return self.read(named, namespace, optional)
        if not isinstance(avro, dict):
            raise UnsupportedSchema(f"not an Avro schema: {str(avro)[:80]}")
        kind = avro.get("type")
        if kind == "record":
            return self._record(avro, namespace, optional)
        if kind == "array":
            items, convert = self.read(avro["items"], namespace, optional=False)
            schema = {"type": "array", "items": items, "optional": optional}
            _connect_properties(schema, avro, convert)
            return schema, (None if convert is None else lambda values: [convert(v) for v in values])
        if kind == "map":
            values, convert = self.read(avro["values"], namespace, optional=False)
            schema = {"type": "map", "keys": {"type": "string", "optional": False}, "values": values,
                      "optional": optional}
            _connect_properties(schema, avro, convert)
            return schema, (None if convert is None else lambda entries: {k: convert(v) for k, v in entries.items()})
        if kind in _PRIMITIVES:
            return self._primitive(avro, optional)
        if isinstance(kind, dict | list) or (isinstance(kind, str) and kind not in ("enum", "fixed", "null")):
            return self.read(kind, namespace, optional)   # {"type": {...}} or {"type": "Name"}
        raise UnsupportedSchema(f"Avro type {kind!r} (AvroConverter does not write it for Debezium's records)")

    def _union(self, branches: list[Any], namespace: str | None) -> tuple[dict[str, Any], Convert]:
        others = [b for b in branches if b != "null"]
        if len(others) != 1 or len(branches) != 2:
            raise UnsupportedSchema(f"a union of {len(branches)} types (AvroConverter writes an optional field as a "
                                    "union of null and one type)")
        schema, convert = self.read(others[0], namespace, optional=True)
        if convert is None:
            return schema, None
        return schema, lambda value: None if value is None else convert(value)

    def _record(self, avro: dict[str, Any], namespace: str | None, optional: bool) -> tuple[dict[str, Any], Convert]:
        name = avro["name"]
        if "namespace" in avro:
            namespace = avro["namespace"] or None
        elif "." in name:
            namespace = name.rsplit(".", 1)[0]
        full = name if "." in name or namespace is None else f"{namespace}.{name}"
        self.named[full] = avro
        fields, converts = [], []
        for field in avro["fields"]:
            schema, convert = self.read(field["type"], namespace, optional=False)
            fields.append({**schema, "field": field["name"]})
            if convert is not None:
                converts.append((field["name"], convert))
        schema = {"type": "struct", "fields": fields, "optional": optional}
        _connect_properties(schema, avro, None)
        if not converts:
            return schema, None
        names = [f["name"] for f in avro["fields"]]
        conversions = dict(converts)

        def convert_record(record: dict[str, Any]) -> dict[str, Any]:
            out = {}
            for field_name in names:
                value = record[field_name]
                convert = conversions.get(field_name)
                out[field_name] = value if convert is None or value is None else convert(value)
            return out

        return schema, convert_record

    def _primitive(self, avro: dict[str, Any], optional: bool) -> tuple[dict[str, Any], Convert]:
        kind = _PRIMITIVES[avro["type"]]
        if kind == "int32" and avro.get("connect.type") in _CONNECT_INTS:
            kind = avro["connect.type"]
        schema = {"type": kind, "optional": optional}
        convert = _CONVERT.get(kind)
        _connect_properties(schema, avro, convert)
        return schema, convert


def _connect_properties(schema: dict[str, Any], avro: dict[str, Any], convert: Convert) -> None:
    """name, version, doc, parameters and default from AvroConverter's `connect.*` properties."""
    if "connect.name" in avro:
        schema["name"] = avro["connect.name"]
    elif avro.get("type") == "record" and avro.get("name") != "ConnectDefault":
        namespace = avro.get("namespace")
        schema["name"] = f"{namespace}.{avro['name']}" if namespace and "." not in avro["name"] else avro["name"]
    if "connect.version" in avro:
        schema["version"] = avro["connect.version"]
    if "connect.doc" in avro:
        schema["doc"] = avro["connect.doc"]
    if "connect.parameters" in avro:
        schema["parameters"] = avro["connect.parameters"]
    if "connect.default" in avro:
        default = avro["connect.default"]
        if schema["type"] == "bytes" and isinstance(default, str):   # Avro's JSON form of bytes: one char per byte
            default = default.encode("latin-1")
        schema["default"] = default if convert is None or default is None else convert(default)


def _bytes(value: bytes) -> str:
    return base64.b64encode(value).decode("ascii")


_CONVERT: dict[str, Callable[[Any], Any]] = {"bytes": _bytes, "float": java_float32, "double": java_double}
