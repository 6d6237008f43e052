"""The consistent snapshot (seed 004 section 1.4): global read lock (or table locks where the global lock
is refused), REPEATABLE READ consistent-snapshot transaction, binlog position + GTID set, SHOW CREATE TABLE
of every table of the captured databases emitted as schema change events, lock released, rows read in
primary-key chunks.

Resuming an interrupted snapshot takes a new consistent read view but keeps the original position P: rows
of later chunks then reflect a newer state, and streaming from P replays every change made since P on top
of them, so replaying bronze in seq order still converges to the source (see docs/connectors/mariadb-mysql.md).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import decimal
import logging
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import orjson
import pymysql

from ingest.connectors.base import Batch, BatchLimits
from ingest.connectors.mysql import server
from ingest.errors import LakecdcError
from ingest.sqlutil import quote_ident

if TYPE_CHECKING:
    from ingest.connectors.mysql.connector import MySqlConnector

log = logging.getLogger(__name__)
ER_ACCESS_DENIED = (1045, 1227, 1044)


def _key_json(value: Any) -> Any:
    if isinstance(value, bytes | bytearray):
        return {"hex": bytes(value).hex()}
    if isinstance(value, decimal.Decimal | dt.date | dt.datetime | dt.timedelta):
        return str(value)
    return value


def _key_param(value: Any) -> Any:
    return bytes.fromhex(value["hex"]) if isinstance(value, dict) else value


def list_tables(query: server.Query, databases: list[str]) -> list[tuple[str, str]]:
    if not databases:
        return []
    names = ", ".join(pymysql.converters.escape_string(d).join("''") for d in databases)
    rows = query("SELECT TABLE_SCHEMA AS d, TABLE_NAME AS t FROM information_schema.TABLES "
                 f"WHERE TABLE_TYPE = 'BASE TABLE' AND TABLE_SCHEMA IN ({names}) ORDER BY TABLE_SCHEMA, TABLE_NAME")
    return [(r["d"], r["t"]) for r in rows]


def show_create(query: server.Query, db: str, table: str) -> str:
    rows = query(f"SHOW CREATE TABLE {quote_ident(db)}.{quote_ident(table)}")
    return str(rows[0]["Create Table"])


def read_schemas(connector: MySqlConnector, databases: list[str]) -> list[tuple[str, str, str, list[dict]]]:
    """Apply SHOW CREATE TABLE of every table of `databases` to the tracker: (db, table, ddl, tableChanges)."""
    out = []
    for db, table in list_tables(connector.query, databases):
        ddl = show_create(connector.query, db, table)
        changes = connector.tracker.apply(ddl, db)
        out.append((db, table, ddl, [c for c in changes if c]))
    return out


class Snapshotter:
    def __init__(self, connector: MySqlConnector, data: bool) -> None:
        self.connector = connector
        self.data = data
        self.end_position: dict[str, Any] | None = None

    def run(self, limits: BatchLimits, resume: dict[str, Any] | None, last_seq: str | None) -> Iterator[Batch]:
        c = self.connector
        cfg = c.config
        conn = c.connect()
        query = server.cursor_query(conn)
        table_locks = False
        try:
            query(f"SET SESSION lock_wait_timeout = {max(1, cfg.lock_timeout_ms // 1000)}")
            query("SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            databases = [d for d in c.captured_databases()]
            tables = list_tables(query, databases)
            captured = [(d, t) for d, t in tables if cfg.filters.table(d, t)]
            if cfg.locking_mode == "minimal":
                try:
                    query("FLUSH TABLES WITH READ LOCK")
                except pymysql.err.OperationalError as exc:
                    if exc.args[0] not in ER_ACCESS_DENIED:
                        raise LakecdcError(f"{c.source_name}: snapshot lock failed ({exc.args[-1]})") from None
                    log.warning("%s: global read lock refused; using table locks", c.source_name)
                    if captured:
                        query("LOCK TABLES " + ", ".join(f"{quote_ident(d)}.{quote_ident(t)} READ"
                                                         for d, t in captured))
                    table_locks = True
            if not table_locks:
                query("START TRANSACTION WITH CONSISTENT SNAPSHOT")
            if resume is not None:
                pos = server.BinlogPosition(resume["file"], int(resume["pos"]), resume.get("gtids") or "")
            else:
                pos = server.binlog_status(query, c.flavor)
            ordinal = 0
            schema_changes = []
            ts = c_ms()
            if resume is None:
                c.tracker.reset()
                # under LOCK TABLES only the locked (captured) tables may be read
                for db, table, ddl, changes in self._schemas(query, captured if table_locks else tables):
                    position = self._position(pos, completed=not self.data)
                    source = c.source(ts_ms=ts, db=db, table=table, file=pos.file, pos=pos.pos, snapshot=True)
                    seq = _seq(pos, ordinal)
                    ordinal += 1
                    if cfg.include_schema_changes:
                        schema_changes.append(c.schema_change(db=db, ddl=ddl, table_changes=changes, source=source,
                                                              seq=seq, position=position))
            else:
                c.tracker.reset()  # rows are read in today's structure; streaming restores P's afterwards
                self._schemas(query, captured if table_locks else tables)
                ordinal = int(resume.get("ordinal", -1)) + 1
            c.codecs.clear()
            if cfg.locking_mode == "minimal" and not table_locks:
                query("UNLOCK TABLES")
            # Schema changes travel with the first rows: one commit, so a crash cannot land them twice.
            first = Batch(schema_changes=schema_changes)
            if self.data:
                yield from self._scan(conn, pos, captured, resume, ordinal, limits, first)
            elif schema_changes:
                yield first
            query("COMMIT")
            self.end_position = {"file": pos.file, "pos": pos.pos, "gtids": pos.gtids, "snapshot_completed": True}
        finally:
            try:
                if table_locks:
                    conn.cursor().execute("UNLOCK TABLES")
            finally:
                conn.close()

    def _schemas(self, query: server.Query, tables: list[tuple[str, str]]) -> list[tuple[str, str, str, list[dict]]]:
        c = self.connector
        out = []
        for db, table in tables:
            ddl = show_create(query, db, table)
            changes = c.tracker.apply(ddl, db)
            out.append((db, table, ddl, changes))
        return out

    def _position(self, pos: server.BinlogPosition, completed: bool = False, **extra: Any) -> str:
        body: dict[str, Any] = {"file": pos.file, "pos": pos.pos, "gtids": pos.gtids, "snapshot": True}
        if completed:
            body["snapshot_completed"] = True
        body.update(extra)
        return orjson.dumps(body).decode()

    def _scan(self, conn: pymysql.connections.Connection, pos: server.BinlogPosition,
              captured: list[tuple[str, str]], resume: dict[str, Any] | None, ordinal: int,
              limits: BatchLimits, batch: Batch) -> Iterator[Batch]:
        c = self.connector
        done: list[str] = list((resume or {}).get("done", []))
        resume_table = (resume or {}).get("table")
        resume_key = (resume or {}).get("key")
        started = c_ms()
        for db, table in captured:
            table_id = f"{db}.{table}"
            if table_id in done or not c.config.filters.snapshot_table(db, table):
                continue
            codec = c.codec(db, table)
            tbl = c.tracker.table(db, table)
            if codec is None or tbl is None:
                continue
            all_columns = [col.name for col in tbl.columns]
            pk = list(tbl.primary_key)
            after_key = [_key_param(v) for v in resume_key] if resume_table == table_id and resume_key else None
            select = (f"SELECT {', '.join(quote_ident(n) for n in all_columns)} "
                      f"FROM {quote_ident(db)}.{quote_ident(table)}")
            pk_index = [all_columns.index(k) for k in pk]
            captured_index = [all_columns.index(n) for n in codec.columns]
            seq_prefix = _seq(pos, 0)[:-8]
            while True:
                sql, params = select, []
                if pk:
                    if after_key is not None:
                        sql += (f" WHERE ({', '.join(quote_ident(k) for k in pk)}) > "
                                f"({', '.join(['%s'] * len(pk))})")
                        params = list(after_key)
                    sql += f" ORDER BY {', '.join(quote_ident(k) for k in pk)} LIMIT {c.config.chunk_size}"
                with conn.cursor() as cur:
                    cur.execute(sql, params)
                    rows = cur.fetchall()
                ts = c_ms()
                source = c.source(ts_ms=ts, db=db, table=table, file=pos.file, pos=pos.pos, snapshot=True)
                for values in rows:
                    # close a full batch before adding a row, so the last batch always holds the last row
                    if batch.events and (len(batch.events) >= limits.max_events
                                         or c_ms() - started >= limits.max_seconds * 1000):
                        c.stats["snapshot_rows"] += len(batch.events)
                        yield batch
                        batch, started = Batch(), c_ms()
                    after = codec.row_from_tuple(values, captured_index)
                    key_values = [_key_json(values[i]) for i in pk_index]
                    position = self._position(pos, table=table_id, key=key_values, ordinal=ordinal, done=done)
                    batch.events.append(c.data_event(codec, "r", None, after, source, f"{seq_prefix}{ordinal:08x}",
                                                     position))
                    ordinal += 1
                if not pk or len(rows) < c.config.chunk_size:
                    break
                after_key = [values for values in (rows[-1][i] for i in pk_index)]
            done = done + [table_id]
        # The snapshot's last event says the snapshot completed, so a restart after it goes straight to streaming.
        if batch.events:
            last_event = batch.events[-1]
            body = orjson.loads(last_event.position or "{}")
            body["snapshot_completed"] = True
            batch.events[-1] = dataclasses.replace(last_event, position=orjson.dumps(body).decode())
            c.stats["snapshot_rows"] += len(batch.events)
        if len(batch):
            yield batch


def _seq(pos: server.BinlogPosition, ordinal: int) -> str:
    from ingest.connectors.mysql.connector import make_seq

    return make_seq(pos.file_number, pos.pos, ordinal)


def c_ms() -> int:
    import time

    return time.time_ns() // 1_000_000
