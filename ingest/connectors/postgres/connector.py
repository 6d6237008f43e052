"""PostgreSQL connector: lock-free consistent snapshot through the replication slot's exported snapshot,
then pgoutput streaming; Debezium events; exactly-once hand-off through `seq` and the position JSON.

seq = encode_seq([commit LSN, change LSN, event index], SEQ_WIDTHS). Snapshot rows and snapshot schema
changes use [consistent point of the slot, 0, running row number], so they sort before every streamed
change of that slot (whose change LSN is never 0). The position JSON of each event says where to resume:

  snapshot:  {"phase": "snapshot", "slot_lsn", "table": "schema.table", "key": [key texts], "n", "xmin"}
  streaming: {"phase": "streaming", "slot_lsn", "restart_lsn": end LSN of the last transaction fully
              before this event, "last_commit_lsn"}

The flush LSN is confirmed to the server only in acknowledge(), i.e. after the bronze commit, and only up
to the end of the last transaction that the committed batch holds entirely.
"""

from __future__ import annotations

import functools
import logging
import select
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import psycopg2
import psycopg2.extras
import psycopg2.sql
import pyarrow as pa

from ingest.bronze.contract import (
    Batch,
    BatchLimits,
    BronzeEvent,
    BronzeEventBlock,
    BronzeReject,
    BronzeSchemaChange,
    ResumeState,
    encode_seq,
)
from ingest.config import SourceSettings
from ingest.connectors.base import SourceConnector
from ingest.connectors.postgres import pgoutput as pg
from ingest.connectors.postgres import setup
from ingest.connectors.postgres.catalog import Catalog, CatalogColumn, TableDef
from ingest.connectors.postgres.columnar import SnapshotChunk, build_block
from ingest.connectors.postgres.properties import PostgresProperties, parse_properties
from ingest.connectors.postgres.snapshot import claim_table, read_chunk, row_estimates
from ingest.connectors.postgres.tables import CapturedTable, build_table
from ingest.connectors.postgres.types import ConversionError, binary_encoding
from ingest.connectors.progress import SnapshotProgress
from ingest.errors import LakecdcError
from ingest.events import envelope as ev
from ingest.events.json_converter import canonical_schema_json, dumps_str
from ingest.events.source_info import VERSION, postgresql_sequence, postgresql_source
from ingest.events.to_bronze import change_to_bronze, schema_change_to_bronze
from ingest.schema.conversions import is_lossless

log = logging.getLogger(__name__)

SEQ_WIDTHS = (16, 16, 8)


def make_seq(commit_lsn: int, lsn: int, index: int) -> str:
    """encode_seq((commit_lsn, lsn, index), SEQ_WIDTHS), formatted directly (it is on the per-event path)."""
    if commit_lsn >> 64 or lsn >> 64 or index >> 32 or min(commit_lsn, lsn, index) < 0:
        return encode_seq((commit_lsn, lsn, index), SEQ_WIDTHS)  # raises
    return f"{commit_lsn:016x}-{lsn:016x}-{index:08x}"


@dataclass
class _Txn:
    xid: int
    commit_lsn: int
    ts_us: int
    last_lsn: int = 0
    index: int = 0
    tracker: ev.TransactionTracker | None = None
    position: str | None = None  # the position JSON of its events (constant within the transaction)


@dataclass
class _Pending:
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


class PostgresConnector(SourceConnector):
    connector_name = "postgresql"

    def __init__(self, settings: SourceSettings, base_dir: Path | None = None) -> None:
        super().__init__(settings, base_dir)
        self.props: PostgresProperties = parse_properties(settings.properties)
        self._conn: Any = None          # normal connection: catalog, heartbeats
        self._repl: Any = None          # replication connection
        self._repl_cur: Any = None      # its cursor once streaming started
        self._reader: Any = None        # snapshot connection (REPEATABLE READ transaction)
        self._catalog: Catalog | None = None
        self._tables: dict[int, CapturedTable] = {}       # relid -> current version while streaming
        self._signatures: dict[int, tuple] = {}           # relid -> last Relation signature seen
        self._announced: set[int] = set()                 # relids with a schema change row in this session
        self._last_seq: str | None = None                 # highest seq handed out (dedup after reconnects)
        self._resume_seq: str | None = None               # highest seq committed before this run
        self._last_commit_lsn: int = 0
        self._restart_lsn: int = 0
        self._slot_lsn: int = 0
        self._ack_lsn: int = 0        # highest flush LSN whose batch is committed in bronze
        self._sent_ack_lsn: int = 0   # highest flush LSN confirmed to the server
        self._yielded_ack: int = 0    # highest flush LSN handed out in a batch

    # ------------------------------------------------------------------ setup

    def _normal(self) -> Any:
        if self._conn is None or self._conn.closed:
            self._conn = setup.connect(self.props)
            self._catalog = Catalog(self._conn)
        return self._conn

    def open_query_connection(self) -> Any:
        return setup.connect(self.props)

    @property
    def catalog(self) -> Catalog:
        self._normal()
        assert self._catalog is not None
        return self._catalog

    def captured_tables(self) -> list[tuple[str, str, int]]:
        return [t for t in self.catalog.tables() if self.props.captures_table(t[0], t[1])]

    def check(self) -> str:
        conn = self._normal()
        setup.check_prerequisites(conn, self.props)
        tables = [(s, t) for s, t, _ in self.captured_tables()]
        setup.check_select(conn, self.props, tables)
        publication = setup.check_publication(conn, self.props, tables)
        setup.connect_replication(self.props).close()
        return (f"PostgreSQL {self.props.hostname}:{self.props.port}/{self.props.dbname}: wal_level=logical, "
                f"{len(tables)} table(s) readable, replication login works; {publication}")

    def release(self, missing_ok: bool = False) -> str:
        conn = self._normal()
        slot = self.props.slot_name
        info = setup.slot_info(conn, slot)
        if info is None:
            if missing_ok:
                return f"no replication slot {slot} in {self.props.dbname}"
            raise LakecdcError(f"replication slot {slot} does not exist in {self.props.dbname}")
        if info["active"]:
            raise LakecdcError(f"replication slot {slot} is in use by another connection (pid {info['active_pid']}): "
                               f"stop that reader first")
        with conn.cursor() as cur:
            cur.execute("SELECT pg_size_pretty(pg_wal_lsn_diff(pg_current_wal_lsn(), restart_lsn)) "
                        "FROM pg_replication_slots WHERE slot_name = %s", (slot,))
            retained = cur.fetchone()[0]
        setup.drop_slot(conn, slot)
        if setup.slot_info(conn, slot) is not None:  # taken by a reader between the two queries
            raise LakecdcError(f"replication slot {slot} could not be dropped: a reader took it meanwhile")
        return (f"dropped replication slot {slot} (it held {retained} of WAL); the next run of this source takes "
                f"a new snapshot when its bronze is empty, or stops (snapshot.mode=initial) until you choose "
                f"when_needed or always")

    def validate(self) -> None:
        self.check()
        setup.ensure_publication(self._normal(), self.props, [(s, t) for s, t, _ in self.captured_tables()])

    # ------------------------------------------------------------------ main loop

    def batches(self, resume: ResumeState, limits: BatchLimits) -> Iterator[Batch]:
        self._last_seq = self._resume_seq = resume.last_seq
        position = resume.position or {}
        mode = self.props.snapshot_mode
        conn = self._normal()
        setup.ensure_publication(conn, self.props, [(s, t) for s, t, _ in self.captured_tables()])
        slot = setup.slot_info(conn, self.props.slot_name)
        phase = position.get("phase")
        if phase == "streaming" and mode != "always":
            if slot is None:
                if mode == "when_needed":
                    log.warning("slot %s is gone: taking a new snapshot (when_needed)", self.props.slot_name)
                    yield from self._snapshot(None, limits)
                else:
                    raise LakecdcError(
                        f"replication slot {self.props.slot_name} no longer exists: changes after "
                        f"{pg.lsn_to_str(position.get('restart_lsn', 0))} are lost; run with "
                        "snapshot.mode=when_needed or always to take a new snapshot")
            else:
                self._slot_lsn = int(position.get("slot_lsn", 0))
                self._restart_lsn = int(position.get("restart_lsn", 0))
                self._last_commit_lsn = int(position.get("last_commit_lsn", 0))
        elif phase == "snapshot" and slot is not None and mode != "always":
            yield from self._snapshot(position, limits)
        else:
            yield from self._snapshot(None, limits)
        if mode == "initial_only":
            return
        yield from self._stream(limits)

    # ------------------------------------------------------------------ snapshot

    def _create_slot_with_snapshot(self) -> tuple[int, str]:
        """(consistent point, exported snapshot name); the replication connection stays open until the
        snapshot has been imported."""
        conn = self._normal()
        info = self._inactive_slot(conn)
        if info is not None:
            setup.drop_slot(conn, self.props.slot_name)
        repl = setup.connect_replication(self.props)
        cur = repl.cursor()
        cur.execute(f'CREATE_REPLICATION_SLOT "{self.props.slot_name}" LOGICAL pgoutput EXPORT_SNAPSHOT')
        _, consistent_point, snapshot_name, _ = cur.fetchone()
        self._repl = repl
        return pg.str_to_lsn(consistent_point), snapshot_name

    def _inactive_slot(self, conn: Any) -> dict[str, Any] | None:
        """The slot to replace before a new snapshot (None: there is none). A slot another connection is reading
        is not taken over: after slot.max.retries waits of slot.retry.delay.ms (a just-killed reader's
        connection needs a moment to go), one line says who holds it."""
        retries, delay = self.props.slot_max_retries, self.props.slot_retry_delay_ms / 1000
        for attempt in range(retries + 1):
            info = setup.slot_info(conn, self.props.slot_name)
            if info is None or not info["active"]:
                return info
            if attempt < retries:
                log.warning("replication slot %s is in use by pid %s; waiting %.0f s (%d/%d)", self.props.slot_name,
                            info["active_pid"], delay, attempt + 1, retries)
                time.sleep(delay)
        raise LakecdcError(
            f"replication slot {self.props.slot_name} is in use by another connection (pid {info['active_pid']}): "
            f"another lakecdc run or a Debezium connector is reading it; stop that reader, or give this source "
            f"its own slot.name")

    def _snapshot(self, position: dict[str, Any] | None, limits: BatchLimits) -> Iterator[Batch]:
        props = self.props
        reader = self._reader = setup.connect(props, autocommit=True)
        try:
            with reader.cursor() as cur:
                cur.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
                if position is None:
                    slot_lsn, snapshot_name = self._create_slot_with_snapshot()
                    cur.execute("SET TRANSACTION SNAPSHOT %s", (snapshot_name,))
                    self._repl.close()  # the snapshot is imported: the exporting session may end
                    self._repl = None
                    start_table, start_key, counter = None, None, 0
                else:  # resume an interrupted snapshot after its last committed row, in a new snapshot
                    slot_lsn = int(position["slot_lsn"])
                    start_table, start_key, counter = position.get("table"), position.get("key"), int(position["n"])
                cur.execute("SELECT txid_snapshot_xmin(txid_current_snapshot())")
                xmin = int(cur.fetchone()[0])
            self._slot_lsn = self._restart_lsn = slot_lsn
            self._last_commit_lsn = 0
            catalog = Catalog(reader)
            tables = [t for t in catalog.tables() if props.captures_table(t[0], t[1])]
            progress = self.snapshot_progress = SnapshotProgress(
                [(f"{schema}.{name}", estimate) for (schema, name, _), estimate
                 in zip(tables, row_estimates(reader, [relid for _, _, relid in tables]), strict=True)])
            pending = _Pending()
            # Flushed batches that may still hold the snapshot's last row: Debezium marks "last" on the last
            # row of the last table with rows, known only when a later row arrives or the snapshot ends.
            # (Probing each table for rows up front would lock every table for the whole snapshot.)
            held: list[Batch] = []
            marks = _SnapshotMarks()
            for table_index, (schema, name, relid) in enumerate(tables):
                full = f"{schema}.{name}"
                if start_table is not None and full < start_table:
                    continue
                table = build_table(catalog.table_def(schema, name, relid), props)
                self._remember(relid, table, None)
                self._announced.add(relid)
                after_key = start_key if full == start_table else None
                if full != start_table:  # the table's schema row (a resumed table already has one)
                    counter += 1
                    pos = self._snapshot_position(slot_lsn, full, None, counter, xmin)
                    self._add_schema_change(pending, table, "CREATE", make_seq(slot_lsn, 0, counter), pos,
                                            int(time.time() * 1000), None, slot_lsn)
                if props.snapshot_mode == "no_data":
                    continue
                progress.start_table(full)
                log.info("%s: %s", self.source_name, progress.describe())
                if self.snapshot_table_hook is not None:
                    self.snapshot_table_hook(full)
                claimed = claim_table(reader, relid, schema, name)
                if claimed is None:
                    log.warning("table %s was dropped during the snapshot: its rows are skipped", full)
                    continue
                relation, renamed = claimed
                if renamed:
                    log.warning("table %s was renamed to %s during the snapshot: its rows are read under the new "
                                "name", full, relation)
                key_columns = table.definition.key_columns
                key_index = [table.column_names.index(k) for k in key_columns]
                marks.start_table(first=table_index == 0, resumed=after_key is not None)
                while True:
                    # a chunk never overfills the batch: it reads at most the room left
                    limit = min(props.snapshot_fetch_size, max(1, limits.max_events - len(pending)))
                    chunk = read_chunk(reader, table, after_key, limit, key_columns, relation)
                    ts_ms = _now_ms()
                    block, rejects = build_block(table, chunk, SnapshotChunk(
                        slot_lsn, xmin, ts_ms, self._snapshot_tail(table, ts_ms, slot_lsn, xmin), counter + 1,
                        self._last_seq))
                    counter += chunk.num_rows
                    progress.add_rows(chunk.num_rows)
                    pending.rejects.extend(rejects)
                    if block is not None:
                        yield from held  # a later row exists: none of them holds the last row
                        held.clear()
                        pending.blocks.append(block)
                        marks.add(block)
                    if not key_columns or chunk.num_rows < limit:
                        marks.end_table()
                    if len(pending) >= limits.max_events:
                        held.append(self._flush(pending, caught_up=False))
                        pending = _Pending()
                    if not key_columns or chunk.num_rows < limit:
                        break
                    after_key = [chunk.column(i)[-1].as_py() for i in key_index]
            if len(pending):
                held.append(self._flush(pending, caught_up=False))
            marks.mark_last()
            progress.finish()
            if held:
                # the snapshot is complete once its last row is committed: a restart streams from the
                # slot's consistent point instead of resuming the snapshot after its last key
                _set_last_position(held[-1], self._position(0))
                yield from held
            with reader.cursor() as cur:
                cur.execute("COMMIT")
        finally:
            reader.close()
            self._reader = None
            if self._repl is not None:
                self._repl.close()
                self._repl = None

    @staticmethod
    def _snapshot_position(slot_lsn: int, table: str, key: list | None, n: int, xmin: int) -> str:
        """The position of a snapshot schema row (snapshot rows build the same text in columnar.build_block)."""
        return (f'{{"phase":"snapshot","slot_lsn":{slot_lsn},"table":{orjson.dumps(table).decode()},'
                f'"key":{orjson.dumps(key).decode()},"n":{n},"xmin":{xmin}}}')

    def _snapshot_tail(self, table: CapturedTable, ts_ms: int, slot_lsn: int, xmin: int) -> str:
        """The envelope text after "after" of a snapshot row: source block, op and ts_ms."""
        d = table.definition
        ts_ns = time.time_ns()
        source = postgresql_source(version=VERSION, name=self.props.topic_prefix, ts_ms=ts_ns // 1_000_000,
                                   db=self.props.dbname, schema=d.schema, table=d.table, snapshot=True,
                                   sequence=postgresql_sequence(None, slot_lsn), ts_us=ts_ns // 1000, txId=xmin,
                                   lsn=slot_lsn)
        return (f',"source":{dumps_str(source)},"transaction":null,"op":"r","ts_ms":{ts_ms},'
                f'"ts_us":{ts_ms * 1000},"ts_ns":{ts_ms * 1_000_000}}}')

    def _add_schema_change(self, pending: _Pending, table: CapturedTable, kind: str, seq: str, pos: str,
                           ts_ms: int, txid: int | None, lsn: int, snapshot: bool = True) -> None:
        if self._resume_seq is not None and seq < self._resume_seq:
            return
        d = table.definition
        sequence = postgresql_sequence(None if snapshot else self._restart_lsn, lsn)
        source = postgresql_source(version=VERSION, name=self.props.topic_prefix, ts_ms=ts_ms, db=self.props.dbname,
                                   schema=d.schema, table=d.table, snapshot=snapshot, sequence=sequence, txId=txid,
                                   lsn=lsn)
        change = ev.SchemaChangeEvent("postgresql", self.props.topic_prefix, source, self.props.dbname, d.schema,
                                      None, [table.table_change(kind)], ts_ms=ts_ms)
        pending.schema_changes.append(schema_change_to_bronze(change, seq=seq, position=pos))

    # ------------------------------------------------------------------ streaming

    def _remember(self, relid: int, table: CapturedTable, signature: tuple | None) -> None:
        self._tables[relid] = table
        if signature is not None:
            self._signatures[relid] = signature

    def _start_replication(self) -> Any:
        self._repl = setup.connect_replication(self.props)
        cur = self._repl.cursor()
        options = {"proto_version": "1", "publication_names": self.props.publication_name, "messages": "true"}
        cur.start_replication(slot_name=self.props.slot_name, decode=False, start_lsn=self._restart_lsn,
                              # psycopg2 refuses status intervals under 1 s
                              options=options, status_interval=max(1.0, self.props.status_update_interval_ms / 1000))
        self._repl_cur = cur
        return cur

    def _connect_stream(self) -> Any:
        retries, delay = self.props.slot_max_retries, self.props.slot_retry_delay_ms / 1000
        for attempt in range(retries + 1):
            try:
                return self._start_replication()
            except (psycopg2.OperationalError, psycopg2.InterfaceError, LakecdcError) as exc:
                if self._repl is not None and not self._repl.closed:
                    self._repl.close()
                self._repl = None
                if attempt >= retries:
                    raise LakecdcError(f"cannot start streaming from slot {self.props.slot_name}: "
                                       f"{_first_line(exc)}") from None
                log.warning("streaming start failed (%s); retry %d/%d", _first_line(exc), attempt + 1, retries)
                time.sleep(delay * (2 ** min(attempt, 4)))
            except psycopg2.Error as exc:
                raise LakecdcError(f"cannot start streaming from slot {self.props.slot_name}: "
                                   f"{_first_line(exc)}") from None
        raise AssertionError("unreachable")

    def _preload_tables(self) -> None:
        """The current catalog definition of every captured table, so that the Relation messages of a new
        session only produce a schema change row when the table really differs."""
        for schema, name, relid in self.captured_tables():
            if relid not in self._tables:
                self._tables[relid] = build_table(self.catalog.table_def(schema, name, relid), self.props)

    def _stream(self, limits: BatchLimits) -> Iterator[Batch]:
        self._preload_tables()
        cur = self._connect_stream()
        pending = _Pending()
        txn: _Txn | None = None
        poll = self.props.poll_interval_ms / 1000
        heartbeat = self.props.heartbeat_interval_ms / 1000
        last_heartbeat = last_data = time.monotonic()
        failures = 0
        while True:
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
                                       f"{_first_line(exc)}") from None
                failures += 1
                if failures > self.props.slot_max_retries:
                    raise LakecdcError(f"replication connection keeps failing: {_first_line(exc)}") from None
                log.warning("replication connection lost (%s); reconnecting from %s", _first_line(exc),
                            pg.lsn_to_str(self._restart_lsn))
                txn = None  # the server resends the open transaction from its Begin
                if self._repl is not None and not self._repl.closed:
                    self._repl.close()
                time.sleep(self.props.slot_retry_delay_ms / 1000 * min(failures, 5))
                cur = self._connect_stream()
                continue
            if msg is not None:
                failures = 0
                last_data = time.monotonic()
                txn = self._handle(pg.decode(msg.payload), msg.data_start, txn, pending)
                size = len(pending)
                if size >= limits.max_events or (size and time.monotonic() - pending.started >= limits.max_seconds):
                    yield self._flush(pending, caught_up=False)
                    pending = _Pending()
                continue
            if ready and time.monotonic() - last_data < poll:
                continue
            # the server had no data for `poll` seconds. Keepalives alone keep the socket ready: a server
            # shutting down sends them in a loop and waits until we confirm its end of WAL, so this branch
            # must run then too (at most once per poll interval)
            last_data = time.monotonic()
            if txn is None:
                now = time.monotonic()
                if heartbeat and now - last_heartbeat >= heartbeat:
                    last_heartbeat = now
                    self._heartbeat()
                if not len(pending) and self._ack_lsn >= self._yielded_ack and cur.wal_end > self._ack_lsn:
                    # idle and everything handed out is committed: confirm the server's position, so the
                    # slot does not retain WAL of changes to tables we do not capture
                    self._ack_lsn = cur.wal_end
                yield self._flush(pending, caught_up=True)
                pending = _Pending()
            elif len(pending) and time.monotonic() - pending.started >= limits.max_seconds:
                yield self._flush(pending, caught_up=False)
                pending = _Pending()

    def _flush(self, pending: _Pending, caught_up: bool) -> Batch:
        if pending.ack is not None and pending.ack > self._yielded_ack:
            self._yielded_ack = pending.ack
        return Batch(events=pending.events, schema_changes=pending.schema_changes, rejects=pending.rejects,
                     caught_up=caught_up, ack=pending.ack, blocks=pending.blocks)

    def _position(self, commit_lsn: int) -> str:
        return orjson.dumps({"phase": "streaming", "slot_lsn": self._slot_lsn, "restart_lsn": self._restart_lsn,
                             "last_commit_lsn": self._last_commit_lsn, "commit_lsn": commit_lsn}).decode()

    def _next_seq(self, txn: _Txn, lsn: int) -> str | None:
        """The seq of the next event of `txn`, or None when it was already handed out (a resent event)."""
        txn.index += 1
        txn.last_lsn = lsn
        seq = make_seq(txn.commit_lsn, lsn, txn.index)
        if self._last_seq is not None and seq <= self._last_seq:
            return None
        self._last_seq = seq
        return seq

    def _handle(self, msg: pg.Message, data_start: int, txn: _Txn | None, pending: _Pending) -> _Txn | None:
        if isinstance(msg, pg.Begin):
            txn = _Txn(msg.xid, msg.final_lsn, msg.commit_ts_us, data_start)
            if self.props.provide_transaction_metadata:
                # BEGIN goes out with the transaction's first captured event (_transaction_block), as Debezium's
                txn.tracker = ev.TransactionTracker("postgresql", self.props.topic_prefix)
            return txn
        if isinstance(msg, pg.Commit):
            if txn is not None and txn.tracker is not None and txn.tracker.id is not None:
                # Debezium's transaction id is "<xid>:<LSN of the current message>": END carries the Commit's
                end = txn.tracker.end(msg.commit_ts_us // 1000, f"{txn.xid}:{data_start}")
                self._add_transaction_event(pending, txn, end, msg.end_lsn)
            self._last_commit_lsn = msg.commit_lsn
            self._restart_lsn = msg.end_lsn
            pending.ack = msg.end_lsn
            return None
        if isinstance(msg, pg.Relation):
            self._on_relation(msg, txn, data_start, pending)
            return txn
        if isinstance(msg, pg.Insert | pg.Update | pg.Delete | pg.Truncate):
            if txn is None:
                raise LakecdcError(f"pgoutput: {type(msg).__name__} outside a transaction at "
                                   f"{pg.lsn_to_str(data_start)}")
            self._on_change(msg, txn, data_start, pending)
            return txn
        if isinstance(msg, pg.LogicalMessage):
            self._on_message(msg, txn, data_start, pending)
            return txn
        return txn  # Origin, Type: nothing to emit (types are resolved through the catalog)

    # --- relations and schema changes

    def _on_relation(self, msg: pg.Relation, txn: _Txn | None, data_start: int, pending: _Pending) -> None:
        if not self.props.captures_table(msg.namespace, msg.name):
            self._tables.pop(msg.relid, None)
            return
        signature = tuple((c.name, c.type_oid, c.type_modifier) for c in msg.columns) + (msg.namespace, msg.name)
        if self._signatures.get(msg.relid) == signature and msg.relid in self._tables:
            return
        catalog = self.catalog
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
        previous = self._tables.get(msg.relid)
        # The first Relation of a table in a session always gives a row unless this session's snapshot just
        # wrote one: after a crash the catalog may already hold the new definition while the row that
        # announced it was never committed. A repeated row is harmless, a lost one is not.
        changed = (msg.relid not in self._announced or previous is None
                   or _definition_key(previous.definition) != _definition_key(definition))
        self._remember(msg.relid, table, signature)
        self._announced.add(msg.relid)
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
            commit_lsn, seq = self._last_commit_lsn, make_seq(self._last_commit_lsn, self._restart_lsn, 0)
        ts_ms = txn.ts_us // 1000 if txn is not None else int(time.time() * 1000)
        self._add_schema_change(pending, table, "ALTER" if previous is not None else "CREATE", seq,
                                self._position(commit_lsn), ts_ms, txn.xid if txn else None,
                                txn.last_lsn if txn else self._restart_lsn, snapshot=False)

    def _warn_about_converted_values(self, before: TableDef, after: TableDef) -> None:
        """ALTER COLUMN ... TYPE rewrote the table without change events (quality's type_changes check flags it
        too). Types from the Relation messages (the live catalog may already be further on)."""
        old_types = {c.name: c.type for c in before.columns}
        for column in after.columns:
            old = old_types.get(column.name)
            if old is None or (old.oid, old.typmod) == (column.type.oid, column.type.typmod):
                continue
            old_text = self.catalog.format_type(old.oid, old.typmod)
            new_text = self.catalog.format_type(column.type.oid, column.type.typmod)
            if not is_lossless(old_text, new_text):
                log.warning("%s: %s.%s.%s changed type from %s to %s: PostgreSQL rewrote its stored values without "
                            "change events, so rows not changed since keep their old values in bronze and silver; "
                            "re-snapshot the table (docs/quality.md, type_changes)", self.source_name, after.schema,
                            after.table, column.name, old_text, new_text)

    # --- data changes

    def _source(self, table: CapturedTable, txn: _Txn, lsn: int) -> dict[str, Any]:
        d = table.definition
        # sequence: [end LSN of the last transaction committed before this one, this change's LSN] (upstream's
        # lastCommitLsn is the Commit message's WAL position, i.e. its end LSN)
        return postgresql_source(version=VERSION, name=self.props.topic_prefix, ts_ms=txn.ts_us // 1000,
                                 db=self.props.dbname, schema=d.schema, table=d.table, snapshot=False,
                                 sequence=postgresql_sequence(self._restart_lsn, lsn), ts_us=txn.ts_us,
                                 txId=txn.xid, lsn=lsn)

    def _transaction_block(self, pending: _Pending, txn: _Txn, data_collection: str, lsn: int) -> dict[str, Any]:
        """The `transaction` block of the next event of `txn` (provide.transaction.metadata), after the BEGIN
        event when this is the transaction's first. Ids are Debezium's "<xid>:<LSN of the event>"."""
        tracker = txn.tracker
        assert tracker is not None
        event_id = f"{txn.xid}:{lsn}"
        if tracker.id is None:
            self._add_transaction_event(pending, txn, tracker.begin(event_id, txn.ts_us // 1000), lsn)
        return tracker.block(data_collection, event_id)

    def _emit(self, pending: _Pending, txn: _Txn, event: ev.ChangeEvent, lsn: int) -> None:
        block = None
        if txn.tracker is not None and event.op is not None:
            d = event.table.table_id.split(".", 1)[1]  # Debezium's data collection: schema.table
            block = self._transaction_block(pending, txn, d, lsn)
        seq = self._next_seq(txn, lsn)
        if seq is None:
            return
        event.transaction = block
        if txn.position is None:
            txn.position = self._position(txn.commit_lsn)
        pending.events.append(change_to_bronze(event, seq=seq, position=txn.position, txn_id=str(txn.xid)))

    def _on_change(self, msg: Any, txn: _Txn, lsn: int, pending: _Pending) -> None:
        props = self.props
        skipped = props.skipped_operations
        if isinstance(msg, pg.Truncate):
            if "t" in skipped:
                return
            for relid in msg.relids:
                table = self._tables.get(relid)
                if table is not None:
                    event = ev.change(table.schemas, "t", source=self._source(table, txn, lsn), ts_ms=_now_ms())
                    self._emit(pending, txn, event, lsn)
            return
        table = self._tables.get(msg.relid)
        if table is None:
            return  # not captured (publication wider than the filters)
        placeholder = props.unavailable_value_placeholder
        try:
            if isinstance(msg, pg.Insert):
                if "c" in skipped:
                    return
                new = _text(msg.new)
                after = table.row(new, placeholder)
                events = [ev.change(table.schemas, "c", source=self._source(table, txn, lsn), after=after,
                                    key=table.key_from(after, new), ts_ms=_now_ms())]
            elif isinstance(msg, pg.Update):
                events = self._update_events(table, msg, txn, lsn)
            else:
                if "d" in skipped:
                    return
                old = _text(msg.old)
                before = table.row(old, placeholder)
                events = [ev.change(table.schemas, "d", source=self._source(table, txn, lsn), before=before,
                                    key=table.key_from(before, old), ts_ms=_now_ms())]
        except (ConversionError, ValueError, IndexError, ArithmeticError) as exc:
            seq = self._next_seq(txn, lsn)
            if seq is not None:
                pending.rejects.append(BronzeReject(seq, "convert", f"{table.table_id}: {exc}", repr(msg).encode(),
                                                    self._position(txn.commit_lsn)))
            return
        for event in events:
            self._emit(pending, txn, event, lsn)
            if event.op == "d" and props.tombstones_on_delete:  # keyless tables too (null key), like Debezium
                self._emit(pending, txn, ev.tombstone(event), lsn)

    def _update_events(self, table: CapturedTable, msg: pg.Update, txn: _Txn, lsn: int) -> list[ev.ChangeEvent]:
        placeholder = self.props.unavailable_value_placeholder
        new = _text(msg.new)
        old = _text(msg.old) if msg.old is not None else None
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
        source = self._source(table, txn, lsn)
        if old_key != new_key and old_key is not None:
            # primary key change: delete (old key), tombstone, create (new key)
            out = []
            if "d" not in self.props.skipped_operations:
                out.append(ev.change(table.schemas, "d", source=source, before=before, key=old_key, ts_ms=_now_ms()))
            if "c" not in self.props.skipped_operations:
                out.append(ev.change(table.schemas, "c", source=source, after=after, key=new_key, ts_ms=_now_ms()))
            return out
        if "u" in self.props.skipped_operations:
            return []
        return [ev.change(table.schemas, "u", source=source, before=before, after=after, key=new_key,
                          ts_ms=_now_ms())]

    # --- logical decoding messages and transaction metadata

    def _on_message(self, msg: pg.LogicalMessage, txn: _Txn | None, lsn: int, pending: _Pending) -> None:
        """pg_logical_emit_message(): Debezium's <prefix>.message topic, op "m"."""
        topic = f"{self.props.topic_prefix}.message"
        block = None
        if txn is not None and txn.tracker is not None:
            # Debezium counts the message in the transaction; its data_collections entry is named by a Java
            # object's toString (not reproducible): we name it by the message topic (docs/events.md)
            block = self._transaction_block(pending, txn, topic, lsn)
        if txn is not None:
            seq = self._next_seq(txn, lsn)
            ts_ms, xid, commit_lsn = txn.ts_us // 1000, txn.xid, txn.commit_lsn
        else:
            seq = make_seq(lsn, lsn, 0)
            if self._last_seq is not None and seq <= self._last_seq:
                seq = None
            else:
                self._last_seq = seq
            ts_ms, xid, commit_lsn = _now_ms(), None, lsn
        if seq is None:
            return
        source = postgresql_source(version=VERSION, name=self.props.topic_prefix, ts_ms=ts_ms, db=self.props.dbname,
                                   schema="", table="", snapshot=False,
                                   sequence=postgresql_sequence(self._restart_lsn, lsn),
                                   ts_us=txn.ts_us if txn is not None else None, txId=xid, lsn=lsn)
        value_schema, encode = message_encoding(self.props.binary_handling_mode)
        value = {"op": "m", "ts_ms": _now_ms(), "source": source, "transaction": block,
                 "message": {"prefix": msg.prefix, "content": encode(msg.content)}}
        key = {"prefix": msg.prefix}
        pending.events.append(BronzeEvent(
            topic=topic, table_id=topic, op="m", seq=seq, key=dumps_str(key), value=dumps_str(value),
            key_schema=canonical_schema_json(MESSAGE_KEY_SCHEMA), value_schema=value_schema,
            ts_ms=value["ts_ms"], source_ts_ms=ts_ms, txn_id=str(xid) if xid is not None else None, snapshot="false",
            position=self._position(commit_lsn)))

    def _add_transaction_event(self, pending: _Pending, txn: _Txn, event: ev.TransactionEvent, lsn: int) -> None:
        seq = self._next_seq(txn, lsn)
        if seq is None:
            return
        value = event.value()
        pending.events.append(BronzeEvent(
            topic=event.topic, table_id=event.topic, op=None, seq=seq, key=dumps_str(event.key),
            value=dumps_str(value), key_schema=canonical_schema_json(event.key_schema),
            value_schema=canonical_schema_json(event.value_schema), ts_ms=value.get("ts_ms"),
            source_ts_ms=txn.ts_us // 1000, txn_id=str(txn.xid), snapshot="false",
            position=self._position(txn.commit_lsn)))

    def _heartbeat(self) -> None:
        if self.props.heartbeat_action_query:
            with self._normal().cursor() as cur:
                cur.execute(self.props.heartbeat_action_query)

    # ------------------------------------------------------------------ acknowledgement and status

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

    def slot_lag(self) -> dict[str, Any]:
        """For `lakecdc status`: the slot's confirmed position and how much WAL it retains."""
        with self._normal().cursor() as cur:
            cur.execute("SELECT confirmed_flush_lsn::text, restart_lsn::text, active, "
                        "pg_wal_lsn_diff(pg_current_wal_lsn(), confirmed_flush_lsn)::bigint, "
                        "pg_wal_lsn_diff(pg_current_wal_lsn(), restart_lsn)::bigint "
                        "FROM pg_replication_slots WHERE slot_name = %s", (self.props.slot_name,))
            row = cur.fetchone()
        if row is None:
            return {"slot": self.props.slot_name, "exists": False}
        return {"slot": self.props.slot_name, "exists": True, "confirmed_flush_lsn": row[0], "restart_lsn": row[1],
                "active": row[2], "lag_bytes": row[3], "retained_bytes": row[4]}

    def source_lag(self) -> str | None:
        lag = self.slot_lag()
        if not lag["exists"]:
            return f"slot {lag['slot']} does not exist (the next run takes a snapshot only if snapshot.mode allows)"
        return (f"slot {lag['slot']}: confirmed up to {lag['confirmed_flush_lsn']}, {_size(lag['lag_bytes'])} of WAL "
                f"behind, {_size(lag['retained_bytes'])} retained on the server, "
                f"{'active' if lag['active'] else 'inactive'}")

    def close(self) -> None:
        if self._reader is not None and not self._reader.closed:
            self._reader.close()
        self._reader = None
        if self._repl is not None and not self._repl.closed:
            try:
                if self._repl_cur is not None:
                    self._send_ack(self._repl_cur)
            except psycopg2.Error as exc:  # the slot keeps the older position; nothing is lost
                log.warning("could not confirm flush LSN %s: %s", pg.lsn_to_str(self._ack_lsn), exc)
            self._repl.close()
        self._repl = None
        if self.props.slot_drop_on_stop:
            try:
                setup.drop_slot(self._normal(), self.props.slot_name)
            except psycopg2.Error as exc:
                log.warning("could not drop slot %s: %s", self.props.slot_name, exc)
        if self._conn is not None and not self._conn.closed:
            self._conn.close()
        self._conn = None


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


_SNAPSHOT_FIELD = '"snapshot":"'


class _SnapshotMarks:
    """source.snapshot of each snapshot row, as Debezium 3.6.3 marks them, in this order of precedence:
    "last" on the last row of the last table with rows (measured: an empty last table does not take it),
    "first" on the first row of the first table,
    "last_in_data_collection" / "first_in_data_collection" on a table's last / first row, "true" in between.
    Rows are built with "true"; a table's first row is marked when its block arrives, its last row when the
    table ends, and the snapshot's last row at the end: each in a block not handed out yet (the caller holds
    back batches until a later row exists)."""

    def __init__(self) -> None:
        self.first_table = self.resumed = False
        self.first: tuple[BronzeEventBlock, int] | None = None   # the table's first row
        self.last: tuple[BronzeEventBlock, int] | None = None    # the table's latest row so far
        self.final: tuple[BronzeEventBlock, int] | None = None   # the snapshot's latest row so far

    def start_table(self, first: bool, resumed: bool) -> None:
        """`resumed`: a snapshot resumed inside this table (its first row was handed out before)."""
        self.first_table, self.resumed = first, resumed
        self.first = self.last = None

    def add(self, block: BronzeEventBlock) -> None:
        if self.first is None and not self.resumed:
            self.first = (block, 0)
            _mark_snapshot_row(block, 0, "first" if self.first_table else "first_in_data_collection")
        self.resumed = True
        self.last = self.final = (block, len(block) - 1)

    def end_table(self) -> None:
        if self.last is not None:
            block, row = self.last
            # a one-row table: "first" outranks "last_in_data_collection", which outranks "first_in_..."
            only_row_of_first_table = (self.first_table and self.first is not None
                                       and self.first[0] is block and self.first[1] == row)
            if not only_row_of_first_table:
                _mark_snapshot_row(block, row, "last_in_data_collection")
        self.first = self.last = None

    def mark_last(self) -> None:
        if self.final is not None:
            _mark_snapshot_row(*self.final, "last")


def _mark_snapshot_row(block: BronzeEventBlock, row: int, label: str) -> None:
    """Set source.snapshot of one row of a snapshot block (its value text and its bronze snapshot column)."""
    table = block.columns
    values = table.column("value").to_pylist()
    text = values[row]
    at = text.rfind(_SNAPSHOT_FIELD) + len(_SNAPSHOT_FIELD)  # the row's current label (source comes last)
    values[row] = text[:at] + label + text[text.index('"', at):]
    flags = table.column("snapshot").to_pylist()
    flags[row] = label
    table = table.set_column(table.column_names.index("value"), "value", pa.array(values, pa.string()))
    block.columns = table.set_column(table.column_names.index("snapshot"), "snapshot", pa.array(flags, pa.string()))


def _definition_key(d: TableDef) -> tuple:
    return (tuple((c.name, c.type.oid, c.type.typmod, c.nullable) for c in d.columns), d.primary_key,
            d.replica_identity)


def _text(values: list) -> list:
    return [v.decode("utf-8") if isinstance(v, bytes) else v for v in values]


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _set_last_position(batch: Batch, position: str) -> None:
    """Give the batch's highest-seq event `position` (events and blocks are each in seq order)."""
    last_block = batch.blocks[-1] if batch.blocks else None
    if batch.events and (last_block is None or batch.events[-1].seq > (last_block.max_seq() or "")):
        batch.events[-1].position = position
    elif last_block is not None and len(last_block):
        column = last_block.columns.column("position").to_pylist()
        column[-1] = position
        index = last_block.columns.column_names.index("position")
        last_block.columns = last_block.columns.set_column(index, "position", pa.array(column, pa.string()))


def _size(n: int | None) -> str:
    if n is None:
        return "?"
    for unit in ("bytes", "kB", "MB", "GB"):
        if abs(n) < 1024 or unit == "GB":
            return f"{n} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1024  # type: ignore[assignment]
    return f"{n} GB"


def _now_ms() -> int:
    return time.time_ns() // 1_000_000
