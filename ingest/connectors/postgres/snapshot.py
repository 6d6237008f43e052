"""The PostgreSQL snapshot source: the slot's exported snapshot imported into a REPEATABLE READ transaction, every
captured table read in primary-key chunks with COPY, resumable after the last committed key. Each table is locked
(claim_table) when its turn comes, so a table dropped or renamed mid-snapshot is skipped or read under its
new name instead of failing the snapshot. COPY's CSV
form carries the same value texts as pgoutput sends, and Arrow's CSV reader parses it natively into one
string column per table column (ingest.connectors.postgres.columnar converts those)."""

from __future__ import annotations

import io
import logging
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import psycopg2
import psycopg2.errors
import pyarrow as pa
import pyarrow.csv as pacsv
from psycopg2 import sql

from ingest.bronze.contract import Batch, BatchLimits, BronzeEventBlock
from ingest.connectors.postgres import pgoutput as pg
from ingest.connectors.postgres import setup
from ingest.connectors.postgres.catalog import Catalog
from ingest.connectors.postgres.columnar import SnapshotChunk, build_block
from ingest.connectors.postgres.events import PendingBatch, PostgresEventDispatcher, now_ms
from ingest.connectors.postgres.offsets import OffsetContext, PostgresOffset, make_seq, snapshot_position
from ingest.connectors.postgres.properties import PostgresProperties
from ingest.connectors.postgres.tables import CapturedTable, TableRegistry, build_table
from ingest.connectors.progress import SnapshotProgress
from ingest.errors import LakecdcError

log = logging.getLogger(__name__)


def claim_table(conn: Any, relid: int, schema: str, table: str) -> tuple[str, bool] | None:
    """Lock the table with OID `relid` in ACCESS SHARE mode in the snapshot's transaction, so that a DROP or
    RENAME of it waits until the snapshot ends (reading a table takes that lock too, but only when its turn
    comes: a table not read yet can be dropped or renamed under the snapshot). Returns the server's quoted,
    schema-qualified name of the table to read and whether it differs from `schema`.`table` (its name in the
    snapshot), or None when the table was dropped. The name comes from the live catalog, not from the
    snapshot: a table renamed since the snapshot began is read under its new name, and its rows are those of
    the snapshot, as if the RENAME had come after it."""
    with conn.cursor() as cur:
        for _ in range(3):  # renamed again between the look-up and the lock: look again
            cur.execute("SELECT (pg_identify_object('pg_class'::regclass, %s, 0)).identity, "
                        "quote_ident(%s) || '.' || quote_ident(%s)", (relid, schema, table))
            name, snapshot_name = cur.fetchone()
            if name is None:
                return None  # no such relation any more
            cur.execute("SAVEPOINT lakecdc_claim")  # a failed LOCK must not abort the snapshot's transaction
            try:
                cur.execute(f"LOCK TABLE {name} IN ACCESS SHARE MODE")  # the server's quoted name
            except (psycopg2.errors.UndefinedTable, psycopg2.errors.InvalidSchemaName):
                cur.execute("ROLLBACK TO SAVEPOINT lakecdc_claim")
                continue
            cur.execute("RELEASE SAVEPOINT lakecdc_claim")
            return name, name != snapshot_name
    return None


def row_estimates(conn: Any, relids: list[int]) -> list[int | None]:
    """The planner's row count estimate of each table (pg_class.reltuples; None for a table never vacuumed or
    analyzed), for the snapshot's progress display."""
    with conn.cursor() as cur:
        cur.execute("SELECT oid, reltuples FROM pg_class WHERE oid = ANY(%s)", (relids,))
        known = {oid: int(rows) for oid, rows in cur.fetchall() if rows is not None and rows >= 0}
    return [known.get(relid) for relid in relids]


def read_chunk(conn: Any, table: CapturedTable, after_key: Sequence[str | None] | None, limit: int,
               key_columns: tuple[str, ...], relation: str | None = None, override: str | None = None) -> pa.Table:
    """Rows of `table` with key > after_key in key order, at most `limit` (tables without a key: all rows),
    as one string column per table column (tuple order), NULL as null. `relation`: the server's quoted name
    to read from, when it is no longer the table's (claim_table). `override`: the SELECT to read instead of
    the table (snapshot.select.statement.overrides), chunked the same way."""
    d = table.definition
    cols = sql.SQL(", ").join(sql.Identifier(c) for c in table.column_names)
    source = sql.SQL(relation) if relation else sql.Identifier(d.schema, d.table)
    if override is not None:   # (% doubled: the statement is formatted with the chunk's parameters)
        source = sql.SQL("({}) AS {}").format(sql.SQL(override.replace("%", "%%")), sql.Identifier(d.table))
    query = sql.SQL("SELECT {} FROM {}").format(cols, source)
    params: list[Any] = []
    if key_columns:
        types = {c.name: c.type_expression for c in d.columns}
        keys = sql.SQL(", ").join(sql.Identifier(k) for k in key_columns)
        if after_key is not None:
            casts = sql.SQL(", ").join(sql.SQL("%s::") + sql.SQL(types[k]) for k in key_columns)
            query += sql.SQL(" WHERE ({}) > ({})").format(keys, casts)
            params.extend(after_key)
        query += sql.SQL(" ORDER BY {} LIMIT {}").format(keys, sql.Literal(limit))
    return copy_texts(conn, query, params, len(table.column_names))


def copy_texts(conn: Any, query: sql.Composable, params: Sequence[Any] | None, width: int) -> pa.Table:
    """The rows of a SELECT of `width` columns through COPY: each value as its type's output function writes it
    (the text pgoutput sends; a `::text` cast differs for booleans, inet, char(n)), NULL as null, as string columns
    c0, c1, ... `params` None: the query is not %-formatted (a literal % stays as it is)."""
    names = [f"c{i}" for i in range(width)]
    with conn.cursor() as cur:
        statement = cur.mogrify(query, params).decode("utf-8")
        buf = io.BytesIO()
        cur.copy_expert(f"COPY ({statement}) TO STDOUT WITH (FORMAT csv)", buf)
    data = buf.getvalue()
    if not data:
        return pa.table({n: pa.array([], pa.string()) for n in names})
    return pacsv.read_csv(
        pa.py_buffer(data),
        read_options=pacsv.ReadOptions(column_names=names, block_size=max(1 << 20, len(data) + 1)),
        parse_options=pacsv.ParseOptions(newlines_in_values=True),
        # CSV NULL is an unquoted empty field; an empty string is quoted ("")
        convert_options=pacsv.ConvertOptions(column_types={n: pa.string() for n in names}, strings_can_be_null=True,
                                             quoted_strings_can_be_null=False, null_values=[""]))


class PostgresSnapshotSource:
    """The initial snapshot (and its resumption after a crash): snapshot read events of every captured table,
    and a CREATE schema change row before each table's rows."""

    def __init__(self, props: PostgresProperties, source_name: str, offsets: OffsetContext, tables: TableRegistry,
                 events: PostgresEventDispatcher, normal_connection: Callable[[], Any]) -> None:
        self.props = props
        self.source_name = source_name
        self.offsets = offsets
        self.tables = tables
        self.events = events
        self.normal_connection = normal_connection  # the connector's catalog connection (slot look-ups)
        self.progress: SnapshotProgress | None = None
        # Called with a table's id just before its rows are read (SourceConnector.snapshot_table_hook).
        self.table_hook: Callable[[str], None] | None = None
        self._reader: Any = None   # the snapshot's REPEATABLE READ connection
        self._repl: Any = None     # the replication connection that exported the snapshot, until imported

    def _create_slot_with_snapshot(self) -> tuple[int, str]:
        """(consistent point, exported snapshot name); the replication connection stays open until the
        snapshot has been imported."""
        conn = self.normal_connection()
        info = self._inactive_slot(conn)
        if info is not None:
            setup.drop_slot(conn, self.props.slot_name)
        repl = setup.connect_replication(self.props)
        cur = repl.cursor()
        try:
            with setup.slot_wait_notices(self.props, repl.get_backend_pid()):
                cur.execute(f'CREATE_REPLICATION_SLOT "{self.props.slot_name}" LOGICAL pgoutput EXPORT_SNAPSHOT')
        except psycopg2.errors.QueryCanceled:
            repl.close()
            raise LakecdcError(f"creating replication slot {self.props.slot_name} was cancelled while it waited for "
                               f"open transactions on the server; nothing was captured: run again once they have "
                               f"ended") from None
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

    def run(self, resume: PostgresOffset | None, limits: BatchLimits) -> Iterator[Batch]:
        """A new snapshot (`resume` None), or the rest of an interrupted one after its last committed row."""
        props = self.props
        reader = self._reader = setup.connect(props, autocommit=True)
        try:
            with reader.cursor() as cur:
                cur.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
                if resume is None:
                    slot_lsn, snapshot_name = self._create_slot_with_snapshot()
                    cur.execute("SET TRANSACTION SNAPSHOT %s", (snapshot_name,))
                    self._repl.close()  # the snapshot is imported: the exporting session may end
                    self._repl = None
                    start_table, start_key, counter = None, None, 0
                else:  # resume an interrupted snapshot after its last committed row, in a new snapshot
                    slot_lsn, start_table, start_key, counter = resume.slot_lsn, resume.table, resume.key, resume.n
                cur.execute("SELECT txid_snapshot_xmin(txid_current_snapshot())")
                xmin = int(cur.fetchone()[0])
            self.offsets.start_snapshot(slot_lsn)
            catalog = Catalog(reader)
            tables = [t for t in catalog.tables() if props.captures_table(t[0], t[1])]
            progress = self.progress = SnapshotProgress(
                [(f"{schema}.{name}", estimate) for (schema, name, _), estimate
                 in zip(tables, row_estimates(reader, [relid for _, _, relid in tables]), strict=True)])
            pending = PendingBatch()
            # Flushed batches that may still hold the snapshot's last row: Debezium marks "last" on the last
            # row of the last table with rows, known only when a later row arrives or the snapshot ends.
            # (Probing each table for rows up front would lock every table for the whole snapshot.)
            held: list[Batch] = []
            marks = SnapshotMarks()
            for table_index, (schema, name, relid) in enumerate(tables):
                full = f"{schema}.{name}"
                if start_table is not None and full < start_table:
                    continue
                table = build_table(catalog.table_def(schema, name, relid), props)
                self.tables.remember(relid, table, None)
                self.tables.announced.add(relid)
                after_key = start_key if full == start_table else None
                if full != start_table:  # the table's schema row (a resumed table already has one)
                    counter += 1
                    position = snapshot_position(slot_lsn, full, None, counter, xmin)
                    self.events.schema_change(pending, table, "CREATE", make_seq(slot_lsn, 0, counter), position,
                                              int(time.time() * 1000), None, slot_lsn)
                if props.snapshot_mode == "no_data":
                    continue
                progress.start_table(full)
                log.info("%s: %s", self.source_name, progress.describe())
                if self.table_hook is not None:
                    self.table_hook(full)
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
                    chunk = read_chunk(reader, table, after_key, limit, key_columns, relation,
                                       props.snapshot_overrides.get(full))
                    ts_ms = now_ms()
                    block, rejects = build_block(table, chunk, SnapshotChunk(
                        slot_lsn, xmin, ts_ms, self.events.snapshot_tail(table, ts_ms, slot_lsn, xmin), counter + 1,
                        self.offsets.last_seq))
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
                        held.append(pending.to_batch(caught_up=False))
                        pending = PendingBatch()
                    if not key_columns or chunk.num_rows < limit:
                        break
                    after_key = [chunk.column(i)[-1].as_py() for i in key_index]
            if len(pending):
                held.append(pending.to_batch(caught_up=False))
            marks.mark_last()
            progress.finish()
            if held:
                # the snapshot is complete once its last row is committed: a restart streams from the
                # slot's consistent point instead of resuming the snapshot after its last key
                set_last_position(held[-1], self.offsets.streaming_position(0))
                yield from held
            with reader.cursor() as cur:
                cur.execute("COMMIT")
        finally:
            self.close()

    def close(self) -> None:
        if self._reader is not None and not self._reader.closed:
            self._reader.close()
        self._reader = None
        if self._repl is not None and not self._repl.closed:
            self._repl.close()
        self._repl = None


_SNAPSHOT_FIELD = '"snapshot":"'


class SnapshotMarks:
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
            mark_snapshot_row(block, 0, "first" if self.first_table else "first_in_data_collection")
        self.resumed = True
        self.last = self.final = (block, len(block) - 1)

    def end_table(self) -> None:
        if self.last is not None:
            block, row = self.last
            # a one-row table: "first" outranks "last_in_data_collection", which outranks "first_in_..."
            only_row_of_first_table = (self.first_table and self.first is not None
                                       and self.first[0] is block and self.first[1] == row)
            if not only_row_of_first_table:
                mark_snapshot_row(block, row, "last_in_data_collection")
        self.first = self.last = None

    def mark_last(self) -> None:
        if self.final is not None:
            mark_snapshot_row(*self.final, "last")


def mark_snapshot_row(block: BronzeEventBlock, row: int, label: str) -> None:
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


def set_last_position(batch: Batch, position: str) -> None:
    """Give the batch's highest-seq event `position` (events and blocks are each in seq order)."""
    last_block = batch.blocks[-1] if batch.blocks else None
    if batch.events and (last_block is None or batch.events[-1].seq > (last_block.max_seq() or "")):
        batch.events[-1].position = position
    elif last_block is not None and len(last_block):
        column = last_block.columns.column("position").to_pylist()
        column[-1] = position
        index = last_block.columns.column_names.index("position")
        last_block.columns = last_block.columns.set_column(index, "position", pa.array(column, pa.string()))
