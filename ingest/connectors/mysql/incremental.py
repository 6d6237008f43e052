"""Signals and incremental snapshots of the MariaDB/MySQL source (the shared part: connectors/incremental.py;
signals: connectors/signals.py). The signalling table (`signal.data.collection`, `database.table`) is read from the
binlog whether it is captured or not: its first three columns are a signal's id, type and data. Watermarks and chunk
reads go through a connection of their own, between two streamed transactions.

Chunk rows are keyed in the window by their message key as the events carry it (the codec's payload values), so a
streamed change of a row and the row read by a chunk compare equal whatever the column type. The state keeps primary
keys as the snapshot's positions do (snapshot_block.key_json)."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from typing import Any

import orjson
import pymysql

from ingest.connectors import signals
from ingest.connectors.incremental import Key, SignalledSnapshots
from ingest.connectors.mysql.codec import TableCodec, TableCodecs
from ingest.connectors.mysql.properties import MySqlProperties
from ingest.connectors.mysql.schema_track import SchemaTracker
from ingest.connectors.mysql.server import binlog_file_number
from ingest.connectors.mysql.snapshot_block import key_json, key_param, read_from, select_sql
from ingest.connectors.signal_kafka import KafkaSignalChannel
from ingest.errors import ConfigError, LakecdcError
from ingest.sqlutil import quote_ident

# emit_read(out, codec, table, after, source.snapshot) and emit_notification(out, kind, data, aggregate) of the
# streaming source
ReadEmitter = Callable[[Any, TableCodec, str, dict[str, Any], str], None]
NotificationEmitter = Callable[[Any, str, dict[str, str], str], None]


def signal_table(config: MySqlProperties) -> tuple[str, str] | None:
    """(database, table) of signal.data.collection; ConfigError when it is not `database.table`."""
    name = config.signal_data_collection
    if not name:
        return None
    db, dot, table = name.partition(".")
    if not (dot and db and table):
        raise ConfigError(f"signal.data.collection must be database.table, not {name!r}")
    return db, table


def _relation(target: tuple[str, str]) -> str:
    return f"{quote_ident(target[0])}.{quote_ident(target[1])}"


def send_signal(conn: pymysql.connections.Connection, config: MySqlProperties, signal_type: str,
                data: dict[str, Any]) -> str:
    """Insert one signal row (what `lakecdc signal` does); returns its id."""
    target = signal_table(config)
    if target is None:
        raise ConfigError("the source has no signal.data.collection: set it to the signalling table "
                          "(database.table)")
    signal_id = str(uuid.uuid4())
    with conn.cursor() as cur:
        cur.execute(f"INSERT INTO {_relation(target)} VALUES (%s, %s, %s)", (signal_id, signal_type, json.dumps(data)))
    return signal_id


def check_signal_table(conn: pymysql.connections.Connection, config: MySqlProperties) -> None:
    """signal.data.collection names a table with at least the three columns id, type, data (in that order)."""
    target = signal_table(config)
    if target is None:
        return
    with conn.cursor() as cur:
        cur.execute("SELECT count(*) FROM information_schema.columns WHERE table_schema = %s AND table_name = %s",
                    target)
        columns = cur.fetchone()[0]
    if columns < 3:
        raise LakecdcError(f"signal.data.collection {config.signal_data_collection}: the table does not exist "
                                "or has fewer than 3 columns; create it: CREATE TABLE "
                                f"{config.signal_data_collection} (id varchar(64) PRIMARY KEY, type varchar(32) NOT "
                                "NULL, data varchar(2048))")


class MySqlIncremental(SignalledSnapshots):
    """The incremental snapshot of a MariaDB/MySQL source. The streaming source owns seqs and positions: it hands
    `out` (where in the binlog the signal or watermark row is) through and emits what this class asks for."""

    def __init__(self, config: MySqlProperties, source_name: str, tracker: SchemaTracker, codecs: TableCodecs,
                 connect: Callable[[], pymysql.connections.Connection], state: dict[str, Any] | None,
                 emit_read: ReadEmitter, emit_notification: NotificationEmitter,
                 on_state: Callable[[], None], file_channel: signals.FileSignalChannel | None = None,
                 origin: Callable[[], dict[str, Any]] = dict,
                 stream_position: Callable[[], tuple[int, int]] | None = None) -> None:
        self.signal = signal_table(config)
        super().__init__(source_name, state, config.incremental_chunk_size, self.signal is not None, file_channel,
                         "source" in config.signal_channels, config.notification_channels,
                         KafkaSignalChannel(config.signal_kafka) if config.signal_kafka else None, config.read_only)
        self.config, self.tracker, self.codecs, self.connect = config, tracker, codecs, connect
        self._emit_read, self._emit_notification, self._on_state = emit_read, emit_notification, on_state
        self._origin = origin   # where the binlog read paused, for a blocking snapshot's source blocks
        self._stream_position = stream_position   # (binlog file number, position) the stream has handed out to
        self._conn: pymysql.connections.Connection | None = None

    def is_signal_table(self, db: str, table: str) -> bool:
        return self.signal is not None and (db, table) == self.signal

    def streamed(self, table_id: str, codec: TableCodec, pairs: list[tuple[dict | None, dict | None]]) -> None:
        """Streamed row changes of `table_id` ((before, after) payloads): drops those keys from an open chunk."""
        window = self.snapshot.window
        if window is None or window.table != table_id or not codec.key_columns:
            return
        for before, after in pairs:
            for row in (before, after):
                if row is not None:
                    self.snapshot.streamed(table_id, _window_key(codec, row))

    def truncated(self, table_id: str) -> None:
        window = self.snapshot.window
        if window is not None and window.opened and window.table == table_id:
            window.rows.clear()

    def between_transactions(self, out: Any) -> None:
        """Signals from the signal file, and the next chunk when one is due (no transaction open in the stream);
        `out`: the streaming source's emission context there."""
        self.poll_channels(out)
        if self.read_only:
            self.close_reached_window(out)
        if self.signal is not None or self.read_only:
            self.next_chunk(out)

    def close(self) -> None:
        self.close_channels()
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    # -- SignalledSnapshots --------------------------------------------------------------------------------
    def captured_names(self) -> list[str]:
        filters = self.config.filters
        return sorted(key for key in self.tracker.tables if filters.table(*key.split(".", 1)))

    def state_changed(self) -> None:
        self._on_state()

    def emit_notification(self, out: Any, kind: str, data: dict[str, str], aggregate: str) -> None:
        self._emit_notification(out, kind, data, aggregate)

    def emit_read(self, out: Any, table: str, row: Any) -> None:
        codec = self.codecs.get(*table.split(".", 1))
        if codec is not None:
            self._emit_read(out, codec, table, row, "incremental")

    def blocking_origin(self) -> dict[str, Any]:
        return self._origin()

    def emit_blocking_read(self, out: Any, table: str, row: Any, mark: str) -> None:
        codec = self.codecs.get(*table.split(".", 1))
        if codec is not None:
            self._emit_read(out, codec, table, row, mark)

    def has_key(self, table: str, surrogate: str | None = None) -> str | None:
        db, name = table.split(".", 1)
        model = self.tracker.table(db, name)
        if model is None or self.codecs.get(db, name) is None:
            return "is no longer captured"
        if surrogate is not None:
            return self._surrogate_problem(db, name, surrogate)
        return None if model.primary_key else "has no primary key (name a unique column as surrogate-key)"

    def _surrogate_problem(self, db: str, name: str, column: str) -> str | None:
        """Why `column` cannot order chunks (None: it can): it must exist, be NOT NULL and have a unique index of its
        own, else `> last key` would skip rows (NULLs, or equal values cut at a chunk's end)."""
        model = self.tracker.table(db, name)
        assert model is not None
        found = next((c for c in model.columns if c.name.lower() == column.lower()), None)
        if found is None:
            return f"has no column {column!r} (surrogate-key)"
        if found.nullable:
            return f"may hold NULL in {column!r}: a surrogate-key must be NOT NULL (rows with NULL would not be read)"
        with self._connection().cursor() as cur:
            cur.execute("SELECT 1 FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = %s AND TABLE_NAME = %s "
                        "AND NON_UNIQUE = 0 GROUP BY INDEX_NAME HAVING COUNT(*) = 1 AND MAX(COLUMN_NAME) = %s",
                        (db, name, found.name))
            unique = cur.fetchone() is not None
        return None if unique else (f"has no unique index on {column!r} alone: a surrogate-key must be unique "
                                    "(chunks would skip rows of equal values)")

    def max_key(self, table: str, condition: str | None, surrogate: str | None = None) -> list[Any] | None:
        db, name = table.split(".", 1)
        pk = self._chunk_columns(db, name, surrogate)
        order = ", ".join(f"{quote_ident(k)} DESC" for k in pk)
        sql = (f"SELECT {', '.join(quote_ident(k) for k in pk)} FROM {_from(db, name, condition)} WHERE TRUE"
               f"{_where(condition)} ORDER BY {order} LIMIT 1")
        with self._connection().cursor() as cur:
            cur.execute(sql, ())   # () : % is formatted (doubled in the condition) as in read_chunk
            row = cur.fetchone()
        return [key_json(v) for v in row] if row is not None else None

    def read_chunk(self, table: str, last_key: list[Any] | None, max_key: list[Any], condition: str | None,
                   size: int, surrogate: str | None = None) -> tuple[list[tuple[Key, Any]], list[Any] | None]:
        db, name = table.split(".", 1)
        model = self.tracker.table(db, name)
        codec = self.codecs.get(db, name)
        assert model is not None and codec is not None
        pk = self._chunk_columns(db, name, surrogate)
        names = [col.name for col in model.columns]
        key_row = f"({', '.join(quote_ident(k) for k in pk)})"
        marks = f"({', '.join(['%s'] * len(pk))})"
        sql = (f"SELECT {', '.join(select_sql(col) for col in model.columns)} FROM {_from(db, name, condition)} "
               f"WHERE {key_row} <= {marks}")
        params = [key_param(v) for v in max_key]
        if last_key is not None:
            sql += f" AND {key_row} > {marks}"
            params += [key_param(v) for v in last_key]
        sql += f"{_where(condition)} ORDER BY {', '.join(quote_ident(k) for k in pk)} LIMIT {int(size)}"
        with self._connection().cursor() as cur:
            cur.execute(sql, params)
            rows = cur.fetchall()
        captured_index = [names.index(n) for n in codec.columns]
        pk_index = [names.index(k) for k in pk]
        keyed = []
        for values in rows:
            after = codec.row_from_tuple(values, captured_index)
            # as streamed changes carry it; a table without a message key: the chunk key
            window_key = _window_key(codec, after) if codec.key_columns else tuple(
                orjson.dumps(key_json(values[i])).decode() for i in pk_index)
            keyed.append((window_key, after))
        return keyed, [key_json(rows[-1][i]) for i in pk_index] if rows else None

    def read_chunk_at_position(self, table: str, last_key: list[Any] | None, max_key: list[Any],
                               condition: str | None, size: int, surrogate: str | None = None
                               ) -> tuple[list[tuple[Key, Any]], list[Any] | None, Any]:
        """The chunk in a consistent snapshot, and the binlog position it is the state at (MariaDB's
        binlog_snapshot_file/_position: the end of the last transaction the snapshot sees)."""
        conn = self._connection()
        with conn.cursor() as cur:
            cur.execute("START TRANSACTION WITH CONSISTENT SNAPSHOT")
            try:
                cur.execute("SHOW STATUS LIKE 'binlog_snapshot_%'")
                status = {name.lower(): value for name, value in cur.fetchall()}
                rows, last = self.read_chunk(table, last_key, max_key, condition, size, surrogate)
            finally:
                cur.execute("COMMIT")
        if "binlog_snapshot_file" not in status:
            raise LakecdcError(f"{self.source_name}: read.only=true needs MariaDB's binlog_snapshot_file status "
                               "(not given by this server)")
        return rows, last, (binlog_file_number(status["binlog_snapshot_file"]),
                            int(status["binlog_snapshot_position"]))

    def stream_reached(self, position: Any) -> bool:
        assert self._stream_position is not None
        return self._stream_position() >= tuple(position)

    def write_watermark(self, signal_id: str, kind: str) -> None:
        assert self.signal is not None
        with self._connection().cursor() as cur:
            cur.execute(f"INSERT INTO {_relation(self.signal)} VALUES (%s, %s, NULL)", (signal_id, kind))

    def _chunk_columns(self, db: str, name: str, surrogate: str | None) -> list[str]:
        """The columns chunks follow: the surrogate key (as the table names it), else the primary key."""
        model = self.tracker.table(db, name)
        assert model is not None
        if surrogate:
            return [next(c.name for c in model.columns if c.name.lower() == surrogate.lower())]
        return list(model.primary_key)

    def _connection(self) -> pymysql.connections.Connection:
        if self._conn is None or not self._conn.open:
            self._conn = self.connect()
        return self._conn


def _window_key(codec: TableCodec, row: dict[str, Any]) -> Key:
    key = codec.key(row) or {}
    return tuple(orjson.dumps(v).decode() for v in key.values())


def _from(db: str, name: str, condition: str | None) -> str:
    """What a chunk reads: the table, or an additional condition that is a whole SELECT (as the table's name)."""
    return read_from((db, name), condition if signals.is_select(condition) else None)


def _where(condition: str | None) -> str:
    """` AND (condition)` of an additional condition that is a WHERE condition (its % doubled: the statements are
    formatted with parameters)."""
    if not condition or signals.is_select(condition):
        return ""
    return f" AND ({condition.replace('%', '%%')})"
