"""Debezium include/exclude lists (compiled by the `regex-list` properties of config.py), anchored (they
must match the whole name), over `db`, `db.table` and `db.table.column`."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

SYSTEM_DATABASES = frozenset({"mysql", "information_schema", "performance_schema", "sys"})


def _matches(patterns: tuple[re.Pattern[str], ...], name: str) -> bool:
    return any(p.fullmatch(name) for p in patterns)


@dataclass(frozen=True)
class Filters:
    database_include: tuple[re.Pattern[str], ...] = ()
    database_exclude: tuple[re.Pattern[str], ...] = ()
    table_include: tuple[re.Pattern[str], ...] = ()
    table_exclude: tuple[re.Pattern[str], ...] = ()
    column_include: tuple[re.Pattern[str], ...] = ()
    column_exclude: tuple[re.Pattern[str], ...] = ()
    snapshot_include: tuple[re.Pattern[str], ...] = ()
    # table() per (db, table), asked for every binlog rows event (the patterns never change)
    _tables: dict[tuple[str, str], bool] = field(default_factory=dict, compare=False, repr=False)

    def database(self, db: str) -> bool:
        if db.lower() in SYSTEM_DATABASES:
            return False
        if self.database_include:
            return _matches(self.database_include, db)
        return not _matches(self.database_exclude, db)

    def table(self, db: str, table: str) -> bool:
        """Is db.table captured (database filter, then table filter)."""
        known = self._tables.get((db, table))
        if known is None:
            if len(self._tables) > 100_000:
                self._tables.clear()
            known = self._tables[(db, table)] = self._table(db, table)
        return known

    def _table(self, db: str, table: str) -> bool:
        if not self.database(db):
            return False
        name = f"{db}.{table}"
        if self.table_include:
            return _matches(self.table_include, name)
        return not _matches(self.table_exclude, name)

    def snapshot_table(self, db: str, table: str) -> bool:
        """Is the data of db.table read by the snapshot (`snapshot.include.collection.list`)."""
        if not self.table(db, table):
            return False
        return not self.snapshot_include or _matches(self.snapshot_include, f"{db}.{table}")

    def column(self, db: str, table: str, column: str) -> bool:
        name = f"{db}.{table}.{column}"
        if self.column_include:
            return _matches(self.column_include, name)
        return not _matches(self.column_exclude, name)
