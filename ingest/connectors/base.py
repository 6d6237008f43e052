"""What every source connector provides to the runner (modelled on Debezium: a snapshot source, a
streaming source, an offset context and an event dispatcher per connector).

The runner (ingest.runner) drives a connector like this::

    connector = registry.create(source_settings)      # validates properties, connects to nothing
    connector.validate()                              # connects; one clear error per prerequisite
    resume = writer.resume_state()                    # read back from bronze (highest committed seq)
    for batch in connector.batches(resume, limits):   # snapshot (resumable by chunk), then streaming
        writer.write(batch)                           # one Delta commit to S_events per batch
        connector.acknowledge(batch)                  # e.g. PostgreSQL flush LSN, only after commit
        if stop condition: break
    connector.close()
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from ingest.bronze.contract import BronzeEvent, BronzeEventBlock, BronzeReject, BronzeSchemaChange
from ingest.config import SourceSettings


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

    def __len__(self) -> int:
        return self.event_count + len(self.schema_changes) + len(self.rejects)

    @property
    def event_count(self) -> int:
        return len(self.events) + sum(len(b) for b in self.blocks)

    def max_seq(self) -> str | None:
        seqs = [e.seq for e in self.events] + [s for b in self.blocks if (s := b.max_seq()) is not None]
        return max(seqs) if seqs else None

    def all_events(self) -> list[BronzeEvent]:
        """`events` and the rows of `blocks` as one list in seq order."""
        if not self.blocks:
            return list(self.events)
        return sorted(self.events + [e for b in self.blocks for e in b.events()], key=lambda e: e.seq)


class SourceConnector(ABC):
    """Base class of all connectors. Subclasses validate their Debezium properties in __init__ and
    raise ingest.errors.ConfigError for unknown or invalid ones, before anything connects."""

    connector_name: str = ""
    # Called with a table's id just before the snapshot starts reading its rows (tests run DDL there, to
    # race a RENAME or DROP with the snapshot at a known point).
    snapshot_table_hook: Callable[[str], None] | None = None

    def __init__(self, settings: SourceSettings) -> None:
        self.settings = settings

    @property
    def source_name(self) -> str:
        return self.settings.name

    def validate(self) -> None:
        """Connect and check prerequisites; raise LakecdcError with one clear line per problem."""
        return None

    @abstractmethod
    def batches(self, resume: ResumeState, limits: BatchLimits) -> Iterator[Batch]:
        """Yield micro-batches in seq order, starting after `resume`."""

    def source_lag(self) -> str | None:
        """One line for `lakecdc status`: how far the committed position is behind the source (connects)."""
        return None

    def acknowledge(self, batch: Batch) -> None:
        """Called after the batch is committed to bronze (e.g. confirm the flush LSN)."""
        return None

    def close(self) -> None:
        """Release connections."""
        return None
