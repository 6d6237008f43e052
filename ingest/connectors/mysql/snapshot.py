"""The consistent snapshot (Debezium's MySQL connector documentation, "Snapshots"): global read lock (or table
locks where the global lock is refused), REPEATABLE READ consistent-snapshot transaction, binlog position +
GTID set, SHOW CREATE TABLE of every table of the captured databases emitted as schema change events, lock
released, rows read in primary-key chunks: in columnar form for tables with a primary key (snapshot_block.py:
the server formats each chunk, Arrow builds the events as a BronzeEventBlock), row by row otherwise.

Resuming an interrupted snapshot takes a new consistent read view but keeps the original position P: rows
of later chunks then reflect a newer state, and streaming from P replays every change made since P on top
of them, so replaying bronze in seq order still converges to the source (see docs/connectors/mariadb-mysql.md).
"""

from __future__ import annotations

import dataclasses
import logging
import queue
import re
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pyarrow as pa
import pymysql

from ingest.bronze.contract import Batch, BatchLimits, BronzeEvent, BronzeEventBlock
from ingest.connectors.mysql import server
from ingest.connectors.mysql.codec import TableCodecs
from ingest.connectors.mysql.events import MySqlEventDispatcher, envelope_texts
from ingest.connectors.mysql.filters import Filters
from ingest.connectors.mysql.offsets import MySqlOffset, make_seq
from ingest.connectors.mysql.properties import MySqlProperties
from ingest.connectors.mysql.schema_track import SchemaTracker
from ingest.connectors.mysql.snapshot_block import ChunkReader, Envelope, key_json, key_param, read_from, select_sql
from ingest.connectors.progress import SnapshotProgress
from ingest.errors import LakecdcError
from ingest.events.json_converter import dumps_str
from ingest.events.source_info import snapshot_text, snapshot_value
from ingest.sqlutil import quote_ident

log = logging.getLogger(__name__)
ER_ACCESS_DENIED = (1045, 1227, 1044)
ER_NO_SUCH_TABLE = 1146


def captured_databases(query: server.Query, filters: Filters) -> list[str]:
    rows = query("SELECT SCHEMA_NAME AS s FROM information_schema.SCHEMATA ORDER BY SCHEMA_NAME")
    return [r["s"] for r in rows if filters.database(r["s"])]


def list_tables(query: server.Query, databases: list[str]) -> list[tuple[str, str]]:
    if not databases:
        return []
    names = ", ".join(pymysql.converters.escape_string(d).join("''") for d in databases)
    rows = query("SELECT TABLE_SCHEMA AS d, TABLE_NAME AS t FROM information_schema.TABLES "
                 f"WHERE TABLE_TYPE = 'BASE TABLE' AND TABLE_SCHEMA IN ({names}) ORDER BY TABLE_SCHEMA, TABLE_NAME")
    return [(r["d"], r["t"]) for r in rows]


def row_estimates(query: server.Query, tables: list[tuple[str, str]]) -> list[int | None]:
    """The server's row count estimate of each table (information_schema.TABLES.TABLE_ROWS: exact for Aria and
    MyISAM, an estimate for InnoDB), for the snapshot's progress display."""
    if not tables:
        return []
    names = ", ".join(pymysql.converters.escape_string(d).join("''") for d in sorted({d for d, _ in tables}))
    rows = query("SELECT TABLE_SCHEMA AS d, TABLE_NAME AS t, TABLE_ROWS AS n FROM information_schema.TABLES "
                 f"WHERE TABLE_SCHEMA IN ({names})")
    known = {(r["d"], r["t"]): int(r["n"]) for r in rows if r["n"] is not None}
    return [known.get(table) for table in tables]


def innodb_table_ids(query: server.Query) -> dict[tuple[str, str], int]:
    """(database, table) -> InnoDB table id, to find a table renamed while the snapshot runs. Empty when the
    user may not read INNODB_SYS_TABLES (it needs PROCESS): a renamed table is then skipped like a dropped one."""
    try:
        rows = query("SELECT TABLE_ID AS i, NAME AS n FROM information_schema.INNODB_SYS_TABLES")
    except pymysql.err.MySQLError:
        return {}
    out = {}
    for row in rows:
        db, sep, table = _innodb_name(str(row["n"])).partition("/")
        if sep:
            out[(db, table)] = int(row["i"])
    return out


def _innodb_name(name: str) -> str:
    """InnoDB's 'db/table' with the file-name encoding of special characters (@XXXX) undone."""
    return re.sub(r"@([0-9a-f]{4})", lambda m: chr(int(m.group(1), 16)), name)


def claim_table(query: server.Query, db: str, table: str, ids: dict[tuple[str, str], int]) -> tuple[str, str] | None:
    """Open `db.table` in the snapshot transaction: its metadata lock is then held until the snapshot ends, so a
    RENAME or DROP of it waits. A table renamed since the snapshot began (tables are claimed one by one, when
    their rows are read) is found again by its InnoDB table id and read under its new name: its rows as of the
    snapshot, under the name the snapshot's schema has, so streaming then replays the RENAME as if it had come
    after the snapshot. Returns the (database, table) to read, or None when the table is gone (dropped)."""
    name = (db, table)
    for _ in range(3):  # renamed again between the look-up and the claim: look again
        try:
            query(f"SELECT 1 FROM {quote_ident(name[0])}.{quote_ident(name[1])} LIMIT 0")
            return name
        except pymysql.err.ProgrammingError as exc:
            if exc.args[0] != ER_NO_SUCH_TABLE:
                raise
        table_id = ids.get((db, table))
        if table_id is None:
            return None
        rows = query(f"SELECT NAME AS n FROM information_schema.INNODB_SYS_TABLES WHERE TABLE_ID = {table_id:d}")
        if not rows:
            return None
        current_db, _, current_table = _innodb_name(str(rows[0]["n"])).partition("/")
        name = (current_db, current_table)
    return None


def show_create(query: server.Query, db: str, table: str) -> str:
    rows = query(f"SHOW CREATE TABLE {quote_ident(db)}.{quote_ident(table)}")
    return str(rows[0]["Create Table"])


def read_schemas(query: server.Query, tracker: SchemaTracker,
                 databases: list[str]) -> list[tuple[str, str, str, list[dict]]]:
    """Apply SHOW CREATE TABLE of every table of `databases` to the tracker: (db, table, ddl, tableChanges)."""
    out = []
    for db, table in list_tables(query, databases):
        ddl = show_create(query, db, table)
        changes = tracker.apply(ddl, db)
        out.append((db, table, ddl, [c for c in changes if c]))
    return out


class MySqlSnapshotSource:
    """The consistent snapshot of one run: the schema change events of every table of the captured databases,
    then (`data`) the rows of the captured tables; `resume` is the position of the last row landed by an
    interrupted snapshot. Afterwards `end_position` is where streaming starts."""

    columnar = True  # read tables with a primary key in columnar chunks (False: the row path, for comparisons)

    def __init__(self, *, source_name: str, config: MySqlProperties,
                 connect: Callable[[], pymysql.connections.Connection],
                 tracker: SchemaTracker, codecs: TableCodecs, events: MySqlEventDispatcher, stats: dict[str, int],
                 data: bool, resume: MySqlOffset | None = None,
                 table_hook: Callable[[str], None] | None = None) -> None:
        self.source_name = source_name
        self.config = config
        self.connect = connect
        self.tracker = tracker
        self.codecs = codecs
        self.events = events
        self.stats = stats
        self.data = data
        self.resume = resume
        self.table_hook = table_hook  # called with a table's id before its rows are read (SourceConnector)
        self.end_position: MySqlOffset | None = None
        self.progress: SnapshotProgress | None = None  # while the rows are read

    def run(self, limits: BatchLimits) -> Iterator[Batch]:
        cfg = self.config
        resume = self.resume
        name = self.source_name
        conn = self.connect()
        query = server.cursor_query(conn)
        table_locks = False
        try:
            query(f"SET SESSION lock_wait_timeout = {max(1, cfg.lock_timeout_ms // 1000)}")
            query("SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            databases = captured_databases(query, cfg.filters)
            tables = list_tables(query, databases)
            captured = [(d, t) for d, t in tables if cfg.filters.table(d, t)]
            if cfg.locking_mode == "minimal":
                try:
                    query("FLUSH TABLES WITH READ LOCK")
                except pymysql.err.OperationalError as exc:
                    if exc.args[0] not in ER_ACCESS_DENIED:
                        raise LakecdcError(f"{name}: snapshot lock failed ({exc.args[-1]})") from None
                    log.warning("%s: global read lock refused; using table locks", name)
                    if captured:
                        try:
                            query("LOCK TABLES " + ", ".join(f"{quote_ident(d)}.{quote_ident(t)} READ"
                                                             for d, t in captured))
                        except pymysql.err.OperationalError as lock_exc:
                            if lock_exc.args[0] not in ER_ACCESS_DENIED:
                                raise
                            raise LakecdcError(
                                f"{name}: the snapshot needs the global read lock (RELOAD privilege) or "
                                f"LOCK TABLES on the captured tables ({lock_exc.args[-1]}); grant one, or set "
                                "snapshot.locking.mode=none (no lock: safe only without DDL during the snapshot)"
                            ) from None
                    table_locks = True
            if not table_locks:
                query("START TRANSACTION WITH CONSISTENT SNAPSHOT")
            ids = innodb_table_ids(query) if self.data else {}  # while DDL still waits for the lock
            if resume is not None:
                pos = server.BinlogPosition(resume.file, resume.pos, resume.gtids)
            else:
                pos = server.binlog_status(query, cfg.flavor)
            ordinal = 0
            schema_changes = []
            ts = now_ms()
            if resume is None:
                self.tracker.reset()
                position = MySqlOffset.in_snapshot(pos.file, pos.pos, pos.gtids, completed=not self.data).to_json()
                # under LOCK TABLES only the locked (captured) tables may be read
                for db, table, ddl, changes in self._schemas(query, captured if table_locks else tables):
                    source = self.events.source(ts_ms=ts, db=db, table=table, file=pos.file, pos=pos.pos,
                                                snapshot=True)
                    seq = _seq(pos, ordinal)
                    ordinal += 1
                    if cfg.include_schema_changes:
                        schema_changes.append(self.events.schema_change(db=db, ddl=ddl, table_changes=changes,
                                                                        source=source, seq=seq, position=position))
            else:
                self.tracker.reset()  # rows are read in today's structure; streaming restores P's afterwards
                self._schemas(query, captured if table_locks else tables)
                ordinal = resume.resumed_ordinal
            self.codecs.clear()
            if cfg.locking_mode == "minimal" and not table_locks:
                query("UNLOCK TABLES")
            # Schema changes travel with the first rows: one commit, so a crash cannot land them twice.
            first = Batch(schema_changes=schema_changes)
            if self.data:
                scan = self._scan(conn, pos, captured, resume, ordinal, limits, first, ids)
                yield from (produce_ahead(scan) if self.columnar else scan)
            elif schema_changes:
                yield first
            query("COMMIT")
            self.end_position = MySqlOffset.streaming(pos.file, pos.pos, pos.gtids)
        finally:
            try:
                if table_locks:
                    conn.cursor().execute("UNLOCK TABLES")
            finally:
                conn.close()

    def _schemas(self, query: server.Query, tables: list[tuple[str, str]]) -> list[tuple[str, str, str, list[dict]]]:
        out = []
        for db, table in tables:
            ddl = show_create(query, db, table)
            changes = self.tracker.apply(ddl, db)
            out.append((db, table, ddl, changes))
        return out

    def _scan(self, conn: pymysql.connections.Connection, pos: server.BinlogPosition,
              captured: list[tuple[str, str]], resume: MySqlOffset | None, ordinal: int,
              limits: BatchLimits, batch: Batch, ids: dict[tuple[str, str], int]) -> Iterator[Batch]:
        cfg = self.config
        name = self.source_name
        events = self.events
        query = server.cursor_query(conn)
        done: list[str] = list(resume.done) if resume is not None else []
        resume_table = resume.table if resume is not None else None
        resume_key = list(resume.key) if resume is not None else None
        out = _Batches(limits, batch, self.stats, SnapshotMarks(cfg.flavor))
        chunk_size = cfg.chunk_size
        snapshot_at = MySqlOffset.in_snapshot(pos.file, pos.pos, pos.gtids)
        todo = [(db, table) for db, table in captured
                if f"{db}.{table}" not in done and cfg.filters.snapshot_table(db, table)]
        progress = self.progress = SnapshotProgress(
            [(f"{db}.{table}", estimate)
             for (db, table), estimate in zip(todo, row_estimates(query, todo), strict=True)])
        for number, (db, table) in enumerate(todo):
            table_id = f"{db}.{table}"
            out.start_table(first=number == 0)
            progress.start_table(table_id)
            log.info("%s: %s", name, progress.describe())
            codec = self.codecs.get(db, table)
            tbl = self.tracker.table(db, table)
            if codec is None or tbl is None:
                continue
            if self.table_hook is not None:
                self.table_hook(table_id)
            relation = claim_table(query, db, table, ids)
            if relation is None:
                log.warning("%s: table %s was dropped during the snapshot: its rows are skipped (the DROP is read "
                            "from the binlog)", name, table_id)
                done = done + [table_id]
                continue
            if relation != (db, table):
                log.warning("%s: table %s was renamed to %s.%s during the snapshot: its rows are read under the new "
                            "name (the RENAME is read from the binlog)", name, table_id, *relation)
            all_columns = [col.name for col in tbl.columns]
            pk = list(tbl.primary_key)
            after_key = [key_param(v) for v in resume_key] if resume_table == table_id and resume_key else None
            override = cfg.snapshot_overrides.get(table_id)
            select = f"SELECT {', '.join(select_sql(col) for col in tbl.columns)} FROM {read_from(relation, override)}"
            pk_index = [all_columns.index(k) for k in pk]
            captured_index = [all_columns.index(n) for n in codec.columns]
            seq_prefix = _seq(pos, 0)[:-8]
            # Tables with a primary key are read in columnar chunks (snapshot_block); without one, row by row.
            reader = (ChunkReader(conn, codec, tbl, self.codecs.options, relation, override) if pk and self.columnar
                      else None)
            table_at = snapshot_at.at_row(table_id, [], 0, done)
            limit = chunk_size
            # The next chunk is fetched (the server formats it) while this one is converted and landed.
            future = reader.submit(after_key, limit) if reader is not None else None
            try:
                while True:
                    asked = limit
                    chunk = None
                    if future is not None:
                        chunk, future = future.result(), None
                        if chunk is None and limit > 1:
                            limit //= 2  # the chunk's text did not come back whole: fewer rows per query
                            future = reader.submit(after_key, limit)  # type: ignore[union-attr]
                            continue
                    if chunk is not None:
                        assert reader is not None
                        n = chunk.num_rows
                        next_key = reader.last_key(chunk) if n else after_key
                        if n >= asked:
                            future = reader.submit(next_key, min(chunk_size, limit * 2))
                        ts_ns = time.time_ns()
                        ts = ts_ns // 1_000_000
                        source = events.source(ts_ms=ts, db=db, table=table, file=pos.file, pos=pos.pos,
                                               snapshot=True)
                        envelope = Envelope(*envelope_texts(codec.schemas, "r", source, ts_ns), ts, ts_ns,
                                            *table_at.row_texts())
                        try:
                            columns = reader.events(chunk, envelope, seq_prefix, ordinal) if n else None
                        except (pa.ArrowException, ValueError, TypeError, OverflowError) as exc:
                            # a value Arrow cannot convert: the row path reads this chunk (and converts it, or
                            # fails on it, exactly as it always did)
                            log.info("%s: %s: chunk read by the row path (%s)", name, table_id, exc)
                            if future is not None:
                                future.result()
                                future = None
                            chunk = None
                        else:
                            limit = min(chunk_size, limit * 2)
                            if columns is not None:
                                yield from out.add_block(BronzeEventBlock(
                                    columns, codec.key_schema_json if codec.key_columns else None,
                                    codec.value_schema_json))
                                ordinal += n
                                progress.add_rows(n)
                                after_key = next_key
                    if chunk is None:
                        sql, params = select, []
                        if pk:
                            if after_key is not None:
                                sql += (f" WHERE ({', '.join(quote_ident(k) for k in pk)}) > "
                                        f"({', '.join(['%s'] * len(pk))})")
                                params = list(after_key)
                            sql += f" ORDER BY {', '.join(quote_ident(k) for k in pk)} LIMIT {asked}"
                        with conn.cursor() as cur:
                            cur.execute(sql, params)
                            rows = cur.fetchall()
                        n = len(rows)
                        ts = now_ms()
                        source = events.source(ts_ms=ts, db=db, table=table, file=pos.file, pos=pos.pos,
                                               snapshot=True)
                        for values in rows:
                            yield from out.before_rows()
                            after = codec.row_from_tuple(values, captured_index)
                            key_values = [key_json(values[i]) for i in pk_index]
                            position = snapshot_at.at_row(table_id, key_values, ordinal, done).to_json()
                            out.add_event(events.data_event(codec, "r", None, after, source,
                                                            f"{seq_prefix}{ordinal:08x}", position))
                            ordinal += 1
                        progress.add_rows(n)
                        if rows:
                            after_key = [rows[-1][i] for i in pk_index]
                        if reader is not None and n >= asked:
                            future = reader.submit(after_key, limit)
                    if not pk or n < asked:
                        break
            finally:
                if reader is not None:
                    reader.close()  # waits for a fetch still running: the connection is used next
            out.end_table(last=number == len(todo) - 1)
            done = done + [table_id]
        progress.finish()
        yield from out.finish()


def produce_ahead(items: Iterator[Batch]) -> Iterator[Batch]:
    """The items of `items`, produced on a thread one item ahead: the next batch is read and converted while
    the consumer lands this one. Errors are re-raised here; closing this generator stops the producer and
    closes `items` (on the producer's thread) before returning."""
    slots: queue.Queue[tuple[str, Any]] = queue.Queue(maxsize=1)
    stop = threading.Event()

    def put(kind: str, value: Any) -> bool:
        while not stop.is_set():
            try:
                slots.put((kind, value), timeout=0.05)
                return True
            except queue.Full:
                continue
        return False

    def produce() -> None:
        try:
            for item in items:
                if not put("item", item):
                    break
            else:
                put("done", None)
        except BaseException as exc:  # noqa: BLE001 - handed to the consumer
            put("error", exc)
        finally:
            items.close()  # type: ignore[attr-defined]

    worker = threading.Thread(target=produce, name="lakecdc-snapshot-ahead", daemon=True)
    worker.start()
    try:
        while True:
            kind, value = slots.get()
            if kind == "done":
                return
            if kind == "error":
                raise value
            yield value
    finally:
        stop.set()
        worker.join()


class _Batches:
    """Fills batches up to the limits. A batch closes before rows are added to a full (or old) one, so the
    last batch always holds the last row; that row's position says the snapshot completed."""

    def __init__(self, limits: BatchLimits, first: Batch, stats: dict[str, int], marks: SnapshotMarks) -> None:
        self.limits = limits
        self.batch = first
        self.stats = stats
        self.started = now_ms()
        self.last_in_block = False
        self.marks = marks
        self.first_mark: str | None = None   # the marker of the table's first row, until it is added
        self.first_table = False
        self.table_rows = 0
        self.any_rows = False

    def start_table(self, first: bool) -> None:
        self.first_mark = "first" if first else "first_in_data_collection"
        self.first_table = first
        self.table_rows = 0

    def end_table(self, last: bool) -> None:
        """The table's last row (still in the open batch: a batch is handed out only before rows are added)
        gets its marker. A one-row table's row takes the strongest of its marks, as Debezium 3.6.3 measured:
        "last" > "first" > "last_in_data_collection" > "first_in_data_collection"; "last" goes to the last
        row of the snapshot even when the last tables are empty."""
        self.any_rows = self.any_rows or self.table_rows > 0
        if not self.any_rows or (not self.table_rows and not last):
            return
        if self.table_rows == 1 and self.first_table and not last:
            return
        mark = "last" if last else "last_in_data_collection"
        if self.last_in_block:
            block = self.batch.blocks[-1]
            self.batch.blocks[-1] = BronzeEventBlock(self.marks.block(block.columns, len(block) - 1, mark),
                                                     block.key_schema, block.value_schema)
        else:
            self.batch.events[-1] = self.marks.event(self.batch.events[-1], mark)

    def before_rows(self) -> Iterator[Batch]:
        count = self.batch.event_count
        if count and (count >= self.limits.max_events or now_ms() - self.started >= self.limits.max_seconds * 1000):
            self.stats["snapshot_rows"] += count
            yield self.batch
            self.batch, self.started = Batch(), now_ms()

    def add_event(self, event: BronzeEvent) -> None:
        if self.first_mark is not None:
            event, self.first_mark = self.marks.event(event, self.first_mark), None
        self.batch.events.append(event)
        self.last_in_block = False
        self.table_rows += 1

    def add_block(self, block: BronzeEventBlock) -> Iterator[Batch]:
        rest = block.columns
        if self.first_mark is not None and rest.num_rows:
            rest, self.first_mark = self.marks.block(rest, 0, self.first_mark), None
        self.table_rows += rest.num_rows
        while rest.num_rows:
            yield from self.before_rows()
            room = max(1, self.limits.max_events - self.batch.event_count)
            piece, rest = rest.slice(0, room), rest.slice(room)
            self.batch.blocks.append(BronzeEventBlock(piece, block.key_schema, block.value_schema))
            self.last_in_block = True

    def finish(self) -> Iterator[Batch]:
        # The snapshot's last event says the snapshot completed, so a restart after it goes straight to streaming.
        batch = self.batch
        if batch.event_count:
            if self.last_in_block:
                block = batch.blocks[-1]
                positions = block.columns.column("position")
                last = _completed(positions[-1].as_py())
                patched = pa.concat_arrays([*positions.slice(0, len(positions) - 1).chunks,
                                            pa.array([last], pa.string())])
                index = block.columns.schema.get_field_index("position")
                batch.blocks[-1] = BronzeEventBlock(block.columns.set_column(index, "position", patched),
                                                    block.key_schema, block.value_schema)
            else:
                last_event = batch.events[-1]
                batch.events[-1] = dataclasses.replace(last_event, position=_completed(last_event.position))
            self.stats["snapshot_rows"] += batch.event_count
        if len(batch):
            yield batch


class SnapshotMarks:
    """source.snapshot of a snapshot's first and last rows, as Debezium marks them: `first` (first row of the
    first table), `first_in_data_collection` (of every other table), `last_in_data_collection` (last row of
    a table; wins over first_in_data_collection for a one-row table), `last` (last row of the last table);
    `true` elsewhere. Rows are built with `true` and re-marked here (boolean `snapshot` layouts: no change)."""

    def __init__(self, flavor: str) -> None:
        self.flavor = flavor

    def _value(self, value: str, mark: str) -> str:
        start = value.rfind('"snapshot":')  # the source block's: it follows the row images
        if start < 0:
            return value
        end = value.index(",", start)  # the value is an enum string or a boolean: no comma inside
        return value[:start] + '"snapshot":' + dumps_str(snapshot_value(self.flavor, mark)) + value[end:]

    def text(self, mark: str) -> str:
        return snapshot_text(snapshot_value(self.flavor, mark)) or "true"

    def event(self, event: BronzeEvent, mark: str) -> BronzeEvent:
        return dataclasses.replace(event, value=self._value(event.value or "", mark), snapshot=self.text(mark))

    def block(self, columns: pa.Table, row: int, mark: str) -> pa.Table:
        for name, text in (("value", self._value(columns.column("value")[row].as_py(), mark)),
                           ("snapshot", self.text(mark))):
            index = columns.schema.get_field_index(name)
            old = columns.column(index)
            new = pa.concat_arrays([*old.slice(0, row).chunks, pa.array([text], pa.string()),
                                    *old.slice(row + 1).chunks])
            columns = columns.set_column(index, name, new)
        return columns


def _completed(position: str) -> str:
    return MySqlOffset.from_json(position).completed().to_json()


def _seq(pos: server.BinlogPosition, ordinal: int) -> str:
    return make_seq(pos.file_number, pos.pos, ordinal)


def now_ms() -> int:
    return time.time_ns() // 1_000_000
