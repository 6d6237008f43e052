"""MySqlConnector: consistent snapshot, then binlog streaming, for MariaDB and MySQL. The connector wires the
parts together and owns the lifecycle: the snapshot source (snapshot.py), the streaming source (streaming.py),
the resume positions and seqs (offsets.py), the event dispatcher (events.py) and the table model
(schema_track.py, codec.py). It chooses where a run starts: a new snapshot, a resumed one, or streaming from
the position bronze gives back.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pymysql

from ingest.bronze.contract import Batch, BatchLimits, ResumeState
from ingest.config import SourceSettings
from ingest.connectors import signals
from ingest.connectors.base import SourceConnector
from ingest.connectors.mysql import server
from ingest.connectors.mysql.codec import TableCodecs
from ingest.connectors.mysql.events import MySqlEventDispatcher
from ingest.connectors.mysql.incremental import check_signal_table, send_signal, signal_table
from ingest.connectors.mysql.offsets import RECOVERY_INDEX, MySqlOffset, first_recovery_seq, is_recovery_seq, make_seq
from ingest.connectors.mysql.properties import MySqlProperties, parse_properties
from ingest.connectors.mysql.schema_track import SchemaTracker
from ingest.connectors.mysql.snapshot import MySqlSnapshotSource, captured_databases, now_ms, read_schemas
from ingest.connectors.mysql.streaming import MySqlStreamingSource
from ingest.connectors.mysql.types import TypeOptions
from ingest.connectors.progress import SnapshotProgress
from ingest.connectors.signal_kafka import send_kafka_signal
from ingest.errors import LakecdcError

log = logging.getLogger(__name__)


class MySqlConnector(SourceConnector):
    connector_name = "mysql"

    keeps_schema_history = True

    def __init__(self, settings: SourceSettings, base_dir: Path | None = None) -> None:
        super().__init__(settings, base_dir)
        self.config: MySqlProperties = parse_properties(settings.connector, settings.properties)
        self.flavor = self.config.flavor
        self.options = TypeOptions(self.config.time_precision_mode, self.config.decimal_mode,
                                   self.config.bigint_unsigned_mode, self.config.binary_mode)
        self.tracker = SchemaTracker(self.flavor)
        self.codecs = TableCodecs(self.tracker, self.config, self.options)
        self.events = MySqlEventDispatcher(self.flavor, self.config.topic_prefix)
        self._restored: list[tuple[str, str]] = []  # (seq, event json) schema changes given back by the runner
        self.restored_seqs: frozenset[str] = frozenset()
        self._conn: pymysql.connections.Connection | None = None
        self._snapshot: MySqlSnapshotSource | None = None
        self.stats: dict[str, int] = {"reconnects": 0, "snapshot_rows": 0, "stream_events": 0}

    @property  # type: ignore[override]
    def snapshot_progress(self) -> SnapshotProgress | None:
        """The progress of the snapshot's rows (SourceConnector.snapshot_progress)."""
        return self._snapshot.progress if self._snapshot is not None else None

    # ------------------------------------------------------------------ connections and validation
    def connect(self) -> pymysql.connections.Connection:
        try:
            conn = server.MySqlConnection(**self.config.connect_kwargs(), autocommit=True)
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
        server.validate_privileges(self.query, self.flavor, self.config.user)
        check_signal_table(self.conn, self.config)
        return (f"{self.flavor} server: binary log on, binlog_format=ROW, binlog_row_image=FULL, "
                "binlog_row_metadata=FULL")

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def send_signal(self, signal_type: str, data: dict[str, Any]) -> str:
        """Insert a signal into the signalling table (`lakecdc signal`); the running connector acts on it."""
        def to_table() -> str:
            return send_signal(self.conn, self.config, signal_type, data)

        kafka = self.config.signal_kafka
        return signals.send(self.config.signal_channels, to_table if signal_table(self.config) else None,
                            self._file_channel(), signal_type, data,
                            (lambda: send_kafka_signal(kafka, signal_type, data)) if kafka else None)

    def _file_channel(self) -> signals.FileSignalChannel | None:
        return signals.file_channel(self.config.signal_channels, self.config.signal_file, self.base_dir)

    # ------------------------------------------------------------------ schema history given back by the runner
    def restore_schema_history(self, changes: list[tuple[str, str]]) -> None:
        """(seq, schema change event JSON) rows from bronze S_schema_changes. Before resuming, the tables are
        rebuilt from the tableChanges of every change with seq <= the resume seq (Debezium's history recovery)."""
        self._restored = sorted(changes)
        self.restored_seqs = frozenset(seq for seq, _ in self._restored)

    # ------------------------------------------------------------------ main loop
    def _snapshot_source(self, data: bool, resume: MySqlOffset | None = None) -> MySqlSnapshotSource:
        self._snapshot = MySqlSnapshotSource(
            source_name=self.source_name, config=self.config, connect=self.connect, tracker=self.tracker,
            codecs=self.codecs, events=self.events, stats=self.stats, data=data, resume=resume,
            table_hook=self.snapshot_table_hook)
        return self._snapshot

    def batches(self, resume: ResumeState, limits: BatchLimits) -> Iterator[Batch]:
        mode = self.config.snapshot_mode
        offset = MySqlOffset.from_position(resume.position)
        after_schema = MySqlOffset.from_position(resume.schema_position)
        if offset is None and after_schema is not None and not after_schema.snapshot_running:
            # no event landed yet, but a finished snapshot that read no row (no_data, or quiet empty tables) did
            # land its schema changes: stream from their binlog position rather than take a new snapshot at a
            # later one and lose the changes made since
            offset = after_schema
        start: MySqlOffset | None = None
        if offset is None:
            if mode == "never":
                start = self._earliest_position()
            else:
                snap = self._snapshot_source(data=mode in ("initial", "initial_only", "when_needed"))
                yield from snap.run(limits)
                start = snap.end_position
        elif offset.snapshot_running:
            snap = self._snapshot_source(data=True, resume=offset)
            yield from snap.run(limits)
            start = snap.end_position
            self.tracker.reset()
            self._restore_tables(resume.last_seq)
        else:
            start = offset
            if not self._position_available(start):
                missing = f"{start.file} at position {start.pos} (gtids {start.gtids or '-'})"
                if mode != "when_needed":
                    raise LakecdcError(f"{self.source_name}: the binlog position to resume from is no longer on the "
                                       f"server: {missing} was purged; a new snapshot is required "
                                       "(set snapshot.mode=when_needed to take it automatically)")
                log.warning("%s: resume position %s purged; taking a new snapshot", self.source_name, missing)
                self.tracker.reset()
                self.codecs.clear()
                snap = self._snapshot_source(data=True)
                yield from snap.run(limits)
                start = snap.end_position
            elif mode == "recovery":
                yield from self._recover_schema_history(start)
            else:
                self._restore_tables(resume.last_seq)
        if mode == "initial_only":
            return
        assert start is not None
        yield from MySqlStreamingSource(
            source_name=self.source_name, config=self.config, tracker=self.tracker, codecs=self.codecs,
            events=self.events, stats=self.stats, start=start, last_seq=resume.last_seq,
            restored_seqs=self.restored_seqs, connect=self.connect,
            file_channel=self._file_channel()).run(limits)

    def _recover_schema_history(self, start: MySqlOffset) -> Iterator[Batch]:
        """snapshot.mode=recovery with a stored position: the table model and the schema history are rebuilt
        from the current catalog (SHOW CREATE TABLE of every table of the captured databases); the history
        handed back from bronze is not read. As Debezium records them at the stored offset, the schema change
        events get the stored position and seqs <file, pos, RECOVERY_INDEX + n> where pos is the beginning of
        the transaction to resume in: after every earlier record, before every event streamed next.
        Like Debezium's, only correct when no DDL ran since the last event landed (not checked)."""
        self.tracker.reset()
        self.codecs.clear()
        schemas = read_schemas(self.query, self.tracker, captured_databases(self.query, self.config.filters))
        if not self.config.include_schema_changes:
            return
        file, pos = start.file, start.pos
        # the incremental snapshot under way goes on from the stored state
        position = MySqlOffset.streaming(file, pos, start.gtids, start.incremental).to_json()
        ts = now_ms()
        batch = Batch()
        for ordinal, (db, table, ddl, table_changes) in enumerate(schemas):
            seq = make_seq(server.binlog_file_number(file), pos, RECOVERY_INDEX + ordinal)
            if seq in self.restored_seqs:
                continue  # recovered at this very position before and landed: the same structure
            source = self.events.source(ts_ms=ts, db=db, table=table, file=file, pos=pos, snapshot=True)
            batch.schema_changes.append(self.events.schema_change(db=db, ddl=ddl, table_changes=table_changes,
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
                      if is_recovery_seq(seq) and (last_seq is None or seq <= last_seq)]
        floor = first_recovery_seq(max(recoveries)) if recoveries else ""
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
            read_schemas(self.query, self.tracker, captured_databases(self.query, self.config.filters))
        self.codecs.clear()

    def _earliest_position(self) -> MySqlOffset:
        files = server.binlog_files(self.query)
        return MySqlOffset.streaming(files[0], 4, "")

    def _position_available(self, position: MySqlOffset) -> bool:
        files = server.binlog_files(self.query)
        return position.file in files
