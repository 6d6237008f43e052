"""The PostgreSQL streaming source: pgoutput from the replication slot, decoded into Debezium's change, schema
change, logical message and transaction events; reconnects after a lost connection and resumes from the last
complete transaction (events handed out before are dropped by seq).

The flush LSN is confirmed to the server only after acknowledge(), i.e. after the bronze commit, and only up
to the end of the last transaction that the committed batch holds entirely."""

from __future__ import annotations

import logging
import select
import struct
import time
from collections.abc import Callable, Iterator
from typing import Any

import psycopg2

from ingest.bronze.contract import Batch, BatchLimits
from ingest.connectors import signals
from ingest.connectors.postgres import pgoutput as pg
from ingest.connectors.postgres import setup
from ingest.connectors.postgres.catalog import Catalog, CatalogColumn, TableDef
from ingest.connectors.postgres.events import PendingBatch, PostgresEventDispatcher, Transaction, now_ms
from ingest.connectors.postgres.incremental import PostgresIncremental
from ingest.connectors.postgres.offsets import OffsetContext, make_seq
from ingest.connectors.postgres.properties import PostgresProperties
from ingest.connectors.postgres.tables import CapturedTable, TableRegistry, build_table
from ingest.connectors.postgres.types import ConversionError
from ingest.errors import LakecdcError
from ingest.events import envelope as ev
from ingest.schema.conversions import is_lossless

log = logging.getLogger(__name__)

_RELID = struct.Struct(">I")
# WAL page headers (PostgreSQL's SizeOfXLogShortPHD and SizeOfXLogLongPHD, the latter opening each segment)
_SHORT_PAGE_HEADER, _LONG_PAGE_HEADER = 24, 40
# a walsender short of the end of WAL that reports no progress for this long is taken as caught up (the
# background writer's 15 s running-transactions record gets an idle server's unflushed WAL flushed well before)
_STALLED_WALSENDER_SECONDS = 60.0
# SQLSTATE of START_REPLICATION on a slot the server invalidated ("cannot read from logical replication slot"):
# not retried, unlike a slot another connection still holds (55006, object_in_use)
OBJECT_NOT_IN_PREREQUISITE_STATE = "55000"

# one row change of a pgoutput message: (op, before, after, key)
RowChange = tuple[str, dict[str, Any] | None, dict[str, Any] | None, dict[str, Any] | None]


class PostgresStreamingSource:
    """Streams the slot from the offset context's restart LSN; acknowledge() records what bronze committed."""

    def __init__(self, props: PostgresProperties, source_name: str, offsets: OffsetContext, tables: TableRegistry,
                 events: PostgresEventDispatcher, normal_connection: Callable[[], Any], catalog: Callable[[], Catalog],
                 captured_tables: Callable[[], list[tuple[str, str, int]]],
                 file_channel: signals.FileSignalChannel | None = None) -> None:
        self.props = props
        self.source_name = source_name
        self.offsets = offsets
        self.tables = tables
        self.events = events
        self.normal_connection = normal_connection  # the connector's connection: heartbeat action query
        self.catalog = catalog                      # the live catalog (Relation messages)
        self.captured_tables = captured_tables
        self._repl: Any = None          # replication connection
        self._repl_cur: Any = None      # its cursor once streaming started
        self._ack_lsn: int = 0          # highest flush LSN whose batch is committed in bronze
        self._sent_ack_lsn: int = 0     # highest flush LSN confirmed to the server
        self._yielded_ack: int = 0      # highest flush LSN handed out in a batch
        self._stream_start_end: int | None = None   # the server's end of WAL when the stream (re)started
        self._quiet_wal_end, self._quiet_since = -1, 0.0   # where a quiet walsender was last seen, since when
        self.incremental = PostgresIncremental(props, source_name, offsets, events, tables, normal_connection,
                                               captured_tables, file_channel)

    def _start_replication(self) -> Any:
        self._stream_start_end, self._quiet_wal_end = self._server_wal_end(), -1
        self._repl = setup.connect_replication(self.props)
        cur = self._repl.cursor()
        options = {"proto_version": "1", "publication_names": self.props.publication_name, "messages": "true"}
        cur.start_replication(slot_name=self.props.slot_name, decode=False, start_lsn=self.offsets.restart_lsn,
                              # psycopg2 refuses status intervals under 1 s
                              options=options, status_interval=max(1.0, self.props.status_update_interval_ms / 1000))
        self._repl_cur = cur
        return cur

    def _server_wal_end(self) -> int | None:
        """The end of the server's WAL now, as the walsender reports it once it has read that far; None where
        the server cannot say (a standby in recovery).

        The insert position, not the write or flush one: a commit made with synchronous_commit=off may not be
        written yet, and it counts (the walsender reads it once the WAL writer has flushed it, within three
        wal_writer_delay). WAL that is not a commit may stay unflushed on an idle server, but not for long: the
        background writer logs a running-transactions record every 15 s after activity and has it flushed.
        An insert position just after a page header is the page boundary as an end of WAL: a record ending at a
        page's end makes the insert position skip the next page's header, while the walsender reports the
        boundary."""
        try:
            with self.normal_connection().cursor() as cur:
                cur.execute("SELECT pg_current_wal_insert_lsn()::text, current_setting('wal_block_size')::int, "
                            "(SELECT setting::bigint FROM pg_settings WHERE name = 'wal_segment_size')")
                lsn, block, segment = cur.fetchone()
        except psycopg2.Error as exc:
            log.warning("the server did not give its end of WAL (%s): a quiet stream counts as caught up",
                        first_line(exc))
            return None
        end = pg.str_to_lsn(lsn)
        if segment and end % segment == _LONG_PAGE_HEADER:
            return end - _LONG_PAGE_HEADER
        if end % block == _SHORT_PAGE_HEADER:
            return end - _SHORT_PAGE_HEADER
        return end

    def _walsender_caught_up(self, cur: Any) -> bool:
        """The walsender has read the WAL that existed when the stream started. A stream that resumes behind
        much WAL it does not send (changes already confirmed, tables outside the publication, other databases)
        is quiet while the walsender reads through it: quiet, but not caught up. Until it is, each quiet poll
        asks the server for a keepalive, which carries how far the walsender has read (cur.wal_end). A walsender
        that reports no progress for _STALLED_WALSENDER_SECONDS is taken as caught up (with a warning): a run
        then ends as it did before this rule, and the next run lands what follows."""
        target = self._stream_start_end
        if target is None or cur.wal_end >= target or self.offsets.restart_lsn >= target:
            self._stream_start_end = None
            return True
        now = time.monotonic()
        if cur.wal_end != self._quiet_wal_end:
            self._quiet_wal_end, self._quiet_since = cur.wal_end, now
        elif now - self._quiet_since >= _STALLED_WALSENDER_SECONDS:
            log.warning("the walsender reports %s, short of the end of WAL %s when streaming started, and has not "
                        "moved for %.0f s: taken as caught up", pg.lsn_to_str(cur.wal_end), pg.lsn_to_str(target),
                        now - self._quiet_since)
            self._stream_start_end = None
            return True
        try:
            cur.send_feedback(reply=True, force=True)
        except (psycopg2.Error, OSError):
            pass   # a lost connection shows at the next read, which reconnects
        return False

    def _connect_stream(self) -> Any:
        retries, delay = self.props.slot_max_retries, self.props.slot_retry_delay_ms / 1000
        for attempt in range(retries + 1):
            try:
                return self._start_replication()
            except (psycopg2.OperationalError, psycopg2.InterfaceError, LakecdcError) as exc:
                if self._repl is not None and not self._repl.closed:
                    self._repl.close()
                self._repl = None
                if getattr(exc, "pgcode", None) == OBJECT_NOT_IN_PREREQUISITE_STATE:
                    # a state retrying does not change (the slot was invalidated by the server): fail at once,
                    # with the server's detail
                    detail = exc.diag.message_detail  # type: ignore[union-attr]
                    raise LakecdcError(f"cannot start streaming from slot {self.props.slot_name}: {first_line(exc)}"
                                       + (f" ({detail.rstrip('.')})" if detail else "")) from None
                if attempt >= retries:
                    raise LakecdcError(f"cannot start streaming from slot {self.props.slot_name}: "
                                       f"{first_line(exc)}") from None
                log.warning("streaming start failed (%s); retry %d/%d", first_line(exc), attempt + 1, retries)
                time.sleep(delay * (2 ** min(attempt, 4)))
            except psycopg2.Error as exc:
                raise LakecdcError(f"cannot start streaming from slot {self.props.slot_name}: "
                                   f"{first_line(exc)}") from None
        raise AssertionError("unreachable")

    def _preload_tables(self) -> None:
        """The current catalog definition of every captured table, so that the Relation messages of a new
        session only produce a schema change row when the table really differs."""
        for schema, name, relid in self.captured_tables():
            if relid not in self.tables.by_relid:
                self.tables.by_relid[relid] = build_table(self.catalog().table_def(schema, name, relid), self.props)

    def run(self, limits: BatchLimits) -> Iterator[Batch]:
        self.incremental.resume()   # an incremental snapshot under way where bronze ends
        self._preload_tables()
        cur = self._connect_stream()
        pending = PendingBatch()
        txn: Transaction | None = None
        poll = self.props.poll_interval_ms / 1000
        heartbeat = self.props.heartbeat_interval_ms / 1000
        last_heartbeat = last_data = time.monotonic()
        failures = 0
        while True:
            if txn is None and self.incremental.blocking_due:
                # a blocking snapshot: the stream waits (between two transactions) while its tables are read, one
                # chunk per pass; feedback keeps the walsender from timing the connection out meanwhile
                self.incremental.blocking_chunk((None, None, pending))
                try:
                    self._send_ack(cur)
                    cur.send_feedback(force=True)
                except (psycopg2.Error, OSError):
                    pass   # a lost connection shows at the next read, which reconnects
                if (len(pending) >= limits.max_events or not self.incremental.blocking_due
                        or time.monotonic() - pending.started >= limits.max_seconds):
                    yield self._flush(pending, caught_up=False)
                    pending = PendingBatch()
                # paused, not idle: the server went on sending while the tables were read, so the idle branch
                # below must not take the stream for caught up (nor confirm cur.wal_end) before that is read
                last_data = time.monotonic()
                continue
            try:
                self._send_ack(cur)
                msg = cur.read_message()
                if msg is None:
                    ready = select.select([cur], [], [], poll)[0]
            except (psycopg2.Error, OSError) as exc:
                # connection lost (server restart or crash, walsender terminated, network), or the stream ended
                # by the server (a clean shutdown ends COPY first: libpq's "no COPY in progress", no SQLSTATE):
                # reconnect and resume from the last complete transaction; resent events are dropped by seq.
                # A server error with a SQLSTATE is not retried.
                if isinstance(exc, psycopg2.Error) and not isinstance(
                        exc, psycopg2.OperationalError | psycopg2.InterfaceError) and exc.pgcode is not None:
                    raise LakecdcError(f"streaming from slot {self.props.slot_name} failed: "
                                       f"{first_line(exc)}") from None
                failures += 1
                if failures > self.props.slot_max_retries:
                    raise LakecdcError(f"replication connection keeps failing: {first_line(exc)}") from None
                log.warning("replication connection lost (%s); reconnecting from %s", first_line(exc),
                            pg.lsn_to_str(self.offsets.restart_lsn))
                txn = None  # the server resends the open transaction from its Begin
                if self._repl is not None and not self._repl.closed:
                    self._repl.close()
                time.sleep(self.props.slot_retry_delay_ms / 1000 * min(failures, 5))
                cur = self._connect_stream()
                continue
            if msg is not None:
                failures = 0
                last_data = time.monotonic()
                payload = msg.payload
                kind = payload[0] if payload else 0
                if kind == 0x42:    # Begin and Commit (two of every three messages): without a message object
                    txn = self._begin(*pg.begin_fields(payload), msg.data_start)
                elif kind == 0x43:
                    txn = self._commit(*pg.commit_fields(payload), msg.data_start, txn, pending)
                elif (kind == 0x55 or kind == 0x49) and txn is not None and \
                        self._plain_change(payload, msg.data_start, txn, pending):
                    pass
                else:
                    txn = self._handle(pg.decode(payload), msg.data_start, txn, pending)
                if txn is None:
                    self.incremental.between_transactions(pending)
                if heartbeat and txn is None and last_data - last_heartbeat >= heartbeat:
                    last_heartbeat = last_data
                    self._heartbeat(pending)   # between transactions of a busy stream too
                size = len(pending)
                if size >= limits.max_events or (size and time.monotonic() - pending.started >= limits.max_seconds):
                    yield self._flush(pending, caught_up=False)
                    pending = PendingBatch()
                continue
            if ready and time.monotonic() - last_data < poll:
                continue
            # the server had no data for `poll` seconds. Keepalives alone keep the socket ready: a server
            # shutting down sends them in a loop and waits until we confirm its end of WAL, so this branch
            # must run then too (at most once per poll interval)
            last_data = time.monotonic()
            if txn is None:
                self.incremental.between_transactions(pending)
                now = time.monotonic()
                if heartbeat and now - last_heartbeat >= heartbeat:
                    last_heartbeat = now
                    self._heartbeat(pending)
                if not len(pending) and self._ack_lsn >= self._yielded_ack and cur.wal_end > self._ack_lsn:
                    # idle and everything handed out is committed: confirm the server's position, so the
                    # slot does not retain WAL of changes to tables we do not capture
                    self._ack_lsn = cur.wal_end
                # an incremental snapshot under way is not caught up: its chunks are still coming
                yield self._flush(pending, caught_up=not self.incremental.active and self._walsender_caught_up(cur))
                pending = PendingBatch()
            elif len(pending) and time.monotonic() - pending.started >= limits.max_seconds:
                yield self._flush(pending, caught_up=False)
                pending = PendingBatch()

    def _flush(self, pending: PendingBatch, caught_up: bool) -> Batch:
        if pending.ack is not None and pending.ack > self._yielded_ack:
            self._yielded_ack = pending.ack
        return pending.to_batch(caught_up)

    def _begin(self, final_lsn: int, commit_ts_us: int, xid: int, data_start: int) -> Transaction:
        txn = Transaction(xid, final_lsn, commit_ts_us, data_start)
        if self.props.provide_transaction_metadata:
            # BEGIN goes out with the transaction's first captured event (_transaction_block), as Debezium's
            txn.tracker = ev.TransactionTracker("postgresql", self.props.topic_prefix)
        return txn

    def _commit(self, flags: int, commit_lsn: int, end_lsn: int, commit_ts_us: int, data_start: int,
                txn: Transaction | None, pending: PendingBatch) -> None:
        if txn is not None and txn.tracker is not None and txn.tracker.id is not None:
            # Debezium's transaction id is "<xid>:<LSN of the current message>": END carries the Commit's
            end = txn.tracker.end(commit_ts_us // 1000, f"{txn.xid}:{data_start}")
            self.events.transaction_event(pending, txn, end, end_lsn)
        self.offsets.last_commit_lsn = commit_lsn
        self.offsets.restart_lsn = end_lsn
        if txn is not None and txn.change_lsn:
            self.offsets.last_change = (txn.change_lsn, txn.xid)
        pending.ack = end_lsn

    def _plain_change(self, payload: bytes, lsn: int, txn: Transaction, pending: PendingBatch) -> bool:
        """An Insert, or an Update without an old tuple, of a captured table whose tuple CapturedTable.read_row
        reads, emitted straight from the message's bytes (most changes); False, having done nothing, for
        anything else: the general path (_handle) takes it, rejects included."""
        if len(payload) < 8 or payload[5] != 0x4E:   # 'N': the new tuple follows the relid directly
            return False
        relid = _RELID.unpack_from(payload, 1)[0]
        table = self.tables.by_relid.get(relid)
        if (table is None or table.read_row is None or not table.key_in_row
                or relid == self.incremental.signal_relid or self.incremental.snapshot.window is not None):
            return False
        op = "c" if payload[0] == 0x49 else "u"
        if op in self.props.skipped_operations:
            return False
        try:
            row = table.read_row(payload, 6)
        except (ConversionError, ValueError, IndexError, ArithmeticError, struct.error):
            return False   # read again by the general path, which rejects the change with its error
        if row is None:
            return False
        txn.change_lsn = lsn
        self.events.row_change(pending, txn, table, op, None, row, table.key_from(row, None),
                               self.events.source(table, txn, lsn), lsn)
        return True

    def _handle(self, msg: pg.Message, data_start: int, txn: Transaction | None,
                pending: PendingBatch) -> Transaction | None:
        """Every message but Begin and Commit (the loop's own branches)."""
        if isinstance(msg, pg.Relation):
            self._on_relation(msg, txn, data_start, pending)
            return txn
        if isinstance(msg, pg.Insert | pg.Update | pg.Delete | pg.Truncate):
            if txn is None:
                raise LakecdcError(f"pgoutput: {type(msg).__name__} outside a transaction at "
                                   f"{pg.lsn_to_str(data_start)}")
            txn.change_lsn = data_start
            self._on_change(msg, txn, data_start, pending)
            return txn
        if isinstance(msg, pg.LogicalMessage):
            self.events.logical_message(pending, txn, data_start, msg.prefix, msg.content)
            return txn
        return txn  # Origin, Type: nothing to emit (types are resolved through the catalog)

    def _on_relation(self, msg: pg.Relation, txn: Transaction | None, data_start: int,
                     pending: PendingBatch) -> None:
        self.incremental.relation(msg.relid, msg.namespace, msg.name)
        if not self.props.captures_table(msg.namespace, msg.name):
            self.tables.by_relid.pop(msg.relid, None)
            return
        signature = tuple((c.name, c.type_oid, c.type_modifier) for c in msg.columns) + (msg.namespace, msg.name)
        if self.tables.signatures.get(msg.relid) == signature and msg.relid in self.tables.by_relid:
            return
        catalog = self.catalog()
        current = catalog.table_def(msg.namespace, msg.name, msg.relid)
        by_name = {c.name: c for c in current.columns}
        columns = []
        for position, col in enumerate(msg.columns, start=1):
            known = by_name.get(col.name)
            pg_type = catalog.pg_type(col.type_oid, col.type_modifier)
            if known is None:
                expression = catalog.pg_type(col.type_oid).name
            elif (known.type.oid, known.type.typmod) == (pg_type.oid, pg_type.typmod):
                expression = known.type_expression
            else:  # the live catalog is further on (the column changed type again since): the message's type
                expression = catalog.format_type(col.type_oid, col.type_modifier)
            columns.append(CatalogColumn(
                col.name, pg_type, expression,
                known.nullable if known is not None else True, position,
                known.default if known is not None else None, known.missing_value if known is not None else None))
        names = {c.name for c in msg.columns}
        definition = TableDef(msg.namespace, msg.name, msg.relid, tuple(columns),
                              tuple(k for k in current.primary_key if k in names), msg.replica_identity,
                              tuple(c.name for c in msg.columns if c.is_key) if msg.replica_identity == "i" else ())
        table = build_table(definition, self.props, tuple(c.name for c in msg.columns))
        previous = self.tables.by_relid.get(msg.relid)
        # The first Relation of a table in a session always gives a row unless this session's snapshot just
        # wrote one: after a crash the catalog may already hold the new definition while the row that
        # announced it was never committed. A repeated row is harmless, a lost one is not.
        changed = (msg.relid not in self.tables.announced or previous is None
                   or _definition_key(previous.definition) != _definition_key(definition))
        self.tables.remember(msg.relid, table, signature)
        self.tables.announced.add(msg.relid)
        if not changed:
            return
        if previous is not None:
            self._warn_about_converted_values(previous.definition, definition)
        # The Relation message has no LSN of its own (data_start is 0) and is resent in every new session, so
        # it takes the position of the last event before it (its own row lives in S_schema_changes), and
        # only what lies strictly before the resume point is dropped: a repeat is harmless, a loss is not.
        if txn is not None:
            commit_lsn, seq = txn.commit_lsn, make_seq(txn.commit_lsn, txn.last_lsn, txn.index)
        else:
            commit_lsn = self.offsets.last_commit_lsn
            seq = make_seq(commit_lsn, self.offsets.restart_lsn, 0)
        ts_ms = txn.ts_us // 1000 if txn is not None else int(time.time() * 1000)
        self.events.schema_change(pending, table, "ALTER" if previous is not None else "CREATE", seq,
                                self.offsets.streaming_position(commit_lsn), ts_ms, txn.xid if txn else None,
                                txn.last_lsn if txn else self.offsets.restart_lsn, snapshot=False)

    def _warn_about_converted_values(self, before: TableDef, after: TableDef) -> None:
        """ALTER COLUMN ... TYPE rewrote the table without change events (quality's type_changes check flags it
        too). Types from the Relation messages (the live catalog may already be further on)."""
        old_types = {c.name: c.type for c in before.columns}
        for column in after.columns:
            old = old_types.get(column.name)
            if old is None or (old.oid, old.typmod) == (column.type.oid, column.type.typmod):
                continue
            old_text = self.catalog().format_type(old.oid, old.typmod)
            new_text = self.catalog().format_type(column.type.oid, column.type.typmod)
            if not is_lossless(old_text, new_text):
                log.warning("%s: %s.%s.%s changed type from %s to %s: PostgreSQL rewrote its stored values without "
                            "change events, so rows not changed since keep their old values in bronze and silver; "
                            "re-snapshot the table (docs/quality.md, type_changes)", self.source_name, after.schema,
                            after.table, column.name, old_text, new_text)

    def _on_change(self, msg: Any, txn: Transaction, lsn: int, pending: PendingBatch) -> None:
        props = self.props
        skipped = props.skipped_operations
        if isinstance(msg, pg.Truncate):
            if "t" in skipped:
                return
            for relid in msg.relids:
                table = self.tables.by_relid.get(relid)
                if table is not None:
                    self.incremental.truncated(table)
                    source = self.events.source(table, txn, lsn)
                    self.events.change(pending, txn, ev.change(table.schemas, "t", source=source, ts_ms=now_ms()), lsn)
            return
        if msg.relid == self.incremental.signal_relid and isinstance(msg, pg.Insert):
            self.incremental.signal_row(pg.text_values(msg.new), txn, lsn, pending)
        table = self.tables.by_relid.get(msg.relid)
        if table is None:
            return  # not captured (publication wider than the filters)
        if self.incremental.snapshot.window is not None:   # an incremental snapshot chunk waits for its close
            self.incremental.streamed(table, pg.text_values(msg.new) if getattr(msg, "new", None) is not None else None,
                                      pg.text_values(msg.old) if getattr(msg, "old", None) is not None else None)
        placeholder = props.unavailable_value_placeholder
        try:
            if isinstance(msg, pg.Insert):
                if "c" in skipped:
                    return
                new = pg.text_values(msg.new)
                after = table.row(new, placeholder)
                changes: tuple[RowChange, ...] = (("c", None, after, table.key_from(after, new)),)
            elif isinstance(msg, pg.Update):
                changes = self._update_changes(table, msg)
            else:
                if "d" in skipped:
                    return
                old = pg.text_values(msg.old)
                before = table.row(old, placeholder)
                changes = (("d", before, None, table.key_from(before, old)),)
        except (ConversionError, ValueError, IndexError, ArithmeticError) as exc:
            self.events.reject(pending, txn, lsn, table, str(exc), repr(msg).encode())
            return
        if changes:
            source = self.events.source(table, txn, lsn)
            for op, before, after, key in changes:
                self.events.row_change(pending, txn, table, op, before, after, key, source, lsn)

    def _update_changes(self, table: CapturedTable, msg: pg.Update) -> tuple[RowChange, ...]:
        placeholder = self.props.unavailable_value_placeholder
        new = pg.text_values(msg.new)
        old = pg.text_values(msg.old) if msg.old is not None else None
        if old is not None and msg.old_kind == "O":
            # REPLICA IDENTITY FULL: the old tuple holds the real value of an unchanged TOASTed column
            new = [o if v is pg.UNCHANGED_TOAST else v for v, o in zip(new, old, strict=True)]
        after = table.row(new, placeholder)
        new_key = table.key_from(after, new)
        before = None
        old_key = new_key
        if old is not None:
            before = table.row(old, placeholder)
            old_key = table.key_from(before, old)
        skipped = self.props.skipped_operations
        if old_key != new_key and old_key is not None:
            # primary key change: delete (old key), tombstone, create (new key)
            return ((("d", before, None, old_key),) if "d" not in skipped else ()) + \
                ((("c", None, after, new_key),) if "c" not in skipped else ())
        if "u" in skipped:
            return ()
        return (("u", before, after, new_key),)

    def _heartbeat(self, pending: PendingBatch) -> None:
        """heartbeat.interval.ms: the heartbeat event, then heartbeat.action.query (its changes, if captured,
        come back through the stream like any other)."""
        self.events.heartbeat(pending)
        if self.props.heartbeat_action_query:
            with self.normal_connection().cursor() as cur:
                cur.execute(self.props.heartbeat_action_query)

    def acknowledge(self, batch: Batch) -> None:
        """Record the flush LSN of a committed batch. The runner calls this from its writer thread while
        the streaming loop may be reading, so the feedback itself is sent by the loop (or by close())."""
        if batch.ack is not None and batch.ack > self._ack_lsn:
            self._ack_lsn = batch.ack

    def _send_ack(self, cur: Any) -> None:
        ack = self._ack_lsn
        if ack > self._sent_ack_lsn:
            cur.send_feedback(flush_lsn=ack, force=True)
            self._sent_ack_lsn = ack

    def close(self) -> None:
        """Confirm what bronze committed, then close the replication connection (and the signal topic's consumer)."""
        self.incremental.close_channels()
        if self._repl is not None and not self._repl.closed:
            try:
                if self._repl_cur is not None:
                    self._send_ack(self._repl_cur)
            except psycopg2.Error as exc:  # the slot keeps the older position; nothing is lost
                log.warning("could not confirm flush LSN %s: %s", pg.lsn_to_str(self._ack_lsn), exc)
            self._repl.close()
        self._repl = None


def _definition_key(d: TableDef) -> tuple:
    return (tuple((c.name, c.type.oid, c.type.typmod, c.nullable) for c in d.columns), d.primary_key,
            d.replica_identity)


def first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
