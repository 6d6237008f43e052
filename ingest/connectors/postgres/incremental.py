"""Signals and incremental snapshots of the PostgreSQL source (the shared state machine: connectors/incremental.py;
signals: connectors/signals.py). The signalling table (`signal.data.collection`) is read from the stream like any
table: its first three columns are a signal's id, type and data. Watermarks and chunk reads go through the
connector's normal connection, between two streamed transactions."""

from __future__ import annotations

import json
import logging
import re
import uuid
from collections.abc import Callable
from typing import Any

from psycopg2 import sql

from ingest.connectors import signals
from ingest.connectors.incremental import IncrementalSnapshot
from ingest.connectors.postgres.events import PendingBatch, PostgresEventDispatcher, Transaction, now_ms
from ingest.connectors.postgres.offsets import OffsetContext
from ingest.connectors.postgres.properties import PostgresProperties
from ingest.connectors.postgres.tables import CapturedTable, TableRegistry
from ingest.errors import ConfigError
from ingest.events import envelope as ev

log = logging.getLogger(__name__)


def signal_table(props: PostgresProperties) -> tuple[str, str] | None:
    """(schema, table) of signal.data.collection; ConfigError when it is not `schema.table`."""
    name = props.signal_data_collection
    if not name:
        return None
    schema, dot, table = name.partition(".")
    if not (dot and schema and table):
        raise ConfigError(f"signal.data.collection must be schema.table, not {name!r}")
    return schema, table


def send_signal(conn: Any, props: PostgresProperties, signal_type: str, data: dict[str, Any]) -> str:
    """Insert one signal row (what `lakecdc signal` does); returns its id."""
    target = signal_table(props)
    if target is None:
        raise ConfigError("the source has no signal.data.collection: set it to the signalling table (schema.table)")
    signal_id = str(uuid.uuid4())
    with conn.cursor() as cur:
        cur.execute(sql.SQL("INSERT INTO {} VALUES (%s, %s, %s)").format(sql.Identifier(*target)),
                    (signal_id, signal_type, json.dumps(data)))
    return signal_id


class PostgresIncremental:
    """Signals from the stream and the incremental snapshot they start; state in the offset context."""

    def __init__(self, props: PostgresProperties, source_name: str, offsets: OffsetContext,
                 events: PostgresEventDispatcher, tables: TableRegistry, normal_connection: Callable[[], Any],
                 captured_tables: Callable[[], list[tuple[str, str, int]]]) -> None:
        self.props, self.source_name, self.offsets, self.events = props, source_name, offsets, events
        self.tables, self.normal_connection, self.captured_tables = tables, normal_connection, captured_tables
        self.signal = signal_table(props)
        self.signal_relid: int | None = None
        self.snapshot = IncrementalSnapshot.from_state(offsets.incremental)

    def resume(self) -> None:
        self.snapshot = IncrementalSnapshot.from_state(self.offsets.incremental)
        if self.snapshot.active:
            signals.notify(self.source_name, "RESUMED", "incremental snapshot of %s from key %s",
                           ", ".join(self.snapshot.tables), self.snapshot.last_key)

    # -- the stream ----------------------------------------------------------------------------------------
    def relation(self, relid: int, schema: str, name: str) -> None:
        if self.signal is not None and (schema, name) == self.signal:
            self.signal_relid = relid

    def on_signal(self, values: list[Any], txn: Transaction, lsn: int, pending: PendingBatch) -> None:
        """A row inserted into the signalling table; a signal that cannot be carried out is logged, never
        raised."""
        padded = [*values, None, None, None]
        try:
            signal = signals.parse_signal(padded[0], padded[1], padded[2])
            self._act(signal, txn, lsn, pending)
        except signals.SignalError as exc:
            signals.refuse(self.source_name, str(exc))

    def streamed(self, table: CapturedTable, *rows: list[Any] | None) -> None:
        """A streamed change of `table` (its new and/or old row values): drops those keys from an open chunk."""
        if self.snapshot.window is None:
            return
        positions = _key_positions(table)
        for values in rows:
            if values is not None and positions:
                self.snapshot.streamed(_name(table), tuple(values[i] for i in positions))

    def truncated(self, table: CapturedTable) -> None:
        window = self.snapshot.window
        if window is not None and window.opened and window.table == _name(table):
            window.rows.clear()

    @property
    def active(self) -> bool:
        return self.snapshot.active

    def between_transactions(self) -> None:
        """Read the next chunk when one is due (called with no transaction open in the stream)."""
        if self.signal is not None and self.snapshot.wants_chunk():
            self._next_chunk()

    # -- actions -------------------------------------------------------------------------------------------
    def _act(self, signal: signals.Signal, txn: Transaction, lsn: int, pending: PendingBatch) -> None:
        snap = self.snapshot
        if signal.type == signals.WINDOW_OPEN:
            snap.watermark_opened(signal.id.removesuffix("-open"))
        elif signal.type == signals.WINDOW_CLOSE:
            self._close_window(signal.id.removesuffix("-close"), txn, lsn, pending)
        elif signal.type == signals.EXECUTE_SNAPSHOT:
            names, conditions = signals.snapshot_request(signal)
            tables = self._resolve(signal, names)
            conditions = {t: f for name, f in conditions.items() for t in self._resolve(signal, [name])}
            added = snap.start(tables, conditions)
            self._changed("STARTED", txn, lsn, pending, {"data_collections": ",".join(added)})
        elif signal.type == signals.STOP_SNAPSHOT:
            names = signal.data.get("data-collections")
            removed = snap.stop(self._resolve(signal, names) if names else None)
            self._changed("ABORTED", txn, lsn, pending, {"data_collections": ",".join(removed)})
        elif signal.type in (signals.PAUSE_SNAPSHOT, signals.RESUME_SNAPSHOT):
            if snap.active:
                snap.paused = signal.type == signals.PAUSE_SNAPSHOT
                self._changed("PAUSED" if snap.paused else "RESUMED", txn, lsn, pending, {})
        elif signal.type == signals.LOG:
            log.info("%s: signal %s: %s", self.source_name, signal.id, signal.data.get("message", ""))

    def _resolve(self, signal: signals.Signal, names: list[str]) -> list[str]:
        """Captured tables (`schema.table`) named by data-collections entries (a name or a regular expression);
        SignalError naming any entry that matches none."""
        captured = [f"{schema}.{name}" for schema, name, _ in self.captured_tables()]
        found: list[str] = []
        for name in names:
            matches = [t for t in captured if t == name] or [t for t in captured if _fullmatch(name, t)]
            if not matches:
                raise signals.SignalError(f"signal {signal.id!r}: {name!r} is not a captured table")
            found.extend(t for t in matches if t not in found)
        return found

    def _changed(self, kind: str, txn: Transaction, lsn: int, pending: PendingBatch, data: dict[str, str]) -> None:
        """The state changed: into the offset context, and a notification (which lands it with its position)."""
        self.offsets.incremental = self.snapshot.state()
        signals.notify(self.source_name, kind, "%s", data or "")
        self.events.notification(pending, txn, lsn, kind, data)

    # -- chunks --------------------------------------------------------------------------------------------
    def _table(self, name: str) -> CapturedTable | None:
        for table in self.tables.by_relid.values():
            if _name(table) == name:
                return table
        return None

    def _next_chunk(self) -> None:
        snap = self.snapshot
        name = snap.current
        assert name is not None
        table = self._table(name)
        if table is None or not table.definition.primary_key:
            why = "no longer captured" if table is None else "has no primary key (surrogate keys: not yet)"
            signals.refuse(self.source_name, f"incremental snapshot of {name} skipped: the table {why}")
            snap.finish_table()
            self.offsets.incremental = snap.state()
            return
        conn = self.normal_connection()
        condition = snap.conditions.get(name)
        if not snap.max_key_read:
            snap.set_max_key(_max_key(conn, table, condition))
        if snap.max_key is None:   # empty (under the condition): nothing to read
            snap.finish_table()
            self.offsets.incremental = snap.state()
            return
        chunk_id = str(uuid.uuid4())
        self._watermark(conn, f"{chunk_id}-open", signals.WINDOW_OPEN)
        rows = _read_chunk(conn, table, snap.last_key, snap.max_key, condition, self.props.incremental_chunk_size)
        positions = _key_positions(table)
        snap.begin_chunk(chunk_id, name, [(tuple(row[i] for i in positions), row) for row in rows],
                         self.props.incremental_chunk_size)
        self._watermark(conn, f"{chunk_id}-close", signals.WINDOW_CLOSE)

    def _watermark(self, conn: Any, signal_id: str, kind: str) -> None:
        assert self.signal is not None
        with conn.cursor() as cur:
            cur.execute(sql.SQL("INSERT INTO {} VALUES (%s, %s, NULL)").format(sql.Identifier(*self.signal)),
                        (signal_id, kind))

    def _close_window(self, chunk_id: str, txn: Transaction, lsn: int, pending: PendingBatch) -> None:
        snap = self.snapshot
        window = snap.watermark_closed(chunk_id)
        if window is None:
            return
        table = self._table(window.table)
        if table is not None:
            placeholder = self.props.unavailable_value_placeholder
            for values in window.rows.values():
                after = table.row(values, placeholder)
                event = ev.change(table.schemas, "r", source=self.events.source(table, txn, lsn, "incremental"),
                                  after=after, key=table.key_from(after, values), ts_ms=now_ms())
                self.events.change(pending, txn, event, lsn)
        emitted = len(window.rows)
        finished = snap.chunk_done(window)
        data = {"data_collections": window.table, "current_collection_in_progress": window.table,
                "last_processed_key": json.dumps(window.last_key), "rows_emitted": str(emitted)}
        self._changed("TABLE_SCAN_COMPLETED" if finished else "IN_PROGRESS", txn, lsn, pending, data)
        if finished and not snap.active:
            self._changed("COMPLETED", txn, lsn, pending, {})


def _name(table: CapturedTable) -> str:
    return f"{table.definition.schema}.{table.definition.table}"


def _fullmatch(pattern: str, name: str) -> bool:
    try:
        return re.fullmatch(pattern, name) is not None
    except re.error:
        return False


def _key_positions(table: CapturedTable) -> list[int]:
    names = table.column_names
    return [names.index(c) for c in table.definition.primary_key if c in names]


def _key_sql(table: CapturedTable) -> tuple[sql.Composable, list[str]]:
    """The primary key as a row expression, and its columns' types (for the literals compared with it)."""
    by_name = {c.name: c for c in table.definition.columns}
    names = list(table.definition.primary_key)
    row = sql.SQL("({})").format(sql.SQL(", ").join(sql.Identifier(n) for n in names))
    return row, [by_name[n].type_expression for n in names]


def _literals(key: list[str | None], types: list[str]) -> sql.Composable:
    return sql.SQL("({})").format(sql.SQL(", ").join(
        sql.SQL("{}::{}").format(sql.Literal(value), sql.SQL(type_name)) for value, type_name in zip(key, types,
                                                                                                      strict=True)))


def _where(condition: str | None) -> sql.Composable:
    return sql.SQL(" AND ({})").format(sql.SQL(condition)) if condition else sql.SQL("")


def _max_key(conn: Any, table: CapturedTable, condition: str | None) -> list[str | None] | None:
    d = table.definition
    columns = sql.SQL(", ").join(sql.SQL("{}::text").format(sql.Identifier(n)) for n in d.primary_key)
    # ORDER BY names the table's columns (`t.`): a bare name would be the selected text of the same name
    order = sql.SQL(", ").join(sql.SQL("t.{} DESC").format(sql.Identifier(n)) for n in d.primary_key)
    query = sql.SQL("SELECT {} FROM {} AS t WHERE TRUE{} ORDER BY {} LIMIT 1").format(
        columns, sql.Identifier(d.schema, d.table), _where(condition), order)
    with conn.cursor() as cur:
        cur.execute(query)
        row = cur.fetchone()
    return list(row) if row is not None else None


def _read_chunk(conn: Any, table: CapturedTable, last_key: list[str | None] | None, max_key: list[str | None],
                condition: str | None, size: int) -> list[list[Any]]:
    """The next `size` rows after `last_key` up to `max_key`, in key order, as the text of every column."""
    d = table.definition
    key, types = _key_sql(table)
    columns = sql.SQL(", ").join(sql.SQL("{}::text").format(sql.Identifier(n)) for n in table.column_names)
    lower = sql.SQL(" AND {} > {}").format(key, _literals(last_key, types)) if last_key is not None else sql.SQL("")
    query = sql.SQL("SELECT {} FROM {} AS t WHERE {} <= {}{}{} ORDER BY {} LIMIT {}").format(
        columns, sql.Identifier(d.schema, d.table), key, _literals(max_key, types), lower, _where(condition),
        sql.SQL(", ").join(sql.SQL("t.{}").format(sql.Identifier(n)) for n in d.primary_key), sql.Literal(size))
    with conn.cursor() as cur:
        cur.execute(query)
        return [list(row) for row in cur.fetchall()]


