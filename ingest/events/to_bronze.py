"""Change events -> bronze rows (ingest.bronze.contract): payloads as JSON text, schemas as canonical JSON
text (the writer derives schema ids from it and registers each schema once in S_schemas).

The connector supplies what only it knows: `seq` (ingest.bronze.contract.encode_seq of its position),
the position JSON to resume from, and optionally the transaction id when the event carries no
`transaction` block (e.g. PostgreSQL txId, MySQL GTID, Oracle txId).
"""

from __future__ import annotations

from ingest.bronze.contract import BronzeEvent, BronzeSchemaChange
from ingest.events.envelope import ChangeEvent, SchemaChangeEvent
from ingest.events.json_converter import dumps_str
from ingest.events.source_info import snapshot_text


def change_to_bronze(event: ChangeEvent, *, seq: str, position: str | None, txn_id: str | None = None) -> BronzeEvent:
    """A data change event, or a tombstone (op None, value None, value schema None)."""
    table = event.table
    key = dumps_str(event.key) if event.key is not None else None
    key_schema = table.key_schema_json if event.key is not None else None
    if event.op is None:
        return BronzeEvent(
            topic=table.topic, table_id=table.table_id, op=None, seq=seq, key=key, value=None,
            key_schema=key_schema, value_schema=None, ts_ms=None, source_ts_ms=None, txn_id=txn_id,
            snapshot=None, position=position,
        )
    source = event.source
    if txn_id is None and event.transaction is not None:
        txn_id = event.transaction.get("id")
    snapshot = source.get("snapshot") if source else None
    return BronzeEvent(
        topic=table.topic, table_id=table.table_id, op=event.op, seq=seq, key=key, value=dumps_str(event.value()),
        key_schema=key_schema, value_schema=table.envelope_schema_json, ts_ms=event.ts_ms,
        source_ts_ms=source.get("ts_ms") if source else None, txn_id=txn_id,
        # snapshot_text inlined for the common values (this is the per-event path)
        snapshot="false" if snapshot is False else "true" if snapshot is True else snapshot_text(snapshot),
        position=position,
    )


def schema_change_to_bronze(event: SchemaChangeEvent, *, seq: str, position: str | None) -> BronzeSchemaChange:
    value = event.value()
    return BronzeSchemaChange(
        seq=seq, ts_ms=value.get("ts_ms", event.source.get("ts_ms")), database_name=event.database_name,
        schema_name=event.schema_name, ddl=event.ddl, table_changes=dumps_str(value["tableChanges"]),
        event=dumps_str(value), position=position,
    )


def to_bronze(
    event: ChangeEvent | SchemaChangeEvent, *, seq: str, position: str | None, txn_id: str | None = None
) -> BronzeEvent | BronzeSchemaChange:
    if isinstance(event, SchemaChangeEvent):
        return schema_change_to_bronze(event, seq=seq, position=position)
    return change_to_bronze(event, seq=seq, position=position, txn_id=txn_id)
