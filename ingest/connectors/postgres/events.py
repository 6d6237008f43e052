"""The PostgreSQL event dispatcher: builds Debezium's source blocks, schema change events, data events, logical
decoding message events and transaction events, each with its seq and position, into the batch being filled."""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ingest.bronze.contract import Batch, BronzeEvent, BronzeEventBlock, BronzeReject, BronzeSchemaChange
from ingest.connectors.postgres.offsets import OffsetContext, heartbeat_seq, make_seq
from ingest.connectors.postgres.properties import PostgresProperties
from ingest.connectors.postgres.tables import CapturedTable
from ingest.connectors.postgres.types import binary_encoding
from ingest.events import envelope as ev
from ingest.events.json_converter import canonical_schema_json, dumps_str
from ingest.events.source_info import VERSION, postgresql_sequence, postgresql_source
from ingest.events.to_bronze import (
    change_to_bronze,
    heartbeat_to_bronze,
    notification_to_bronze,
    relational_change_to_bronze,
    schema_change_to_bronze,
)


@dataclass
class Transaction:
    """The source transaction being streamed (from its Begin to its Commit)."""

    xid: int
    commit_lsn: int
    ts_us: int
    last_lsn: int = 0
    change_lsn: int = 0   # the LSN of its last row change message
    index: int = 0
    tracker: ev.TransactionTracker | None = None
    position: str | None = None  # the position JSON of its events (constant within the transaction)


@dataclass
class PendingBatch:
    """Events produced but not yet handed out, and the ack token of the last complete transaction."""

    events: list[BronzeEvent] = field(default_factory=list)
    schema_changes: list[BronzeSchemaChange] = field(default_factory=list)
    rejects: list[BronzeReject] = field(default_factory=list)
    blocks: list[BronzeEventBlock] = field(default_factory=list)  # snapshot rows, columnar
    ack: int | None = None
    started: float = field(default_factory=time.monotonic)

    def __len__(self) -> int:  # on the per-message path: no work for blocks when there are none
        n = len(self.events) + len(self.schema_changes) + len(self.rejects)
        return n + sum(len(b) for b in self.blocks) if self.blocks else n

    def to_batch(self, caught_up: bool) -> Batch:
        return Batch(events=self.events, schema_changes=self.schema_changes, rejects=self.rejects,
                     caught_up=caught_up, ack=self.ack, blocks=self.blocks)


class PostgresEventDispatcher:
    """Builds the events of one source; seqs and positions come from the shared offset context."""

    def __init__(self, props: PostgresProperties, offsets: OffsetContext) -> None:
        self.props = props
        self.offsets = offsets

    def next_seq(self, txn: Transaction, lsn: int) -> str | None:
        """The seq of the next event of `txn`, or None when it was already handed out (a resent event)."""
        txn.index += 1
        txn.last_lsn = lsn
        seq = make_seq(txn.commit_lsn, lsn, txn.index)
        return seq if self.offsets.claim(seq) else None

    def source(self, table: CapturedTable, txn: Transaction, lsn: int,
               snapshot: bool | str = False) -> dict[str, Any]:
        d = table.definition
        # sequence: [end LSN of the last transaction committed before this one, this change's LSN] (upstream's
        # lastCommitLsn is the Commit message's WAL position, i.e. its end LSN)
        sequence = postgresql_sequence(self.offsets.restart_lsn, lsn)
        if snapshot is not False:
            return postgresql_source(version=VERSION, name=self.props.topic_prefix, ts_ms=txn.ts_us // 1000,
                                     db=self.props.dbname, schema=d.schema, table=d.table, snapshot=snapshot,
                                     sequence=sequence, ts_us=txn.ts_us, txId=txn.xid, lsn=lsn)
        # a streamed change (every one of them comes here): the table's block with this change's values set
        template = table.streaming_source
        if template is None:
            template = table.streaming_source = postgresql_source(
                version=VERSION, name=self.props.topic_prefix, ts_ms=0, db=self.props.dbname, schema=d.schema,
                table=d.table, snapshot=False)
        source = template.copy()
        ts_us = txn.ts_us
        source["ts_ms"] = ts_us // 1000
        source["sequence"] = sequence
        source["ts_us"] = ts_us
        source["ts_ns"] = ts_us * 1000
        source["txId"] = txn.xid
        source["lsn"] = lsn
        return source

    def snapshot_tail(self, table: CapturedTable, ts_ms: int, slot_lsn: int, xmin: int) -> str:
        """The envelope text after "after" of a snapshot row: source block, op and ts_ms."""
        d = table.definition
        ts_ns = time.time_ns()
        source = postgresql_source(version=VERSION, name=self.props.topic_prefix, ts_ms=ts_ns // 1_000_000,
                                   db=self.props.dbname, schema=d.schema, table=d.table, snapshot=True,
                                   sequence=postgresql_sequence(None, slot_lsn), ts_us=ts_ns // 1000, txId=xmin,
                                   lsn=slot_lsn)
        return (f',"source":{dumps_str(source)},"transaction":null,"op":"r","ts_ms":{ts_ms},'
                f'"ts_us":{ts_ms * 1000},"ts_ns":{ts_ms * 1_000_000}}}')

    def schema_change(self, pending: PendingBatch, table: CapturedTable, kind: str, seq: str, position: str,
                      ts_ms: int, txid: int | None, lsn: int, snapshot: bool = True) -> None:
        if self.offsets.committed_before_run(seq):
            return
        d = table.definition
        sequence = postgresql_sequence(None if snapshot else self.offsets.restart_lsn, lsn)
        source = postgresql_source(version=VERSION, name=self.props.topic_prefix, ts_ms=ts_ms, db=self.props.dbname,
                                   schema=d.schema, table=d.table, snapshot=snapshot, sequence=sequence, txId=txid,
                                   lsn=lsn)
        change = ev.SchemaChangeEvent("postgresql", self.props.topic_prefix, source, self.props.dbname, d.schema,
                                      None, [table.table_change(kind)], ts_ms=ts_ms)
        pending.schema_changes.append(schema_change_to_bronze(change, seq=seq, position=position))

    def transaction_block(self, pending: PendingBatch, txn: Transaction, data_collection: str,
                          lsn: int) -> dict[str, Any]:
        """The `transaction` block of the next event of `txn` (provide.transaction.metadata), after the BEGIN
        event when this is the transaction's first. Ids are Debezium's "<xid>:<LSN of the event>"."""
        tracker = txn.tracker
        assert tracker is not None
        event_id = f"{txn.xid}:{lsn}"
        if tracker.id is None:
            self.transaction_event(pending, txn, tracker.begin(event_id, txn.ts_us // 1000), lsn)
        return tracker.block(data_collection, event_id)

    def change(self, pending: PendingBatch, txn: Transaction, event: ev.ChangeEvent, lsn: int) -> None:
        block = None
        if txn.tracker is not None and event.op is not None:
            d = event.table.table_id.split(".", 1)[1]  # Debezium's data collection: schema.table
            block = self.transaction_block(pending, txn, d, lsn)
        seq = self.next_seq(txn, lsn)
        if seq is None:
            return
        event.transaction = block
        if txn.position is None:
            txn.position = self.offsets.streaming_position(txn.commit_lsn)
        pending.events.append(change_to_bronze(event, seq=seq, position=txn.position, txn_id=str(txn.xid)))

    def row_change(self, pending: PendingBatch, txn: Transaction, table: CapturedTable, op: str,
                   before: dict[str, Any] | None, after: dict[str, Any] | None, key: dict[str, Any] | None,
                   source: dict[str, Any], lsn: int) -> None:
        """A streamed c/u/d change (and after a delete its tombstone, when tombstones.on.delete): what
        change(ev.change(...)) adds, without building the ChangeEvent (the per-row path)."""
        block = None
        if txn.tracker is not None:
            block = self.transaction_block(pending, txn, table.table_id.split(".", 1)[1], lsn)
        seq = self.next_seq(txn, lsn)
        if seq is not None:
            if txn.position is None:
                txn.position = self.offsets.streaming_position(txn.commit_lsn)
            pending.events.append(relational_change_to_bronze(
                table.schemas, op, before=before, after=after, source=source, seq=seq, position=txn.position,
                txn_id=str(txn.xid), transaction=block, key=key, ts_ms=now_ms()))
        if op == "d" and self.props.tombstones_on_delete:  # keyless tables too (null key), like Debezium
            self.change(pending, txn, ev.ChangeEvent(table.schemas, None, key), lsn)

    def reject(self, pending: PendingBatch, txn: Transaction, lsn: int, table: CapturedTable, problem: str,
               raw: bytes) -> None:
        seq = self.next_seq(txn, lsn)
        if seq is not None:
            pending.rejects.append(BronzeReject(seq, "convert", f"{table.table_id}: {problem}", raw,
                                                self.offsets.streaming_position(txn.commit_lsn)))

    def logical_message(self, pending: PendingBatch, txn: Transaction | None, lsn: int, prefix: str,
                        content: bytes) -> None:
        """pg_logical_emit_message(): Debezium's <prefix>.message topic, op "m"."""
        topic = f"{self.props.topic_prefix}.message"
        block = None
        if txn is not None and txn.tracker is not None:
            # Debezium counts the message in the transaction; its data_collections entry is named by a Java
            # object's toString (not reproducible): we name it by the message topic (docs/events.md)
            block = self.transaction_block(pending, txn, topic, lsn)
        if txn is not None:
            seq = self.next_seq(txn, lsn)
            ts_ms, xid, commit_lsn = txn.ts_us // 1000, txn.xid, txn.commit_lsn
        else:  # a non-transactional message
            seq = make_seq(lsn, lsn, 0)
            seq = seq if self.offsets.claim(seq) else None
            ts_ms, xid, commit_lsn = now_ms(), None, lsn
        if seq is None:
            return
        source = postgresql_source(version=VERSION, name=self.props.topic_prefix, ts_ms=ts_ms, db=self.props.dbname,
                                   schema="", table="", snapshot=False,
                                   sequence=postgresql_sequence(self.offsets.restart_lsn, lsn),
                                   ts_us=txn.ts_us if txn is not None else None, txId=xid, lsn=lsn)
        value_schema, encode = message_encoding(self.props.binary_handling_mode)
        value = {"op": "m", "ts_ms": now_ms(), "source": source, "transaction": block,
                 "message": {"prefix": prefix, "content": encode(content)}}
        key = {"prefix": prefix}
        pending.events.append(BronzeEvent(
            topic=topic, table_id=topic, op="m", seq=seq, key=dumps_str(key), value=dumps_str(value),
            key_schema=canonical_schema_json(MESSAGE_KEY_SCHEMA), value_schema=value_schema,
            ts_ms=value["ts_ms"], source_ts_ms=ts_ms, txn_id=str(xid) if xid is not None else None, snapshot="false",
            position=self.offsets.streaming_position(commit_lsn)))

    def heartbeat(self, pending: PendingBatch) -> None:
        """A heartbeat on Debezium's __debezium-heartbeat.<prefix> topic (key serverName, value ts_ms), at the
        position after the last complete transaction."""
        seq = heartbeat_seq(self.offsets.restart_lsn, self.offsets.last_seq)
        if not self.offsets.claim(seq):
            return
        event = ev.HeartbeatEvent(self.props.topic_prefix, now_ms(), self.props.heartbeat_topic_prefix)
        pending.events.append(heartbeat_to_bronze(
            event, seq=seq, position=self.offsets.streaming_position(self.offsets.restart_lsn)))

    def notification(self, pending: PendingBatch, txn: Transaction, lsn: int, kind: str,
                     data: dict[str, str], aggregate: str) -> None:
        """An incremental snapshot notification on notification.sink.topic.name, in `txn` at `lsn`; its position
        holds the snapshot's state as it is now (a resumed run continues from there)."""
        seq = self.next_seq(txn, lsn)
        if seq is None:
            return
        event = ev.NotificationEvent(self.props.notification_topic or "", f"{txn.xid}:{lsn}:{txn.index}",
                                     aggregate, kind, ev.notification_data(data, self.props.topic_prefix), now_ms())
        txn.position = None   # the state changed: the transaction's next events take the new one
        pending.events.append(notification_to_bronze(event, seq=seq,
                                                     position=self.offsets.streaming_position(txn.commit_lsn)))

    def notification_between(self, pending: PendingBatch, kind: str, data: dict[str, str], aggregate: str) -> None:
        """A notification between transactions (a signal from the signal file, a blocking snapshot): a seq and a
        position as a heartbeat's, after the last complete transaction."""
        seq = heartbeat_seq(self.offsets.restart_lsn, self.offsets.last_seq)
        if not self.offsets.claim(seq):
            return
        event = ev.NotificationEvent(self.props.notification_topic or "", f"{seq}", aggregate, kind,
                                     ev.notification_data(data, self.props.topic_prefix), now_ms())
        pending.events.append(notification_to_bronze(
            event, seq=seq, position=self.offsets.streaming_position(self.offsets.restart_lsn)))

    def blocking_read(self, pending: PendingBatch, table: CapturedTable, row: list[Any], mark: str,
                      origin: dict[str, Any]) -> None:
        """A blocking snapshot's read event (source.snapshot `mark`; lsn and txId: the last row change streamed
        before the pause, `origin`, as Debezium's offset holds them, measured) between transactions: a seq and a
        position as a heartbeat's, the position holding the snapshot's state."""
        lsn = origin.get("lsn") or self.offsets.restart_lsn
        seq = heartbeat_seq(self.offsets.restart_lsn, self.offsets.last_seq)
        if not self.offsets.claim(seq):
            return
        d = table.definition
        ts_ns = time.time_ns()
        source = postgresql_source(version=VERSION, name=self.props.topic_prefix, ts_ms=ts_ns // 1_000_000,
                                   db=self.props.dbname, schema=d.schema, table=d.table, snapshot=mark,
                                   sequence=postgresql_sequence(None, lsn), ts_us=ts_ns // 1000,
                                   txId=origin.get("txId"), lsn=lsn)
        after = table.row(row, self.props.unavailable_value_placeholder)
        event = ev.change(table.schemas, "r", source=source, after=after, key=table.key_from(after, row),
                          ts_ms=ts_ns // 1_000_000)
        pending.events.append(change_to_bronze(
            event, seq=seq, position=self.offsets.streaming_position(self.offsets.restart_lsn)))

    def transaction_event(self, pending: PendingBatch, txn: Transaction, event: ev.TransactionEvent,
                          lsn: int) -> None:
        seq = self.next_seq(txn, lsn)
        if seq is None:
            return
        value = event.value()
        pending.events.append(BronzeEvent(
            topic=event.topic, table_id=event.topic, op=None, seq=seq, key=dumps_str(event.key),
            value=dumps_str(value), key_schema=canonical_schema_json(event.key_schema),
            value_schema=canonical_schema_json(event.value_schema), ts_ms=value.get("ts_ms"),
            source_ts_ms=txn.ts_us // 1000, txn_id=str(txn.xid), snapshot="false",
            position=self.offsets.streaming_position(txn.commit_lsn)))


# Debezium 3.6.3's logical decoding message records (measured).
MESSAGE_KEY_SCHEMA = ev.cs.struct([("prefix", ev.cs.string(True))], False,
                                  name="io.debezium.connector.postgresql.MessageKey", version=1)


@functools.cache
def message_encoding(binary_mode: str) -> tuple[str, Callable[[bytes], str]]:
    """The value schema (canonical JSON) of a logical message record and its content's encoder: the content
    follows binary.handling.mode like a bytea column (a string in the hex/base64 modes, measured)."""
    content_schema, encode = binary_encoding(binary_mode, True)
    schema = ev.cs.struct([
        ("op", ev.cs.string()), ("ts_ms", ev.cs.int64(True)), ("source", ev.SOURCE_SCHEMAS["postgresql"]),
        ("transaction", ev.TRANSACTION_BLOCK_SCHEMA),
        ("message", ev.cs.struct([("prefix", ev.cs.string(True)), ("content", content_schema)], False,
                                 name="io.debezium.connector.postgresql.Message", version=1)),
    ], False, name="io.debezium.connector.postgresql.MessageValue", version=1)
    return canonical_schema_json(schema), encode


def now_ms() -> int:
    return time.time_ns() // 1_000_000
