"""Change events -> bronze rows (ingest.bronze.contract): payloads as JSON text, schemas as canonical JSON
text (the writer derives schema ids from it and registers each schema once in S_schemas).

The connector supplies what only it knows: `seq` (ingest.bronze.contract.encode_seq of its position),
the position JSON to resume from, and optionally the transaction id when the event carries no
`transaction` block (e.g. PostgreSQL txId, MySQL GTID, Oracle txId).
"""

from __future__ import annotations

from typing import Any

from ingest.bronze.contract import BronzeEvent, BronzeSchemaChange
from ingest.errors import LakecdcError
from ingest.events.envelope import (
    OPS,
    ChangeEvent,
    HeartbeatEvent,
    NotificationEvent,
    SchemaChangeEvent,
    TableSchemas,
    envelope_value,
    key_of,
    now_ts,
)
from ingest.events.json_converter import canonical_schema_json, dumps_str
from ingest.events.source_info import snapshot_text


def change_to_bronze(event: ChangeEvent, *, seq: str, position: str | None, txn_id: str | None = None) -> BronzeEvent:
    """A data change event, or a tombstone (op None, value None, value schema None)."""
    table = event.table
    if event.op is None:
        key = dumps_str(event.key) if event.key is not None else None
        key_schema = table.key_schema_json if event.key is not None else None
        return BronzeEvent(table.topic, table.table_id, None, seq, key, None, key_schema, None, None, None, txn_id,
                           None, position)
    return _data_row(table, event.op, event.key, event.value(), event.source, event.ts_ms, event.transaction, seq,
                     position, txn_id)


def relational_change_to_bronze(table: TableSchemas, op: str, *, before: dict[str, Any] | None,
                                after: dict[str, Any] | None, source: dict[str, Any], seq: str,
                                position: str | None, txn_id: str | None = None,
                                transaction: dict[str, Any] | None = None,
                                key: dict[str, Any] | None = None, ts_ms: int | None = None) -> BronzeEvent:
    """What change_to_bronze(ev.change(table, op, ...)) gives (processing time now, or `ts_ms` with ts_us and
    ts_ns scaled from it, as ev.change does; key from the row when not given), without the intermediate
    ChangeEvent: the per-row path of the streaming connectors."""
    if op not in OPS:
        raise LakecdcError(f"unknown op {op!r}; expected one of c, u, d, r, t")
    if ts_ms is None:
        ts_ms, ts_us, ts_ns = now_ts()
    else:
        ts_us = ts_ms * 1000
        ts_ns = ts_us * 1000
    if key is None and op != "t":
        key = key_of(table, before if op == "d" else after)
    value = envelope_value(table, op, before, after, source, transaction, ts_ms, ts_us, ts_ns)
    return _data_row(table, op, key, value, source, ts_ms, transaction, seq, position, txn_id)


def _data_row(table: TableSchemas, op: str, key: dict[str, Any] | None, value: dict[str, Any] | None,
              source: dict[str, Any] | None, ts_ms: int | None, transaction: dict[str, Any] | None, seq: str,
              position: str | None, txn_id: str | None) -> BronzeEvent:
    if txn_id is None and transaction is not None:
        txn_id = transaction.get("id")
    snapshot = source.get("snapshot") if source else None
    # positional: keyword construction costs more on this per-event path (field order: BronzeEvent)
    return BronzeEvent(
        table.topic, table.table_id, op, seq,
        dumps_str(key) if key is not None else None,
        dumps_str(value),
        table.key_schema_json if key is not None else None,
        table.envelope_schema_json,
        ts_ms,
        source.get("ts_ms") if source else None,
        txn_id,
        # snapshot_text inlined for the common values
        "false" if snapshot is False else "true" if snapshot is True else snapshot_text(snapshot),
        position,
    )


def schema_change_to_bronze(event: SchemaChangeEvent, *, seq: str, position: str | None) -> BronzeSchemaChange:
    value = event.value()
    return BronzeSchemaChange(
        seq=seq, ts_ms=value.get("ts_ms", event.source.get("ts_ms")), database_name=event.database_name,
        schema_name=event.schema_name, ddl=event.ddl, table_changes=dumps_str(value["tableChanges"]),
        event=dumps_str(value), position=position,
    )


def heartbeat_to_bronze(event: HeartbeatEvent, *, seq: str, position: str | None) -> BronzeEvent:
    """A heartbeat on its topic: op NULL, table_id = the topic (as the debezium-json source lands them)."""
    return BronzeEvent(
        topic=event.topic, table_id=event.topic, op=None, seq=seq, key=dumps_str(event.key),
        value=dumps_str(event.value()), key_schema=canonical_schema_json(event.key_schema),
        value_schema=canonical_schema_json(event.value_schema), ts_ms=event.ts_ms, source_ts_ms=event.ts_ms,
        txn_id=None, snapshot="false", position=position)


def notification_to_bronze(event: NotificationEvent, *, seq: str, position: str | None) -> BronzeEvent:
    """A notification on its topic: op NULL, table_id = the topic (like heartbeats)."""
    return BronzeEvent(
        topic=event.topic, table_id=event.topic, op=None, seq=seq, key=dumps_str(event.key),
        value=dumps_str(event.value()), key_schema=canonical_schema_json(event.key_schema),
        value_schema=canonical_schema_json(event.value_schema), ts_ms=event.timestamp,
        source_ts_ms=event.timestamp, txn_id=None, snapshot="false", position=position)


def to_bronze(
    event: ChangeEvent | SchemaChangeEvent, *, seq: str, position: str | None, txn_id: str | None = None
) -> BronzeEvent | BronzeSchemaChange:
    if isinstance(event, SchemaChangeEvent):
        return schema_change_to_bronze(event, seq=seq, position=position)
    return change_to_bronze(event, seq=seq, position=position, txn_id=txn_id)
