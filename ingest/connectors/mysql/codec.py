"""Per-table encoders: Connect key/value/envelope schemas and row -> JSON payload conversion, built once
per table version from an `ingest.schema.model.Table`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ingest.connectors.mysql.filters import Filters
from ingest.connectors.mysql.types import Converter, TypeOptions, column_type
from ingest.events import connect_schema as cs
from ingest.events.json_converter import dumps_str
from ingest.events.source_info import source_schema

TRANSACTION_BLOCK = cs.struct([("id", cs.string()), ("total_order", cs.int64()),
                               ("data_collection_order", cs.int64())], True, name="event.block", version=1)


@dataclass
class TableCodec:
    db: str
    table: str
    topic: str
    columns: list[str]              # captured columns, in table order
    converters: list[Converter]
    key_columns: list[str]
    key_schema_json: str | None
    value_schema_json: str
    model_columns: list[Any] = field(default_factory=list)  # schema-model Column of each captured column

    @property
    def table_id(self) -> str:
        return f"{self.db}.{self.table}"

    def row(self, values: dict[str, Any]) -> dict[str, Any]:
        """A before/after struct payload from a column-name -> decoded value mapping."""
        return {name: convert(values.get(name)) for name, convert in zip(self.columns, self.converters, strict=True)}

    def row_from_tuple(self, values: tuple, indexes: list[int]) -> dict[str, Any]:
        """The same from a result tuple; `indexes[i]` is where captured column i sits in the tuple."""
        return {name: convert(values[i]) for name, convert, i in zip(self.columns, self.converters, indexes,
                                                                      strict=True)}

    def key(self, row: dict[str, Any]) -> dict[str, Any] | None:
        if not self.key_columns:
            return None
        return {name: row[name] for name in self.key_columns}


def build_codec(flavor: str, prefix: str, table: Any, filters: Filters, options: TypeOptions) -> TableCodec:
    db, name = table.id.database, table.id.table
    topic = f"{prefix}.{db}.{name}"
    fields: list[tuple[str, cs.Schema]] = []
    converters: list[Converter] = []
    models: list[Any] = []
    by_name: dict[str, cs.Schema] = {}
    for column in table.columns:
        if not filters.column(db, name, column.name):
            continue
        schema, convert = column_type(column, options)
        fields.append((column.name, schema))
        converters.append(convert)
        models.append(column)
        by_name[column.name] = schema
    key_columns = [c for c in table.primary_key if c in by_name]
    key_schema = None
    if key_columns:
        key_schema = cs.struct([(c, cs.with_optional(by_name[c], False)) for c in key_columns], False,
                               name=f"{topic}.Key")
    value = cs.struct(fields, True, name=f"{topic}.Value")
    envelope = cs.struct([
        ("before", value), ("after", value), ("source", source_schema(flavor)), ("transaction", TRANSACTION_BLOCK),
        ("op", cs.string()), ("ts_ms", cs.int64(True)), ("ts_us", cs.int64(True)), ("ts_ns", cs.int64(True)),
    ], False, name=f"{topic}.Envelope", version=2)
    return TableCodec(db=db, table=name, topic=topic, columns=[f for f, _ in fields], converters=converters,
                      key_columns=key_columns, key_schema_json=dumps_str(key_schema) if key_schema else None,
                      value_schema_json=dumps_str(envelope), model_columns=models)
