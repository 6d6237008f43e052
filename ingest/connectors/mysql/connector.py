"""MySqlConnector: consistent snapshot, then binlog streaming, for MariaDB and MySQL.

seq = <binlog file number:8 hex>-<position:10 hex>-<index:8 hex>. Streamed events use the END position of
their binlog event (unique per event) and the row index inside it; snapshot schema changes and rows use
the snapshot's binlog position P and an ordinal. Every event streamed after the snapshot ends after P, so
snapshot rows sort before it.

Position (offset) JSON of each event: `file`/`pos` = where the event's transaction began, `gtids` = the
GTID set completed before that transaction, plus `snapshot` details while the snapshot runs. Resuming
reconnects at file/pos and drops every event whose seq is <= the last committed seq (exactly once).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pymysql

from ingest.bronze.contract import Batch, BatchLimits, BronzeEvent, BronzeSchemaChange, ResumeState, encode_seq
from ingest.config import SourceSettings
from ingest.connectors.base import SourceConnector
from ingest.connectors.mysql import emit, server
from ingest.connectors.mysql.codec import TableCodec, build_codec
from ingest.connectors.mysql.config import MySqlConfig, parse_config
from ingest.connectors.mysql.schema_track import SchemaTracker
from ingest.connectors.mysql.types import TypeOptions
from ingest.errors import LakecdcError
from ingest.events import envelope as ev
from ingest.events.to_bronze import change_to_bronze, relational_change_to_bronze, schema_change_to_bronze

log = logging.getLogger(__name__)
SEQ_WIDTHS = (8, 10, 8)
RECOVERY_INDEX = 0x80000000  # seq index of snapshot.mode=recovery records: after any DDL or truncate at that pos


def make_seq(file_number: int, pos: int, index: int) -> str:
    return encode_seq((file_number, pos, index), SEQ_WIDTHS)


def now_ms() -> int:
    return time.time_ns() // 1_000_000


class MySqlConnector(SourceConnector):
    connector_name = "mysql"

    keeps_schema_history = True

    def __init__(self, settings: SourceSettings, base_dir: Path | None = None) -> None:
        super().__init__(settings, base_dir)
        self.config: MySqlConfig = parse_config(settings.connector, settings.properties)
        self.flavor = self.config.flavor
        self.options = TypeOptions(self.config.time_precision_mode, self.config.decimal_mode,
                                   self.config.bigint_unsigned_mode, self.config.binary_mode)
        self.tracker = SchemaTracker(self.flavor)
        self.codecs: dict[str, TableCodec] = {}
        self._restored: list[tuple[str, str]] = []  # (seq, event json) schema changes given back by the runner
        self.restored_seqs: frozenset[str] = frozenset()
        self._conn: pymysql.connections.Connection | None = None
        self.stats: dict[str, int] = {"reconnects": 0, "snapshot_rows": 0, "stream_events": 0}

    # ------------------------------------------------------------------ connections and validation
    def connect(self) -> pymysql.connections.Connection:
        try:
            conn = pymysql.connect(**self.config.connect_kwargs(), autocommit=True)
        except pymysql.err.OperationalError as exc:
            raise LakecdcError(f"{self.source_name}: cannot connect to {self.flavor} at "
                               f"{self.config.hostname}:{self.config.port} ({exc.args[-1]})") from None
        with conn.cursor() as cur:
            cur.execute("SET time_zone = '+00:00'")
            for statement in self.config.initial_statements:
                cur.execute(statement)
        return conn

    def open_query_connection(self) -> pymysql.connections.Connection:
        return self.connect()  # session time zone UTC: TIMESTAMP values as instants

    @property
    def conn(self) -> pymysql.connections.Connection:
        if self._conn is None or not self._conn.open:
            self._conn = self.connect()
        return self._conn

    def query(self, sql: str) -> list[dict[str, Any]]:
        return server.cursor_query(self.conn)(sql)

    def check(self) -> str:
        actual = server.detect_flavor(self.query)
        if actual != self.flavor:
            raise LakecdcError(f"{self.source_name}: connector is {self.flavor!r} but the server is {actual}")
        server.validate_settings(self.query, self.flavor)
        return (f"{self.flavor} server: binary log on, binlog_format=ROW, binlog_row_image=FULL, "
                "binlog_row_metadata=FULL")

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    # ------------------------------------------------------------------ schema history given back by the runner
    def restore_schema_history(self, changes: list[tuple[str, str]]) -> None:
        """(seq, schema change event JSON) rows from bronze S_schema_changes. Before resuming, the tables are
        rebuilt from the tableChanges of every change with seq <= the resume seq (Debezium's history recovery)."""
        self._restored = sorted(changes)
        self.restored_seqs = frozenset(seq for seq, _ in self._restored)

    # ------------------------------------------------------------------ helpers
    def codec(self, db: str, table: str) -> TableCodec | None:
        key = f"{db}.{table}"
        codec = self.codecs.get(key)
        if codec is None:
            tbl = self.tracker.table(db, table)
            if tbl is None:
                return None
            codec = build_codec(self.flavor, self.config.topic_prefix, tbl, self.config.filters, self.options,
                                self.config.provide_transaction_metadata)
            self.codecs[key] = codec
        return codec

    def source(self, *, ts_ms: int, db: str, table: str | None, file: str, pos: int, row: int = 0,
               snapshot: bool | str = False, server_id: int = 0, gtid: str | None = None,
               thread: int | None = None, query: str | None = None) -> dict[str, Any]:
        return emit.source_block(self.flavor, name=self.config.topic_prefix, ts_ms=ts_ms, db=db, table=table,
                                 file=file, pos=pos, row=row, snapshot=snapshot, server_id=server_id, gtid=gtid,
                                 thread=thread, query=query)

    def data_event(self, codec: TableCodec, op: str | None, before: dict | None, after: dict | None,
                   source: dict[str, Any], seq: str, position: str, txn: dict | None = None,
                   key_row: dict | None = None) -> BronzeEvent:
        """A data change event (op c/u/d/r/t) or, op None, the tombstone of the delete of `key_row`."""
        if op is None:
            # ev.tombstone's event (null value, the delete's key; null for a keyless table), built from the key
            event = ev.ChangeEvent(codec.schemas, None, codec.key(key_row or {}))
            return change_to_bronze(event, seq=seq, position=position, txn_id=source.get("gtid"))
        return relational_change_to_bronze(codec.schemas, op, before=before, after=after, source=source, seq=seq,
                                           position=position, txn_id=source.get("gtid"), transaction=txn,
                                           key=codec.key(key_row) if key_row is not None else None)

    def schema_change(self, *, db: str, ddl: str, table_changes: list[dict], source: dict[str, Any], seq: str,
                      position: str) -> BronzeSchemaChange:
        event = ev.SchemaChangeEvent(self.flavor, self.config.topic_prefix, source, db, None, ddl,
                                     [ev.TableChange.from_payload(entry) for entry in table_changes])
        return schema_change_to_bronze(event, seq=seq, position=position)

    # ------------------------------------------------------------------ main loop
    def batches(self, resume: ResumeState, limits: BatchLimits) -> Iterator[Batch]:
        from ingest.connectors.mysql.snapshot import Snapshotter
        from ingest.connectors.mysql.streaming import Streamer

        mode = self.config.snapshot_mode
        position = resume.position or None
        start: dict[str, Any] | None = None
        if position is None:
            if mode == "never":
                start = self._earliest_position()
            else:
                snap = Snapshotter(self, data=mode in ("initial", "initial_only", "when_needed"))
                yield from snap.run(limits, None, None)
                start = snap.end_position
        elif position.get("snapshot") and not position.get("snapshot_completed"):
            snap = Snapshotter(self, data=True)
            yield from snap.run(limits, position, resume.last_seq)
            start = snap.end_position
            self.tracker.reset()
            self._restore_tables(resume.last_seq)
        else:
            start = dict(position)
            if not self._position_available(start):
                missing = f"{start.get('file')} at position {start.get('pos')} (gtids {start.get('gtids') or '-'})"
                if mode != "when_needed":
                    raise LakecdcError(f"{self.source_name}: the binlog position to resume from is no longer on the "
                                       f"server: {missing} was purged; a new snapshot is required "
                                       "(set snapshot.mode=when_needed to take it automatically)")
                log.warning("%s: resume position %s purged; taking a new snapshot", self.source_name, missing)
                self.tracker.reset()
                self.codecs.clear()
                snap = Snapshotter(self, data=True)
                yield from snap.run(limits, None, None)
                start = snap.end_position
            elif mode == "recovery":
                yield from self._recover_schema_history(start)
            else:
                self._restore_tables(resume.last_seq)
        if mode == "initial_only":
            return
        assert start is not None
        yield from Streamer(self, start, resume.last_seq).run(limits)

    def _recover_schema_history(self, start: dict[str, Any]) -> Iterator[Batch]:
        """snapshot.mode=recovery with a stored position: the table model and the schema history are rebuilt
        from the current catalog (SHOW CREATE TABLE of every table of the captured databases); the history
        handed back from bronze is not read. As Debezium records them at the stored offset, the schema change
        events get the stored position and seqs <file, pos, RECOVERY_INDEX + n> where pos is the beginning of
        the transaction to resume in: after every earlier record, before every event streamed next.
        Like Debezium's, only correct when no DDL ran since the last event landed (not checked)."""
        from ingest.connectors.mysql.snapshot import read_schemas

        self.tracker.reset()
        self.codecs.clear()
        schemas = read_schemas(self, self.captured_databases())
        if not self.config.include_schema_changes:
            return
        file, pos = str(start["file"]), int(start["pos"])
        position = orjson.dumps({"file": file, "pos": pos, "gtids": start.get("gtids") or "",
                                 "snapshot_completed": True}).decode()
        ts = now_ms()
        batch = Batch()
        for ordinal, (db, table, ddl, table_changes) in enumerate(schemas):
            seq = make_seq(server.binlog_file_number(file), pos, RECOVERY_INDEX + ordinal)
            if seq in self.restored_seqs:
                continue  # recovered at this very position before and landed: the same structure
            source = self.source(ts_ms=ts, db=db, table=table, file=file, pos=pos, snapshot=True)
            batch.schema_changes.append(self.schema_change(db=db, ddl=ddl, table_changes=table_changes,
                                                           source=source, seq=seq, position=position))
        log.warning("%s: snapshot.mode=recovery: schema history rebuilt from the current catalog (%d tables)",
                    self.source_name, len(schemas))
        if batch.schema_changes:
            yield batch

    def _restore_tables(self, last_seq: str | None) -> None:
        """Rebuild the table model from the restored schema history; without one, from the live catalog.
        Records after the resume seq are left out when streaming re-reads their DDL from the binlog; snapshot
        and recovery records (source.snapshot set) are never re-read, so they always count. A recovery set
        describes every table: records before the last one landed are not read (they may be unreadable)."""
        recoveries = [seq for seq, _ in self._restored
                      if int(seq[-8:], 16) >= RECOVERY_INDEX and (last_seq is None or seq <= last_seq)]
        floor = max(recoveries)[:-8] + f"{RECOVERY_INDEX:08x}" if recoveries else ""
        changes = []
        for seq, text in self._restored:
            if seq < floor:
                continue
            try:
                event = orjson.loads(text)
                if last_seq is None or seq <= last_seq or (event.get("source") or {}).get("snapshot") not in (
                        None, False, "false"):
                    self.tracker.apply_event(event)
                    changes.append(seq)
            except (ValueError, KeyError, TypeError, AttributeError, LakecdcError) as exc:
                raise LakecdcError(f"{self.source_name}: schema history record {seq} (S_schema_changes) is "
                                   f"unreadable ({type(exc).__name__}: {str(exc)[:200]}); restart once with "
                                   "snapshot.mode=recovery to rebuild the history from the current catalog") from None
        if not changes and not self.tracker.tables:
            log.warning("%s: no schema history given; reading table structures from the live catalog",
                        self.source_name)
            from ingest.connectors.mysql.snapshot import read_schemas

            read_schemas(self, self.captured_databases())
        self.codecs.clear()

    def captured_databases(self) -> list[str]:
        rows = self.query("SELECT SCHEMA_NAME AS s FROM information_schema.SCHEMATA ORDER BY SCHEMA_NAME")
        return [r["s"] for r in rows if self.config.filters.database(r["s"])]

    def _earliest_position(self) -> dict[str, Any]:
        files = server.binlog_files(self.query)
        return {"file": files[0], "pos": 4, "gtids": "", "snapshot_completed": True}

    def _position_available(self, position: dict[str, Any]) -> bool:
        files = server.binlog_files(self.query)
        return str(position.get("file")) in files
