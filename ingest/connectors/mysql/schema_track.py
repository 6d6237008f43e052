"""The connector's in-memory table model (Debezium's "database schema"), kept by ingest.schema's DDL
interpreter: SHOW CREATE TABLE during the snapshot, query events while streaming, and the tableChanges of
earlier schema change events when resuming."""

from __future__ import annotations

from typing import Any

from ingest.errors import LakecdcError
from ingest.schema.model import Table, TableId


def _key(table_id: TableId) -> str:
    return f"{table_id.database}.{table_id.table}"


class SchemaTracker:
    def __init__(self, flavor: str) -> None:
        self.dialect = flavor
        self.last_tables: list[str] = []      # db.table keys touched by the last statement (old and new names)
        self.last_truncated: list[str] = []   # db.table keys truncated by the last statement
        self.reset()

    def reset(self) -> None:
        self._state: Any = None

    @property
    def state(self) -> Any:
        if self._state is None:
            from ingest.schema.interpreter import SchemaState

            self._state = SchemaState()
        return self._state

    @property
    def tables(self) -> dict[str, Table]:
        return {_key(t.id): t for t in self.state.tables.values()}

    def table(self, db: str, table: str) -> Table | None:
        return self.state.tables.get(TableId(db, None, table))

    def apply(self, ddl: str, default_db: str | None) -> list[dict[str, Any]]:
        """Apply one statement; return Debezium tableChanges entries for its structural changes. Raises
        LakecdcError when the statement cannot be interpreted."""
        from ingest.schema.model import DROP, ERROR, TRUNCATE

        changes = self.state.apply(ddl, self.dialect, default_db)
        self.last_tables, self.last_truncated = [], []
        out = []
        for change in changes:
            if change.kind == ERROR:
                raise LakecdcError(f"DDL not understood: {change.detail}")
            if change.table_id is not None:
                self.last_tables.append(_key(change.table_id))
            if change.previous_id is not None:
                self.last_tables.append(_key(change.previous_id))
            if change.kind == TRUNCATE and change.table_id is not None:
                self.last_truncated.append(_key(change.table_id))
            entry = change.to_table_change()
            if entry is not None:
                out.append(entry)
            elif change.kind == DROP and change.table_id is not None:
                out.append({"type": DROP, "id": change.table_id.debezium_id(), "table": None})
        return out

    def apply_event(self, event: dict[str, Any]) -> None:
        """Rebuild tables from a schema change event's tableChanges (no DDL parsing: the event holds the whole
        structure of every changed table)."""
        self.state.apply_table_changes(list(event.get("tableChanges") or []), self.dialect, event.get("ddl") or "")
