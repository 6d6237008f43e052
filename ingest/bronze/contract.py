"""The bronze contract (docs/bronze.md): table names and column types.

Per source S, in schema `bronze`:
  S_events           one row per change event (all captured tables of S), partitioned by table_id
  S_schemas          schema registry: schema_id -> Kafka Connect schema JSON
  S_schema_changes   one row per schema change event
  S_schema_history   parsed history, one row per table version (written by ingest.schema)
  S_rejects          anything that could not be decoded or parsed, with the raw input and the error

`seq` is the ordering key: a fixed-width, byte-wise sortable string, unique per event within a source,
increasing in source commit order (see `encode_seq`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

BRONZE_SCHEMA = "bronze"

# Spark SQL column lists (name type) in table order. JSON payloads are strings.
EVENTS_COLUMNS: tuple[tuple[str, str], ...] = (
    ("source", "STRING"),           # source (connector) name S
    ("topic", "STRING"),            # Debezium topic, e.g. inventory.public.customers
    ("table_id", "STRING"),         # db.schema.table as the source names it (MySQL: db.table)
    ("op", "STRING"),               # c u d r t; NULL for a tombstone
    ("seq", "STRING"),              # ordering key, see encode_seq
    ("key", "STRING"),              # key payload JSON
    ("value", "STRING"),            # value payload JSON (the envelope); NULL for a tombstone
    ("key_schema_id", "STRING"),    # -> S_schemas.schema_id
    ("value_schema_id", "STRING"),  # -> S_schemas.schema_id
    ("ts_ms", "BIGINT"),            # envelope ts_ms (when the connector processed the event)
    ("source_ts_ms", "BIGINT"),     # source.ts_ms (when the change was made in the database)
    ("txn_id", "STRING"),           # source transaction id, when known
    ("snapshot", "STRING"),         # source.snapshot: true, first, last, incremental, false ...
    ("position", "STRING"),         # connector offset JSON after this event (resume information)
    ("batch_id", "BIGINT"),         # micro-batch that landed the row (one Delta commit)
    ("ingested_at", "TIMESTAMP"),
)

SCHEMAS_COLUMNS: tuple[tuple[str, str], ...] = (
    ("schema_id", "STRING"),        # hex sha256 prefix of the canonical schema JSON
    ("schema", "STRING"),           # Kafka Connect schema JSON
    ("first_seq", "STRING"),        # seq of the first event that used it
    ("batch_id", "BIGINT"),
    ("registered_at", "TIMESTAMP"),
)

SCHEMA_CHANGES_COLUMNS: tuple[tuple[str, str], ...] = (
    ("source", "STRING"),
    ("seq", "STRING"),
    ("ts_ms", "BIGINT"),
    ("database_name", "STRING"),
    ("schema_name", "STRING"),
    ("ddl", "STRING"),
    ("table_changes", "STRING"),    # JSON array: Debezium tableChanges
    ("event", "STRING"),            # the full schema change event value payload JSON
    ("position", "STRING"),
    ("batch_id", "BIGINT"),
    ("ingested_at", "TIMESTAMP"),
)

# S_metrics (written only by runs with metrics on: `lakecdc run --metrics-port`): Debezium's metrics of the run after
# each landed batch, one row per figure (ingest/metrics.py), for charts and alerts on the warehouse side
METRICS_COLUMNS: tuple[tuple[str, str], ...] = (
    ("source", "STRING"),
    ("batch_id", "BIGINT"),         # the landed batch the figures were taken after
    ("recorded_at", "TIMESTAMP"),
    ("context", "STRING"),          # snapshot | streaming | schema-history | bronze
    ("attribute", "STRING"),        # Debezium's attribute name, e.g. MilliSecondsBehindSource
    ("table_id", "STRING"),         # RowsScanned's table; NULL otherwise
    ("value", "DOUBLE"),
)

REJECTS_COLUMNS: tuple[tuple[str, str], ...] = (
    ("source", "STRING"),
    ("seq", "STRING"),              # position-derived ordering key when known
    ("stage", "STRING"),            # decode | parse | convert | schema ...
    ("error", "STRING"),
    ("raw", "BINARY"),              # the raw input bytes
    ("raw_text", "STRING"),         # the same, decoded as UTF-8 with replacement (for humans)
    ("position", "STRING"),
    ("batch_id", "BIGINT"),
    ("rejected_at", "TIMESTAMP"),
)


# The per-event columns a connector fills (the writer adds source, schema ids, batch_id and ingested_at).
EVENT_BLOCK_COLUMNS: tuple[tuple[str, str], ...] = tuple(
    (name, sql_type) for name, sql_type in EVENTS_COLUMNS
    if name not in ("source", "key_schema_id", "value_schema_id", "batch_id", "ingested_at"))


def table_name(source: str, kind: str) -> str:
    """bronze table name for a source: kind is events | schemas | schema_changes | schema_history | rejects."""
    return f"{source}_{kind}"


def ddl_columns(columns: Sequence[tuple[str, str]]) -> str:
    return ", ".join(f"`{name}` {sql_type}" for name, sql_type in columns)


def encode_seq(parts: Sequence[int], widths: Sequence[int]) -> str:
    """Fixed-width lowercase hex, components joined with '-': byte-wise order equals numeric order."""
    if len(parts) != len(widths):
        raise ValueError("encode_seq: one width per part")
    out = []
    for part, width in zip(parts, widths, strict=True):
        if part < 0 or part >= 16**width:
            raise ValueError(f"encode_seq: {part} does not fit in {width} hex digits")
        out.append(f"{part:0{width}x}")
    return "-".join(out)


@dataclass(slots=True)  # not frozen: construction is on the hot path
class BronzeEvent:
    """One row of S_events before landing (batch_id and ingested_at are set by the writer), plus the
    schemas it references, so the writer can register them."""

    topic: str
    table_id: str
    op: str | None
    seq: str
    key: str | None
    value: str | None
    key_schema: str | None      # canonical JSON of the key schema, or None when schemas are off
    value_schema: str | None
    ts_ms: int | None
    source_ts_ms: int | None
    txn_id: str | None
    snapshot: str | None
    position: str | None = None  # a connector may set it after construction, when its batch closes


@dataclass(slots=True)  # not frozen: construction is on the hot path
class BronzeSchemaChange:
    seq: str
    ts_ms: int | None
    database_name: str | None
    schema_name: str | None
    ddl: str | None
    table_changes: str | None   # JSON array
    event: str                  # full value payload JSON
    position: str | None


@dataclass(slots=True)  # not frozen: construction is on the hot path
class BronzeReject:
    seq: str | None
    stage: str
    error: str
    raw: bytes
    position: str | None


@dataclass(slots=True)
class BronzeEventBlock:
    """Events of one table version in columnar form, for bulk paths (snapshots, the embedded engine): `columns` is
    an Arrow table with the columns of EVENT_BLOCK_COLUMNS in that order (Arrow types as the writer maps them), and
    every row uses `key_schema` / `value_schema`. Lands exactly like the same rows as BronzeEvent objects (a null
    `position` included: the batch's)."""

    columns: pa.Table
    key_schema: str | None
    value_schema: str | None

    def __len__(self) -> int:
        return self.columns.num_rows

    def max_seq(self) -> str | None:
        return pc.max(self.columns.column("seq")).as_py() if self.columns.num_rows else None

    def events(self) -> list[BronzeEvent]:
        """The rows as BronzeEvent objects (for tests and small consumers; the writer never needs this)."""
        return [BronzeEvent(key_schema=None if row["key"] is None else self.key_schema,
                            value_schema=None if row["value"] is None else self.value_schema, **row)
                for row in self.columns.to_pylist()]


# ---------------------------------------------------------------- what connectors hand to the writer
@dataclass(frozen=True)
class BatchLimits:
    """A micro-batch closes when it holds `max_events` events or is `max_seconds` old."""

    max_events: int = 10_000
    max_seconds: float = 5.0


@dataclass(frozen=True)
class ResumeState:
    """Where to continue, read back from bronze: the highest committed seq and its connector position."""

    last_seq: str | None = None
    position: dict[str, Any] | None = None
    # With no event landed yet: the position of the newest batch of schema changes (a snapshot that read no row
    # yet, e.g. snapshot.mode no_data on quiet tables), for connectors whose schema changes carry one
    schema_position: dict[str, Any] | None = None
    # What bronze holds for sources whose records may lack schemas, read only when asked: ([(table_id, seq, key
    # schema JSON, value schema JSON)] of each table's newest event with a schema, [(seq, event JSON)] of the
    # schema changes) (connectors/debezium_json/schema_resolver.py)
    landed_schemas: Callable[[], tuple[list[tuple[str, str, str | None, str]], list[tuple[str, str]]]] | None = \
        field(default=None, compare=False, repr=False)

    @classmethod
    def from_row(cls, seq: str | None, position_json: str | None) -> ResumeState:
        return cls(last_seq=seq, position=json.loads(position_json) if position_json else None)


@dataclass
class Batch:
    events: list[BronzeEvent] = field(default_factory=list)
    schema_changes: list[BronzeSchemaChange] = field(default_factory=list)
    rejects: list[BronzeReject] = field(default_factory=list)
    caught_up: bool = False  # True when the source had nothing more to give at the time of this batch
    ack: Any = None          # connector-specific token passed back to acknowledge()
    blocks: list[BronzeEventBlock] = field(default_factory=list)  # more events, in columnar form
    # Where the source continues after this batch: events and schema changes without a position of their own
    # land with it (when a connector's hand-overs are merged, the last one's), so the last batch's rows say it.
    position: str | None = None

    def __len__(self) -> int:   # asked after every event by streaming connectors
        if not self.blocks:
            return len(self.events) + len(self.schema_changes) + len(self.rejects)
        return self.event_count + len(self.schema_changes) + len(self.rejects)

    @property
    def event_count(self) -> int:
        if not self.blocks:
            return len(self.events)
        return len(self.events) + sum(len(b) for b in self.blocks)

    def max_seq(self) -> str | None:
        seqs = [e.seq for e in self.events] + [s for b in self.blocks if (s := b.max_seq()) is not None]
        return max(seqs) if seqs else None

    def all_events(self) -> list[BronzeEvent]:
        """`events` and the rows of `blocks` as one list in seq order."""
        if not self.blocks:
            return list(self.events)
        return sorted(self.events + [e for b in self.blocks for e in b.events()], key=lambda e: e.seq)
