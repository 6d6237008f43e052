"""One captured table version: Debezium schemas (ingest.events.table_schemas), per-column converters and
the row -> payload conversion shared by snapshot rows (COPY text) and pgoutput tuples."""

from __future__ import annotations

import logging
import struct
from dataclasses import dataclass, field
from typing import Any

from ingest.connectors.postgres import jdbc_metadata as jdbc
from ingest.connectors.postgres.catalog import TableDef
from ingest.connectors.postgres.pgoutput import UNCHANGED_TOAST
from ingest.connectors.postgres.properties import PostgresProperties
from ingest.connectors.postgres.types import ColumnConverter, PgType, column_converter, numeric_typmod
from ingest.events.column_mappers import MappedColumn, key_column_error, map_field
from ingest.events.envelope import Column, TableChange, TableSchemas, quoted_table_id, table_schemas

log = logging.getLogger(__name__)

@dataclass
class CapturedTable:
    """Converters and schemas of one version of one table. `positions` maps each captured column to its
    index in a row tuple (the Relation message's column order, which is the table's attnum order)."""

    definition: TableDef
    schemas: TableSchemas
    converters: list[tuple[int, ColumnConverter]]   # (tuple index, converter) for captured columns
    key_positions: list[tuple[int, ColumnConverter]]
    column_names: tuple[str, ...]                    # every column in tuple order
    # column mappers: what a NULL becomes in the value (column.mask.with.N.chars masks NULL too)
    null_values: dict[str, Any] = field(default_factory=dict)
    # the source block of its streamed changes without their own values (PostgresEventDispatcher.source)
    streaming_source: dict[str, Any] | None = field(default=None, init=False, repr=False, compare=False)

    @property
    def table_id(self) -> str:
        return self.schemas.table_id

    def __post_init__(self) -> None:
        self._fast_row, self.read_row = _compile_row(self)
        self._last_index = max((index for index, _ in self.converters), default=-1)
        # the key is taken from the value's row (key_from), no column of it excluded from the value
        self.key_in_row = {conv.name for _, conv in self.key_positions} <= {conv.name for _, conv in self.converters}

    def row(self, values: list[Any], placeholder: str) -> dict[str, Any]:
        """A tuple of text values (str, None, UNCHANGED_TOAST) -> the Value struct payload."""
        if self._fast_row is not None and len(values) > self._last_index and UNCHANGED_TOAST not in values:
            return self._fast_row(values)   # the common case: every column there, none TOASTed
        out: dict[str, Any] = {}
        for index, conv in self.converters:
            value = values[index] if index < len(values) else None
            if value is None:
                out[conv.name] = None
            elif value is UNCHANGED_TOAST:
                out[conv.name] = _placeholder_for(conv, placeholder)
            else:
                out[conv.name] = conv.convert(value)
        for name, masked in self.null_values.items():
            if out.get(name, masked) is None:
                out[name] = masked
        return out

    def key_from(self, row: dict[str, Any], values: list[Any]) -> dict[str, Any] | None:
        """The key, taken from the already converted row when it holds every key column (no second
        conversion of the same texts)."""
        if not self.key_positions:
            return None
        try:
            if len(self.key_positions) == 1:   # the common case, without a comprehension
                name = self.key_positions[0][1].name
                return {name: row[name]}
            return {conv.name: row[conv.name] for _, conv in self.key_positions}
        except KeyError:  # a key column excluded from the value
            return self.key(values)

    def key(self, values: list[Any]) -> dict[str, Any] | None:
        if not self.key_positions:
            return None
        return {conv.name: (None if values[i] is None else conv.convert(values[i])) for i, conv in self.key_positions}

    def table_change(self, change_type: str) -> TableChange:
        cols = []
        for col in self.definition.columns:
            t = col.type
            scale = numeric_typmod(t.typmod)[1] if t.name == "numeric" else None
            cols.append(Column(
                name=col.name, jdbc_type=jdbc.jdbc_type(t), length=column_length(t),
                type_name=t.name, position=col.position, optional=col.nullable,
                type_expression=col.type_expression, native_type=t.oid, scale=scale,
                auto_incremented=bool(col.default and col.default.startswith("nextval(")),
                missing_value=_sql_string(col.missing_value, t.name),
            ))
        d = self.definition
        return TableChange(change_type, quoted_table_id(d.schema, d.table), cols, list(d.primary_key),
                           default_charset_name=None)


def _compile_row(table: CapturedTable) -> tuple[Any, Any]:
    """Two generated functions for the common case (every captured column there, none TOASTed), or (None, None)
    when column mappers replace NULLs (the general loop handles those):

    - `row(values)`: CapturedTable.row of such a tuple of texts: a dict display with each column's conversion
      inline (a text column's str is its value);
    - `read(buf, pos)`: the same payload read straight from a pgoutput TupleData at `pos` (its column count
      first), or None when the tuple is not plain: another column count, an unchanged TOASTed captured column,
      a binary or unknown column kind. A text that is not UTF-8 raises UnicodeDecodeError, a converter its
      own error: the caller then takes the general path, which rejects the change as before."""
    if table.null_values or not table.converters:
        return None, None
    namespace: dict[str, Any] = {"unpack_length": struct.Struct(">i").unpack_from,
                                 "unpack_count": struct.Struct(">h").unpack_from}
    converters = dict(table.converters)
    items, values, lines = [], [], [
        "def read(buf, pos):",
        f"    if unpack_count(buf, pos)[0] != {len(table.column_names)}:",
        "        return None",
        "    pos += 2"]
    for index in range(len(table.column_names)):
        conv = converters.get(index)
        if conv is None:   # not captured: skipped whatever it holds
            lines += ["    if buf[pos] == 116:",
                      "        pos += 5 + unpack_length(buf, pos + 1)[0]",
                      "    elif buf[pos] == 110 or buf[pos] == 117:",
                      "        pos += 1",
                      "    else:",
                      "        return None"]
            continue
        if conv.convert is str:
            items.append(f"{conv.name!r}: values[{index}]")
            text = "buf[pos + 5:end].decode()"
        else:
            namespace[f"convert{index}"] = conv.convert
            items.append(f"{conv.name!r}: None if (v := values[{index}]) is None else convert{index}(v)")
            text = f"convert{index}(buf[pos + 5:end].decode())"
        values.append(f"{conv.name!r}: v{index}")
        lines += ["    if buf[pos] == 116:",
                  "        end = pos + 5 + unpack_length(buf, pos + 1)[0]",
                  f"        v{index} = {text}",
                  "        pos = end",
                  "    elif buf[pos] == 110:",
                  f"        v{index} = None",
                  "        pos += 1",
                  "    else:",
                  "        return None"]
    lines.append("    return {" + ", ".join(values) + "}")
    source = "def row(values):\n    return {" + ",\n            ".join(items) + "}\n\n" + "\n".join(lines) + "\n"
    exec(compile(source, f"<row {table.schemas.table_id}>", "exec"), namespace)  # noqa: S102 (generated above)
    return namespace["row"], namespace["read"]


def column_length(t: PgType) -> int | None:
    """The length in a schema change row's tableChanges: numeric precision, varchar/bpchar length, bit and
    temporal type modifiers; None when there is none. (The column mappers use the JDBC driver's figures,
    jdbc_metadata.column_size.)"""
    if t.name == "numeric":
        return numeric_typmod(t.typmod)[0]
    if t.typmod > 4 and t.name in ("varchar", "bpchar"):
        return t.typmod - 4
    if t.typmod > 0 and t.name in ("bit", "varbit", "time", "timetz", "timestamp", "timestamptz"):
        return t.typmod
    return None


def _mapped(conv: ColumnConverter, qualified: str, t: PgType, props: PostgresProperties, streaming: bool
            ) -> ColumnConverter:
    """The value converter with the column mapper of `qualified` applied (column.mask.*, column.truncate.*,
    column.propagate.source.type); `streaming`: the table comes from a Relation message (jdbc_metadata)."""
    if streaming:
        length, scale = jdbc.decoder_column_size(t), jdbc.decoder_decimal_digits(t)
    else:
        length, scale = jdbc.column_size(t), jdbc.decimal_digits(t)
    source = MappedColumn(jdbc.is_character_type(t), length, name=conv.name, type_name=jdbc.type_name(t), scale=scale)
    mapped = map_field(props.column_mappers, qualified, source, conv.schema, conv.convert)
    if mapped is None:
        return conv
    extra = {**conv.extra, "null_value": mapped.null_value} if mapped.null_value is not None else conv.extra
    return ColumnConverter(conv.name, mapped.schema, mapped.convert, extra)


def _sql_string(text: str | None, type_name: str) -> str | None:
    """A value's text form as a SQL string literal (booleans as true/false, not PostgreSQL's t/f)."""
    if text is None:
        return None
    if type_name == "bool":
        text = {"t": "true", "f": "false"}.get(text, text)
    return "'" + text.replace("'", "''") + "'"


def _placeholder_for(conv: ColumnConverter, placeholder: str) -> Any:
    """unavailable.value.placeholder in the column's own type where Debezium has one: strings as is, bytes
    as the placeholder's bytes (a 'hex:' prefix is decoded as hex), arrays as a one-element list."""
    t = conv.schema.get("type")
    raw = bytes.fromhex(placeholder[4:]) if placeholder.startswith("hex:") else placeholder.encode("utf-8")
    if t == "string":
        return placeholder
    if t == "bytes":
        import base64

        return base64.b64encode(raw).decode("ascii")
    if t == "array" and conv.schema["items"].get("type") == "string":
        return [placeholder]
    return None  # no representation in this type (Debezium also emits null for these)


def build_table(definition: TableDef, props: PostgresProperties, relation_columns: tuple[str, ...] | None = None
                ) -> CapturedTable:
    """relation_columns: the column order of the Relation message (defaults to the catalog's)."""
    order = list(relation_columns) if relation_columns is not None else [c.name for c in definition.columns]
    by_name = {c.name: c for c in definition.columns}
    custom_key = props.message_keys.for_table(f"{definition.schema}.{definition.table}", order)
    key_columns = tuple(dict.fromkeys(custom_key)) if custom_key else definition.key_columns   # message.key.columns
    key_set = set(key_columns)
    converters: list[tuple[int, ColumnConverter]] = []
    key_convs: dict[str, tuple[int, ColumnConverter]] = {}
    value_columns = []
    for index, name in enumerate(order):
        col = by_name.get(name)
        if col is None:
            continue
        conv = column_converter(name, col.type, props, col.nullable, col.default)
        if conv is None:
            log.warning("%s.%s.%s: type %s is not supported; column omitted", definition.schema, definition.table,
                        name, col.type_expression)
            continue
        if name in key_set:
            key_convs[name] = (index, conv)
        if props.captures_column(definition.schema, definition.table, name):
            if props.column_mappers:
                qualified = f"{definition.schema}.{definition.table}.{name}"
                mapped = _mapped(conv, qualified, col.type, props, streaming=relation_columns is not None)
                if mapped.convert is not conv.convert and name in key_set:
                    raise key_column_error(qualified)
                conv = mapped
            converters.append((index, conv))
            value_columns.append((name, conv.schema))
    key_positions = [key_convs[k] for k in key_columns if k in key_convs]
    schemas = table_schemas(
        "postgresql", props.topic_prefix, db=props.dbname, schema=definition.schema, table=definition.table,
        columns=value_columns + [(k, key_convs[k][1].schema) for k in key_columns
                                 if k in key_convs and k not in dict(value_columns)],
        key_columns=[k for k in key_columns if k in key_convs],
        provide_transaction_metadata=props.provide_transaction_metadata,
        key_column_schemas={k: conv.schema for k, (_, conv) in key_convs.items()},
    )
    if any(k not in dict(value_columns) for k in key_convs):
        # key columns excluded by column.exclude.list stay in the key only (Debezium rule): rebuild without them
        schemas = _value_without(schemas, definition, props, value_columns, key_convs)
    null_values = {conv.name: conv.extra["null_value"] for _, conv in converters if "null_value" in conv.extra}
    return CapturedTable(definition, schemas, converters, key_positions, tuple(order), null_values)


def _value_without(schemas: TableSchemas, definition: TableDef, props: PostgresProperties,
                   value_columns: list, key_convs: dict) -> TableSchemas:
    from ingest.events import connect_schema as cs
    from ingest.events.envelope import _finish_table

    row = cs.struct(value_columns, True, name=schemas.row_schema["name"] if schemas.row_schema else None)
    fields = []
    for f in schemas.envelope_schema["fields"]:
        fields.append((f["field"], row if f["field"] in ("before", "after") else f))
    envelope = cs.struct(fields, False, name=schemas.envelope_schema["name"])
    return _finish_table("postgresql", schemas.topic, schemas.table_id, schemas.key_schema, row, envelope,
                         schemas.key_fields, schemas.ts_us_ns, schemas.transaction)


class TableRegistry:
    """The captured tables of a run by relid, shared by the snapshot and the streaming source: the current
    version of each, the last Relation message signature seen, and which have had a schema change row in
    this session."""

    def __init__(self) -> None:
        self.by_relid: dict[int, CapturedTable] = {}
        self.signatures: dict[int, tuple] = {}
        self.announced: set[int] = set()

    def remember(self, relid: int, table: CapturedTable, signature: tuple | None) -> None:
        self.by_relid[relid] = table
        if signature is not None:
            self.signatures[relid] = signature
