"""What to generate models for: the captured tables of a source, read from bronze (events, schema
registry, and the schema history when it exists)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ingest.bronze.contract import BRONZE_SCHEMA, table_name
from ingest.generate.mongodb import (
    CollectionFields,
    collection_events,
    infer_fields,
    is_mongodb_schema,
    is_mongodb_table,
    spark_type,
)
from ingest.sqlutil import qualified, quote_literal

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


@dataclass
class CapturedColumn:
    name: str
    source_type: str | None = None   # from the schema history, when known
    spark_type: str | None = None
    description: str | None = None   # what the column holds, when its source type does not say it


@dataclass
class CapturedTable:
    source: str
    table_id: str
    keys: list[str]
    columns: list[CapturedColumn] = field(default_factory=list)
    mongodb: CollectionFields | None = None   # a MongoDB collection: its fields (ingest/generate/mongodb.py)
    notes: list[str] = field(default_factory=list)   # what `generate` tells the user about the table
    has_schema: bool = True   # False: no event of the table carried a schema (nothing to type its columns by)


def _exists(spark: SparkSession, table: str) -> bool:
    return spark.catalog.tableExists(f"{BRONZE_SCHEMA}.{table}")


def _envelope_fields(schema_json: str, part: str) -> list[str]:
    """Field names of the value schema's `after` struct (part='after') or of the key schema (part='key')."""
    schema = json.loads(schema_json)
    if part == "key":
        return [f["field"] for f in schema.get("fields") or []]
    for f in schema.get("fields") or []:
        if f.get("field") == "after" and f.get("type") == "struct":
            return [c["field"] for c in f.get("fields") or []]
    return []


def captured_tables(spark: SparkSession, source: str) -> list[CapturedTable]:
    """Every table with events in bronze.<source>_events, with its key and columns (latest schemas)."""
    events = table_name(source, "events")
    if not _exists(spark, events):
        return []
    schemas = qualified(BRONZE_SCHEMA, table_name(source, "schemas"))
    rows = spark.sql(
        f"SELECT table_id, max_by(key_schema_id, if(key_schema_id IS NULL, NULL, seq)) AS k, "
        f"max_by(value_schema_id, if(value_schema_id IS NULL, NULL, seq)) AS v "
        f"FROM {qualified(BRONZE_SCHEMA, events)} WHERE op IS NOT NULL AND op <> 't' GROUP BY table_id "
        f"ORDER BY table_id"
    ).collect()
    ids = sorted({r["k"] for r in rows if r["k"]} | {r["v"] for r in rows if r["v"]})
    registry: dict[str, str] = {}
    if ids:
        in_list = ", ".join(quote_literal(i) for i in ids)
        for r in spark.sql(f"SELECT schema_id, schema FROM {schemas} WHERE schema_id IN ({in_list})").collect():
            registry[r["schema_id"]] = r["schema"]
    history = _history_columns(spark, source)
    tables = []
    for r in rows:
        value_schema = json.loads(registry[r["v"]]) if r["v"] in registry else None
        if (is_mongodb_schema(value_schema) if value_schema is not None
                else is_mongodb_table(spark, source, r["table_id"])):
            fields = infer_fields(collection_events(spark, source, r["table_id"]))
            tables.append(mongodb_table(source, r["table_id"], fields))
            continue
        if r["v"] not in registry:
            tables.append(CapturedTable(source, r["table_id"], [], has_schema=False, notes=[
                f"{r['table_id']}: no event carries a schema (records written without one, e.g. JsonConverter "
                "with schemas.enable=false, that no known schema matched): no models (docs/connectors/kafka.md, "
                "Records without schemas)"]))
            continue
        keys = _envelope_fields(registry[r["k"]], "key") if r["k"] in registry else []
        names = _envelope_fields(registry[r["v"]], "after") if r["v"] in registry else []
        known = history.get(r["table_id"], {})
        columns = [CapturedColumn(n, *known.get(n, (None, None))) for n in names]
        tables.append(CapturedTable(source, r["table_id"], keys, columns))
    return tables


def mongodb_table(source: str, table_id: str, fields: CollectionFields) -> CapturedTable:
    """A MongoDB collection: the key `_id` (the event key's text), `_id_value` and a column per top-level field,
    typed from the captured documents, and `_document` (docs/connectors/mongodb-silver.md)."""
    types = fields.types()
    columns = [CapturedColumn("_id", spark_type="string", description="the document's _id as the event key holds "
                                                                      "it (extended JSON text): the key of silver"),
               CapturedColumn("_id_value", spark_type=spark_type(types["_id"]),
                              description=f"the document's _id ({types['_id']})")]
    columns += [CapturedColumn(name, spark_type=spark_type(type_name), description=f"document field ({type_name})")
                for name, type_name in types.items() if name != "_id"]
    columns.append(CapturedColumn("_document", spark_type="string",
                                  description="the whole document (extended JSON); null after an update that "
                                              "sent only the changed fields"))
    notes = [f"{table_id}: the field {name!r} has no silver column ({why}); it stays in _document"
             for name, why in fields.skipped.items()]
    if fields.unreadable:
        notes.append(f"{table_id}: {fields.unreadable} events hold a document that is not a JSON object")
    return CapturedTable(source, table_id, ["_id"], columns, mongodb=fields, notes=notes)


def _history_columns(spark: SparkSession, source: str) -> dict[str, dict[str, tuple[str | None, str | None]]]:
    """table_id -> column -> (source type, Spark type) from the latest version in <source>_schema_history."""
    history = table_name(source, "schema_history")
    if not _exists(spark, history):
        return {}
    out: dict[str, dict[str, tuple[str | None, str | None]]] = {}
    latest = spark.sql(
        f"SELECT table_id, max_by(columns, version) AS columns FROM {qualified(BRONZE_SCHEMA, history)} "
        f"GROUP BY table_id"
    ).collect()
    for r in latest:
        cols = r["columns"]
        items = json.loads(cols) if isinstance(cols, str) else [c.asDict() for c in cols or []]
        out[r["table_id"]] = {c["name"]: (c.get("source_type"), c.get("spark_type")) for c in items}
    return out
