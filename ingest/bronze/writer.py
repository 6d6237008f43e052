"""Exactly-once landing of micro-batches into the bronze tables of one source (see docs/bronze.md).

One `write(batch)`:
  1. new schemas -> S_schemas (only schema ids not there yet)
  2. schema change rows -> S_schema_changes, rejects -> S_rejects (rows a crashed earlier attempt already
     committed are skipped, see below)
  3. all events -> S_events in ONE Delta commit, last.
The resume position is the `position` of the last committed S_events batch (highest batch_id, then
highest seq). A crash before step 3 commits leaves no event of the batch in bronze, and the batch is read
again after restart; the side tables of step 1-2 may then already hold its rows: at start the writer loads
the seqs of side rows newer than the last events batch (the only ones a replay can repeat) and skips each
one once when it comes again (a multiset, so duplicated deliveries in the input still land twice).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
import time
import uuid
from collections import Counter
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ingest.bronze.contract import (
    BRONZE_SCHEMA,
    EVENT_BLOCK_COLUMNS,
    EVENTS_COLUMNS,
    METRICS_COLUMNS,
    REJECTS_COLUMNS,
    SCHEMA_CHANGES_COLUMNS,
    SCHEMAS_COLUMNS,
    Batch,
    BronzeEvent,
    ResumeState,
    ddl_columns,
    table_name,
)
from ingest.bronze.status import committed_position
from ingest.config import EngineSettings
from ingest.delta_log import delta_configuration
from ingest.errors import ConfigError
from ingest.sqlutil import qualified, quote_ident, quote_literal

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

STAGING_DIR = "_staging"  # <warehouse>/_staging/<source>/: Parquet files handed to the local engine
_SOURCE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_ARROW_TYPES = {"STRING": pa.string(), "BIGINT": pa.int64(), "BINARY": pa.binary(),
                "TIMESTAMP": pa.timestamp("us", tz="UTC"), "DOUBLE": pa.float64()}

# Delta table properties of every bronze table (docs/bronze.md, "The Delta log"). A continuous run commits
# every few seconds, and each checkpoint holds one add action per data file: stats only on the columns
# readers filter bronze by (batch_id, seq) and only in the checkpoint's struct form keep an add action
# small; a checkpoint every 100 commits instead of 10; log files older than LOG_RETENTION are removed once a
# newer checkpoint exists (remove_expired_log; Sail does not do it itself).
LOG_RETENTION_DAYS = 7
BRONZE_PROPERTIES: dict[str, str] = {
    "delta.checkpointInterval": "100",
    "delta.checkpoint.writeStatsAsJson": "false",
    "delta.logRetentionDuration": f"interval {LOG_RETENTION_DAYS} days",
}
STATS_COLUMNS = {"events": "batch_id,seq", "schemas": "batch_id", "schema_changes": "batch_id,seq",
                 "rejects": "batch_id,seq", "metrics": "batch_id"}
CLEANUP_EVERY = 100
_VERSIONED_LOG_FILE = re.compile(r"^(\d{20})\.(json|crc|checkpoint\..*parquet)$")

# kind -> (columns, partition column)
TABLES: dict[str, tuple[tuple[tuple[str, str], ...], str | None]] = {
    "events": (EVENTS_COLUMNS, "table_id"),
    "schemas": (SCHEMAS_COLUMNS, None),
    "schema_changes": (SCHEMA_CHANGES_COLUMNS, None),
    "rejects": (REJECTS_COLUMNS, None),
}
# written only by runs with metrics on; created by the first of them (BronzeWriter.write_metrics)
OPTIONAL_TABLES: dict[str, tuple[tuple[tuple[str, str], ...], str | None]] = {"metrics": (METRICS_COLUMNS, None)}


class _Same:
    """A column holding one value n times (source, batch_id, ingested_at): built by Arrow without a
    Python list (a list of datetimes costs a conversion per row)."""

    __slots__ = ("value", "n")

    def __init__(self, value: Any, n: int) -> None:
        self.value, self.n = value, n


def _column(values: Sequence[Any] | pa.Array | pa.ChunkedArray | _Same, arrow_type: pa.DataType
            ) -> pa.Array | pa.ChunkedArray:
    if isinstance(values, _Same):
        return pa.repeat(pa.scalar(values.value, arrow_type), values.n)
    if isinstance(values, pa.Array | pa.ChunkedArray):
        return values if values.type == arrow_type else values.cast(arrow_type)
    return pa.array(values, arrow_type)


def schema_id(canonical_schema: str) -> str:
    """Content id of a Kafka Connect schema: the first 32 hex digits of sha256 of its canonical JSON."""
    return hashlib.sha256(canonical_schema.encode("utf-8")).hexdigest()[:32]


def arrow_schema(columns: Sequence[tuple[str, str]]) -> pa.Schema:
    return pa.schema([pa.field(name, _ARROW_TYPES[sql_type]) for name, sql_type in columns])


def create_table_sql(settings: EngineSettings, name_sql: str, columns: Sequence[tuple[str, str]],
                     location: Path, partition_by: str | None = None, properties: dict[str, str] | None = None
                     ) -> str:
    """CREATE TABLE for a bronze table. The one engine difference: on Databricks tables are managed
    (Unity Catalog / metastore decides where); everywhere else they live at <warehouse>/bronze/<table>."""
    partition = f" PARTITIONED BY ({quote_ident(partition_by)})" if partition_by else ""
    sql = f"CREATE TABLE IF NOT EXISTS {name_sql} ({ddl_columns(columns)}) USING delta{partition}"
    if settings.tables_at_warehouse_paths:
        sql += f" LOCATION {quote_literal(str(location))}"
    if properties:
        sql += f" TBLPROPERTIES ({_properties_sql(properties)})"
    return sql


def _properties_sql(properties: dict[str, str]) -> str:
    return ", ".join(f"{quote_literal(k)} = {quote_literal(v)}" for k, v in properties.items())


def table_properties(kind: str) -> dict[str, str]:
    return {**BRONZE_PROPERTIES, "delta.dataSkippingStatsColumns": STATS_COLUMNS[kind]}


def remove_expired_log(location: Path, retention_seconds: float, now: float | None = None) -> int:
    """Delete the Delta log files of a local table that Delta's log retention lets go: every commit, checksum
    and checkpoint of a version below the newest checkpoint that is itself older than the retention (that
    checkpoint stays, so every version from it on can still be read). Returns the number of files removed."""
    log_dir = location / "_delta_log"
    if not log_dir.is_dir():
        return 0
    cutoff = (time.time() if now is None else now) - retention_seconds
    files = []
    for entry in os.scandir(log_dir):
        match = _VERSIONED_LOG_FILE.match(entry.name)
        if match:
            files.append((int(match.group(1)), match.group(2), entry))
    expired_checkpoints = [v for v, kind, e in files if kind.startswith("checkpoint") and e.stat().st_mtime <= cutoff]
    if not expired_checkpoints:
        return 0
    keep_from = max(expired_checkpoints)
    removed = 0
    for version, _, entry in files:
        if version < keep_from:
            Path(entry.path).unlink(missing_ok=True)
            removed += 1
    return removed


def _positions(events: list[BronzeEvent], batch_position: str | None) -> list[str | None]:
    """Each event's own position, else the batch's (see Batch.position)."""
    if batch_position is None:
        return [e.position for e in events]
    return [batch_position if e.position is None else e.position for e in events]


class BronzeWriter:
    def __init__(self, spark: SparkSession, settings: EngineSettings, source: str) -> None:
        if not _SOURCE_NAME.match(source):
            raise ConfigError(f"source name {source!r} is not valid for table names (letters, digits, underscore)")
        self.spark = spark
        self.settings = settings
        self.source = source
        self.tables = {kind: qualified(settings.catalog, BRONZE_SCHEMA, table_name(source, kind))
                       for kind in (*TABLES, *OPTIONAL_TABLES)}
        self._metrics_table_ready = False
        self._ensure_tables()
        self._load_state()
        self._events_commits = 0  # commits of S_events by this writer (expired log files are removed every
        # CLEANUP_EVERY of them, about once per checkpoint)
        if settings.writes_delta_itself:
            self._remove_staged_leftovers()

    # -- set-up ------------------------------------------------------------------------------------
    def location(self, kind: str) -> Path:
        return self.settings.warehouse / BRONZE_SCHEMA / table_name(self.source, kind)

    def _remove_staged_leftovers(self) -> None:
        staging = self._staging_dir()
        if staging.is_dir():
            for leftover in staging.glob("*.parquet"):
                leftover.unlink(missing_ok=True)

    def _ensure_tables(self) -> None:
        self.spark.sql(f"CREATE SCHEMA IF NOT EXISTS {qualified(self.settings.catalog, BRONZE_SCHEMA)}")
        for kind, (columns, partition_by) in TABLES.items():
            properties = table_properties(kind)
            self.spark.sql(create_table_sql(self.settings, self.tables[kind], columns, self.location(kind),
                                            partition_by, properties))
            current = delta_configuration(self.location(kind)) if self.settings.writes_delta_itself else None
            if current is not None and any(current.get(k) != v for k, v in properties.items()):
                # a table created before these properties existed (CREATE IF NOT EXISTS left it as it was)
                self.spark.sql(f"ALTER TABLE {self.tables[kind]} SET TBLPROPERTIES ({_properties_sql(properties)})")

    def _scalar(self, sql: str) -> Any:
        rows = self.spark.sql(sql).collect()
        return rows[0][0] if rows else None

    def _load_state(self) -> None:
        t = self.tables
        maxima = self.spark.sql(
            " UNION ALL ".join(f"SELECT {quote_literal(kind)} AS kind, max(batch_id) AS b FROM {t[kind]}"
                               for kind in TABLES)).collect()
        by_kind = {row["kind"]: row["b"] for row in maxima}
        self.last_events_batch: int = by_kind.get("events") or 0
        self.next_batch_id: int = max([b or 0 for b in by_kind.values()] + [0]) + 1
        self._schema_ids: set[str] = {row[0] for row in self.spark.sql(f"SELECT schema_id FROM {t['schemas']}")
                                      .collect()}
        self._ids: dict[str, str] = {}  # canonical schema JSON -> schema_id (cache)
        self._replayable: dict[str, Counter[str]] = {}
        for kind in ("schema_changes", "rejects"):
            rows = self.spark.sql(f"SELECT seq FROM {t[kind]} WHERE batch_id > {self.last_events_batch}").collect()
            self._replayable[kind] = Counter(row[0] for row in rows)

    # -- resume ------------------------------------------------------------------------------------
    def resume_state(self) -> ResumeState:
        """The position of the last committed batch of S_events (and the highest committed seq); with no event
        yet, the newest schema change's position (ResumeState.schema_position)."""
        if not self.last_events_batch:
            rows = self.spark.sql(f"SELECT position FROM {self.tables['schema_changes']} WHERE position IS NOT NULL "
                                  "ORDER BY batch_id DESC, seq DESC LIMIT 1").collect()
            return ResumeState(schema_position=json.loads(rows[0][0]) if rows else None,
                               landed_schemas=self.landed_schemas)
        events = self.tables["events"]
        last_seq = self._scalar(f"SELECT max(seq) FROM {events}")
        landed = ResumeState.from_row(last_seq, committed_position(self.spark, events, self.last_events_batch))
        return dataclasses.replace(landed, landed_schemas=self.landed_schemas)

    def landed_schemas(self) -> tuple[list[tuple[str, str, str | None, str]], list[tuple[str, str]]]:
        """(table_id, seq, key schema, value schema) of each table's newest change event with a value schema, and
        (seq, event JSON) of every schema change: what a source whose records may lack schemas knew before this
        run (ResumeState.landed_schemas)."""
        t = self.tables
        newest = self.spark.sql(
            f"SELECT e.table_id, e.seq, k.schema AS k, v.schema AS v FROM (SELECT table_id, max(seq) AS seq, "
            f"max_by(key_schema_id, seq) AS key_id, max_by(value_schema_id, seq) AS value_id FROM {t['events']} "
            f"WHERE value_schema_id IS NOT NULL AND op IS NOT NULL AND op <> 't' GROUP BY table_id) e "
            f"JOIN {t['schemas']} v ON v.schema_id = e.value_id LEFT JOIN {t['schemas']} k ON k.schema_id = e.key_id"
        ).collect()
        changes = self.spark.sql(f"SELECT seq, event FROM {t['schema_changes']} ORDER BY seq").collect()
        return ([(r["table_id"], r["seq"], r["k"], r["v"]) for r in newest],
                [(r["seq"], r["event"]) for r in changes if r["event"]])

    def discard_all(self) -> str:
        """Delete every row this source landed (one Delta commit per table; the tables stay); what was removed,
        as a phrase for the log."""
        counts = []
        for kind in ("events", "schema_changes", "rejects"):  # S_schemas: content-addressed, kept
            n = self._scalar(f"SELECT count(*) FROM {self.tables[kind]}") or 0
            if n:
                self.spark.sql(f"DELETE FROM {self.tables[kind]}").collect()
                counts.append(f"{n} {kind.replace('_', ' ')} rows")
        self._load_state()
        return ", ".join(counts) or "nothing"

    def schema_change_rows(self, with_positions: bool = False) -> list[tuple[str, ...]]:
        """(seq, event JSON) of every committed schema change, for connectors that rebuild their schema
        history from bronze before resuming (Debezium's schema history recovery); (seq, event JSON, position)
        `with_positions`."""
        columns = "seq, event, position" if with_positions else "seq, event"
        return [tuple(row) for row in
                self.spark.sql(f"SELECT {columns} FROM {self.tables['schema_changes']} ORDER BY seq").collect()]

    # -- landing -----------------------------------------------------------------------------------
    def write_metrics(self, batch_id: int, samples: list[tuple[str, str, str | None, float]]) -> None:
        """Append the run's metrics after a landed batch to S_metrics (one Delta commit; the table is created by
        the first call). `samples`: (context, attribute, table or None, value), RunMetrics.samples()."""
        if not self._metrics_table_ready:
            columns, partition_by = OPTIONAL_TABLES["metrics"]
            self.spark.sql(create_table_sql(self.settings, self.tables["metrics"], columns, self.location("metrics"),
                                            partition_by, table_properties("metrics")))
            self._metrics_table_ready = True
        n = len(samples)
        self._append("metrics", {"source": _Same(self.source, n), "batch_id": _Same(batch_id, n),
                                 "recorded_at": _Same(datetime.now(UTC), n), "context": [s[0] for s in samples],
                                 "attribute": [s[1] for s in samples], "table_id": [s[2] for s in samples],
                                 "value": [s[3] for s in samples]})

    @staticmethod
    def _table(kind: str, columns: dict[str, Sequence[Any] | pa.Array | pa.ChunkedArray | _Same]) -> pa.Table:
        cols = {**TABLES, **OPTIONAL_TABLES}[kind][0]
        return pa.Table.from_arrays([_column(columns[name], _ARROW_TYPES[sql_type]) for name, sql_type in cols],
                                    schema=arrow_schema(cols))

    def _write(self, kind: str, table: pa.Table) -> None:
        """Append rows to one bronze table in one Delta commit."""
        if self.settings.writes_delta_itself:
            self._write_staged(kind, table)
        else:
            self.spark.createDataFrame(table).write.format("delta").mode("append").saveAsTable(self.tables[kind])

    def _staging_dir(self) -> Path:
        return self.settings.warehouse / STAGING_DIR / self.source

    def _write_staged(self, kind: str, table: pa.Table) -> None:
        """The embedded engine shares this machine's disk: hand it the rows as a Parquet file and INSERT from
        it. About 3x faster than sending the same Arrow data over Spark Connect (see docs/bronze.md); the
        file is removed once the commit is done, and leftovers of a crashed run at the next start."""
        path = self._staging_dir() / f"{kind}-{uuid.uuid4().hex}.parquet"
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            pq.write_table(table, path, compression="snappy")
            columns = ", ".join(quote_ident(name) for name in table.column_names)
            self.spark.sql(f"INSERT INTO {self.tables[kind]} SELECT {columns} FROM parquet.{quote_ident(str(path))}")
        finally:
            path.unlink(missing_ok=True)

    def _append(self, kind: str, columns: dict[str, Sequence[Any] | _Same]) -> None:
        self._write(kind, self._table(kind, columns))

    def _skip_replayed(self, kind: str, rows: list[Any]) -> list[Any]:
        pending = self._replayable[kind]
        if not pending:
            return rows
        kept = []
        for row in rows:
            if pending.get(row.seq, 0) > 0:
                pending[row.seq] -= 1
            else:
                kept.append(row)
        return kept

    def write(self, batch: Batch) -> int | None:
        """Land one micro-batch; returns its batch_id (None for an empty batch)."""
        if len(batch) == 0:
            return None
        batch_id = self.next_batch_id
        now = datetime.now(UTC)
        events = batch.events

        # schema ids for every event, collecting schemas not registered yet
        ids, known = self._ids, self._schema_ids
        new_schemas: dict[str, tuple[str, str]] = {}  # schema_id -> (schema JSON, first seq)

        def sid(schema: str | None, seq: str) -> str | None:
            if schema is None:
                return None
            found = ids.get(schema)
            if found is None:
                found = ids[schema] = schema_id(schema)
            if found not in known and found not in new_schemas:
                new_schemas[found] = (schema, seq)
            return found

        # `seen` short-cuts sid() for schemas it already handled in this batch (they are interned str
        # objects, so the lookup compares pointers); sid() runs once per schema and batch, in event order.
        seen: dict[str, str] = {}
        seen_get = seen.get

        def first_sid(schema: str, seq: str) -> str:
            found = seen[schema] = sid(schema, seq)  # type: ignore[assignment]
            return found

        key_ids = [None if (s := e.key_schema) is None else (seen_get(s) or first_sid(s, e.seq)) for e in events]
        value_ids = [None if (s := e.value_schema) is None else (seen_get(s) or first_sid(s, e.seq))
                     for e in events]
        block_ids = []  # (key schema id, value schema id) of each block
        for block in batch.blocks:
            first = block.columns.column("seq")[0].as_py() if len(block) else ""
            block_ids.append((sid(block.key_schema, first), sid(block.value_schema, first)))

        if new_schemas:
            n = len(new_schemas)
            self._append("schemas", {
                "schema_id": list(new_schemas), "schema": [s for s, _ in new_schemas.values()],
                "first_seq": [q for _, q in new_schemas.values()], "batch_id": [batch_id] * n,
                "registered_at": [now] * n})
            known.update(new_schemas)

        changes = self._skip_replayed("schema_changes", batch.schema_changes)
        if changes:
            n = len(changes)
            self._append("schema_changes", {
                "source": [self.source] * n, "seq": [c.seq for c in changes], "ts_ms": [c.ts_ms for c in changes],
                "database_name": [c.database_name for c in changes], "schema_name": [c.schema_name for c in changes],
                "ddl": [c.ddl for c in changes], "table_changes": [c.table_changes for c in changes],
                "event": [c.event for c in changes], "position": [c.position for c in changes],
                "batch_id": [batch_id] * n, "ingested_at": [now] * n})

        rejects = self._skip_replayed("rejects", batch.rejects)
        if rejects:
            n = len(rejects)
            self._append("rejects", {
                "source": [self.source] * n, "seq": [r.seq for r in rejects], "stage": [r.stage for r in rejects],
                "error": [r.error for r in rejects], "raw": [bytes(r.raw) for r in rejects],
                "raw_text": [bytes(r.raw).decode("utf-8", "replace") for r in rejects],
                "position": [r.position for r in rejects], "batch_id": [batch_id] * n, "rejected_at": [now] * n})

        if events or batch.blocks:  # the one commit that makes the batch (and its position) visible
            parts = []
            if events:
                parts.append(self._table("events", {
                    "source": _Same(self.source, len(events)), "topic": [e.topic for e in events],
                    "table_id": [e.table_id for e in events], "op": [e.op for e in events],
                    "seq": [e.seq for e in events], "key": [e.key for e in events],
                    "value": [e.value for e in events], "key_schema_id": key_ids, "value_schema_id": value_ids,
                    "ts_ms": [e.ts_ms for e in events], "source_ts_ms": [e.source_ts_ms for e in events],
                    "txn_id": [e.txn_id for e in events], "snapshot": [e.snapshot for e in events],
                    "position": _positions(events, batch.position), "batch_id": _Same(batch_id, len(events)),
                    "ingested_at": _Same(now, len(events))}))
            for block, (key_id, value_id) in zip(batch.blocks, block_ids, strict=True):
                n = len(block)
                if n == 0:
                    continue
                columns: dict[str, Any] = {name: block.columns.column(name) for name, _ in EVENT_BLOCK_COLUMNS}
                if batch.position is not None and columns["position"].null_count:   # as _positions
                    columns["position"] = pc.fill_null(columns["position"], batch.position)
                columns.update({
                    "source": _Same(self.source, n), "key_schema_id": _Same(key_id, n),
                    "value_schema_id": _Same(value_id, n), "batch_id": _Same(batch_id, n),
                    "ingested_at": _Same(now, n)})
                parts.append(self._table("events", columns))
            self._write("events", parts[0] if len(parts) == 1 else pa.concat_tables(parts))
            self.last_events_batch = batch_id
            self._events_commits += 1
            if self.settings.writes_delta_itself and self._events_commits % CLEANUP_EVERY == 0:
                for kind in TABLES:
                    remove_expired_log(self.location(kind), LOG_RETENTION_DAYS * 86_400)
        self.next_batch_id = batch_id + 1
        return batch_id
