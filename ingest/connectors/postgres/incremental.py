"""Signals and incremental snapshots of the PostgreSQL source (the shared state machine: connectors/incremental.py;
signals: connectors/signals.py). The signalling table (`signal.data.collection`) is read from the stream like any
table: its first three columns are a signal's id, type and data. Watermarks and chunk reads go through the
connector's normal connection, between two streamed transactions."""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Callable, Sequence
from typing import Any

from psycopg2 import sql

from ingest.connectors import signals
from ingest.connectors.incremental import Key, SignalledSnapshots
from ingest.connectors.postgres.events import PendingBatch, PostgresEventDispatcher, Transaction, now_ms
from ingest.connectors.postgres.offsets import OffsetContext
from ingest.connectors.postgres.properties import PostgresProperties
from ingest.connectors.postgres.snapshot import copy_texts
from ingest.connectors.postgres.tables import CapturedTable, TableRegistry
from ingest.connectors.signal_kafka import KafkaSignalChannel
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


class PostgresIncremental(SignalledSnapshots):
    """Signals from the stream and the incremental snapshot they start; state in the offset context. `out` is
    (transaction, lsn, pending batch) of the signal or watermark row."""

    def __init__(self, props: PostgresProperties, source_name: str, offsets: OffsetContext,
                 events: PostgresEventDispatcher, tables: TableRegistry, normal_connection: Callable[[], Any],
                 captured_tables: Callable[[], list[tuple[str, str, int]]],
                 file_channel: signals.FileSignalChannel | None = None) -> None:
        self.signal = signal_table(props)
        super().__init__(source_name, offsets.incremental, props.incremental_chunk_size, self.signal is not None,
                         file_channel, "source" in props.signal_channels, props.notification_channels,
                         KafkaSignalChannel(props.signal_kafka) if props.signal_kafka else None)
        self.props, self.offsets, self.events = props, offsets, events
        self.tables, self.normal_connection, self.captured_tables = tables, normal_connection, captured_tables
        self.signal_relid: int | None = None

    def resume(self) -> None:
        self.restore(self.offsets.incremental)

    # -- the stream ----------------------------------------------------------------------------------------
    def relation(self, relid: int, schema: str, name: str) -> None:
        if self.signal is not None and (schema, name) == self.signal:
            self.signal_relid = relid

    def signal_row(self, values: list[Any], txn: Transaction, lsn: int, pending: PendingBatch) -> None:
        padded = [*values, None, None, None]
        self.on_table_row(padded[0], padded[1], padded[2], (txn, lsn, pending))

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

    def between_transactions(self, pending: PendingBatch) -> None:
        """Signals from the signal file, and the next chunk when one is due (called with no transaction open in
        the stream)."""
        self.poll_channels((None, None, pending))
        if self.signal is not None:
            self.next_chunk((None, None, pending))

    # -- SignalledSnapshots --------------------------------------------------------------------------------
    def captured_names(self) -> list[str]:
        return [f"{schema}.{name}" for schema, name, _ in self.captured_tables()]

    def state_changed(self) -> None:
        self.offsets.incremental = self.state()

    def emit_notification(self, out: Any, kind: str, data: dict[str, str], aggregate: str) -> None:
        txn, lsn, pending = out
        if txn is None:   # a signal from the file or the blocking snapshot, between transactions
            self.events.notification_between(pending, kind, data, aggregate)
        else:
            self.events.notification(pending, txn, lsn, kind, data, aggregate)

    def emit_blocking_read(self, out: Any, table_name: str, row: Any, mark: str) -> None:
        table = self._table(table_name)
        if table is not None:
            self.events.blocking_read(out[2], table, row, mark, self.blocking.origin or {})

    def blocking_origin(self) -> dict[str, Any]:
        change = self.offsets.last_change
        return {"lsn": change[0], "txId": change[1]} if change else {"lsn": self.offsets.restart_lsn}

    def emit_read(self, out: Any, table_name: str, row: Any) -> None:
        txn, lsn, pending = out
        table = self._table(table_name)
        if table is None:
            return
        after = table.row(row, self.props.unavailable_value_placeholder)
        event = ev.change(table.schemas, "r", source=self.events.source(table, txn, lsn, "incremental"),
                          after=after, key=table.key_from(after, row), ts_ms=now_ms())
        self.events.change(pending, txn, event, lsn)

    def has_key(self, table_name: str, surrogate: str | None = None) -> str | None:
        table = self._table(table_name)
        if table is None:
            return "is no longer captured"
        if surrogate is not None:
            return _surrogate_problem(self.normal_connection(), table, surrogate)
        return None if table.definition.primary_key else "has no primary key (name a unique column as surrogate-key)"

    def max_key(self, table_name: str, condition: str | None, surrogate: str | None = None) -> list[Any] | None:
        table = self._table(table_name)
        assert table is not None
        return _max_key(self.normal_connection(), table, condition, _chunk_columns(table, surrogate))

    def read_chunk(self, table_name: str, last_key: list[Any] | None, max_key: list[Any], condition: str | None,
                   size: int, surrogate: str | None = None) -> tuple[list[tuple[Key, Any]], list[Any] | None]:
        table = self._table(table_name)
        assert table is not None
        chunk_by = _chunk_columns(table, surrogate)
        rows = _read_chunk(self.normal_connection(), table, last_key, max_key, condition, size, chunk_by)
        chunk_key = [table.column_names.index(c) for c in chunk_by]
        window_key = _key_positions(table) or chunk_key   # as streamed changes carry it (none: the chunk key)
        keyed = [(tuple(row[i] for i in window_key), row) for row in rows]
        return keyed, [rows[-1][i] for i in chunk_key] if rows else None

    def write_watermark(self, signal_id: str, kind: str) -> None:
        assert self.signal is not None
        with self.normal_connection().cursor() as cur:
            cur.execute(sql.SQL("INSERT INTO {} VALUES (%s, %s, NULL)").format(sql.Identifier(*self.signal)),
                        (signal_id, kind))

    def _table(self, name: str) -> CapturedTable | None:
        for table in self.tables.by_relid.values():
            if _name(table) == name:
                return table
        return None


def _name(table: CapturedTable) -> str:
    return f"{table.definition.schema}.{table.definition.table}"


def _key_positions(table: CapturedTable) -> list[int]:
    """Where the message key's columns are in a row (streamed changes and chunk rows are matched on it)."""
    names = table.column_names
    return [names.index(c) for c in table.definition.key_columns if c in names]


def _chunk_columns(table: CapturedTable, surrogate: str | None) -> list[str]:
    """The columns chunks follow: the surrogate key, else the primary key."""
    return [surrogate] if surrogate else list(table.definition.primary_key)


def _surrogate_problem(conn: Any, table: CapturedTable, column: str) -> str | None:
    """Why `column` cannot order chunks (None: it can): it must exist, be NOT NULL and have a unique index of its
    own, else `> last key` would skip rows (NULLs, or equal values cut at a chunk's end)."""
    found = next((c for c in table.definition.columns if c.name == column), None)
    if found is None:
        return f"has no column {column!r} (surrogate-key)"
    if found.nullable:
        return f"may hold NULL in {column!r}: a surrogate-key must be NOT NULL (rows with NULL would not be read)"
    with conn.cursor() as cur:
        cur.execute("SELECT EXISTS (SELECT 1 FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid "
                    "AND a.attnum = i.indkey[0] WHERE i.indrelid = %s AND i.indisunique AND i.indnkeyatts = 1 "
                    "AND i.indpred IS NULL AND a.attname = %s)", (table.definition.relid, column))
        unique = cur.fetchone()[0]
    return None if unique else (f"has no unique index on {column!r} alone: a surrogate-key must be unique (chunks "
                                "would skip rows of equal values)")


def _key_sql(table: CapturedTable, columns: list[str]) -> tuple[sql.Composable, list[str]]:
    """The chunk key as a row expression, and its columns' types (for the literals compared with it)."""
    by_name = {c.name: c for c in table.definition.columns}
    row = sql.SQL("({})").format(sql.SQL(", ").join(sql.Identifier(n) for n in columns))
    return row, [by_name[n].type_expression for n in columns]


def _literals(key: list[str | None], types: list[str]) -> sql.Composable:
    return sql.SQL("({})").format(sql.SQL(", ").join(
        sql.SQL("{}::{}").format(sql.Literal(value), sql.SQL(type_name)) for value, type_name in zip(key, types,
                                                                                                      strict=True)))


def _where(condition: str | None) -> sql.Composable:
    """` AND (condition)` of an additional condition that is a WHERE condition."""
    if not condition or signals.is_select(condition):
        return sql.SQL("")
    return sql.SQL(" AND ({})").format(sql.SQL(condition))


def _from(table: CapturedTable, condition: str | None) -> sql.Composable:
    """What a chunk reads: the table, or an additional condition that is a whole SELECT, as `t`."""
    d = table.definition
    if condition and signals.is_select(condition):
        return sql.SQL("({}) AS t").format(sql.SQL(condition))
    return sql.SQL("{} AS t").format(sql.Identifier(d.schema, d.table))


def _max_key(conn: Any, table: CapturedTable, condition: str | None, chunk_by: list[str]) -> list[str | None] | None:
    order = sql.SQL(", ").join(sql.SQL("t.{} DESC").format(sql.Identifier(n)) for n in chunk_by)
    query = sql.SQL("SELECT {} FROM {} WHERE TRUE{} ORDER BY {} LIMIT 1").format(
        _columns(chunk_by), _from(table, condition), _where(condition), order)
    rows = copy_texts(conn, query, None, len(chunk_by)).to_pylist()
    return list(rows[0].values()) if rows else None


def _read_chunk(conn: Any, table: CapturedTable, last_key: list[str | None] | None, max_key: list[str | None],
                condition: str | None, size: int, chunk_by: list[str]) -> list[list[Any]]:
    """The next `size` rows after `last_key` up to `max_key`, in chunk key order, each value in the text pgoutput
    sends for it (its type's output function, through COPY: keys then compare equal with streamed ones)."""
    key, types = _key_sql(table, chunk_by)
    lower = sql.SQL(" AND {} > {}").format(key, _literals(last_key, types)) if last_key is not None else sql.SQL("")
    query = sql.SQL("SELECT {} FROM {} WHERE {} <= {}{}{} ORDER BY {} LIMIT {}").format(
        _columns(table.column_names), _from(table, condition), key, _literals(max_key, types), lower,
        _where(condition), _columns(chunk_by), sql.Literal(size))
    return [list(row.values()) for row in copy_texts(conn, query, None, len(table.column_names)).to_pylist()]


def _columns(names: Sequence[str]) -> sql.Composable:
    """The columns of `t`, qualified (ORDER BY t.x must name the table's column, not a selected expression)."""
    return sql.SQL(", ").join(sql.SQL("t.{}").format(sql.Identifier(n)) for n in names)


