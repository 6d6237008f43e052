"""Per-table encoders: Connect key/value/envelope schemas and row -> JSON payload conversion, built once
per table version from an `ingest.schema.model.Table`."""

from __future__ import annotations

import operator
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ingest.connectors.message_keys import MessageKeyColumns
from ingest.connectors.mysql.filters import Filters
from ingest.connectors.mysql.properties import MySqlProperties
from ingest.connectors.mysql.schema_track import SchemaTracker
from ingest.connectors.mysql.types import Converter, TypeOptions, column_type, default_value, snapshot_converter
from ingest.events import connect_schema as cs
from ingest.events.column_mappers import (
    JDBC_STRING_TYPES,
    ColumnMappers,
    MappedColumn,
    key_column_error,
    map_field,
)
from ingest.events.envelope import TableSchemas, table_schemas


@dataclass
class TableCodec:
    db: str
    table: str
    schemas: TableSchemas           # key, row and envelope schemas (ingest.events)
    columns: list[str]              # captured columns, in table order
    converters: list[Converter]
    key_columns: list[str]
    model_columns: list[Any] = field(default_factory=list)  # schema-model Column of each captured column
    snapshot_converters: list[Converter] = field(default_factory=list)  # the same for snapshot values
    mapped_columns: frozenset[str] = frozenset()   # columns a column mapper changes (their values take the
                                                   # per-value Python paths, which apply it)
    # a row's key values, compared to tell a key change (a value, or a tuple of several); None without a key
    key_values: Callable[[dict[str, Any]], Any] | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.key_values = operator.itemgetter(*self.key_columns) if self.key_columns else None

    @property
    def table_id(self) -> str:
        return self.schemas.table_id

    @property
    def topic(self) -> str:
        return self.schemas.topic

    @property
    def key_schema_json(self) -> str | None:
        return self.schemas.key_schema_json

    @property
    def value_schema_json(self) -> str:
        return self.schemas.envelope_schema_json

    def row(self, values: dict[str, Any]) -> dict[str, Any]:
        """A before/after struct payload from a column-name -> decoded value mapping."""
        return {name: convert(values.get(name)) for name, convert in zip(self.columns, self.converters, strict=True)}

    def row_from_tuple(self, values: tuple, indexes: list[int]) -> dict[str, Any]:
        """A snapshot row from a result tuple; `indexes[i]` is where captured column i sits in the tuple."""
        return {name: convert(values[i]) for name, convert, i in zip(self.columns, self.snapshot_converters, indexes,
                                                                      strict=True)}

    def key(self, row: dict[str, Any]) -> dict[str, Any] | None:
        if not self.key_columns:
            return None
        return {name: row[name] for name in self.key_columns}


def build_codec(flavor: str, prefix: str, table: Any, filters: Filters, options: TypeOptions,
                provide_transaction_metadata: bool = False, mappers: ColumnMappers | None = None,
                message_keys: MessageKeyColumns | None = None) -> TableCodec:
    db, name = table.id.database, table.id.table
    fields: list[tuple[str, cs.Schema]] = []
    converters: list[Converter] = []
    snapshot_converters: list[Converter] = []
    models: list[Any] = []
    mapped: set[str] = set()
    key_schemas: dict[str, cs.Schema] = {}   # a key column's unmapped schema (mappers change the value only)
    custom_key = message_keys.for_table(f"{db}.{name}", [c.name for c in table.columns]) if message_keys else None
    key_names = list(dict.fromkeys(custom_key)) if custom_key else list(table.primary_key)   # message.key.columns
    for column in table.columns:
        if not filters.column(db, name, column.name):
            continue
        schema, convert = column_type(column, options)
        snapshot_convert = snapshot_converter(column, convert)
        default = default_value(column, snapshot_convert, options)
        if default is not None:
            schema = {**schema, "default": default}
        if mappers:
            qualified = f"{db}.{name}.{column.name}"
            source = MappedColumn(column.jdbc_type in JDBC_STRING_TYPES, mapper_length(column), name=column.name,
                                  type_name=column.type_name, scale=column.scale, comment=column.comment)
            changed = map_field(mappers, qualified, source, schema, convert)
            if changed is not None:
                if changed.convert is not convert:   # values change, not only schema parameters
                    if column.name in key_names:
                        raise key_column_error(qualified)
                    mapped.add(column.name)
                snapshot_mapped = map_field(mappers, qualified, source, schema, snapshot_convert)
                assert snapshot_mapped is not None
                if column.name in key_names:
                    key_schemas[column.name] = schema
                schema, convert, snapshot_convert = changed.schema, changed.convert, snapshot_mapped.convert
        fields.append((column.name, schema))
        converters.append(convert)
        snapshot_converters.append(snapshot_convert)
        models.append(column)
    captured = {f for f, _ in fields}
    key_columns = [c for c in key_names if c in captured]
    # ts_us/ts_ns: Debezium 3.x's envelope has them for both flavors
    schemas = table_schemas(flavor, prefix, db=db, table=name, columns=fields, key_columns=key_columns,
                            ts_us_ns=True, provide_transaction_metadata=provide_transaction_metadata,
                            key_column_schemas=key_schemas)
    return TableCodec(db=db, table=name, schemas=schemas, columns=[f for f, _ in fields], converters=converters,
                      key_columns=key_columns, model_columns=models, snapshot_converters=snapshot_converters,
                      mapped_columns=frozenset(mapped))


def mapper_length(column: Any) -> int | None:
    """The length Debezium's MySQL DDL parser gives a column, which its column mappers use (truncateLength,
    the cut of a hash, `__debezium.source.column.length`): the declared one, else ENUM 1, SET its option
    count plus commas, YEAR 4, NCHAR 1 (measured against Debezium 3.6.3, tests/conformance run my_c)."""
    if column.length is not None:
        return column.length
    base = column.type_name.split()[0].upper()
    if base == "ENUM":
        return 1
    if base == "SET":
        return max(0, 2 * len(column.enum_values or ()) - 1)
    if base == "YEAR":
        return 4
    if base == "NCHAR":
        return 1
    return None


class TableCodecs:
    """The codec of each table, built from the schema tracker's structure when first asked for and kept until
    the table's structure changes (`forget`, or `clear` when the whole model is rebuilt)."""

    def __init__(self, tracker: SchemaTracker, config: MySqlProperties, options: TypeOptions) -> None:
        self.tracker = tracker
        self.config = config
        self.options = options
        self._codecs: dict[str, TableCodec] = {}

    def get(self, db: str, table: str) -> TableCodec | None:
        """None when the tracker has no such table."""
        key = f"{db}.{table}"
        codec = self._codecs.get(key)
        if codec is None:
            tbl = self.tracker.table(db, table)
            if tbl is None:
                return None
            cfg = self.config
            codec = build_codec(cfg.flavor, cfg.topic_prefix, tbl, cfg.filters, self.options,
                                cfg.provide_transaction_metadata, cfg.column_mappers, cfg.message_keys)
            self._codecs[key] = codec
        return codec

    def forget(self, keys: list[str]) -> None:
        """Drop the codecs of these "db.table" keys (their structure changed)."""
        for key in keys:
            self._codecs.pop(key, None)

    def clear(self) -> None:
        self._codecs.clear()
