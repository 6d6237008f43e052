"""Debezium change events: data change envelopes, tombstones, schema change events, heartbeats and
transaction boundary events, as plain dicts in Kafka Connect JSON form.

Per table, build a `TableSchemas` once (`table_schemas(...)` or `mongodb_table_schemas(...)`); then each
change is a cheap `ChangeEvent` (slots, no copying) whose `value()` is the envelope payload dict in schema
order. Every event type exposes `topic`, `key_schema`, `key`, `value_schema` and `value()`, so
`ingest.events.json_converter.serialize` and `record()` treat them alike.

Envelope fields (schema order, Debezium 3.6.3's relational connectors): before, after, source,
transaction (null unless provide.transaction.metadata), op, ts_ms, ts_us, ts_ns; the Envelope struct has
version 2. MongoDB keeps the layout of Debezium's MongoDB connector documentation
(tests/golden/mongodb.json): after, patch (io.debezium.data.Json strings), source, op
(optional), ts_ms.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ingest.errors import LakecdcError
from ingest.events import connect_schema as cs
from ingest.events import topics as tp
from ingest.events.json_converter import canonical_schema_json, serialize
from ingest.events.source_info import CONNECTORS, SOURCE_SCHEMAS, check_connector

OPS = ("c", "u", "d", "r", "t")

# Envelope ts_us/ts_ns present by default: every 3.x relational connector has them; MongoDB's documented layout not.
TS_US_NS_DEFAULT = {"sqlserver": True, "oracle": True, "mysql": True, "mariadb": True, "postgresql": True,
                    "mongodb": False}
ENVELOPE_VERSION = 2

# Transaction block of data events (Debezium's TransactionMonitor schema).
TRANSACTION_BLOCK_SCHEMA = cs.struct(
    [("id", cs.string()), ("total_order", cs.int64()), ("data_collection_order", cs.int64())],
    True, name="event.block", version=1,
)


def now_ts() -> tuple[int, int, int]:
    """Processing time as (ts_ms, ts_us, ts_ns) from one clock reading."""
    ns = time.time_ns()
    return ns // 1_000_000, ns // 1_000, ns


# ---------------------------------------------------------------------------------------------------------
# Data change events


@dataclass(frozen=True)
class TableSchemas:
    """Everything about one captured table that does not change per event (built once per table version)."""

    connector: str
    topic: str
    table_id: str
    key_schema: cs.Schema | None        # None: the table has no key (the record key is null)
    row_schema: cs.Schema | None        # <topic>.Value struct (None for MongoDB)
    envelope_schema: cs.Schema          # <topic>.Envelope
    key_fields: tuple[str, ...]
    ts_us_ns: bool
    transaction: bool                   # provide.transaction.metadata: the block is filled (relational: the
                                        # `transaction` field exists either way, null without metadata)
    key_schema_json: str | None = field(repr=False, default=None)   # canonical JSON (schema registry)
    envelope_schema_json: str = field(repr=False, default="")


def _envelope_fields(
    connector: str, before_after: list[tuple[str, cs.Schema]], op_optional: bool, ts_us_ns: bool, transaction: bool
) -> list[tuple[str, cs.Schema]]:
    fields = list(before_after)
    fields.append(("source", SOURCE_SCHEMAS[connector]))
    if connector != "mongodb":
        fields.append(("transaction", TRANSACTION_BLOCK_SCHEMA))
    fields.append(("op", cs.string(op_optional)))
    fields.append(("ts_ms", cs.int64(True)))
    if ts_us_ns:
        fields.append(("ts_us", cs.int64(True)))
        fields.append(("ts_ns", cs.int64(True)))
    if transaction and connector == "mongodb":
        fields.append(("transaction", TRANSACTION_BLOCK_SCHEMA))
    return fields


def _finish_table(
    connector: str, topic: str, tid: str, key_schema: cs.Schema | None, row_schema: cs.Schema | None,
    envelope: cs.Schema, key_fields: tuple[str, ...], ts_us_ns: bool, transaction: bool,
) -> TableSchemas:
    return TableSchemas(
        connector=connector, topic=topic, table_id=tid, key_schema=key_schema, row_schema=row_schema,
        envelope_schema=envelope, key_fields=key_fields, ts_us_ns=ts_us_ns, transaction=transaction,
        key_schema_json=canonical_schema_json(key_schema), envelope_schema_json=canonical_schema_json(envelope) or "",
    )


def table_schemas(
    connector: str,
    prefix: str,
    *,
    db: str | None = None,
    schema: str | None = None,
    table: str,
    columns: Sequence[tuple[str, cs.Schema]],
    key_columns: Sequence[str] = (),
    ts_us_ns: bool | None = None,
    provide_transaction_metadata: bool = False,
    include_database: bool = False,
    name_adjustment: str = "none",
    key_column_schemas: Mapping[str, cs.Schema] | None = None,
) -> TableSchemas:
    """Schemas of a relational table: `columns` are (name, Connect schema) in table order, as the
    connector's type converters produce them; `key_columns` the primary key (or unique key, or
    message.key.columns) in key order. No key columns: the key is null. `key_column_schemas`: a key column's
    schema in the key when it differs from the value's (column mappers add parameters to the value only)."""
    check_connector(connector)
    if connector == "mongodb":
        raise LakecdcError("MongoDB collections have no row schema: use mongodb_table_schemas()")
    topic = tp.data_topic(connector, prefix, db=db, schema=schema, table=table, include_database=include_database)
    by_name = dict(columns)
    if len(by_name) != len(columns):
        raise LakecdcError(f"table {table!r}: duplicate column names")
    missing = [k for k in key_columns if k not in by_name]
    if missing:
        raise LakecdcError(f"table {table!r}: key column(s) {', '.join(missing)} not among the columns")
    key_schema = None
    if key_columns:
        in_key = key_column_schemas or {}
        key_schema = cs.struct([(k, in_key.get(k, by_name[k])) for k in key_columns], False,
                               name=tp.key_schema_name(topic, name_adjustment))
    row = cs.struct(columns, True, name=tp.value_schema_name(topic, name_adjustment))
    ts = TS_US_NS_DEFAULT[connector] if ts_us_ns is None else ts_us_ns
    envelope = cs.struct(
        _envelope_fields(connector, [("before", row), ("after", row)], False, ts, provide_transaction_metadata),
        False, name=tp.envelope_schema_name(topic, name_adjustment), version=ENVELOPE_VERSION,
    )
    tid = tp.table_id(connector, db=db, schema=schema, table=table)
    return _finish_table(connector, topic, tid, key_schema, row, envelope, tuple(key_columns), ts,
                         provide_transaction_metadata)


def mongodb_table_schemas(
    prefix: str,
    *,
    db: str,
    collection: str,
    ts_us_ns: bool | None = None,
    provide_transaction_metadata: bool = False,
    name_adjustment: str = "none",
) -> TableSchemas:
    """MongoDB (the documented layout): key {id: string} (the _id in strict extended JSON); envelope after and patch
    as io.debezium.data.Json strings, source, op (optional), ts_ms."""
    topic = tp.data_topic("mongodb", prefix, db=db, table=collection)
    key_schema = cs.struct([("id", cs.string())], False, name=tp.key_schema_name(topic, name_adjustment))
    ts = TS_US_NS_DEFAULT["mongodb"] if ts_us_ns is None else ts_us_ns
    envelope = cs.struct(
        _envelope_fields("mongodb", [("after", cs.debezium_json()), ("patch", cs.debezium_json())], True, ts,
                         provide_transaction_metadata),
        False, name=tp.envelope_schema_name(topic, name_adjustment),
    )
    tid = tp.table_id("mongodb", db=db, table=collection)
    return _finish_table("mongodb", topic, tid, key_schema, None, envelope, ("id",), ts, provide_transaction_metadata)


class ChangeEvent:
    """One data change record (op c/u/d/r/t), or a tombstone (op None, value None).

    For MongoDB `after` and `patch` hold JSON strings and `before` is unused."""

    __slots__ = ("table", "op", "key", "before", "after", "patch", "source", "ts_ms", "ts_us", "ts_ns",
                 "transaction")

    def __init__(
        self,
        table: TableSchemas,
        op: str | None,
        key: dict[str, Any] | None,
        before: Any = None,
        after: Any = None,
        source: dict[str, Any] | None = None,
        ts_ms: int | None = None,
        ts_us: int | None = None,
        ts_ns: int | None = None,
        transaction: dict[str, Any] | None = None,
        patch: str | None = None,
    ) -> None:
        self.table = table
        self.op = op
        self.key = key
        self.before = before
        self.after = after
        self.patch = patch
        self.source = source
        self.ts_ms = ts_ms
        self.ts_us = ts_us
        self.ts_ns = ts_ns
        self.transaction = transaction

    @property
    def topic(self) -> str:
        return self.table.topic

    @property
    def key_schema(self) -> cs.Schema | None:
        return self.table.key_schema if self.key is not None else None

    @property
    def value_schema(self) -> cs.Schema | None:
        return None if self.op is None else self.table.envelope_schema

    def value(self) -> dict[str, Any] | None:
        """The envelope payload in schema order (None for a tombstone)."""
        if self.op is None:
            return None
        t = self.table
        if t.connector == "mongodb":
            v: dict[str, Any] = {"after": self.after, "patch": self.patch, "source": self.source, "op": self.op,
                                 "ts_ms": self.ts_ms}
            if t.ts_us_ns:
                v["ts_us"] = self.ts_us
                v["ts_ns"] = self.ts_ns
            if t.transaction:
                v["transaction"] = self.transaction
            return v
        return envelope_value(t, self.op, self.before, self.after, self.source, self.transaction, self.ts_ms,
                              self.ts_us, self.ts_ns)

    def __repr__(self) -> str:
        return f"ChangeEvent(topic={self.topic!r}, op={self.op!r}, key={self.key!r})"


def envelope_value(table: TableSchemas, op: str, before: Any, after: Any, source: dict[str, Any] | None,
                   transaction: dict[str, Any] | None, ts_ms: int | None, ts_us: int | None,
                   ts_ns: int | None) -> dict[str, Any]:
    """A relational envelope payload in schema order."""
    v = {"before": before, "after": after, "source": source, "transaction": transaction, "op": op, "ts_ms": ts_ms}
    if table.ts_us_ns:
        v["ts_us"] = ts_us
        v["ts_ns"] = ts_ns
    return v


def key_of(table: TableSchemas, row: dict[str, Any] | None) -> dict[str, Any] | None:
    kf = table.key_fields
    if not kf or row is None:
        return None
    if len(kf) == 1:  # the common case, without a comprehension's overhead
        k = kf[0]
        return {k: row[k]}
    return {k: row[k] for k in kf}


def change(
    table: TableSchemas,
    op: str,
    *,
    source: dict[str, Any],
    before: dict[str, Any] | None = None,
    after: dict[str, Any] | None = None,
    ts_ms: int | None = None,
    ts_us: int | None = None,
    ts_ns: int | None = None,
    transaction: dict[str, Any] | None = None,
    key: dict[str, Any] | None = None,
) -> ChangeEvent:
    """A relational change. `before`/`after` are row payload dicts in column order (the converters' output).
    The key defaults to the key columns of `after` (c, u, r) or `before` (d); a truncate (t) has no key.
    Missing ts_ms takes the processing time now; missing ts_us/ts_ns derive from the same reading."""
    if op not in OPS:
        raise LakecdcError(f"unknown op {op!r}; expected one of c, u, d, r, t")
    if ts_ms is None:
        ts_ms, now_us, now_ns = now_ts()
        ts_us = now_us if ts_us is None else ts_us
        ts_ns = now_ns if ts_ns is None else ts_ns
    if table.ts_us_ns:
        if ts_us is None:
            ts_us = ts_ms * 1000
        if ts_ns is None:
            ts_ns = ts_us * 1000
    if key is None and op != "t":
        key = key_of(table, before if op == "d" else after)
    return ChangeEvent(table, op, key, before, after, source, ts_ms, ts_us, ts_ns, transaction)


def mongodb_change(
    table: TableSchemas,
    op: str,
    *,
    id_json: str,
    source: dict[str, Any],
    after: str | None = None,
    patch: str | None = None,
    ts_ms: int | None = None,
    ts_us: int | None = None,
    ts_ns: int | None = None,
    transaction: dict[str, Any] | None = None,
) -> ChangeEvent:
    """A MongoDB change: key {"id": <_id in strict extended JSON>}; `after` (c, r) and `patch` (u) are JSON
    strings; a delete carries neither."""
    if op not in OPS:
        raise LakecdcError(f"unknown op {op!r}; expected one of c, u, d, r, t")
    if ts_ms is None:
        ts_ms, ts_us, ts_ns = now_ts()
    return ChangeEvent(table, op, {"id": id_json}, None, after, source, ts_ms, ts_us, ts_ns, transaction, patch)


def tombstone(event: ChangeEvent) -> ChangeEvent:
    """The tombstone following a delete: the same key (null for a keyless table, as Debezium 3.6.3 writes
    it), a null value."""
    return ChangeEvent(event.table, None, event.key)


def with_tombstones(events: Iterable[ChangeEvent], tombstones_on_delete: bool = True) -> Iterator[ChangeEvent]:
    """Each event, and after every delete a tombstone when `tombstones.on.delete` is true (the default);
    a keyless table's delete is followed by a tombstone with a null key too (Debezium 3.6.3)."""
    for ev in events:
        yield ev
        if tombstones_on_delete and ev.op == "d":
            yield ChangeEvent(ev.table, None, ev.key)


# ---------------------------------------------------------------------------------------------------------
# Schema change events


@dataclass(frozen=True)
class Column:
    """One tableChanges[].table.columns[] item, in Debezium 3.6.3's layout (io.debezium.connector.schema.Column)."""

    name: str
    jdbc_type: int                  # java.sql.Types code: 4 INTEGER, 12 VARCHAR, 2 NUMERIC, ...
    type_name: str
    position: int                   # 1-based
    optional: bool
    type_expression: str | None = None   # defaults to type_name
    native_type: int | None = None
    charset_name: str | None = None
    length: int | None = None
    scale: int | None = None
    auto_incremented: bool = False
    generated: bool = False
    comment: str | None = None
    default_value_expression: str | None = None
    enum_values: Sequence[str] | None = None
    # lakecdc's PostgreSQL schema changes only (Debezium's PostgreSQL connector has none): the value the
    # database gave the rows that existed when the column was added (pg_attribute.attmissingval), as a SQL
    # string literal; silver fills those rows with it (docs/silver.md)
    missing_value: str | None = None

    @classmethod
    def from_payload(cls, item: dict[str, Any]) -> Column:
        """The column of a tableChanges entry written in Debezium's field names (as ingest.schema.model writes
        them; fields this layout does not have, such as the schema history's hasDefaultValue, are left out)."""
        return cls(name=item["name"], jdbc_type=item["jdbcType"], type_name=item["typeName"],
                   position=item["position"], optional=item["optional"], type_expression=item.get("typeExpression"),
                   native_type=item.get("nativeType"), charset_name=item.get("charsetName"),
                   length=item.get("length"), scale=item.get("scale"),
                   auto_incremented=bool(item.get("autoIncremented")), generated=bool(item.get("generated")),
                   comment=item.get("comment"), default_value_expression=item.get("defaultValueExpression"),
                   enum_values=item.get("enumValues"), missing_value=item.get("missingValue"))

    def payload(self, missing_value: bool = False) -> dict[str, Any]:
        out = {
            "name": self.name, "jdbcType": self.jdbc_type, "nativeType": self.native_type,
            "typeName": self.type_name,
            "typeExpression": self.type_name if self.type_expression is None else self.type_expression,
            "charsetName": self.charset_name, "length": self.length, "scale": self.scale,
            "position": self.position, "optional": self.optional, "autoIncremented": self.auto_incremented,
            "generated": self.generated, "comment": self.comment,
            "defaultValueExpression": self.default_value_expression,
            "enumValues": None if self.enum_values is None else list(self.enum_values),
        }
        if missing_value:
            out["missingValue"] = self.missing_value
        return out


@dataclass(frozen=True)
class TableChange:
    """One tableChanges[] item: the whole table after the change (type CREATE, ALTER or DROP). `columns` None:
    no table (a DROP of a table whose structure is unknown), written as `"table": null`."""

    type: str
    id: str                          # quoted_table_id(...); a rename: "<old>,<new>"
    columns: Sequence[Column] | None
    primary_key_column_names: Sequence[str] = ()
    default_charset_name: str | None = None
    comment: str | None = None

    @classmethod
    def from_payload(cls, entry: dict[str, Any]) -> TableChange:
        """A tableChanges entry written in Debezium's field names (ingest.schema.model.Table.to_table_change)."""
        table = entry.get("table")
        if table is None:
            return cls(type=entry["type"], id=entry["id"], columns=None)
        return cls(type=entry["type"], id=entry["id"], columns=[Column.from_payload(c) for c in table["columns"]],
                   primary_key_column_names=table.get("primaryKeyColumnNames") or (),
                   default_charset_name=table.get("defaultCharsetName"), comment=table.get("comment"))

    def payload(self, missing_value: bool = False) -> dict[str, Any]:
        if self.type not in ("CREATE", "ALTER", "DROP"):
            raise LakecdcError(f"tableChanges type must be CREATE, ALTER or DROP, not {self.type!r}")
        if self.columns is None:
            return {"type": self.type, "id": self.id, "table": None}
        table: dict[str, Any] = {
            "defaultCharsetName": self.default_charset_name,
            "primaryKeyColumnNames": list(self.primary_key_column_names),
            "columns": [c.payload(missing_value) for c in self.columns],
            "comment": self.comment,
        }
        return {"type": self.type, "id": self.id, "table": table}


def quoted_table_id(*parts: str | None) -> str:
    """Debezium's table id: each present part in double quotes, joined by dots: "testDB"."dbo"."customers"."""
    return ".".join(quote_id_part(p) for p in parts if p)


def quote_id_part(part: str) -> str:
    """One part of Debezium's table id, as its TableId quotes it: embedded double quotes doubled, then the part
    in double quotes; a part that already begins or ends with a double quote is taken as quoted, unchanged."""
    if part.startswith('"') or part.endswith('"'):
        return part
    return '"' + part.replace('"', '""') + '"'


@dataclass(frozen=True)
class SchemaChangeLayout:
    key_schema: cs.Schema
    value_schema: cs.Schema
    missing_value: bool = False  # lakecdc's PostgreSQL layout: missingValue per column (Column.missing_value)


def _column_schema(missing_value: bool = False) -> cs.Schema:
    fields = [
        ("name", cs.string()), ("jdbcType", cs.int32()), ("nativeType", cs.int32(True)),
        ("typeName", cs.string()), ("typeExpression", cs.string(True)), ("charsetName", cs.string(True)),
        ("length", cs.int32(True)), ("scale", cs.int32(True)), ("position", cs.int32()),
        ("optional", cs.boolean(True)), ("autoIncremented", cs.boolean(True)), ("generated", cs.boolean(True)),
        ("comment", cs.string(True)), ("defaultValueExpression", cs.string(True)),
        ("enumValues", cs.array(cs.string(), True)),
    ]
    if missing_value:
        fields.append(("missingValue", cs.string(True)))
    return cs.struct(fields, False, name="io.debezium.connector.schema.Column", version=1)


def _schema_change_layout(connector: str) -> SchemaChangeLayout:
    """Debezium 3.6.3's schema history schemas (read from its jars: SchemaFactory, shared by every relational
    connector, MariaDB's included); lakecdc's PostgreSQL rows add missingValue per column."""
    missing_value = connector == "postgresql"  # Debezium's PostgreSQL connector has no schema changes to follow
    key = cs.struct([("databaseName", cs.string())], False,
                    name=f"io.debezium.connector.{connector}.SchemaChangeKey", version=1)
    table_fields: list[tuple[str, cs.Schema]] = [
        ("defaultCharsetName", cs.string(True)),
        ("primaryKeyColumnNames", cs.array(cs.string(), True)),
        ("columns", cs.array(_column_schema(missing_value))),
        ("comment", cs.string(True)),
    ]
    change_schema = cs.struct([
        ("type", cs.string()), ("id", cs.string()),
        ("table", cs.struct(table_fields, True, name="io.debezium.connector.schema.Table", version=1)),
    ], False, name="io.debezium.connector.schema.Change", version=1)
    fields: list[tuple[str, cs.Schema]] = [
        ("source", SOURCE_SCHEMAS[connector]), ("ts_ms", cs.int64()),
        ("databaseName", cs.string(True)), ("schemaName", cs.string(True)), ("ddl", cs.string(True)),
        ("tableChanges", cs.array(change_schema)),
    ]
    value = cs.struct(fields, False, name=f"io.debezium.connector.{connector}.SchemaChangeValue", version=1)
    return SchemaChangeLayout(key, value, missing_value)


# MongoDB has no schema change events. PostgreSQL has none in Debezium (logical decoding carries no DDL);
# the layout here is the 3.6.3 jar's, for schema changes a PostgreSQL connector derives from relation messages.
SCHEMA_CHANGE_LAYOUTS: dict[str, SchemaChangeLayout] = {
    c: _schema_change_layout(c) for c in CONNECTORS if c != "mongodb"
}


@dataclass
class SchemaChangeEvent:
    connector: str
    prefix: str                     # topic.prefix: the schema change topic
    source: dict[str, Any]
    database_name: str | None
    schema_name: str | None
    ddl: str | None                 # SQL Server: always None
    table_changes: Sequence[TableChange]
    ts_ms: int | None = None        # processing time; now when not given, fixed once so that value() is stable

    def __post_init__(self) -> None:
        if self.connector not in SCHEMA_CHANGE_LAYOUTS:
            raise LakecdcError(f"connector {self.connector!r} has no schema change events")
        if self.ts_ms is None:
            self.ts_ms = now_ts()[0]

    @property
    def layout(self) -> SchemaChangeLayout:
        return SCHEMA_CHANGE_LAYOUTS[self.connector]

    @property
    def topic(self) -> str:
        return tp.schema_change_topic(self.prefix)

    @property
    def key_schema(self) -> cs.Schema:
        return self.layout.key_schema

    @property
    def key(self) -> dict[str, Any]:
        return {"databaseName": self.database_name or ""}

    @property
    def value_schema(self) -> cs.Schema:
        return self.layout.value_schema

    def value(self) -> dict[str, Any]:
        return {
            "source": self.source, "ts_ms": self.ts_ms, "databaseName": self.database_name,
            "schemaName": self.schema_name, "ddl": self.ddl,
            "tableChanges": [tc.payload(self.layout.missing_value) for tc in self.table_changes],
        }


# ---------------------------------------------------------------------------------------------------------
# Heartbeats

# Debezium 3.6.3's heartbeat schemas (read from its jar: SchemaFactory), version 1.
HEARTBEAT_KEY_SCHEMA = cs.struct([("serverName", cs.string())], False,
                                 name="io.debezium.connector.common.ServerNameKey", version=1)
HEARTBEAT_VALUE_SCHEMA = cs.struct([("ts_ms", cs.int64())], False, name="io.debezium.connector.common.Heartbeat",
                                   version=1)


@dataclass
class HeartbeatEvent:
    """Key {serverName: topic.prefix}, value {ts_ms}, on __debezium-heartbeat.<prefix> (Debezium's documentation
    gives only the topic; this record layout is upstream Debezium's Heartbeat)."""

    prefix: str
    ts_ms: int
    heartbeat_prefix: str = tp.DEFAULT_HEARTBEAT_PREFIX

    @property
    def topic(self) -> str:
        return tp.heartbeat_topic(self.prefix, self.heartbeat_prefix)

    key_schema = HEARTBEAT_KEY_SCHEMA
    value_schema = HEARTBEAT_VALUE_SCHEMA

    @property
    def key(self) -> dict[str, Any]:
        return {"serverName": self.prefix}

    def value(self) -> dict[str, Any]:
        return {"ts_ms": self.ts_ms}


# Debezium's sink notification channel record (io.debezium.pipeline.notification): key the notification id,
# value id, aggregate_type, type, additional_data (map of strings), timestamp (ms).
NOTIFICATION_KEY_SCHEMA = cs.string()
NOTIFICATION_VALUE_SCHEMA = cs.struct([
    ("id", cs.string()), ("aggregate_type", cs.string()), ("type", cs.string()),
    ("additional_data", cs.map_(cs.string(), cs.string(), True)), ("timestamp", cs.int64())],
    False, name="io.debezium.notification.Notification")


@dataclass
class NotificationEvent:
    """A notification (e.g. aggregate_type "Incremental Snapshot", type STARTED / IN_PROGRESS /
    TABLE_SCAN_COMPLETED / COMPLETED / ABORTED / PAUSED / RESUMED) on `topic`."""

    topic: str
    notification_id: str
    aggregate_type: str
    type: str
    additional_data: dict[str, str]
    timestamp: int

    key_schema = NOTIFICATION_KEY_SCHEMA
    value_schema = NOTIFICATION_VALUE_SCHEMA

    @property
    def key(self) -> str:
        return self.notification_id

    def value(self) -> dict[str, Any]:
        return {"id": self.notification_id, "aggregate_type": self.aggregate_type, "type": self.type,
                "additional_data": self.additional_data, "timestamp": self.timestamp}


def notification_data(data: dict[str, str], connector_name: str) -> dict[str, str]:
    """A notification's additional_data as Debezium writes it: `data` plus connector_name (the logical name), in the
    order of the Java HashMap it is built in (`new HashMap<>(data)`, then connector_name put): by bucket of the key's
    String hash in the table's final size, insertion order within a bucket (Debezium's own order there comes from a
    Map.of, which the JVM randomizes: `data`'s order stands in for it)."""
    entries = [*data.items(), ("connector_name", connector_name)]
    n = len(data)
    # the table size after the copy constructor (tableSizeFor(n / 0.75 + 1)) and the put (resized past 0.75 full)
    size = 16 if n == 0 else 1 << max(int(n / 0.75 + 1) - 1, 1).bit_length()
    while len(entries) > size * 0.75:
        size *= 2

    def bucket(key: str) -> int:
        h = 0
        for ch in key:   # String.hashCode over UTF-16 units (the keys are ASCII)
            h = (31 * h + ord(ch)) & 0xFFFFFFFF
        return (h ^ (h >> 16)) & (size - 1)

    return dict(sorted(entries, key=lambda kv: bucket(kv[0])))


# ---------------------------------------------------------------------------------------------------------
# Transaction metadata (provide.transaction.metadata=true)

# Debezium 3.6.3's TransactionMonitor schemas (measured on the postgres connector; common to all connectors):
# key {id} version 1; value status, id, event_count, data_collections (items event.collection v1), ts_ms.
TRANSACTION_KEY_SCHEMA = cs.struct([("id", cs.string())], False,
                                   name="io.debezium.connector.common.TransactionMetadataKey", version=1)
_DATA_COLLECTION_SCHEMA = cs.struct([("data_collection", cs.string()), ("event_count", cs.int64())], True,
                                    name="event.collection", version=1)


def _transaction_value_schema() -> cs.Schema:
    return cs.struct([
        ("status", cs.string()), ("id", cs.string()), ("event_count", cs.int64(True)),
        ("data_collections", cs.array(_DATA_COLLECTION_SCHEMA, True)), ("ts_ms", cs.int64()),
    ], False, name="io.debezium.connector.common.TransactionMetadataValue", version=1)


# Debezium's documentation examples (tests/golden) show older layouts (SQL Server 1.2 without ts_ms, ts_ms after
# id): docs/events.md.
TRANSACTION_VALUE_SCHEMAS = {c: _transaction_value_schema() for c in CONNECTORS}


@dataclass
class TransactionEvent:
    connector: str
    prefix: str
    status: str                                # BEGIN | END
    id: str
    ts_ms: int | None = None
    event_count: int | None = None             # END only
    data_collections: list[dict[str, Any]] | None = None   # END only: [{data_collection, event_count}]
    transaction_suffix: str = tp.DEFAULT_TRANSACTION_SUFFIX

    def __post_init__(self) -> None:
        if self.status not in ("BEGIN", "END"):
            raise LakecdcError(f"transaction status must be BEGIN or END, not {self.status!r}")
        if self.ts_ms is None:
            self.ts_ms = now_ts()[0]  # no source time: processing time, fixed once

    @property
    def topic(self) -> str:
        return tp.transaction_topic(self.prefix, self.transaction_suffix)

    key_schema = TRANSACTION_KEY_SCHEMA

    @property
    def value_schema(self) -> cs.Schema:
        return TRANSACTION_VALUE_SCHEMAS[self.connector]

    @property
    def key(self) -> dict[str, Any]:
        return {"id": self.id}

    def value(self) -> dict[str, Any]:
        return {"status": self.status, "id": self.id, "event_count": self.event_count,
                "data_collections": self.data_collections, "ts_ms": self.ts_ms}


def _java_string_hash(text: str) -> int:
    """Java's String.hashCode (over UTF-16 code units), as an unsigned 32-bit number."""
    h = 0
    data = text.encode("utf-16-be")
    for i in range(0, len(data), 2):
        h = (31 * h + (data[i] << 8 | data[i + 1])) & 0xFFFFFFFF
    return h


def java_hashmap_order(keys: list[str]) -> list[str]:
    """`keys` (distinct, in insertion order) in the iteration order of a java.util.HashMap holding them:
    Debezium counts END's data_collections in one, so that is the order it writes them in. Buckets by the
    spread hash at the map's final capacity (16, doubled past 0.75 load), insertion order within a bucket."""
    capacity = 16
    while len(keys) > capacity * 3 // 4:
        capacity *= 2

    def bucket(key: str) -> int:
        h = _java_string_hash(key)
        return (h ^ (h >> 16)) & (capacity - 1)

    return [k for _, _, k in sorted((bucket(k), i, k) for i, k in enumerate(keys))]


class TransactionTracker:
    """Numbers the events of one source transaction at a time: BEGIN, a `transaction` block per data event
    (total_order and data_collection_order from 1), END with per-table counts in Java HashMap order
    (java_hashmap_order, as Debezium's TransactionContext map iterates)."""

    def __init__(self, connector: str, prefix: str, transaction_suffix: str = tp.DEFAULT_TRANSACTION_SUFFIX) -> None:
        self.connector = check_connector(connector)
        self.prefix = prefix
        self.suffix = transaction_suffix
        self.id: str | None = None
        self.total = 0
        self.per_collection: dict[str, int] = {}

    def begin(self, txn_id: str, ts_ms: int | None = None) -> TransactionEvent:
        if self.id is not None:
            raise LakecdcError(f"transaction {self.id} is still open; cannot begin {txn_id}")
        self.id, self.total, self.per_collection = txn_id, 0, {}
        return TransactionEvent(self.connector, self.prefix, "BEGIN", txn_id, ts_ms, transaction_suffix=self.suffix)

    def block(self, data_collection: str, event_id: str | None = None) -> dict[str, Any]:
        """The `transaction` block of the next data event of `data_collection` (e.g. testDB.dbo.tablea).
        `event_id`: the id this event carries when the connector's id moves within a transaction
        (PostgreSQL: "<xid>:<event LSN>"); default the transaction's id."""
        if self.id is None:
            raise LakecdcError("no open transaction")
        self.total += 1
        n = self.per_collection.get(data_collection, 0) + 1
        self.per_collection[data_collection] = n
        return {"id": self.id if event_id is None else event_id, "total_order": self.total,
                "data_collection_order": n}

    def end(self, ts_ms: int | None = None, end_id: str | None = None) -> TransactionEvent:
        """The END event; `end_id`: its id when it differs from BEGIN's (PostgreSQL: "<xid>:<commit LSN>")."""
        if self.id is None:
            raise LakecdcError("no open transaction")
        ev = TransactionEvent(
            self.connector, self.prefix, "END", self.id if end_id is None else end_id, ts_ms, self.total,
            [{"data_collection": k, "event_count": self.per_collection[k]}
             for k in java_hashmap_order(list(self.per_collection))],
            transaction_suffix=self.suffix,
        )
        self.id = None
        return ev


# ---------------------------------------------------------------------------------------------------------

AnyEvent = ChangeEvent | SchemaChangeEvent | HeartbeatEvent | TransactionEvent


def record(event: AnyEvent, schemas_enable: bool = True) -> tuple[str, bytes | None, bytes | None]:
    """(topic, key bytes, value bytes) exactly as Kafka Connect's JsonConverter would write the record."""
    value = event.value()
    return (
        event.topic,
        serialize(event.key_schema, event.key, schemas_enable),
        serialize(event.value_schema if value is not None else None, value, schemas_enable),
    )
