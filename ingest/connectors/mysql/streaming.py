"""Binlog streaming (ingest.connectors.mysql.binlog_reader): row events with before/after images, DDL query events
as schema change events, GTID/transaction boundaries, annotate rows (include.query), truncate, primary-key changes
as delete + tombstone + create, reconnect with backoff.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pymysql
from pymysqlreplication.constants import NONE_SOURCE
from pymysqlreplication.event import (
    GtidEvent,
    MariadbAnnotateRowsEvent,
    MariadbGtidEvent,
    QueryEvent,
    RotateEvent,
    RowsQueryLogEvent,
    XidEvent,
)
from pymysqlreplication.row_event import DeleteRowsEvent, UpdateRowsEvent, WriteRowsEvent

from ingest.bronze.contract import Batch, BatchLimits, BronzeReject
from ingest.connectors.mysql import rowdecode
from ingest.connectors.mysql.binlog_reader import GTID, ROWS, BinlogReader, HotEvent
from ingest.connectors.mysql.codec import TableCodec, TableCodecs
from ingest.connectors.mysql.events import MySqlEventDispatcher
from ingest.connectors.mysql.gtid import gtid_set
from ingest.connectors.mysql.incremental import MySqlIncremental, check_signal_table
from ingest.connectors.mysql.offsets import SIGNAL_INDEX, MySqlOffset, heartbeat_seq, make_seq
from ingest.connectors.mysql.properties import MySqlProperties
from ingest.connectors.mysql.rowdecode import PlanCache
from ingest.connectors.mysql.schema_track import SchemaTracker
from ingest.connectors.mysql.server import MySqlConnection, binlog_file_number
from ingest.connectors.signals import FileSignalChannel
from ingest.errors import LakecdcError
from ingest.events.envelope import TransactionEvent, TransactionTracker

log = logging.getLogger(__name__)
EVENTS = [RotateEvent, GtidEvent, MariadbGtidEvent, QueryEvent, XidEvent, MariadbAnnotateRowsEvent, RowsQueryLogEvent,
          WriteRowsEvent, UpdateRowsEvent, DeleteRowsEvent]
_TXN_WORDS = ("BEGIN", "COMMIT", "ROLLBACK", "XA ", "SAVEPOINT", "RELEASE SAVEPOINT")
POLL_SECONDS = 0.2
ER_MASTER_FATAL_ERROR_READING_BINLOG = 1236   # the server cannot send the binlog from the asked position


class MySqlStreamingSource:
    """Reads the binlog from `start` (the beginning of a transaction) and hands out its events after
    `last_seq`, the last one landed. `restored_seqs`: the schema changes already in bronze (their DDL is
    applied again, not landed twice)."""

    fast_rows = True  # decode row images with ingest.connectors.mysql.rowdecode (False: mysql-replication's rows)
    hot_path = True   # read transactions' events with binlog_reader's hot path (False: all with mysql-replication)

    def __init__(self, *, source_name: str, config: MySqlProperties, tracker: SchemaTracker, codecs: TableCodecs,
                 events: MySqlEventDispatcher, stats: dict[str, int], start: MySqlOffset, last_seq: str | None,
                 restored_seqs: frozenset[str], connect: Callable[[], pymysql.connections.Connection],
                 file_channel: FileSignalChannel | None = None) -> None:
        self.source_name = source_name
        self.config = config
        self.schema = tracker
        self.codecs = codecs
        self.events = events
        self.stats = stats
        self.restored_seqs = restored_seqs
        self._plans = PlanCache(codecs.options)
        self._table_maps: dict[bytes, Any] = {}   # the hot path's parsed table maps, kept across readers
        self.file = start.file
        self._numbered_file: str | None = None   # the file whose number _file_no is
        self._file_no = 0
        self.txn_pos = start.pos
        self.gtids = gtid_set(config.flavor, start.gtids)
        self.last_seq = last_seq
        self.incremental = MySqlIncremental(config, source_name, tracker, codecs, connect, start.incremental,
                                            self._emit_incremental_read, self._emit_notification,
                                            self._incremental_state_changed, file_channel,
                                            lambda: {"server_id": self._server_id}, self._handed_out_to)
        if self.incremental.signal is not None:
            conn = connect()
            try:
                check_signal_table(conn, config)
            finally:
                conn.close()
        self.incremental.resumed()
        self._reset_txn()
        self._between = True   # no transaction open in the binlog read so far
        self._server_id = 0    # of the last binlog event read (a blocking snapshot's source.server_id)
        self._last_end = 0     # the end position of the last binlog event read (in self.file)
        self._read_to = (0, 0)   # (file number, position) a dump read to its end: every event before it handled

    def _reset_txn(self) -> None:
        self.txn_gtid: str | None = None
        self.txn_gtid_numbers: tuple[int, int, int] | None = None   # the hot path's MariaDB GTID as numbers
        self.txn_begin_end = 0   # end position of the GTID (or BEGIN) event: the seq of the BEGIN marker
        self.txn_ts_ms = 0
        self.query: str | None = None
        # provide.transaction.metadata: opened by the transaction's first captured data event (as Debezium's
        # TransactionMonitor does), so transactions without captured changes get no BEGIN/END
        self.tracker: TransactionTracker | None = None
        self._position: str | None = None

    def position(self) -> str:
        if self._position is None:
            self._position = MySqlOffset.streaming_json(self.file, self.txn_pos, str(self.gtids),
                                                        self.incremental.state())
        return self._position

    def _reader(self) -> BinlogReader:
        rowdecode.install()
        cfg = self.config
        settings = {k: v for k, v in cfg.connect_kwargs().items() if k != "charset"}
        return BinlogReader(connection_settings=settings, server_id=cfg.server_id, blocking=False,
                            resume_stream=True, log_file=self.file, log_pos=self.txn_pos, only_events=EVENTS,
                            is_mariadb=cfg.flavor == "mariadb", annotate_rows_event=cfg.include_query,
                            enable_logging=False, hot_path=self.hot_path, table_maps=self._table_maps,
                            pymysql_wrapper=MySqlConnection)

    def run(self, limits: BatchLimits) -> Iterator[Batch]:
        batch = Batch()
        started = time.monotonic()
        failures = 0
        heartbeat = self.config.heartbeat_interval_ms / 1000
        last_heartbeat = started
        try:
            while True:
                if self.incremental.blocking_due:   # resumed in one, or paused for one below
                    yield from self._blocking_snapshot(batch, limits)
                    batch, started = Batch(), time.monotonic()
                reader = self._reader()
                got_any = False
                try:
                    for event in reader:
                        got_any = True
                        failures = 0  # progress: only consecutive failed reconnects count towards the limit
                        self._handle(event, batch)
                        if self._between and self.incremental.blocking_due:
                            break   # a blocking snapshot: the binlog is read on after it, from this boundary
                        if len(batch) >= limits.max_events or time.monotonic() - started >= limits.max_seconds:
                            yield batch
                            batch, started = Batch(), time.monotonic()
                    else:   # the dump read to the binlog's end: every event before it is handled
                        self._read_to = (self._file_number(), self._last_end)
                    failures = 0
                except (pymysql.err.OperationalError, pymysql.err.InterfaceError) as exc:  # lost, refused, closed
                    if exc.args and exc.args[0] == ER_MASTER_FATAL_ERROR_READING_BINLOG:
                        # the server cannot send the binlog from this position (purged, past the end of its file,
                        # binlogs reset): reconnecting cannot help, so fail at once, as Debezium's error handler does
                        raise LakecdcError(
                            f"{self.source_name}: the server cannot send the binlog from {self.file} at position "
                            f"{self.txn_pos} (error 1236: {exc.args[-1]}): the position was purged, or the server's "
                            "binlogs were reset or restored from a backup. A new snapshot is required: `lakecdc "
                            f"source reset --source {self.source_name}`, then `lakecdc run`") from None
                    failures += 1
                    self.stats["reconnects"] += 1
                    if failures > self.config.reconnect_max_attempts:
                        raise LakecdcError(f"{self.source_name}: lost the binlog connection {failures} times in a row "
                                           f"({exc.args[-1]})") from None
                    delay = min(self.config.backoff_max_ms, self.config.backoff_initial_ms * 2 ** (failures - 1))
                    log.warning("%s: binlog connection lost (%s); reconnecting in %d ms", self.source_name,
                                exc.args[-1], delay)
                    time.sleep(delay / 1000)
                    self._reset_txn()  # restart at the transaction's beginning; seqs already emitted are skipped
                    continue
                finally:
                    reader.close()
                # End of the binlog for now (non-blocking dump): always at a transaction boundary.
                if heartbeat and time.monotonic() - last_heartbeat >= heartbeat:
                    last_heartbeat = time.monotonic()
                    self._heartbeat(batch)
                self.incremental.between_transactions(_SignalOut(batch, None, 0))
                # an incremental snapshot under way is not caught up: its chunks are still coming
                batch.caught_up = not self.incremental.active
                yield batch
                batch, started = Batch(), time.monotonic()
                if not got_any:
                    time.sleep(POLL_SECONDS)
        finally:
            self.incremental.close()

    def _handed_out_to(self) -> tuple[int, int]:
        """(binlog file number, position) up to which every change has been handed out: the end of the last
        transaction, or the binlog's end when a dump read to it (it may end in events that are no transaction)."""
        return max((self._file_number(), self.txn_pos), self._read_to)

    def _blocking_snapshot(self, batch: Batch, limits: BatchLimits) -> Iterator[Batch]:
        """A blocking snapshot, with the binlog reader closed at a transaction boundary: its tables read one chunk at
        a time (batches hold whole chunks); the binlog is read on from the same position afterwards."""
        started = time.monotonic()
        while self.incremental.blocking_due:
            origin = self.incremental.blocking.origin or {}
            self.incremental.blocking_chunk(_SignalOut(batch, None, int(origin.get("server_id") or 0)))
            if (len(batch) >= limits.max_events or not self.incremental.blocking_due
                    or time.monotonic() - started >= limits.max_seconds):
                batch.caught_up = False
                yield batch
                batch, started = Batch(), time.monotonic()

    # ------------------------------------------------------------------ event handling
    def _handle(self, event: Any, batch: Batch) -> None:
        if type(event) is HotEvent:
            end = event.log_pos
            self._server_id = event.server_id
            self._last_end = end
            if event.kind is ROWS:
                self._rows(event, end, batch)
            elif event.kind is GTID:
                self._gtid(event.gtid, end - event.event_size, end, event.timestamp, event.gtid_numbers)
            else:   # XID
                self._commit(end, batch, event.timestamp * 1000)
            return
        if isinstance(event, RotateEvent):
            if event.next_binlog != self.file or self.txn_pos < 4:
                self.file = event.next_binlog
                self.txn_pos = int(event.position)
                self._last_end = self.txn_pos
                self._position = None
            return
        end = int(event.packet.log_pos)
        start = end - int(event.packet.event_size)
        self._server_id = int(event.packet.server_id)
        self._last_end = end
        if isinstance(event, MariadbGtidEvent | GtidEvent):
            self._gtid(event.gtid, start, end, int(event.timestamp))
        elif isinstance(event, XidEvent):
            self._commit(end, batch, int(event.timestamp) * 1000)
        elif isinstance(event, MariadbAnnotateRowsEvent):
            self.query = event.sql_statement.decode("utf-8", "replace")
        elif isinstance(event, RowsQueryLogEvent):
            self.query = event.query
        elif isinstance(event, QueryEvent):
            text = event.query.strip()
            upper = text[:20].upper()
            if upper.startswith("BEGIN"):
                self._between = False
                if self.txn_gtid is None:
                    self.txn_pos = start
                    self.txn_begin_end, self.txn_ts_ms = end, int(event.timestamp) * 1000
                    self._position = None
            elif upper.startswith(("COMMIT", "ROLLBACK")):
                self._commit(end, batch, int(event.timestamp) * 1000)
            elif not upper.startswith(_TXN_WORDS):
                self._ddl(event, text, start, end, batch)
                self._commit(end, batch)
        else:
            self._rows(event, end, batch)

    def _gtid(self, gtid: str, start: int, end: int, timestamp: int,
              numbers: tuple[int, int, int] | None = None) -> None:
        """A transaction's GTID event (its first event) from `start` to `end`; `numbers`: MariaDB's GTID as the hot
        path read it (domain, server, sequence), so the commit adds it to the set without parsing the text."""
        self._reset_txn()
        self._between = False
        self.txn_pos = start
        self.txn_gtid, self.txn_gtid_numbers = gtid, numbers
        self.txn_begin_end, self.txn_ts_ms = end, timestamp * 1000

    def _commit(self, end: int, batch: Batch, ts_ms: int | None = None) -> None:
        tracker = self.tracker
        if self.txn_gtid_numbers is not None:   # MariaDB's, read by the hot path: not parsed from the text again
            self.gtids.add_numbers(*self.txn_gtid_numbers)
        elif self.txn_gtid:
            self.gtids.add(self.txn_gtid)
        self._reset_txn()
        self._between = True
        self.txn_pos = end
        if tracker is not None:  # END after the commit: its position resumes after the transaction
            self._transaction_event(batch, tracker.end(ts_ms), self._seq(end, 0))
        self.incremental.between_transactions(_SignalOut(batch, None, 0))

    def _transaction_event(self, batch: Batch, event: TransactionEvent, seq: str) -> None:
        """A BEGIN or END marker on the <prefix>.transaction topic (op NULL, table_id = the topic)."""
        if not self._emit_ok(seq):
            return  # landed before a reconnect or restart
        batch.events.append(self.events.transaction_event(event, seq, self.position()))
        self.last_seq = seq

    def _heartbeat(self, batch: Batch) -> None:
        """heartbeat.interval.ms: a heartbeat event at the end of the last complete transaction."""
        seq = heartbeat_seq(self._file_number(), self.txn_pos, self.last_seq)
        if not self._emit_ok(seq):
            return
        batch.events.append(self.events.heartbeat(self.config.heartbeat_topic_prefix, seq, self.position()))
        self.last_seq = seq

    def _emit_ok(self, seq: str) -> bool:
        return self.last_seq is None or seq > self.last_seq

    def _seq(self, end: int, index: int) -> str:
        return make_seq(self._file_number(), end, index)

    def _file_number(self) -> int:
        """binlog_file_number(self.file), parsed once per file (seqs are made for every event)."""
        if self.file is not self._numbered_file:
            self._numbered_file, self._file_no = self.file, binlog_file_number(self.file)
        return self._file_no

    def _ddl(self, event: QueryEvent, ddl: str, start: int, end: int, batch: Batch) -> None:
        cfg = self.config
        raw_db = event.schema
        default_db = (raw_db.decode("utf-8", "replace") if isinstance(raw_db, bytes) else str(raw_db or "")) or None
        seq = self._seq(end, 0)
        if not self._emit_ok(seq):
            return  # applied before a reconnect, or part of the restored history
        # Its schema change already in bronze (committed in a batch after its last event, the run died before
        # the batch's events commit): apply it again, do not land it twice, but still emit its truncate events.
        landed = seq in self.restored_seqs
        try:
            changes = self.schema.apply(ddl, default_db)
        except LakecdcError as exc:
            batch.rejects.append(BronzeReject(seq=seq, stage="parse", error=str(exc), raw=ddl.encode(),
                                              position=self.position()))
            self.last_seq = seq
            return
        touched = self.schema.last_tables
        self.codecs.forget(touched)
        databases = {key.split(".", 1)[0] for key in touched} or ({default_db} if default_db else set())
        captured = [db for db in databases if db and cfg.filters.database(db)]
        self.last_seq = seq
        ts_ms = int(event.timestamp) * 1000
        if captured and cfg.include_schema_changes and not landed:
            db = captured[0] if default_db not in captured else default_db
            first_table = next((k.split(".", 1)[1] for k in touched if k.startswith(db + ".")), None)
            source = self.events.source(ts_ms=ts_ms, db=db, table=first_table, file=self.file, pos=start,
                                        server_id=event.packet.server_id, gtid=self.txn_gtid,
                                        thread=event.slave_proxy_id)
            batch.schema_changes.append(self.events.schema_change(db=db, ddl=ddl, table_changes=changes,
                                                                  source=source, seq=seq, position=self.position()))
        if "t" not in cfg.skipped_operations:
            for i, key in enumerate(self.schema.last_truncated):
                self.incremental.truncated(key)
                db, table = key.split(".", 1)
                codec = self.codecs.get(db, table)
                if codec is None or not cfg.filters.table(db, table):
                    continue
                source = self.events.source(ts_ms=ts_ms, db=db, table=table, file=self.file, pos=self.txn_pos,
                                            server_id=event.packet.server_id, gtid=self.txn_gtid,
                                            thread=event.slave_proxy_id, query=ddl if cfg.include_query else None)
                batch.events.append(self.events.data_event(codec, "t", None, None, source, self._seq(end, i + 1),
                                                           self.position()))
                self.last_seq = self._seq(end, i + 1)

    def _rows(self, event: Any, end: int, batch: Batch) -> None:
        """A rows event: mysql-replication's, or the hot path's (HotEvent; its `library_event()` is the former)."""
        cfg = self.config
        db, table = event.schema, event.table
        hot = type(event) is HotEvent
        if hot:
            op, server_id = event.op, event.server_id
        else:
            op = "c" if isinstance(event, WriteRowsEvent) else "d" if isinstance(event, DeleteRowsEvent) else "u"
            server_id = event.packet.server_id
        if op == "c" and self.incremental.is_signal_table(db, table):
            self._signals(event.library_event() if hot else event, end, batch)
        if not cfg.filters.table(db, table):
            return
        codec = self.codecs.get(db, table)
        if codec is None:
            message = f"binlog row event for {db}.{table} at {self.file}:{end}, a table missing from the schema model"
            if cfg.inconsistent_schema_mode == "fail":
                raise LakecdcError(f"{self.source_name}: {message} (inconsistent.schema.handling.mode=fail)")
            if cfg.inconsistent_schema_mode == "warn":
                log.warning("%s: skipping %s", self.source_name, message)
            return
        pairs = None
        if self.fast_rows:
            plan = self._plans.plan_for(event.table_obj if hot else event.table_map[event.table_id], codec)
            if plan is not None:
                pairs = (plan.decode_rows(op, event.data, event.rows_at, event.rows_end, event.columns, event.present,
                                          event.present2) if hot else plan.decode(event, op))
        if pairs is None:
            pairs = _generic_pairs(event.library_event() if hot else event, codec)
        if self.incremental.snapshot.window is not None:   # an incremental snapshot chunk waits for its close
            self.incremental.streamed(f"{db}.{table}", codec, pairs)
        skipped = cfg.skipped_operations
        query = self.query if cfg.include_query else None
        # Every row of the event shares the source block but its `row`, and the seq prefix (file number, end).
        template = self.events.streamed_source(int(event.timestamp) * 1000, db, table, self.file, self.txn_pos,
                                               server_id, self.txn_gtid, query)
        prefix = self._seq(end, 0)[:-8]
        key_values = codec.key_values
        # Rows handed out before (a resumed or re-read transaction) still go through _emit, which counts
        # them for the transaction block's total_order / data_collection_order before it skips them.
        for row_index, (before, after) in enumerate(pairs):
            base = row_index * 4
            source = template.copy()
            source["row"] = row_index
            if op == "c":
                if "c" not in skipped:
                    self._emit(batch, codec, "c", None, after, source, f"{prefix}{base:08x}")
            elif op == "d":
                if "d" not in skipped:
                    self._emit(batch, codec, "d", before, None, source, f"{prefix}{base:08x}")
                    if cfg.tombstones_on_delete:  # a table without a key too: a tombstone with a null key
                        self._emit(batch, codec, None, None, None, source, f"{prefix}{base + 1:08x}", key_row=before)
            elif key_values is not None and key_values(before) != key_values(after):
                # Primary-key change: delete (old key) + tombstone + create (new key), as Debezium does.
                if "d" not in skipped:
                    self._emit(batch, codec, "d", before, None, source, f"{prefix}{base:08x}")
                    if cfg.tombstones_on_delete:
                        self._emit(batch, codec, None, None, None, source, f"{prefix}{base + 1:08x}", key_row=before)
                if "c" not in skipped:
                    self._emit(batch, codec, "c", None, after, source, f"{prefix}{base + 2:08x}")
            elif "u" not in skipped:
                self._emit(batch, codec, "u", before, after, source, f"{prefix}{base:08x}")
        self.stats["stream_events"] += len(pairs)

    # ------------------------------------------------------------------ signals and the incremental snapshot
    def _signals(self, event: WriteRowsEvent, end: int, batch: Batch) -> None:
        """Rows inserted into the signalling table: signals and the incremental snapshot's watermarks. What they
        give (read events, notifications) takes the seqs <file, end, SIGNAL_INDEX + n> of their rows event."""
        out = _SignalOut(batch, end, int(event.packet.server_id))
        for row in event.rows:
            values = [*row["values"].values(), None, None, None]
            self.incremental.on_table_row(values[0], values[1], values[2], out)

    def _signal_seq(self, out: _SignalOut) -> str | None:
        if out.end is None:   # a signal from the file, between transactions: numbered as heartbeats are
            seq = heartbeat_seq(self._file_number(), self.txn_pos, self.last_seq)
        else:
            seq = self._seq(out.end, SIGNAL_INDEX + out.emitted)
        out.emitted += 1
        if not self._emit_ok(seq):
            return None   # landed before a restart
        self.last_seq = seq
        return seq

    def _emit_incremental_read(self, out: _SignalOut, codec: TableCodec, table_id: str,
                               after: dict[str, Any], snapshot: str) -> None:
        """A read event of an incremental (`snapshot` "incremental") or blocking snapshot (its mark)."""
        seq = self._signal_seq(out)
        if seq is None:
            return
        db, table = table_id.split(".", 1)
        source = self.events.source(ts_ms=int(time.time() * 1000), db=db, table=table, file=self.file,
                                    pos=self.txn_pos, snapshot=snapshot, server_id=out.server_id,
                                    gtid=self.txn_gtid)
        out.batch.events.append(self.events.data_event(codec, "r", None, after, source, seq, self.position()))

    def _emit_notification(self, out: _SignalOut, kind: str, data: dict[str, str], aggregate: str) -> None:
        seq = self._signal_seq(out)
        if seq is None:
            return
        out.batch.events.append(self.events.notification(self.config.notification_topic, f"{self.file}:{seq}", kind,
                                                         data, seq, self.position(), aggregate))

    def _incremental_state_changed(self) -> None:
        self._position = None   # the events from here on carry the new state

    def _emit(self, batch: Batch, codec: TableCodec, op: str | None, before: dict | None, after: dict | None,
              source: dict[str, Any], seq: str, key_row: dict | None = None) -> None:
        txn = None
        if self.config.provide_transaction_metadata and op is not None:
            if self.tracker is None:
                self.tracker = TransactionTracker(self.config.flavor, self.config.topic_prefix)
                begin = self.tracker.begin(self.txn_gtid or f"file={self.file},pos={self.txn_pos}",
                                           self.txn_ts_ms or source["ts_ms"])
                self._transaction_event(batch, begin, self._seq(self.txn_begin_end or self.txn_pos, 0))
            # counted before the skip below, so a re-read transaction numbers its events as the first read did
            txn = self.tracker.block(codec.table_id)
        if self.last_seq is not None and seq <= self.last_seq:
            return
        batch.events.append(self.events.data_event(codec, op, before, after, source, seq, self.position(), txn,
                                                   key_row=key_row))
        self.last_seq = seq  # a reconnect re-reads the transaction and must not emit it twice


@dataclass
class _SignalOut:
    """Where the signal or watermark rows being handled were read: their batch and rows event, and how many events
    they gave so far."""

    batch: Batch
    end: int | None   # None: between transactions (a signal from the signal file)
    server_id: int
    emitted: int = 0


def _generic_pairs(event: Any, codec: TableCodec) -> list[tuple[dict | None, dict | None]]:
    """(before, after) payloads through mysql-replication's row decoding and codec.row (any column type)."""
    if isinstance(event, WriteRowsEvent):
        return [(None, codec.row(_values(row, ""))) for row in event.rows]
    if isinstance(event, DeleteRowsEvent):
        return [(codec.row(_values(row, "")), None) for row in event.rows]
    return [(codec.row(_values(row, "before_")), codec.row(_values(row, "after_"))) for row in event.rows]


def _values(row: dict[str, Any], prefix: str) -> dict[str, Any]:
    """A row image of mysql-replication; an empty SET, which it gives as None, as the empty set it is."""
    values = row[prefix + "values"]
    empty = [name for name, why in (row.get(prefix + "none_sources") or {}).items() if why == NONE_SOURCE.EMPTY_SET]
    if empty:
        values = {**values, **{name: set() for name in empty}}
    return values
