"""Kafka Connect schemas as plain dicts, in exactly the JSON form Kafka's JsonConverter emits.

JsonConverter.asJsonSchema writes, in this order: "type", then for a struct "fields" (each field is the
field's own schema followed by "field": <name>), for an array "items", for a map "keys" and "values";
then "optional", and only when set "name", "version", "doc", "parameters", "default".

Schemas are built once per table (they are immutable by convention: never mutate a schema you did not
build yourself), so building them is not on the per-event path.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import orjson

from ingest.errors import LakecdcError

Schema = dict[str, Any]

# JsonConverter's names: Connect's FLOAT32/FLOAT64 are written "float"/"double" (it rejects "float32").
PRIMITIVE_TYPES = ("int8", "int16", "int32", "int64", "float", "double", "boolean", "string", "bytes")


def _finish(
    schema: Schema,
    optional: bool,
    name: str | None,
    version: int | None,
    doc: str | None,
    parameters: Mapping[str, str] | None,
    default: Any,
) -> Schema:
    schema["optional"] = optional
    if name is not None:
        schema["name"] = name
    if version is not None:
        schema["version"] = version
    if doc is not None:
        schema["doc"] = doc
    if parameters is not None:
        schema["parameters"] = {str(k): str(v) for k, v in parameters.items()}
    if default is not None:
        schema["default"] = default  # already in its JSON form (bytes defaults: base64 text)
    return schema


def primitive(
    type_: str,
    optional: bool = False,
    *,
    name: str | None = None,
    version: int | None = None,
    doc: str | None = None,
    parameters: Mapping[str, str] | None = None,
    default: Any = None,
) -> Schema:
    if type_ not in PRIMITIVE_TYPES:
        raise LakecdcError(f"unknown Kafka Connect primitive type {type_!r}")
    return _finish({"type": type_}, optional, name, version, doc, parameters, default)


def int8(optional: bool = False, **kw: Any) -> Schema:
    return primitive("int8", optional, **kw)


def int16(optional: bool = False, **kw: Any) -> Schema:
    return primitive("int16", optional, **kw)


def int32(optional: bool = False, **kw: Any) -> Schema:
    return primitive("int32", optional, **kw)


def int64(optional: bool = False, **kw: Any) -> Schema:
    return primitive("int64", optional, **kw)


def float32(optional: bool = False, **kw: Any) -> Schema:
    """Connect FLOAT32, written "float" by JsonConverter."""
    return primitive("float", optional, **kw)


def float64(optional: bool = False, **kw: Any) -> Schema:
    """Connect FLOAT64, written "double" by JsonConverter."""
    return primitive("double", optional, **kw)


def boolean(optional: bool = False, **kw: Any) -> Schema:
    return primitive("boolean", optional, **kw)


def string(optional: bool = False, **kw: Any) -> Schema:
    return primitive("string", optional, **kw)


def bytes_(optional: bool = False, **kw: Any) -> Schema:
    return primitive("bytes", optional, **kw)


def field(name: str, schema: Schema) -> Schema:
    """A struct member: the field's schema with "field": name appended last (a "field" already present,
    e.g. when reusing a member of another struct, is replaced)."""
    out = {k: v for k, v in schema.items() if k != "field"}
    out["field"] = name
    return out


FieldsArg = Iterable[tuple[str, Schema]] | Mapping[str, Schema]


def struct(
    fields: FieldsArg,
    optional: bool = False,
    *,
    name: str | None = None,
    version: int | None = None,
    doc: str | None = None,
    parameters: Mapping[str, str] | None = None,
    default: Any = None,
) -> Schema:
    """fields: (name, schema) pairs or an ordered mapping name -> schema, in struct order."""
    items = fields.items() if isinstance(fields, Mapping) else fields
    members = []
    seen: set[str] = set()
    for fname, fschema in items:
        if fname in seen:
            raise LakecdcError(f"struct {name or ''}: duplicate field {fname!r}")
        seen.add(fname)
        members.append(field(fname, fschema))
    return _finish({"type": "struct", "fields": members}, optional, name, version, doc, parameters, default)


def array(
    items: Schema,
    optional: bool = False,
    *,
    name: str | None = None,
    version: int | None = None,
    doc: str | None = None,
    parameters: Mapping[str, str] | None = None,
    default: Any = None,
) -> Schema:
    return _finish({"type": "array", "items": items}, optional, name, version, doc, parameters, default)


def map_(
    keys: Schema,
    values: Schema,
    optional: bool = False,
    *,
    name: str | None = None,
    version: int | None = None,
    doc: str | None = None,
    parameters: Mapping[str, str] | None = None,
    default: Any = None,
) -> Schema:
    return _finish({"type": "map", "keys": keys, "values": values}, optional, name, version, doc, parameters, default)


def with_optional(schema: Schema, optional: bool) -> Schema:
    """A copy of `schema` with another optional flag, keeping JsonConverter's key order."""
    if schema.get("optional") == optional:
        return schema
    out: Schema = {}
    for k, v in schema.items():
        out[k] = optional if k == "optional" else v
    return out


def with_name(schema: Schema, name: str | None) -> Schema:
    """A copy of `schema` named `name`, keeping JsonConverter's key order (name right after optional)."""
    out: Schema = {}
    for k, v in schema.items():
        if k == "name":
            continue
        out[k] = v
        if k == "optional" and name is not None:
            out["name"] = name
    return out


def field_names(schema: Schema) -> list[str]:
    if schema.get("type") != "struct":
        raise LakecdcError(f"not a struct schema: {schema.get('type')!r}")
    return [f["field"] for f in schema["fields"]]


def field_schema(schema: Schema, name: str) -> Schema:
    """The member schema of struct field `name` (with its "field" key)."""
    for f in schema["fields"]:
        if f["field"] == name:
            return f
    raise LakecdcError(f"struct {schema.get('name')!r} has no field {name!r}")


# Debezium semantic types used by the envelope itself (the type converters of each connector own the rest).
SNAPSHOT_ALLOWED = "true,first,first_in_data_collection,last_in_data_collection,last,false,incremental"


def debezium_json(optional: bool = True) -> Schema:
    """io.debezium.data.Json: a string holding a JSON document (MongoDB after/patch, PG json columns)."""
    return string(optional, name="io.debezium.data.Json", version=1)


def debezium_enum(allowed: str, optional: bool = True, default: str | None = None) -> Schema:
    """io.debezium.data.Enum: a string with the allowed values as the comma-separated `allowed` parameter."""
    return string(optional, name="io.debezium.data.Enum", version=1, parameters={"allowed": allowed}, default=default)


_INT_RANGES = {"int8": 2**7, "int16": 2**15, "int32": 2**31, "int64": 2**63}


def validate(schema: Schema, value: Any, path: str = "$") -> None:
    """Check that `value` is a payload of `schema` as JsonConverter would write it: required fields
    non-null, every struct member present and in schema order (JsonConverter writes all of them, nulls
    included), integer ranges, strings for string, base64 text or bytes for bytes. Raises LakecdcError
    naming the first offending path. Meant for tests and for checking foreign input, not the hot path."""
    if value is None:
        if not schema.get("optional", False) and "default" not in schema:
            raise LakecdcError(f"{path}: null for a required {schema.get('type')}")
        return
    t = schema.get("type")
    if t in _INT_RANGES:
        if not isinstance(value, int) or isinstance(value, bool):
            raise LakecdcError(f"{path}: {t} expected, got {type(value).__name__} {value!r}")
        lim = _INT_RANGES[t]
        if not -lim <= value < lim:
            raise LakecdcError(f"{path}: {value} out of {t} range")
    elif t in ("float", "double"):
        if isinstance(value, str) and value in ("NaN", "Infinity", "-Infinity"):
            return  # JsonConverter writes non-finite floats as these strings
        if isinstance(value, orjson.Fragment):
            return  # pre-serialized Java float text (json_converter.java_float)
        if not isinstance(value, int | float) or isinstance(value, bool):
            raise LakecdcError(f"{path}: {t} expected, got {type(value).__name__}")
    elif t == "boolean":
        if not isinstance(value, bool):
            raise LakecdcError(f"{path}: boolean expected, got {type(value).__name__} {value!r}")
    elif t == "string":
        if not isinstance(value, str):
            raise LakecdcError(f"{path}: string expected, got {type(value).__name__} {value!r}")
    elif t == "bytes":
        if not isinstance(value, str | bytes | bytearray):
            raise LakecdcError(f"{path}: bytes (base64 text) expected, got {type(value).__name__}")
    elif t == "array":
        if not isinstance(value, list):
            raise LakecdcError(f"{path}: array expected, got {type(value).__name__}")
        for i, item in enumerate(value):
            validate(schema["items"], item, f"{path}[{i}]")
    elif t == "map":
        if not isinstance(value, dict):
            raise LakecdcError(f"{path}: map expected, got {type(value).__name__}")
        for k, v in value.items():
            validate(schema["values"], v, f"{path}[{k!r}]")
    elif t == "struct":
        if not isinstance(value, dict):
            raise LakecdcError(f"{path}: struct expected, got {type(value).__name__}")
        names = [f["field"] for f in schema["fields"]]
        if list(value) != names:
            raise LakecdcError(f"{path}: struct members {list(value)} differ from schema fields {names}")
        for f in schema["fields"]:
            validate(f, value[f["field"]], f"{path}.{f['field']}")
    else:
        raise LakecdcError(f"{path}: unknown schema type {t!r}")
