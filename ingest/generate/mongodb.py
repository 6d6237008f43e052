"""MongoDB collections in silver (docs/connectors/mongodb-silver.md): which bronze tables are MongoDB collections,
and the type of every top-level document field, inferred from the captured documents.

Debezium's MongoDB connector sends each document as a string of MongoDB extended JSON (`after`; `patch` on the
updates of old versions; `updateDescription.updatedFields` in change-stream mode). Every value has a kind
(`kind_of`); the kinds a field showed across all events widen to one (`widen`), which names the field's silver
type (`Kind.type_name`):

    int (32-bit integers) < bigint (64-bit) < double     numbers widen along this line
    decimal(38,s)   $numberDecimal (s: the largest scale seen); with int/bigint values it stays a decimal
    boolean, timestamp ($date), string (JSON strings), objectid ($oid, the hex text), json (objects, arrays)
    text            any other mix of kinds: a string column holding each value's text

The dbt macros (ingest/dbt_package/macros/lakecdc_mongodb.sql) convert each value to its field's type when dbt
runs; the generated models carry the fields with their type names.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import TYPE_CHECKING, Any

from ingest.bronze.contract import BRONZE_SCHEMA, table_name
from ingest.sqlutil import qualified, quote_literal

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

# the Connect schema name of the MongoDB source block (Debezium's is `mongo`; `mongodb` accepted too)
SOURCE_SCHEMA_NAMES = frozenset({"io.debezium.connector.mongo.Source", "io.debezium.connector.mongodb.Source"})

INT32 = (-(1 << 31), 1 << 31)
INT64 = (-(1 << 63), 1 << 63)
MAX_DIGITS = 38  # Spark's decimal precision

# silver column names a document field cannot take (lakecdc's own columns; compared case-insensitively, as Spark
# resolves names); such a field stays in `_document`
RESERVED = frozenset({"_id_value", "_document", "_op", "_seq", "_source_ts", "_ts", "_batch_id", "_key_json", "_lsn",
                      "_unavailable", "_is_deleted", "_deleted_at", "valid_from", "valid_to", "valid_from_seq",
                      "valid_to_seq", "is_current"})
# characters a field name cannot hold as a silver column: Delta's forbidden ones (without column mapping), and
# those the JSON path `$['name']` of get_json_object cannot quote
UNSAFE_CHARACTERS = frozenset(" ,;{}()\n\t='[]\\*")

_NUMBERS = ("int", "bigint", "double")


@dataclass(frozen=True)
class Kind:
    """What a field holds. name: null, int, bigint, double, decimal, boolean, timestamp, string, objectid, json or
    text; a decimal also has the most integer digits and the largest scale seen."""

    name: str
    digits: int = 0
    scale: int = 0

    @property
    def type_name(self) -> str:
        """The field's type in the generated models: a Spark type, or objectid / json / text (all Spark string)."""
        if self.name == "decimal":
            return f"decimal({MAX_DIGITS},{self.scale})" if self.digits + self.scale <= MAX_DIGITS else "text"
        return "string" if self.name == "null" else self.name


def spark_type(type_name: str) -> str:
    """The Spark type of a field's column (Kind.type_name)."""
    return "string" if type_name in ("objectid", "json", "text") else type_name


NULL = Kind("null")
TEXT = Kind("text")


def _decimal_kind(text: Any) -> Kind:
    """$numberDecimal: the digits of a finite value written without an exponent (the engines' decimal cast does
    not read `1E+3`); anything else is kept as text."""
    if not isinstance(text, str) or "e" in text.lower():
        return TEXT
    try:
        value = Decimal(text)
    except InvalidOperation:
        return TEXT
    if not value.is_finite():
        return TEXT
    sign, digits, exponent = value.as_tuple()
    assert isinstance(exponent, int)
    scale = max(0, -exponent)
    return Kind("decimal", max(1, len(digits) - scale), scale)


def _is_integer_text(text: Any) -> bool:
    return isinstance(text, str) and re.fullmatch(r"-?[0-9]+", text) is not None


def _date_kind(value: Any) -> Kind:
    """$date: milliseconds since the epoch (strict mode), {"$numberLong": ms} (canonical), or ISO-8601 (relaxed)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return Kind("timestamp")
    if isinstance(value, dict) and list(value) == ["$numberLong"] and _is_integer_text(value["$numberLong"]):
        return Kind("timestamp")
    if isinstance(value, str):
        try:
            dt.datetime.fromisoformat(value)
        except ValueError:
            return Kind("json")
        return Kind("timestamp")
    return Kind("json")


def kind_of(value: Any) -> Kind:
    """The kind of one value of a document parsed from MongoDB extended JSON (strict, relaxed or canonical)."""
    if value is None:
        return NULL
    if isinstance(value, bool):
        return Kind("boolean")
    if isinstance(value, int):
        if INT32[0] <= value < INT32[1]:
            return Kind("int")
        return Kind("bigint") if INT64[0] <= value < INT64[1] else Kind("double")
    if isinstance(value, float):
        return Kind("double")
    if isinstance(value, str):
        return Kind("string")
    if isinstance(value, dict) and len(value) == 1:
        (tag, inner), = value.items()
        if tag == "$numberInt" and _is_integer_text(inner) and INT32[0] <= int(inner) < INT32[1]:
            return Kind("int")
        if tag == "$numberLong" and _is_integer_text(inner) and INT64[0] <= int(inner) < INT64[1]:
            return Kind("bigint")
        if tag == "$numberDouble" and isinstance(inner, str):
            try:
                float(inner)
            except ValueError:
                return Kind("json")
            return Kind("double")
        if tag == "$numberDecimal":
            return _decimal_kind(inner)
        if tag == "$oid" and isinstance(inner, str):
            return Kind("objectid")
        if tag == "$date":
            return _date_kind(inner)
    return Kind("json")  # an object (other extended JSON types too: $binary, $timestamp, ...) or an array


def widen(a: Kind, b: Kind) -> Kind:
    """The kind holding both: null gives way to anything; int < bigint < double; a decimal takes integers in;
    any other difference is text."""
    if a.name == "null":
        return b
    if b.name == "null" or a == b:
        return a
    if a.name == b.name == "decimal":
        return Kind("decimal", max(a.digits, b.digits), max(a.scale, b.scale))
    if a.name in _NUMBERS and b.name in _NUMBERS:
        return a if _NUMBERS.index(a.name) > _NUMBERS.index(b.name) else b
    for dec, other in ((a, b), (b, a)):
        if dec.name == "decimal" and other.name in ("int", "bigint"):
            return Kind("decimal", max(dec.digits, 10 if other.name == "int" else 19), dec.scale)
    return TEXT


def _object(text: str | None) -> dict[str, Any] | None:
    """A JSON object from its text (extended JSON is JSON); None for anything else."""
    if text is None:
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


@dataclass
class MongoEvent:
    """The parts of one change event that carry document values (texts as bronze holds them)."""

    key_id: str | None            # the key's `id`: the _id in extended JSON
    after: str | None = None      # the whole document
    patch: str | None = None      # old versions' updates: {"$set": ..., "$unset": ...} or a whole document
    updated: str | None = None    # change-stream updates: updateDescription.updatedFields
    removed: list[str] = field(default_factory=list)   # updateDescription.removedFields


@dataclass
class CollectionFields:
    """The inferred fields of one collection: document field -> kind, in first-seen order (`_id` first), the
    fields that get no column (name -> why) and how many documents were not JSON objects."""

    kinds: dict[str, Kind] = field(default_factory=lambda: {"_id": NULL})
    skipped: dict[str, str] = field(default_factory=dict)
    unreadable: int = 0
    _lower: dict[str, str] = field(default_factory=lambda: {"_id": "_id"})

    def types(self) -> dict[str, str]:
        """field -> type name, for the generated models."""
        return {name: kind.type_name for name, kind in self.kinds.items()}

    def see(self, name: str, kind: Kind = NULL) -> None:
        if name in self.kinds:
            self.kinds[name] = widen(self.kinds[name], kind)
            return
        if name in self.skipped:
            return
        reason = _unusable(name)
        if reason is None and name.lower() in self._lower:
            reason = f"differs from the field {self._lower[name.lower()]!r} only in case (Spark's names ignore case)"
        if reason is not None:
            self.skipped[name] = reason
            return
        self._lower[name.lower()] = name
        self.kinds[name] = kind

    def see_document(self, document: dict[str, Any]) -> None:
        for name, value in document.items():
            self.see(name, kind_of(value))

    def see_partial(self, values: dict[str, Any], cleared: Iterable[str]) -> None:
        """An update naming some fields: a dotted path (a.b) changes the field a inside; unset fields are null."""
        for path, value in values.items():
            top = path.split(".", 1)[0]
            self.see(top, kind_of(value) if top == path else NULL)
        for path in cleared:
            self.see(path.split(".", 1)[0])

    def see_event(self, event: MongoEvent) -> None:
        if event.key_id is not None:
            try:
                self.see("_id", kind_of(json.loads(event.key_id)))
            except ValueError:
                self.see("_id", Kind("string"))
        document, patch = _object(event.after), _object(event.patch)
        if (event.after is not None and document is None) or (event.patch is not None and patch is None):
            self.unreadable += 1
        if document is None and patch is not None and not any(k.startswith("$") for k in patch):
            document = patch   # a patch without operators replaces the whole document
        if document is not None:
            self.see_document(document)
        elif patch is not None:
            sets, unsets = patch.get("$set"), patch.get("$unset")
            self.see_partial(sets if isinstance(sets, dict) else {}, unsets if isinstance(unsets, dict) else {})
        elif event.updated is not None or event.removed:
            self.see_partial(_object(event.updated) or {}, event.removed)


def _unusable(name: str) -> str | None:
    if not name:
        return "an empty name"
    if name.lower() in RESERVED or name.startswith("__"):
        return "a name silver uses for its own columns"
    bad = sorted(set(name) & UNSAFE_CHARACTERS)
    if bad:
        return f"its name holds {''.join(bad)!r}, which a silver column name cannot"
    return None


def infer_fields(events: Iterable[MongoEvent]) -> CollectionFields:
    fields = CollectionFields()
    for event in events:
        fields.see_event(event)
    return fields


def is_mongodb_schema(value_schema: dict[str, Any]) -> bool:
    """A value schema of Debezium's MongoDB connector: its source block is the MongoDB one."""
    return any(f.get("field") == "source" and f.get("name") in SOURCE_SCHEMA_NAMES
               for f in value_schema.get("fields") or [])


def is_mongodb_table(spark: SparkSession, source: str, table_id: str) -> bool:
    """For events landed without a value schema: the connector named in the latest event's source block."""
    events = qualified(BRONZE_SCHEMA, table_name(source, "events"))
    rows = spark.sql(f"SELECT get_json_object(value, '$.source.connector') AS c FROM {events} "
                     f"WHERE table_id = {quote_literal(table_id)} AND op IS NOT NULL AND op <> 't' "
                     f"ORDER BY seq DESC LIMIT 1").collect()
    return bool(rows) and rows[0]["c"] == "mongodb"


def collection_events(spark: SparkSession, source: str, table_id: str) -> Iterator[MongoEvent]:
    """The document-bearing parts of every change event of a collection in bronze, in seq order."""
    events = qualified(BRONZE_SCHEMA, table_name(source, "events"))
    query = (f"SELECT get_json_object(key, '$.id') AS key_id, get_json_object(value, '$.after') AS after, "
             f"get_json_object(value, '$.patch') AS patch, "
             f"get_json_object(value, '$.updateDescription.updatedFields') AS updated, "
             f"get_json_object(value, '$.updateDescription.removedFields') AS removed "
             f"FROM {events} WHERE table_id = {quote_literal(table_id)} AND op IS NOT NULL AND op <> 't' ORDER BY seq")
    for row in spark.sql(query).toLocalIterator():
        removed = json.loads(row["removed"]) if row["removed"] else []
        yield MongoEvent(row["key_id"], row["after"], row["patch"], row["updated"],
                         [r for r in removed if isinstance(r, str)] if isinstance(removed, list) else [])
