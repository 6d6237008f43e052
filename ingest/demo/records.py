"""Turn the logical workload into the Kafka records Debezium's MySQL connector would produce for it
(`topic.prefix=inventory`, database `inventory`, JsonConverter with schemas, `tombstones.on.delete=true`,
`include.schema.changes=true`, binlog_row_image FULL).

Binlog positions are simulated: each transaction starts with a GTID and a BEGIN event, each statement
is a table-map plus one rows event (`row` numbers the rows inside it), a COMMIT closes it; the binlog
rotates to the next file every ~256 KiB. The snapshot's records all carry the position read when the
snapshot began, as Debezium's do.
"""

from __future__ import annotations

from typing import Any

from ingest.demo.delivery import KafkaRecord
from ingest.demo.inventory import DATABASE, DemoTable
from ingest.demo.workload import DdlChange, RowChange, Transaction
from ingest.events import envelope as ev
from ingest.events.envelope import TableSchemas
from ingest.events.json_converter import dumps_str
from ingest.events.source_info import mysql_source

CONNECTOR = "mysql"
TOPIC_PREFIX = "inventory"
CONNECTOR_VERSION = "1.0.0.Final"  # the source block layout of Debezium 1.0's MySQL connector documentation
SERVER_ID = 223344
SERVER_UUID = "0e4d5dcd-a33b-11ea-80f1-02010a22a99e"
ROTATE_AT = 256 * 1024
PROCESSING_LAG_MS = (3, 250)  # connector processing time after the commit, envelope ts_ms


def table_schemas(table: DemoTable) -> TableSchemas:
    """Key and envelope schemas of one table version (built once per DDL, not per event)."""
    return ev.table_schemas(CONNECTOR, TOPIC_PREFIX, db=DATABASE, table=table.name,
                            columns=[(c.name, c.connect_schema()) for c in table.columns],
                            key_columns=table.primary_key)


class BinlogClock:
    """Simulated binlog coordinates."""

    def __init__(self) -> None:
        self.file_number = 3
        self.pos = 154
        self.gtid_seq = 0

    @property
    def file(self) -> str:
        return f"mysql-bin.{self.file_number:06d}"

    def advance(self, length: int) -> int:
        """Reserve `length` bytes; returns the start position of the event."""
        start = self.pos
        self.pos += length
        return start

    def rotate_if_needed(self) -> None:
        if self.pos >= ROTATE_AT:
            self.file_number += 1
            self.pos = 4 + 120 + 71  # magic + format description + previous-gtids events


class RecordBuilder:
    """Builds records transaction by transaction; its rng only decides processing lags."""

    def __init__(self, rng: Any) -> None:
        self.rng = rng
        self.clock = BinlogClock()
        self._schemas: dict[int, tuple[DemoTable, TableSchemas]] = {}  # by table version (the object)

    def schemas(self, table: DemoTable) -> TableSchemas:
        cached = self._schemas.get(id(table))
        if cached is None:
            cached = self._schemas[id(table)] = (table, table_schemas(table))  # holding table keeps id() unique
        return cached[1]

    def transaction(self, txn: Transaction) -> list[KafkaRecord]:
        if txn.snapshot:
            return self._snapshot(txn)
        self.clock.rotate_if_needed()
        self.clock.gtid_seq += 1
        gtid = f"{SERVER_UUID}:{self.clock.gtid_seq}"
        self.clock.advance(65 + 80)  # GTID + BEGIN (a DDL has no BEGIN, the difference is immaterial here)
        processed = txn.ts_ms + self.rng.randint(*PROCESSING_LAG_MS)
        out: list[KafkaRecord] = []
        for statement in txn.statements:
            first = statement.changes[0]
            if isinstance(first, DdlChange):
                pos = self.clock.advance(60 + len(statement.query))
                source = self._source(first.table.name, txn.ts_ms, pos, 0, False, gtid, txn.thread)
                out.append(self._schema_change(first, source, processed))
                continue
            self.clock.advance(40 + len(first.table.name))  # table map
            pos = self.clock.advance(30 + 60 * len(statement.changes))
            row = 0
            for change in statement.changes:
                assert isinstance(change, RowChange)
                source = self._source(change.table.name, txn.ts_ms, pos, row, False, gtid, txn.thread)
                out.extend(self._row_records(change, source, processed, self._key_headers(change, statement.changes)))
                if not change.pk_change or change.op == "c":
                    row += 1  # a key change is one binlog row: its delete and create share the row
        self.clock.advance(31)  # XID (commit)
        return out

    def _snapshot(self, txn: Transaction) -> list[KafkaRecord]:
        out: list[KafkaRecord] = []
        processed = txn.ts_ms
        for statement in txn.statements:
            for change in statement.changes:
                processed += 1
                if isinstance(change, DdlChange):
                    source = self._source(change.table.name, txn.ts_ms, self.clock.pos, 0, True, None, None)
                    out.append(self._schema_change(change, source, processed))
                else:
                    source = self._source(change.table.name, processed, self.clock.pos, 0,
                                          change.snapshot_marker or True, None, None)
                    out.extend(self._row_records(change, source, processed))
        return out

    def _source(self, table: str, ts_ms: int, pos: int, row: int, snapshot: bool | str, gtid: str | None,
                thread: int | None) -> dict[str, Any]:
        return mysql_source(version=CONNECTOR_VERSION, name=TOPIC_PREFIX, ts_ms=ts_ms, db=DATABASE, table=table,
                            server_id=SERVER_ID, file=self.clock.file, pos=pos, row=row,
                            snapshot=snapshot, gtid=gtid, thread=thread)

    def _schema_change(self, change: DdlChange, source: dict[str, Any], processed: int) -> KafkaRecord:
        event = ev.SchemaChangeEvent(CONNECTOR, TOPIC_PREFIX, source, DATABASE, None, change.ddl,
                                     [change.table.table_change(change.kind)], ts_ms=processed)
        return self._record(event, processed, key_id=TOPIC_PREFIX, is_data=False)

    @staticmethod
    def _record(event: ev.AnyEvent, processed: int, *, key_id: str, is_data: bool = True,
                headers: tuple[tuple[str, str], ...] = ()) -> KafkaRecord:
        topic, key, value = ev.record(event)
        op = getattr(event, "op", None) if is_data else None
        return KafkaRecord(topic=topic, key=key, value=value, timestamp=processed + 1, op=op, headers=headers,
                           key_id=key_id, is_data=is_data)

    @staticmethod
    def _key_headers(change: RowChange, siblings: list[Any]) -> tuple[tuple[str, str], ...]:
        """A key change's delete carries the new key (__debezium.newkey), its create the old one."""
        if not change.pk_change:
            return ()
        index = siblings.index(change)
        pk = change.table.primary_key
        if change.op == "d":
            peer = siblings[index + 1].after
            return (("__debezium.newkey", dumps_str({c: peer[c] for c in pk})),)
        peer = siblings[index - 1].before
        return (("__debezium.oldkey", dumps_str({c: peer[c] for c in pk})),)

    def _row_records(self, change: RowChange, source: dict[str, Any], processed: int,
                     headers: tuple[tuple[str, str], ...] = ()) -> list[KafkaRecord]:
        table = change.table
        schemas = self.schemas(table)
        event = ev.change(schemas, change.op, source=source, before=self._encode(table, change.before),
                          after=self._encode(table, change.after), ts_ms=processed)
        key_id = schemas.topic + dumps_str(event.key)
        out = [self._record(event, processed, key_id=key_id, headers=headers)]
        if change.op == "d":
            out.append(self._record(ev.tombstone(event), processed, key_id=key_id))
        return out

    @staticmethod
    def _encode(table: DemoTable, row: dict[str, Any] | None) -> dict[str, Any] | None:
        if row is None:
            return None
        return {c.name: c.encode(row.get(c.name)) for c in table.columns}

