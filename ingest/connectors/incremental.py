"""Incremental snapshots (seeds: Debezium's DBLog-style incremental snapshot), the part every connector shares.

A table is read in chunks in key order while streaming goes on. For each chunk the connector writes an open
watermark to the signalling table, reads the chunk, writes a close watermark. Both watermarks come back through the
change stream: between them, a streamed change of a key of the chunk removes that row from the chunk (the stream
carries the newer state); at the close watermark the rows left are emitted as read events (`op` "r", source
`snapshot` "incremental") at the close watermark's position, so a row is never rolled back to an older state.

The state (tables left, last key read, the table's max key, additional conditions, paused) travels in the position
of every event, so a run that stops resumes the snapshot at the chunk after the last completed one (a chunk whose
rows did not all land is read again: its rows may land twice, each at a consistent position). Keys are the key
columns' values as text, in the connector's own text form."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any

Key = tuple[str | None, ...]


@dataclass
class ChunkWindow:
    """One chunk between its watermarks: `rows` (key -> the row's values) shrink while the window is open."""

    chunk_id: str
    table: str
    rows: dict[Key, list[Any]]
    last_key: list[str | None] | None   # the key of the chunk's last row read: the next chunk starts after it
    full: bool                          # as many rows as the chunk size: the table may have more
    opened: bool = False


@dataclass
class IncrementalSnapshot:
    """The incremental snapshot of one source: tables left (the current one first) and where its chunks are."""

    snapshot_id: str | None = None
    tables: list[str] = field(default_factory=list)
    conditions: dict[str, str] = field(default_factory=dict)
    last_key: list[str | None] | None = None
    max_key: list[str | None] | None = None
    max_key_read: bool = False
    paused: bool = False
    window: ChunkWindow | None = None

    @classmethod
    def from_state(cls, state: dict[str, Any] | None) -> IncrementalSnapshot:
        if not state:
            return cls()
        return cls(state.get("id"), list(state.get("tables") or []), dict(state.get("conditions") or {}),
                   state.get("last_key"), state.get("max_key"), bool(state.get("max_key_read")),
                   bool(state.get("paused")))

    def state(self) -> dict[str, Any] | None:
        """What the position keeps (None when no incremental snapshot is under way)."""
        if not self.tables:
            return None
        return {"id": self.snapshot_id, "tables": self.tables, "conditions": self.conditions,
                "last_key": self.last_key, "max_key": self.max_key, "max_key_read": self.max_key_read,
                "paused": self.paused}

    @property
    def active(self) -> bool:
        return bool(self.tables)

    @property
    def current(self) -> str | None:
        return self.tables[0] if self.tables else None

    def wants_chunk(self) -> bool:
        return bool(self.tables) and not self.paused and self.window is None

    # -- signals -------------------------------------------------------------------------------------------
    def start(self, tables: list[str], conditions: dict[str, str]) -> list[str]:
        """Add tables (in the given order; one already queued stays where it is); returns those added."""
        if not self.tables:
            self.snapshot_id = str(uuid.uuid4())
        added = [t for t in dict.fromkeys(tables) if t not in self.tables]
        self.tables.extend(added)
        self.conditions.update({t: c for t, c in conditions.items() if t in self.tables})
        return added

    def stop(self, tables: list[str] | None) -> list[str]:
        """Remove the given tables (all when None); returns those removed."""
        removed = list(self.tables) if tables is None else [t for t in self.tables if t in tables]
        if self.current in removed:
            self.window, self.last_key, self.max_key, self.max_key_read = None, None, None, False
        self.tables = [t for t in self.tables if t not in removed]
        for table in removed:
            self.conditions.pop(table, None)
        if not self.tables:
            self.snapshot_id = None
        return removed

    # -- the current table ---------------------------------------------------------------------------------
    def set_max_key(self, key: list[str | None] | None) -> None:
        self.max_key, self.max_key_read = key, True

    def finish_table(self) -> str:
        """The current table is read (or empty, or gone): on to the next."""
        done = self.tables.pop(0)
        self.conditions.pop(done, None)
        self.last_key, self.max_key, self.max_key_read, self.window = None, None, False, None
        if not self.tables:
            self.snapshot_id = None
        return done

    # -- the window ----------------------------------------------------------------------------------------
    def begin_chunk(self, chunk_id: str, table: str, rows: list[tuple[Key, list[Any]]], size: int) -> ChunkWindow:
        """The chunk just read (after writing its open watermark, before its close one), in key order."""
        self.window = ChunkWindow(chunk_id, table, dict(rows),
                                  list(rows[-1][0]) if rows else self.last_key, len(rows) >= size)
        return self.window

    def watermark_opened(self, chunk_id: str) -> None:
        if self.window is not None and self.window.chunk_id == chunk_id:
            self.window.opened = True

    def streamed(self, table: str, key: Key | None) -> None:
        """A streamed change of `key` in `table`: the stream carries a newer state of that row than the chunk."""
        window = self.window
        if window is not None and window.opened and key is not None and window.table == table:
            window.rows.pop(key, None)

    def watermark_closed(self, chunk_id: str) -> ChunkWindow | None:
        """The chunk whose close watermark this is (its rows left are to be emitted), or None for a watermark
        of no chunk of this run (written by a run that stopped: that chunk is read again)."""
        window = self.window
        if window is None or window.chunk_id != chunk_id or not window.opened:
            return None
        return window

    def chunk_done(self, window: ChunkWindow) -> bool:
        """After a chunk's rows were emitted: the next chunk starts after its last key; True when the table is
        read to its max key."""
        self.window = None
        if not window.full or window.last_key is None or window.last_key == self.max_key:
            self.finish_table()
            return True
        self.last_key = window.last_key
        return False
