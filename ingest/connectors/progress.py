"""How far a connector's initial snapshot has read, for `lakecdc run`'s progress display: the captured tables in
snapshot order with the server's row estimates, the table being read and the rows read so far. Estimates come
from the server's statistics (PostgreSQL pg_class.reltuples, MySQL/MariaDB information_schema.TABLES.TABLE_ROWS)
and can be off, so totals are shown as "~" and the percentage never reaches 100 before the snapshot ends."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass
class SnapshotProgress:
    tables: list[tuple[str, int | None]]  # (table id, estimated rows; None when the server does not know)
    clock: Callable[[], float] = time.monotonic
    began: float = field(default=0.0)
    current: int = -1       # index into `tables` of the table being read
    rows_before: int = 0    # rows read in this run of the tables before the current one
    table_rows: int = 0     # rows read of the current table
    finished: bool = False

    def __post_init__(self) -> None:
        self.began = self.clock()

    def start_table(self, table_id: str) -> None:
        self.rows_before += self.table_rows
        self.table_rows = 0
        self.current = next((i for i, (name, _) in enumerate(self.tables) if name == table_id), self.current)

    def add_rows(self, count: int) -> None:
        self.table_rows += count

    def finish(self) -> None:
        self.rows_before += self.table_rows
        self.table_rows = 0
        self.finished = True

    @property
    def rows_read(self) -> int:
        return self.rows_before + self.table_rows

    def rows_left(self) -> int | None:
        """Estimated rows still to read (None when no table of the rest has an estimate)."""
        if self.current < 0:
            return None
        rest = self.tables[self.current:]
        if all(estimate is None for _, estimate in rest):
            return None
        current_estimate = rest[0][1] or 0
        return max(0, current_estimate - self.table_rows) + sum(estimate or 0 for _, estimate in rest[1:])

    def describe(self) -> str:
        """One line: 'snapshot table 2/5 db.orders: 1,200 rows read of ~2,000 (60%), ETA 0:00:12'."""
        if self.finished:
            return f"snapshot done: {self.rows_read:,} rows of {len(self.tables)} tables"
        if self.current < 0:
            return f"snapshot of {len(self.tables)} tables starting"
        line = (f"snapshot table {self.current + 1}/{len(self.tables)} {self.tables[self.current][0]}: "
                f"{self.rows_read:,} rows read")
        left = self.rows_left()
        if left is None:
            return line
        total = self.rows_read + left
        # an estimate below what was read already: the rest is unknown, never "100%" before the end
        percent = min(99, int(100 * self.rows_read / total)) if total else 0
        line += f" of ~{total:,} ({percent}%)"
        elapsed = self.clock() - self.began
        if self.rows_read and elapsed > 0 and left:
            seconds = int(left / (self.rows_read / elapsed))
            line += f", ETA {seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"
        return line
