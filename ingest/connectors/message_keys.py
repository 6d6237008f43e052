"""Debezium's `message.key.columns`: the columns that make a table's message key instead of its primary key,
as `<table regex>:<column>,<column>;<table regex>:<column>...`, e.g.
`inventory.customers:pk1,pk2;(.*).purchaseorders:pk3,pk4`.

As Debezium's CustomKeyMapper: every `table:column` pair is one regular expression over `table.column`
(`schema.table.column` on PostgreSQL, `database.table.column` on MariaDB/MySQL), matched whole and ignoring
case; a table's key is, pair after pair, the columns (in table order) that the pair matches; a table no pair
matches keeps its primary key. Unlike Debezium, blanks around a table part are dropped (Debezium keeps them in
the expression, so `a.b:c; a.d:e` never matches `a.d`)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from ingest.errors import ConfigError

# one `table:columns` part, as Debezium validates it (CustomKeyMapper.MSG_KEY_COLUMNS_PATTERN)
_PART = re.compile(r"^\s*([^:]+):([^:,]+(,[^:,]+)*)\s*$")


class MessageKeyColumns:
    def __init__(self, patterns: Sequence[re.Pattern[str]] = ()) -> None:
        self.patterns = tuple(patterns)

    def __bool__(self) -> bool:
        return bool(self.patterns)

    @classmethod
    def parse(cls, text: str | None) -> MessageKeyColumns:
        if not text:
            return cls()
        patterns = []
        for part in text.split(";"):
            if not _PART.match(part):
                raise ConfigError(f"message.key.columns: {part.strip()!r} is not <table>:<column>[,<column>...]")
            table, columns = part.split(":", 1)
            for column in columns.split(","):
                expression = f"{table.strip()}.{column.strip()}"
                try:
                    patterns.append(re.compile(expression, re.IGNORECASE))
                except re.error as exc:
                    raise ConfigError(f"message.key.columns: {expression!r} is not a valid regular expression "
                                      f"({exc})") from None
        return cls(patterns)

    def for_table(self, qualified_table: str, columns: Sequence[str]) -> list[str] | None:
        """The key columns of a table whose columns are `columns` (table order); None: its primary key."""
        key = [c for p in self.patterns for c in columns if p.fullmatch(f"{qualified_table}.{c}")]
        return key or None
