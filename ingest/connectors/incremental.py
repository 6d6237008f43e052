"""Incremental snapshots (seeds: Debezium's DBLog-style incremental snapshot), the part every connector shares.

A table is read in chunks in key order while streaming goes on. For each chunk the connector writes an open
watermark to the signalling table, reads the chunk, writes a close watermark. Both watermarks come back through the
change stream: between them, a streamed change of a key of the chunk removes that row from the chunk (the stream
carries the newer state); at the close watermark the rows left are emitted as read events (`op` "r", source
`snapshot` "incremental") at the close watermark's position, so a row is never rolled back to an older state.

The state (tables left, last key read, the table's max key, additional conditions, paused) travels in the position
of every event, so a run that stops resumes the snapshot at the chunk after the last completed one (a chunk whose
rows did not all land is read again: its rows may land twice, each at a consistent position). Keys are the key
columns' values as text, in the connector's own text form.

A blocking snapshot (execute-snapshot with type blocking) pauses streaming at the next transaction boundary and
reads its tables whole, in key-ordered chunks, as read events marked like an initial snapshot's; streaming then goes
on from where it paused, so changes made while the tables were read follow as streamed events (Debezium's "possible
duplicates": a row may be read in a state that a later streamed change also gives). A batch holds whole chunks and
every row of a chunk carries the state after it, so a run that stops resumes at the chunk after the last one landed,
before streaming on."""

from __future__ import annotations

import logging
import re
import time
import uuid
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any

from ingest.connectors import signals
from ingest.connectors.signal_kafka import KafkaSignalChannel

log = logging.getLogger(__name__)

Key = tuple[str | None, ...]


@dataclass
class ChunkWindow:
    """One chunk between its watermarks: `rows` (key -> the row's values) shrink while the window is open."""

    chunk_id: str
    table: str
    rows: dict[Key, list[Any]]
    last_key: list[str | None] | None   # the key of the chunk's last row read: the next chunk starts after it
    full: bool                          # as many rows as the chunk size: the table may have more
    opened: bool = False
    read: int = 0                       # rows the chunk's SELECT returned
    position: Any = None                # read-only: the stream position whose state the chunk read


@dataclass
class IncrementalSnapshot:
    """The incremental snapshot of one source: tables left (the current one first) and where its chunks are."""

    snapshot_id: str | None = None
    tables: list[str] = field(default_factory=list)
    conditions: dict[str, str] = field(default_factory=dict)
    last_key: list[str | None] | None = None
    max_key: list[str | None] | None = None
    max_key_read: bool = False
    paused: bool = False
    table_rows: int = 0   # rows read of the current table
    surrogates: dict[str, str] = field(default_factory=dict)   # table -> the column its chunks follow (surrogate-key)
    window: ChunkWindow | None = None

    @classmethod
    def from_state(cls, state: dict[str, Any] | None) -> IncrementalSnapshot:
        if not state:
            return cls()
        return cls(state.get("id"), list(state.get("tables") or []), dict(state.get("conditions") or {}),
                   state.get("last_key"), state.get("max_key"), bool(state.get("max_key_read")),
                   bool(state.get("paused")), int(state.get("table_rows") or 0), dict(state.get("surrogates") or {}))

    def state(self) -> dict[str, Any] | None:
        """What the position keeps (None when no incremental snapshot is under way)."""
        if not self.tables:
            return None
        return {"id": self.snapshot_id, "tables": self.tables, "conditions": self.conditions,
                "last_key": self.last_key, "max_key": self.max_key, "max_key_read": self.max_key_read,
                "paused": self.paused, "table_rows": self.table_rows, "surrogates": self.surrogates}

    @property
    def active(self) -> bool:
        return bool(self.tables)

    @property
    def current(self) -> str | None:
        return self.tables[0] if self.tables else None

    def wants_chunk(self) -> bool:
        return bool(self.tables) and not self.paused and self.window is None

    # -- signals -------------------------------------------------------------------------------------------
    def start(self, tables: list[str], conditions: dict[str, str], surrogate: str | None = None) -> list[str]:
        """Add tables (in the given order; one already queued stays where it is), read in chunks of `surrogate`
        when given; returns those added."""
        if not self.tables:
            self.snapshot_id = str(uuid.uuid4())
        added = [t for t in dict.fromkeys(tables) if t not in self.tables]
        self.tables.extend(added)
        self.conditions.update({t: c for t, c in conditions.items() if t in self.tables})
        if surrogate:
            self.surrogates.update(dict.fromkeys(added, surrogate))
        return added

    def stop(self, tables: list[str] | None) -> list[str]:
        """Remove the given tables (all when None); returns those removed."""
        removed = list(self.tables) if tables is None else [t for t in self.tables if t in tables]
        if self.current in removed:
            self.window, self.last_key, self.max_key, self.max_key_read = None, None, None, False
            self.table_rows = 0
        self.tables = [t for t in self.tables if t not in removed]
        for table in removed:
            self.conditions.pop(table, None)
            self.surrogates.pop(table, None)
        if not self.tables:
            self.snapshot_id = None
        return removed

    # -- the current table ---------------------------------------------------------------------------------
    def set_max_key(self, key: list[str | None] | None) -> None:
        self.max_key, self.max_key_read = key, True

    def finish_table(self) -> str:
        """The current table is read (or empty, or gone): on to the next."""
        done = self.tables.pop(0)
        self.conditions.pop(done, None)
        self.surrogates.pop(done, None)
        self.last_key, self.max_key, self.max_key_read, self.window = None, None, False, None
        self.table_rows = 0
        if not self.tables:
            self.snapshot_id = None
        return done

    # -- the window ----------------------------------------------------------------------------------------
    def begin_chunk(self, chunk_id: str, table: str, rows: list[tuple[Key, list[Any]]], size: int) -> ChunkWindow:
        """The chunk just read (after writing its open watermark, before its close one), in key order."""
        self.window = ChunkWindow(chunk_id, table, dict(rows),
                                  list(rows[-1][0]) if rows else self.last_key, len(rows) >= size, read=len(rows))
        return self.window

    def watermark_opened(self, chunk_id: str) -> None:
        if self.window is not None and self.window.chunk_id == chunk_id:
            self.window.opened = True

    def streamed(self, table: str, key: Key | None) -> None:
        """A streamed change of `key` in `table`: the stream carries a newer state of that row than the chunk."""
        window = self.window
        if window is not None and window.opened and key is not None and window.table == table:
            window.rows.pop(key, None)

    def watermark_closed(self, chunk_id: str) -> ChunkWindow | None:
        """The chunk whose close watermark this is (its rows left are to be emitted), or None for a watermark
        of no chunk of this run (written by a run that stopped: that chunk is read again)."""
        window = self.window
        if window is None or window.chunk_id != chunk_id or not window.opened:
            return None
        return window

    def chunk_done(self, window: ChunkWindow) -> bool:
        """After a chunk's rows were emitted: the next chunk starts after its last key; True when the table is
        read to its max key (and finished)."""
        self.window = None
        self.table_rows += window.read
        if not window.full or window.last_key is None or window.last_key == self.max_key:
            self.finish_table()
            return True
        self.last_key = window.last_key
        return False


@dataclass
class BlockingSnapshot(IncrementalSnapshot):
    """A blocking snapshot under way: the tables left (the current one first), where the current one is, and the
    rows read so far (for the source.snapshot marks)."""

    rows_read: int = 0    # rows of the whole snapshot
    collections: list[str] = field(default_factory=list)   # every table asked for (notifications' data_collections)
    origin: dict[str, Any] | None = None   # the connector's note of where its stream paused (source block values)

    @classmethod
    def from_state(cls, state: dict[str, Any] | None) -> BlockingSnapshot:
        base = IncrementalSnapshot.from_state(state)
        if not state:
            return cls()
        return cls(base.snapshot_id, base.tables, base.conditions, base.last_key, base.max_key, base.max_key_read,
                   table_rows=base.table_rows, surrogates=base.surrogates, rows_read=int(state.get("rows_read") or 0),
                   collections=list(state.get("collections") or []), origin=state.get("origin"))

    def state(self) -> dict[str, Any] | None:
        if not self.tables:   # none under way (every streamed transaction's position asks)
            return None
        state = super().state()
        if state is not None:
            state.pop("paused")
            state.update(rows_read=self.rows_read, collections=self.collections, origin=self.origin)
        return state

    def start(self, tables: list[str], conditions: dict[str, str], surrogate: str | None = None) -> list[str]:
        if not self.tables:   # a new snapshot (the last one's rows were emitted with its origin and marks)
            self.rows_read, self.origin, self.collections = 0, None, []
        added = super().start(tables, conditions, surrogate)
        self.collections.extend(added)
        return added

    def marks(self, n: int, last_chunk: bool) -> list[str]:
        """source.snapshot of the next `n` rows, as an initial snapshot marks them (SnapshotMarks' precedence):
        "last" on the snapshot's last row, "first" on its first, "last_in_data_collection" / "first_in_data_collection"
        on a table's last / first row, "true" in between. `last_chunk`: these rows end the current table."""
        marks = ["true"] * n
        if not n:
            return marks
        if self.table_rows == 0:
            marks[0] = "first_in_data_collection"
        if last_chunk:
            marks[-1] = "last_in_data_collection"
        if self.rows_read == 0:
            marks[0] = "first"
        if last_chunk and len(self.tables) == 1:
            marks[-1] = "last"
        return marks


INCREMENTAL, BLOCKING = "Incremental Snapshot", "Initial Snapshot"   # notifications' aggregate types


class SignalledSnapshots(ABC):
    """What every connector does with its signals and its incremental snapshot: acting on a signal, the chunk
    loop and emitting a closed chunk. A connector supplies the database work (the `_`-less abstract methods) and
    how an event is emitted; `out` is the connector's emission context (where in its stream the signal or
    watermark was read), passed through untouched."""

    FILE_POLL_SECONDS = 1.0   # how often the signal file is looked at (between transactions)

    def __init__(self, source_name: str, state: dict[str, Any] | None, chunk_size: int, watermarks: bool,
                 file_channel: signals.FileSignalChannel | None, source_channel: bool = True,
                 notification_channels: frozenset[str] = frozenset({"sink", "log"}),
                 kafka_channel: KafkaSignalChannel | None = None, read_only: bool = False) -> None:
        self.source_name = source_name
        self.chunk_size = chunk_size
        self.snapshot = IncrementalSnapshot.from_state(state)
        self.blocking = BlockingSnapshot.from_state((state or {}).get("blocking"))
        self.watermarks = watermarks   # a signalling table to write the watermarks to
        self.read_only = read_only     # no watermarks: chunks read in a snapshot tied to a stream position
        self.file_channel = file_channel
        self.kafka_channel = kafka_channel
        self.signal_offset: int | None = (state or {}).get("signal_offset")   # the kafka channel's last record
        self.source_channel = source_channel   # signals from the signalling table (else only its watermarks)
        self.notification_channels = notification_channels
        self._file_polled = 0.0

    # -- what a connector supplies -------------------------------------------------------------------------
    @abstractmethod
    def captured_names(self) -> list[str]:
        """The captured tables' names as data-collections name them (`schema.table` / `db.table`)."""

    @abstractmethod
    def has_key(self, table: str, surrogate: str | None = None) -> str | None:
        """None when `table` can be read in key order (of its primary key, or of the `surrogate` column: one with
        a unique index of its own, NOT NULL, else chunks could skip rows); else why not (gone, no primary key, no
        such column)."""

    @abstractmethod
    def max_key(self, table: str, condition: str | None, surrogate: str | None = None) -> list[Any] | None:
        """The largest chunk key (primary key, or the `surrogate` column) under the additional condition, None for
        no row."""

    @abstractmethod
    def read_chunk(self, table: str, last_key: list[Any] | None, max_key: list[Any], condition: str | None,
                   size: int, surrogate: str | None = None) -> tuple[list[tuple[Key, Any]], list[Any] | None]:
        """The next `size` rows after `last_key` up to `max_key` in chunk key order: ([(window key, row)], the chunk
        key of the last row as the state keeps it). The window key is the row's message key, as streamed changes
        carry it (the chunk key for a table without one)."""

    @abstractmethod
    def write_watermark(self, signal_id: str, kind: str) -> None:
        """Insert a watermark row into the signalling table."""

    @abstractmethod
    def emit_read(self, out: Any, table: str, row: Any) -> None:
        """A read event (op r, source.snapshot "incremental") of `row` of `table`, at the close watermark."""

    @abstractmethod
    def emit_blocking_read(self, out: Any, table: str, row: Any, mark: str) -> None:
        """A read event (op r, source.snapshot `mark`) of `row` of `table` in a blocking snapshot, between two
        transactions of the stream (seq counted on as heartbeats' are), its position holding the state now."""

    @abstractmethod
    def emit_notification(self, out: Any, kind: str, data: dict[str, str], aggregate: str) -> None:
        """A notification event (aggregate type `aggregate`) whose position holds the snapshots' state as it is
        now."""

    @abstractmethod
    def state_changed(self) -> None:
        """The snapshots' state (state()) changed: the positions of the events emitted from now on hold the new
        one."""

    def read_chunk_at_position(self, table: str, last_key: list[Any] | None, max_key: list[Any],
                               condition: str | None, size: int, surrogate: str | None = None
                               ) -> tuple[list[tuple[Key, Any]], list[Any] | None, Any]:
        """read.only: read_chunk in a consistent snapshot, and the stream position that snapshot is the state at."""
        raise NotImplementedError(f"{type(self).__name__} has no read-only incremental snapshots")

    def stream_reached(self, position: Any) -> bool:
        """read.only: the stream has handed out every change up to `position` (read_chunk_at_position's)."""
        raise NotImplementedError(f"{type(self).__name__} has no read-only incremental snapshots")

    def blocking_origin(self) -> dict[str, Any]:
        """Where the stream paused for a blocking snapshot, as the connector's read events describe it (kept in the
        state, so a resumed run gives the same source blocks)."""
        return {}

    # -- the state in every position -------------------------------------------------------------------------
    def state(self) -> dict[str, Any] | None:
        """What positions keep: the incremental snapshot's state, with the blocking snapshot's under "blocking"
        (None when neither is under way)."""
        state = self.snapshot.state()
        blocking = self.blocking.state()
        if blocking is not None:
            state = {**(state or {}), "blocking": blocking}
        if self.signal_offset is not None:   # Debezium's incremental_snapshot_signal_offset
            state = {**(state or {}), "signal_offset": self.signal_offset}
        return state

    def restore(self, state: dict[str, Any] | None) -> None:
        """The snapshots under way where bronze ends (state() of the last landed position)."""
        self.snapshot = IncrementalSnapshot.from_state(state)
        self.blocking = BlockingSnapshot.from_state((state or {}).get("blocking"))
        self.signal_offset = (state or {}).get("signal_offset")
        self.resumed()

    # -- signals -------------------------------------------------------------------------------------------
    def on_signal(self, signal_id: Any, signal_type: Any, data: Any, out: Any) -> None:
        """A row inserted into the signalling table; a signal that cannot be carried out is logged, never
        raised."""
        try:
            self._act(signals.parse_signal(signal_id, signal_type, data), out)
        except signals.SignalError as exc:
            signals.refuse(self.source_name, str(exc))

    def on_table_row(self, signal_id: Any, signal_type: Any, data: Any, out: Any) -> None:
        """A row inserted into the signalling table: a watermark, or a signal when the source channel is on."""
        if self.source_channel or signal_type in (signals.WINDOW_OPEN, signals.WINDOW_CLOSE):
            self.on_signal(signal_id, signal_type, data, out)

    def poll_channels(self, out: Any) -> None:
        """The signals appended to the signal file and published to the signal topic since they were last looked
        at (at most once a second). A kafka signal's offset is in the state of the events its effect gives."""
        if (self.file_channel is None and self.kafka_channel is None) or \
                time.monotonic() - self._file_polled < self.FILE_POLL_SECONDS:
            return
        self._file_polled = time.monotonic()
        taken = [(*signal, None) for signal in self.file_channel.take(self.source_name)] if self.file_channel else []
        if self.kafka_channel is not None:
            taken += self.kafka_channel.take(self.source_name, self.signal_offset)
        for signal_id, signal_type, data, offset in taken:
            if offset is not None:
                self.signal_offset = offset
            if signal_type is None and offset is not None:
                continue   # a record the channel skipped (another connector's, or unreadable)
            if signal_type in (signals.WINDOW_OPEN, signals.WINDOW_CLOSE):
                signals.refuse(self.source_name, f"signal {signal_id!r}: {signal_type} is the connector's own")
                continue
            self.on_signal(signal_id, signal_type, data, out)
        if any(offset is not None for *_, offset in taken):
            self.state_changed()   # the events from here on hold the offset read to

    def close_channels(self) -> None:
        if self.kafka_channel is not None:
            self.kafka_channel.close()

    def _act(self, signal: signals.Signal, out: Any) -> None:
        snap = self.snapshot
        if signal.type == signals.WINDOW_OPEN:
            snap.watermark_opened(signal.id.removesuffix("-open"))
        elif signal.type == signals.WINDOW_CLOSE:
            self._close_window(signal.id.removesuffix("-close"), out)
        elif signal.type == signals.EXECUTE_SNAPSHOT:
            kind, names, conditions, surrogate = signals.snapshot_request(signal)
            if kind == "blocking":
                self._start_blocking(signal, names, conditions, surrogate, out)
                return
            if not (self.watermarks or self.read_only):
                raise signals.SignalError(f"signal {signal.id!r}: an incremental snapshot writes its watermarks to "
                                          "signal.data.collection: set it (or read.only=true, MariaDB)")
            tables, conditions = self._resolve_request(signal, names, conditions)
            self._check_keys(signal, tables, surrogate)
            snap.start(tables, conditions, surrogate)
            self._changed("STARTED", out, {"data_collections": ",".join(snap.tables)})
        elif signal.type == signals.STOP_SNAPSHOT:
            names = signal.data.get("data-collections")
            removed = snap.stop(self._resolve(signal, names) if names else None)
            self._changed("ABORTED", out, {"data_collections": ",".join(removed)} if names else {})
        elif signal.type in (signals.PAUSE_SNAPSHOT, signals.RESUME_SNAPSHOT):
            if snap.active:
                snap.paused = signal.type == signals.PAUSE_SNAPSHOT
                self._changed("PAUSED" if snap.paused else "RESUMED", out, {"data_collections": ",".join(snap.tables)})
        elif signal.type == signals.LOG:
            log.info("%s: signal %s: %s", self.source_name, signal.id, signal.data.get("message", ""))

    def _start_blocking(self, signal: signals.Signal, names: list[str], conditions: dict[str, str],
                        surrogate: str | None, out: Any) -> None:
        """Queue the tables of a blocking snapshot: streaming pauses at the next transaction boundary until they
        are read (a blocking snapshot under way takes them after its own)."""
        tables, conditions = self._resolve_request(signal, names, conditions)
        self._check_keys(signal, tables, surrogate, always=True)
        self.blocking.start(tables, conditions, surrogate)
        self._changed("STARTED", out, {}, BLOCKING)

    def _check_keys(self, signal: signals.Signal, tables: list[str], surrogate: str | None,
                    always: bool = False) -> None:
        """SignalError when a table cannot be read in chunks (of the surrogate key, when one is given; `always`:
        of its primary key too; an incremental snapshot skips such a table with a notification instead)."""
        for table in tables:
            why = self.has_key(table, surrogate) if surrogate or always else None
            if why is not None:
                raise signals.SignalError(f"signal {signal.id!r}: snapshot of {table} refused: the table {why}")

    def _resolve_request(self, signal: signals.Signal, names: list[str], conditions: dict[str, str]
                         ) -> tuple[list[str], dict[str, str]]:
        """execute-snapshot's tables and additional conditions, keyed by the captured tables they name."""
        return self._resolve(signal, names), {t: f for name, f in conditions.items()
                                              for t in self._resolve(signal, [name])}

    def _resolve(self, signal: signals.Signal, names: list[str]) -> list[str]:
        """Captured tables named by data-collections entries (a name or a regular expression); SignalError naming
        any entry that matches none."""
        captured = self.captured_names()
        found: list[str] = []
        for name in names:
            matches = [t for t in captured if t == name] or [t for t in captured if _fullmatch(name, t)]
            if not matches:
                raise signals.SignalError(f"signal {signal.id!r}: {name!r} is not a captured table")
            found.extend(t for t in matches if t not in found)
        return found

    def _changed(self, kind: str, out: Any, data: dict[str, str], aggregate: str = INCREMENTAL) -> None:
        """The state changed: kept (state_changed), then notified on the enabled channels (log; sink: a
        notification event, which also lands the new state with its position). `data`: Debezium's additional
        data of the notification (the connector adds connector_name)."""
        self.state_changed()
        if "log" in self.notification_channels:
            signals.notify(self.source_name, kind, "%s: %s", aggregate, data or "")
        if "sink" in self.notification_channels:
            self.emit_notification(out, kind, data, aggregate)

    # -- the stream ----------------------------------------------------------------------------------------
    @property
    def active(self) -> bool:
        """A snapshot is under way: the stream is not caught up."""
        return self.snapshot.active or self.blocking.active

    @property
    def blocking_due(self) -> bool:
        """A blocking snapshot has chunks to read: the connector pauses its stream at the next transaction boundary
        and calls blocking_chunk() until this is False."""
        return self.blocking.active

    def resumed(self) -> None:
        if "log" not in self.notification_channels:
            return
        for name, snap in (("incremental", self.snapshot), ("blocking", self.blocking)):
            if snap.active:
                signals.notify(self.source_name, "RESUMED", "%s snapshot of %s from key %s", name,
                               ", ".join(snap.tables), snap.last_key)

    def blocking_chunk(self, out: Any) -> None:
        """Read and emit the blocking snapshot's next chunk (the connector calls this with its stream paused between
        two transactions, and hands out whole chunks: every row of one carries the state after it)."""
        snap = self.blocking
        name = snap.current
        assert name is not None
        surrogate = snap.surrogates.get(name)
        why = self.has_key(name, surrogate)
        if why is not None:   # dropped since the signal
            signals.refuse(self.source_name, f"blocking snapshot of {name} skipped: the table {why}")
            self._blocking_table_done(name, out, _scan_status(why))
            return
        condition = snap.conditions.get(name)
        if snap.origin is None:
            snap.origin = self.blocking_origin()
        if snap.table_rows == 0 and snap.last_key is None and not snap.max_key_read:   # the table's first chunk
            self._changed("IN_PROGRESS", out, {"current_collection_in_progress": name,
                                               "data_collections": ",".join(snap.collections)}, BLOCKING)
        if not snap.max_key_read:
            snap.set_max_key(self.max_key(name, condition, surrogate))
        rows: list[tuple[Key, Any]] = []
        last: list[Any] | None = None
        if snap.max_key is not None:
            rows, last = self.read_chunk(name, snap.last_key, snap.max_key, condition, self.chunk_size, surrogate)
        last_chunk = len(rows) < self.chunk_size or last == snap.max_key
        marks = snap.marks(len(rows), last_chunk and bool(rows))
        if rows:
            snap.last_key = last
        snap.rows_read += len(rows)
        snap.table_rows += len(rows)
        if last_chunk:
            self._blocking_table_done(name, out, "SUCCEEDED", [(row, mark) for (_, row), mark
                                                               in zip(rows, marks, strict=True)])
            return
        self.state_changed()
        for (_, row), mark in zip(rows, marks, strict=True):
            self.emit_blocking_read(out, name, row, mark)

    def _blocking_table_done(self, name: str, out: Any, status: str,
                             rows: list[tuple[Any, str]] | None = None) -> None:
        """The current table's last rows (emitted with the state after the table), then its notification; the
        snapshot's end after its last table."""
        snap = self.blocking
        data = {"scanned_collection": name, "data_collections": ",".join(snap.collections),
                "total_rows_scanned": str(snap.table_rows), "status": status}
        snap.finish_table()
        self.state_changed()
        for row, mark in rows or []:
            self.emit_blocking_read(out, name, row, mark)
        self._changed("TABLE_SCAN_COMPLETED", out, data, BLOCKING)
        if not snap.active:
            self._changed("COMPLETED", out, {}, BLOCKING)

    def _scan_data(self, status: str, rows: int) -> dict[str, str]:
        """TABLE_SCAN_COMPLETED's data for the incremental snapshot's current table."""
        return {"data_collections": ",".join(self.snapshot.tables), "scanned_collection": self.snapshot.current or "",
                "total_rows_scanned": str(rows), "status": status}

    def _table_scan_completed(self, out: Any, status: str) -> None:
        """The incremental snapshot's current table is skipped or empty: on to the next."""
        snap = self.snapshot
        data = self._scan_data(status, snap.table_rows)
        snap.finish_table()
        self._changed("TABLE_SCAN_COMPLETED", out, data)
        if not snap.active:
            self._changed("COMPLETED", out, {})

    def next_chunk(self, out: Any) -> None:
        """Read the next chunk when one is due (the connector calls this with no transaction open in its stream;
        `out`: its emission context there): open watermark, the chunk, close watermark."""
        snap = self.snapshot
        if not snap.wants_chunk():
            return
        name = snap.current
        assert name is not None
        surrogate = snap.surrogates.get(name)
        why = self.has_key(name, surrogate)
        if why is not None:
            signals.refuse(self.source_name, f"incremental snapshot of {name} skipped: the table {why}")
            self._table_scan_completed(out, _scan_status(why))
            return
        condition = snap.conditions.get(name)
        if not snap.max_key_read:
            snap.set_max_key(self.max_key(name, condition, surrogate))
        if snap.max_key is None:   # empty (under the condition): nothing to read
            self._table_scan_completed(out, "EMPTY")
            return
        chunk_id = str(uuid.uuid4())
        if self.read_only:   # the chunk is the state at a stream position: emitted when the stream gets there
            rows, last, position = self.read_chunk_at_position(name, snap.last_key, snap.max_key, condition,
                                                               self.chunk_size, surrogate)
            window = snap.begin_chunk(chunk_id, name, rows, self.chunk_size)
            window.opened, window.position = True, position
            if rows:
                window.last_key = last
            return
        self.write_watermark(f"{chunk_id}-open", signals.WINDOW_OPEN)
        rows, last = self.read_chunk(name, snap.last_key, snap.max_key, condition, self.chunk_size, surrogate)
        window = snap.begin_chunk(chunk_id, name, rows, self.chunk_size)
        if rows:
            window.last_key = last
        self.write_watermark(f"{chunk_id}-close", signals.WINDOW_CLOSE)

    def close_reached_window(self, out: Any) -> None:
        """read.only: emit the chunk once the stream has reached the position its rows are the state at (the
        connector calls this between transactions, before next_chunk); streamed changes of its keys up to there
        dropped those rows, as between watermarks."""
        window = self.snapshot.window
        if window is not None and window.position is not None and self.stream_reached(window.position):
            self._close_window(window.chunk_id, out)

    def _close_window(self, chunk_id: str, out: Any) -> None:
        snap = self.snapshot
        window = snap.watermark_closed(chunk_id)
        if window is None:
            return
        for row in window.rows.values():
            self.emit_read(out, window.table, row)
        progress = {"data_collections": ",".join(snap.tables), "current_collection_in_progress": window.table,
                    "maximum_key": _key_text(snap.max_key), "last_processed_key": _key_text(window.last_key)}
        scanned = self._scan_data("SUCCEEDED", snap.table_rows + window.read)
        finished = snap.chunk_done(window)   # the state after the chunk, in the notifications' positions
        if window.read:   # Debezium notifies each chunk that read rows
            self._changed("IN_PROGRESS", out, progress)
        else:
            self.state_changed()
        if finished:
            self._changed("TABLE_SCAN_COMPLETED", out, scanned)
            if not snap.active:
                self._changed("COMPLETED", out, {})


def _scan_status(why: str) -> str:
    """Debezium's TABLE_SCAN_COMPLETED status of a table skipped for `why` (has_key's reason)."""
    return "NO_PRIMARY_KEY" if "primary key" in why else "UNKNOWN_SCHEMA"


def _key_text(key: list[Any] | None) -> str:
    """A key in a notification, as Debezium writes it: the values joined by commas, "<null>" for a null."""
    if key is None:
        return '"<null>"'
    return ",".join("<null>" if v is None else str(v) for v in key)


def _fullmatch(pattern: str, name: str) -> bool:
    try:
        return re.fullmatch(pattern, name) is not None
    except re.error:
        return False
