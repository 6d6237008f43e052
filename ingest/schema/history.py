"""Schema history rows: replay schema change records (S_schema_changes rows) in seq order into
S_schema_history rows (one per table version) and S_rejects rows (one per unparseable statement).

Pure Python (no Spark): ingest.schema.store reads and writes the Delta tables.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ingest.bronze.contract import BronzeReject
from ingest.errors import LakecdcError
from ingest.schema.interpreter import SchemaState
from ingest.schema.model import DROP, ERROR, Change, Table

# S_schema_history columns (Spark SQL types). `columns` and `primary_key` are JSON strings (Sail-safe); each
# element of `columns` is Column.to_history(): name, position, source_type, type_name, jdbc_type, length, scale,
# nullable, has_default, default, auto_increment, generated, charset, enum_values, comment, key, spark_type.
HISTORY_COLUMNS: tuple[tuple[str, str], ...] = (
    ("source", "STRING"),
    ("table_id", "STRING"),          # db.table (MySQL/MariaDB) or db.schema.table; NULL for an unattributed error
    ("database_name", "STRING"),
    ("schema_name", "STRING"),
    ("table_name", "STRING"),
    ("version", "INT"),              # 1, 2, ... per table_id (a DROP is a version too)
    ("valid_from_seq", "STRING"),    # seq of the schema change that produced this version
    ("statement_index", "INT"),      # order of the change within its schema change record
    ("change_kind", "STRING"),       # CREATE | ALTER | DROP | ERROR
    ("previous_table_id", "STRING"),  # set by a rename
    ("columns", "STRING"),           # JSON array, see above
    ("primary_key", "STRING"),       # JSON array of column names
    ("spark_schema", "STRING"),      # "`id` INT, `name` STRING"
    ("table_change", "STRING"),      # Debezium tableChanges entry JSON
    ("ddl", "STRING"),               # the statement (or the record's DDL when built from tableChanges)
    ("parse_status", "STRING"),      # ok | mismatch (tableChanges used, DDL parse disagrees) | error
    ("parse_error", "STRING"),
    ("state_source", "STRING"),      # ddl | table_changes
)

SKIP_UNPARSEABLE_PROPERTY = "schema.history.internal.skip.unparseable.ddl"


@dataclass(frozen=True)
class SchemaChangeRecord:
    """The S_schema_changes fields the history needs."""

    seq: str
    ddl: str | None
    database_name: str | None = None
    schema_name: str | None = None
    table_changes: str | None = None   # JSON array (Debezium tableChanges)
    position: str | None = None


class UnparseableDdl(LakecdcError):
    """A statement could not be parsed and the source is configured to stop on it."""


def dialect_for_connector(connector: str) -> str:
    mapping = {"mysql": "mysql", "mariadb": "mariadb", "postgresql": "postgres", "postgres": "postgres",
               "oracle": "oracle", "sqlserver": "tsql", "tsql": "tsql"}
    if connector not in mapping:
        raise LakecdcError(f"connector {connector!r} has no DDL schema history (mysql, mariadb, postgresql, "
                           "oracle, sqlserver)")
    return mapping[connector]


def _table_row(source: str, seq: str, index: int, change: Change, status: str, error: str | None,
               state_source: str, ddl: str) -> dict[str, Any]:
    table = change.table
    assert table is not None and change.table_id is not None
    return {
        "source": source, "table_id": str(change.table_id), "database_name": change.table_id.database,
        "schema_name": change.table_id.schema, "table_name": change.table_id.table, "version": table.version,
        "valid_from_seq": seq, "statement_index": index, "change_kind": change.kind,
        "previous_table_id": str(change.previous_id) if change.previous_id else None,
        "columns": json.dumps([c.to_history(table.primary_key) for c in table.columns]),
        "primary_key": json.dumps(table.primary_key), "spark_schema": table.spark_schema(),
        "table_change": json.dumps(change.to_table_change()), "ddl": ddl, "parse_status": status,
        "parse_error": error, "state_source": state_source,
    }


def _error_row(source: str, seq: str, index: int, change: Change, state: SchemaState) -> dict[str, Any]:
    """An ERROR change: the table (when known) keeps its current version; the row flags it."""
    table: Table | None = state.tables.get(change.table_id) if change.table_id else None
    return {
        "source": source, "table_id": str(change.table_id) if change.table_id else None,
        "database_name": change.table_id.database if change.table_id else None,
        "schema_name": change.table_id.schema if change.table_id else None,
        "table_name": change.table_id.table if change.table_id else None,
        "version": table.version if table else 0, "valid_from_seq": seq, "statement_index": index,
        "change_kind": ERROR, "previous_table_id": None,
        "columns": json.dumps([c.to_history(table.primary_key) for c in table.columns]) if table else None,
        "primary_key": json.dumps(table.primary_key) if table else None,
        "spark_schema": table.spark_schema() if table else None, "table_change": None, "ddl": change.statement,
        "parse_status": "error", "parse_error": change.detail, "state_source": "ddl",
    }


def build_history(records: Iterable[SchemaChangeRecord], dialect: str, *, source: str,
                  server_charset: str | None = None, default_schema: str | None = None,
                  skip_unparseable: bool = True,
                  state: SchemaState | None = None) -> tuple[list[dict[str, Any]], list[BronzeReject], SchemaState]:
    """Replay records in seq order. Returns (history rows, rejects, final state)."""
    state = state or SchemaState(server_charset=server_charset, default_schema=default_schema)
    rows: list[dict[str, Any]] = []
    rejects: list[BronzeReject] = []
    for record in sorted(records, key=lambda r: r.seq):
        entries = json.loads(record.table_changes) if record.table_changes else None
        ddl = record.ddl or ""
        if entries:
            scratch = copy.deepcopy(state)
            parsed = scratch.apply(ddl, dialect, record.database_name, default_schema=record.schema_name) \
                if ddl.strip() else []
            changes = state.apply_table_changes(entries, dialect, statement=ddl, default_database=record.database_name)
            mismatch = _cross_check(parsed, changes) if ddl.strip() else None
            _carry_missing_values(parsed, changes)
            for i, change in enumerate(_with_rename_drops(state, changes)):
                rows.append(_table_row(source, record.seq, i, change, "mismatch" if mismatch else "ok", mismatch,
                                       "table_changes", ddl))
            continue
        if not ddl.strip():
            continue
        for i, change in enumerate(_with_rename_drops(state, state.apply(ddl, dialect, record.database_name,
                                                                         default_schema=record.schema_name))):
            if change.kind == ERROR:
                if not skip_unparseable:
                    raise UnparseableDdl(f"schema change at seq {record.seq}: cannot parse DDL: {change.detail} "
                                         f"(set {SKIP_UNPARSEABLE_PROPERTY}: true to record it and continue)")
                rows.append(_error_row(source, record.seq, i, change, state))
                raw = change.statement.encode("utf-8")
                rejects.append(BronzeReject(seq=record.seq, stage="schema", error=change.detail or "unparseable DDL",
                                            raw=raw, position=record.position))
            elif change.structural:
                rows.append(_table_row(source, record.seq, i, change, "ok", None, "ddl", change.statement))
    return rows, rejects, state


def _with_rename_drops(state: SchemaState, changes: list[Change]) -> list[Change]:
    """In the history a renamed table's old id ends with a DROP version of its own, right before the rename:
    its rows live on under the new id (previous_table_id links the two), and nothing reads the old id as a live
    table. An id that exists again at the end (a swap: RENAME a TO a_old, a_new TO a) is not dropped. Only the
    history: the connectors' tableChanges stay Debezium's (one entry per rename)."""
    out: list[Change] = []
    for change in changes:
        old = change.previous_id
        if change.structural and change.table is not None and old is not None and old != change.table_id \
                and old not in state.tables:
            last = change.table.copy()
            last.id = old
            last.version = state.next_version(old)
            out.append(Change(kind=DROP, statement=change.statement, table_id=old, table=last))
        out.append(change)
    return out


def _carry_missing_values(parsed: list[Change], authoritative: list[Change]) -> None:
    """What the DDL parse knows and tableChanges do not carry: the value ADD COLUMN gave the existing rows
    (Column.missing_value), copied by column name onto the tableChanges' columns that have none."""
    by_id = {str(c.table_id): c.table for c in parsed if c.structural and c.table is not None}
    for change in authoritative:
        mine = by_id.get(str(change.table_id))
        if mine is None or change.table is None:
            continue
        values = {c.name: c.missing_value for c in mine.columns if c.missing_value is not None}
        for col in change.table.columns:
            if col.missing_value is None and col.name in values:
                col.missing_value = values[col.name]


def _cross_check(parsed: list[Change], authoritative: list[Change]) -> str | None:
    """Differences between the DDL parse and the tableChanges (names, order, types, nullability, key)."""
    errors = [c.detail for c in parsed if c.kind == ERROR]
    if errors:
        return "DDL parse failed: " + "; ".join(e or "" for e in errors)
    by_id = {str(c.table_id): c.table for c in parsed if c.structural and c.table is not None}
    problems = []
    for change in authoritative:
        mine = by_id.get(str(change.table_id))
        theirs = change.table
        if mine is None or theirs is None:
            problems.append(f"{change.table_id}: not produced by the DDL parse")
            continue

        def shape(t: Table) -> list[tuple]:
            # Debezium reports ENUM/SET with length 1 while the DDL has none: not a structural difference
            return [(c.name, c.type_name.upper(), None if c.type_name.upper() in ("ENUM", "SET") else c.length,
                     c.scale, c.nullable) for c in t.columns] + [tuple(t.primary_key)]

        if shape(mine) != shape(theirs):
            problems.append(f"{change.table_id}: parsed {shape(mine)} != tableChanges {shape(theirs)}")
    return "; ".join(problems)[:4000] or None
