"""The PostgreSQL connector: wiring and lifecycle. A lock-free consistent snapshot through the replication slot's
exported snapshot (snapshot.py), then pgoutput streaming (streaming.py); Debezium events (events.py); the seq and
the resume position of every event (offsets.py). Exactly-once hand-off: bronze keeps the position, and the flush
LSN is confirmed to the server only after the batch is committed (acknowledge)."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg2

from ingest.bronze.contract import Batch, BatchLimits, ResumeState
from ingest.config import SourceSettings
from ingest.connectors import signals
from ingest.connectors.base import SourceConnector
from ingest.connectors.postgres import pgoutput as pg
from ingest.connectors.postgres import setup
from ingest.connectors.postgres.catalog import Catalog
from ingest.connectors.postgres.events import PostgresEventDispatcher
from ingest.connectors.postgres.incremental import send_signal, signal_table
from ingest.connectors.postgres.offsets import OffsetContext, PostgresOffset
from ingest.connectors.postgres.properties import PostgresProperties, parse_properties
from ingest.connectors.postgres.snapshot import PostgresSnapshotSource
from ingest.connectors.postgres.streaming import PostgresStreamingSource
from ingest.connectors.postgres.tables import TableRegistry
from ingest.connectors.progress import SnapshotProgress
from ingest.connectors.signal_kafka import send_kafka_signal
from ingest.errors import LakecdcError

log = logging.getLogger(__name__)


class PostgresConnector(SourceConnector):
    connector_name = "postgresql"

    def __init__(self, settings: SourceSettings, base_dir: Path | None = None) -> None:
        super().__init__(settings, base_dir)
        self.props: PostgresProperties = parse_properties(settings.properties)
        self._conn: Any = None          # normal connection: catalog, slot look-ups, heartbeats
        self._catalog: Catalog | None = None
        self.tables = TableRegistry()   # captured tables by relid (kept across the snapshot and the stream)
        self._snapshot: PostgresSnapshotSource | None = None
        self._streaming: PostgresStreamingSource | None = None

    # ------------------------------------------------------------------ connections and prerequisites

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
        setup.check_signal_table(conn, self.props)
        publication = setup.check_publication(conn, self.props, self._publication_tables())
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
        setup.ensure_publication(self._normal(), self.props, self._publication_tables())

    def send_signal(self, signal_type: str, data: dict[str, Any]) -> str:
        """Insert a signal into the signalling table (`lakecdc signal`); the running connector acts on it."""
        def to_table() -> str:
            return send_signal(self._normal(), self.props, signal_type, data)

        kafka = self.props.signal_kafka
        return signals.send(self.props.signal_channels, to_table if signal_table(self.props) else None,
                            self._file_channel(), signal_type, data,
                            (lambda: send_kafka_signal(kafka, signal_type, data)) if kafka else None)

    def _file_channel(self) -> signals.FileSignalChannel | None:
        return signals.file_channel(self.props.signal_channels, self.props.signal_file, self.base_dir)

    def _publication_tables(self) -> list[tuple[str, str]]:
        """What a filtered publication holds: the captured tables and the signalling table (its inserts are
        the signals and the incremental snapshot's watermarks)."""
        tables = [(s, t) for s, t, _ in self.captured_tables()]
        signal = signal_table(self.props)
        return tables + [signal] if signal is not None and signal not in tables else tables

    # ------------------------------------------------------------------ snapshot, then streaming

    @property  # type: ignore[override]
    def snapshot_progress(self) -> SnapshotProgress | None:
        return self._snapshot.progress if self._snapshot is not None else None

    def batches(self, resume: ResumeState, limits: BatchLimits) -> Iterator[Batch]:
        offsets = OffsetContext(resume.last_seq)
        events = PostgresEventDispatcher(self.props, offsets)
        self._snapshot = PostgresSnapshotSource(self.props, self.source_name, offsets, self.tables, events,
                                                self._normal)
        self._snapshot.table_hook = self.snapshot_table_hook
        self._streaming = PostgresStreamingSource(
            self.props, self.source_name, offsets, self.tables, events, self._normal, lambda: self.catalog,
            self.captured_tables, self._file_channel())
        # no event landed yet: a snapshot that read no row (no_data, empty tables) resumes after its schema changes
        # from the same slot, instead of replacing the slot and losing the changes made since
        position = PostgresOffset.from_position(resume.position or resume.schema_position)
        mode = self.props.snapshot_mode
        conn = self._normal()
        setup.ensure_publication(conn, self.props, self._publication_tables())
        slot = setup.slot_info(conn, self.props.slot_name)
        if position is not None and position.phase == "streaming" and mode != "always":
            lost = slot is not None and slot["wal_status"] == "lost"
            if slot is None or lost:
                what = (f"replication slot {self.props.slot_name} was invalidated by the server (it removed WAL the "
                        "slot still needed: the slot fell further behind than max_slot_wal_keep_size allows)"
                        if lost else f"replication slot {self.props.slot_name} no longer exists")
                if mode == "when_needed":   # the snapshot replaces an invalidated slot
                    log.warning("%s: taking a new snapshot (when_needed)", what)
                    yield from self._snapshot.run(None, limits)
                else:
                    raise LakecdcError(
                        f"{what}: changes after {pg.lsn_to_str(position.restart_lsn)} are lost; run with "
                        f"snapshot.mode=when_needed or always to take a new snapshot, or start over with "
                        f"`lakecdc source reset --source {self.source_name}`")
            else:
                offsets.resume_streaming(position)
        elif position is not None and position.phase == "snapshot" and slot is not None and mode != "always":
            yield from self._snapshot.run(position, limits)
        else:
            yield from self._snapshot.run(None, limits)
        if mode == "initial_only":
            return
        yield from self._streaming.run(limits)

    # ------------------------------------------------------------------ acknowledgement, status, close

    def acknowledge(self, batch: Batch) -> None:
        """Record the flush LSN of a committed batch. The runner calls this from its writer thread while
        the streaming loop may be reading, so the feedback itself is sent by the loop (or by close())."""
        if self._streaming is not None:
            self._streaming.acknowledge(batch)

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

    def source_lag(self, landed: ResumeState) -> str | None:
        lag = self.slot_lag()   # the slot's confirmed position follows bronze's commits
        if not lag["exists"]:
            return f"slot {lag['slot']} does not exist (the next run takes a snapshot only if snapshot.mode allows)"
        return (f"slot {lag['slot']}: confirmed up to {lag['confirmed_flush_lsn']}, {_size(lag['lag_bytes'])} of WAL "
                f"behind, {_size(lag['retained_bytes'])} retained on the server, "
                f"{'active' if lag['active'] else 'inactive'}")

    def close(self) -> None:
        if self._snapshot is not None:
            self._snapshot.close()
        if self._streaming is not None:
            self._streaming.close()
        if self.props.slot_drop_on_stop:
            try:
                setup.drop_slot(self._normal(), self.props.slot_name)
            except psycopg2.Error as exc:
                log.warning("could not drop slot %s: %s", self.props.slot_name, exc)
        if self._conn is not None and not self._conn.closed:
            self._conn.close()
        self._conn = None


def _size(n: int | None) -> str:
    if n is None:
        return "?"
    for unit in ("bytes", "kB", "MB", "GB"):
        if abs(n) < 1024 or unit == "GB":
            return f"{n} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1024  # type: ignore[assignment]
    return f"{n} GB"
