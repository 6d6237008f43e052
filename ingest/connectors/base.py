"""What every source connector provides to the runner (modelled on Debezium: a snapshot source, a
streaming source, an offset context and an event dispatcher per connector).

The runner (ingest.runner) drives a connector like this::

    connector = registry.create(source_settings)      # validates properties, connects to nothing
    connector.validate()                              # connects; one clear error per prerequisite (check()),
                                                      # then set-up such as a publication
    resume = writer.resume_state()                    # read back from bronze (highest committed seq)
    for batch in connector.batches(resume, limits):   # snapshot (resumable by chunk), then streaming
        writer.write(batch)                           # one Delta commit to S_events per batch
        connector.acknowledge(batch)                  # e.g. PostgreSQL flush LSN, only after commit
        if stop condition: break
    connector.close()
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ingest.config import SourceSettings
from ingest.errors import LakecdcError

if TYPE_CHECKING:  # the batch types live in the bronze contract (ingest.bronze.contract)
    from ingest.bronze.contract import Batch, BatchLimits, ResumeState
    from ingest.connectors.progress import SnapshotProgress


class SourceConnector(ABC):
    """Base class of all connectors. Subclasses validate their Debezium properties in __init__ and
    raise ingest.errors.ConfigError for unknown or invalid ones, before anything connects."""

    connector_name: str = ""
    # Called with a table's id just before the snapshot starts reading its rows (tests run DDL there, to
    # race a RENAME or DROP with the snapshot at a known point).
    snapshot_table_hook: Callable[[str], None] | None = None
    # Set by a connector while its initial snapshot runs (read by the progress display of `lakecdc run`).
    snapshot_progress: SnapshotProgress | None = None

    # Connectors that keep a schema history of their own (MySQL, MariaDB: from the binlog's DDL) get the
    # committed schema changes back from bronze before they resume (restore_schema_history), with each row's
    # position when `schema_history_positions`.
    keeps_schema_history: bool = False
    schema_history_positions: bool = False

    def __init__(self, settings: SourceSettings, base_dir: Path | None = None) -> None:
        """`base_dir`: the configuration file's folder, against which relative paths resolve."""
        self.settings = settings
        self.base_dir = base_dir

    @property
    def source_name(self) -> str:
        return self.settings.name

    def check(self) -> str:
        """Connect and check every prerequisite `run` checks, changing nothing (`lakecdc doctor`); raise
        LakecdcError with one clear line on the first problem, else return one line saying what holds."""
        return f"{self.connector_name or self.settings.connector} properties are valid"

    def validate(self) -> None:
        """Before `run`: check() and whatever set-up the source needs (e.g. a PostgreSQL publication)."""
        self.check()

    @abstractmethod
    def batches(self, resume: ResumeState, limits: BatchLimits) -> Iterator[Batch]:
        """Yield micro-batches in seq order, starting after `resume`."""

    def release(self, missing_ok: bool = False) -> str:
        """`lakecdc source drop-slot` / `reset`: remove what this source holds on the server (PostgreSQL: its
        replication slot), so that the next run starts over with a new snapshot; one line saying what was done.
        Nothing to remove is an error unless `missing_ok`."""
        what = f"{self.connector_name or self.settings.connector}: this source holds nothing on the server"
        if missing_ok:
            return what
        raise LakecdcError(f"{what} (no replication slot)")

    def open_query_connection(self) -> Any:
        """A plain DB-API connection to the source database, for quality's `source_values` check (the caller
        closes it); connectors without a database to query refuse."""
        raise LakecdcError(f"{self.connector_name or self.settings.connector}: no source database to query")

    def source_lag(self, landed: ResumeState) -> str | None:
        """One line for `lakecdc status`: how far the committed position (`landed`, bronze's) is behind the
        source (connects)."""
        return None

    def restore_schema_history(self, changes: list[tuple[str, ...]]) -> None:
        """(seq, schema change event JSON) rows of bronze S_schema_changes, given back before resuming when
        `keeps_schema_history` ((seq, event JSON, position) when `schema_history_positions`)."""
        return None

    def restart_from_scratch(self, resume: ResumeState) -> str | None:
        """Why this source cannot continue from `resume` and must start over (the runner then removes what
        bronze holds of it), or None. Debezium restarts an unfinished initial snapshot from its beginning: the
        rows of the unfinished one would stay in bronze as duplicates and as rows deleted since."""
        return None

    def send_signal(self, signal_type: str, data: dict[str, Any]) -> str:
        """Write a Debezium signal for the running connector (`lakecdc signal`); returns its id."""
        raise LakecdcError(f"sources.{self.source_name}: the {self.connector_name} connector takes no signals yet "
                           "(PostgreSQL, MariaDB and MySQL sources do)")

    def acknowledge(self, batch: Batch) -> None:
        """Called after the batch is committed to bronze (e.g. confirm the flush LSN)."""
        return None

    def close(self) -> None:
        """Release connections."""
        return None
