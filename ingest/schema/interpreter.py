"""The DDL interpreter: `SchemaState.apply(ddl, dialect, default_database)` applies one or more statements to
an in-memory catalog and returns one `Change` per effect (see ingest/schema/__init__.py for the contract).

Statements are tokenized with sqlglot's dialect tokenizer and read by our grammar, one handler per statement kind
(`HANDLERS`, picked by the statement's first words): create_table.py, alter_table.py (the shared clauses, and one
subclass per dialect), mysql_alter.py (MySQL/MariaDB ALTER TABLE, resolved against the table as it was),
drop_rename.py (DROP, RENAME, TRUNCATE, SQL Server sp_rename), session.py (USE, PostgreSQL SET search_path). Each
handler is a `Statement` (statement.py: names, lookups, commits) and asks the dialect's hooks (dialects.py) where
dialects differ. Column definitions are read by columns.py and literal defaults converted to the column type in
defaults.py (sqlglot's own parser rejects or turns into opaque `Command`s many statements a binlog or redo log
carries: MySQL RENAME TABLE, ALTER ... ADD COLUMN (a, b), MODIFY IF EXISTS, CONVERT TO, ALTER IGNORE, partition
clauses, NATIONAL VARCHAR, POINT, INET6, PERSISTENT columns; Oracle storage clauses).
Every statement either changes the catalog, is recognized as a no-op (indexes, grants, views, routines,
comments ...), or becomes an ERROR change with the reason; a failed statement leaves the catalog unchanged.
"""

from __future__ import annotations

import re
from typing import Any

from ingest.errors import LakecdcError
from ingest.schema.alter_table import (
    AlterStatement,
    OracleAlterStatement,
    PostgresAlterStatement,
    TsqlAlterStatement,
)
from ingest.schema.create_table import CreateStatement
from ingest.schema.drop_rename import DropStatement, RenameStatement, TruncateStatement, TsqlExecStatement
from ingest.schema.keywords import NOOP_LEADS
from ingest.schema.model import (
    ALTER,
    CREATE,
    DROP,
    ERROR,
    Change,
    Column,
    DatabaseInfo,
    Table,
    TableId,
)
from ingest.schema.mysql_alter import MysqlAlterStatement
from ingest.schema.session import SetSearchPathStatement, UseStatement
from ingest.schema.statement import Statement
from ingest.schema.tokens import DdlSyntaxError, Tok, split_statements, tokenize
from ingest.schema.types import DIALECTS, ColumnTypeError, resolve_type

# The statement kinds by their first words; a dialect's own statements, and its own handler of a statement kind,
# are listed under its name.
HANDLERS: dict[tuple[str, ...], type[Statement]] = {
    ("CREATE",): CreateStatement,
    ("ALTER",): AlterStatement,
    ("DROP",): DropStatement,
    ("RENAME",): RenameStatement,
    ("TRUNCATE",): TruncateStatement,
    ("USE",): UseStatement,
}
DIALECT_HANDLERS: dict[str, dict[tuple[str, ...], type[Statement]]] = {
    "mysql": {("ALTER",): MysqlAlterStatement},
    "mariadb": {("ALTER",): MysqlAlterStatement},
    "postgres": {("ALTER",): PostgresAlterStatement, ("SET", "SEARCH_PATH"): SetSearchPathStatement,
                 ("SET", "SCHEMA"): SetSearchPathStatement},
    "oracle": {("ALTER",): OracleAlterStatement},
    "tsql": {("ALTER",): TsqlAlterStatement, ("EXEC",): TsqlExecStatement, ("EXECUTE",): TsqlExecStatement},
}


class SchemaState:
    """The catalog: tables by id, databases, current database (after USE), per-table version counters.

    `server_charset` is the MySQL/MariaDB server default character set (inherited by databases created without
    one); `default_schema` is the schema unqualified names resolve to for PostgreSQL (public), SQL Server (dbo)
    and Oracle (no default: the connector passes the schemaName of the change).
    """

    def __init__(self, *, server_charset: str | None = None, default_schema: str | None = None) -> None:
        self.tables: dict[TableId, Table] = {}
        self.databases: dict[str, DatabaseInfo] = {}
        self.server_charset = server_charset
        self.default_schema = default_schema
        self.current_database: str | None = None
        self._versions: dict[TableId, int] = {}

    # ------------------------------------------------------------------ public
    def apply(self, ddl: str, dialect: str, default_database: str | None = None, *,
              default_schema: str | None = None) -> list[Change]:
        if dialect not in DIALECTS:
            raise LakecdcError(f"unknown DDL dialect {dialect!r} (choose one of {', '.join(DIALECTS)})")
        try:
            tokens = tokenize(ddl, dialect)
        except DdlSyntaxError as exc:
            return [Change(kind=ERROR, statement=ddl, detail=str(exc))]
        changes: list[Change] = []
        for stmt_tokens in split_statements(tokens):
            text = ddl[stmt_tokens[0].start:stmt_tokens[-1].end + 1]
            statement = _handler(stmt_tokens, dialect)(self, dialect, default_database, default_schema, text,
                                                       stmt_tokens, ddl)
            try:
                changes.extend(statement.apply())
            except (DdlSyntaxError, ColumnTypeError, KeyError, ValueError, IndexError) as exc:
                message = str(exc) if not isinstance(exc, KeyError) else f"unknown column {exc.args[0]}"
                changes.append(Change(kind=ERROR, statement=text, table_id=statement.target, detail=message))
        return changes

    def table(self, table_id: TableId) -> Table | None:
        return self.tables.get(table_id)

    def find(self, name: str, dialect: str = "mysql") -> Table | None:
        """A table by its printed id (db.table, db.schema.table or schema.table)."""
        wanted = TableId.parse(name, dialect)
        if wanted in self.tables:
            return self.tables[wanted]
        for tid, table in self.tables.items():
            if (tid.schema, tid.table) == (wanted.schema, wanted.table) and wanted.database is None:
                return table
        return None

    def next_version(self, table_id: TableId) -> int:
        version = self._versions.get(table_id, 0) + 1
        self._versions[table_id] = version
        return version

    def apply_table_changes(self, entries: list[dict[str, Any]], dialect: str, statement: str = "",
                            default_database: str | None = None) -> list[Change]:
        """Apply Debezium tableChanges entries (the authoritative post-change table states)."""
        changes = []
        for entry in entries:
            ids = parse_debezium_ids(entry.get("id", ""), dialect, default_database)
            new_id = ids[-1]
            old_id = ids[0] if len(ids) > 1 else None
            kind = str(entry.get("type", "")).upper()
            if kind == DROP:
                table = self.tables.pop(new_id, None)
                if table is None:
                    table = table_from_debezium(new_id, entry.get("table") or {}, dialect)
                table.version = self.next_version(new_id)
                changes.append(Change(kind=DROP, statement=statement, table_id=new_id, table=table))
                continue
            if kind not in (CREATE, ALTER):
                raise LakecdcError(f"tableChanges entry with unknown type {kind!r}")
            table = table_from_debezium(new_id, entry.get("table") or {}, dialect)
            if old_id is not None:
                self.tables.pop(old_id, None)
            table.version = self.next_version(new_id)
            self.tables[new_id] = table
            changes.append(Change(kind=kind, statement=statement, table_id=new_id, table=table.copy(),
                                  previous_id=old_id))
        return changes


_ID_PART = re.compile(r'"((?:[^"]|"")*)"|([^".,]+)')


def parse_debezium_ids(text: str, dialect: str, default_database: str | None = None) -> list[TableId]:
    """'"db"."t"' -> [TableId]; a rename '"db"."a","db"."b"' -> [old, new]. PostgreSQL's ids are
    "schema"."table": the database (the event's databaseName) is filled in from `default_database`, so the
    ids equal the events' table_id (db.schema.table)."""
    ids: list[TableId] = []
    parts: list[str] = []
    pos = 0
    while pos < len(text):
        m = _ID_PART.match(text, pos)
        if not m:
            raise LakecdcError(f"cannot read table id {text!r}")
        parts.append((m.group(1) or "").replace('""', '"') if m.group(1) is not None else m.group(2))
        pos = m.end()
        if pos < len(text) and text[pos] == ",":
            ids.append(_id_from_parts(parts, dialect))
            parts = []
        pos += 1 if pos < len(text) else 0
    if parts:
        ids.append(_id_from_parts(parts, dialect))
    if default_database and dialect not in ("mysql", "mariadb"):
        ids = [TableId(default_database, i.schema, i.table) if i.database is None else i for i in ids]
    return ids


def _id_from_parts(parts: list[str], dialect: str) -> TableId:
    if dialect in ("mysql", "mariadb"):
        return TableId(parts[0] if len(parts) > 1 else None, None, parts[-1])
    if len(parts) >= 3:
        return TableId(parts[-3], parts[-2], parts[-1])
    if len(parts) == 2:
        return TableId(None, parts[0], parts[1])
    return TableId(None, None, parts[0])


def table_from_debezium(table_id: TableId, data: dict[str, Any], dialect: str) -> Table:
    columns = []
    for item in sorted(data.get("columns") or [], key=lambda c: c.get("position") or 0):
        columns.append(Column.from_debezium(item, spark_type_for(item, dialect)))
    table = Table(id=table_id, columns=columns, primary_key=list(data.get("primaryKeyColumnNames") or []),
                  default_charset=data.get("defaultCharsetName"), comment=data.get("comment"))
    table.renumber()
    return table


def spark_type_for(item: dict[str, Any], dialect: str) -> str:
    """The Spark type of a Debezium tableChanges column (its typeName, length and scale)."""
    type_name = str(item.get("typeName") or "")
    words = type_name.replace(" identity", "").split()
    unsigned = "UNSIGNED" in (w.upper() for w in words)
    zerofill = "ZEROFILL" in (w.upper() for w in words)
    words = [w for w in words if w.upper() not in ("UNSIGNED", "ZEROFILL")]
    params = [str(p) for p in (item.get("length"), item.get("scale")) if p is not None]
    if item.get("enumValues"):
        params = [str(v) for v in item["enumValues"]]
    array_dims = 0
    if dialect == "postgres" and type_name.startswith("_"):
        words, array_dims = [type_name[1:]], 1
    try:
        return resolve_type(dialect, words or ["?"], params, unsigned=unsigned, zerofill=zerofill,
                            array_dims=array_dims).spark_type
    except (ColumnTypeError, LakecdcError, ValueError):
        return "STRING"


class _NoopStatement(Statement):
    """Indexes, grants, views, routines, comments ... (keywords.NOOP_LEADS), and a lone '/' (Oracle's
    SQL*Plus terminator): recognized, nothing changes."""

    def apply(self) -> list[Change]:
        first = self.cur.peek()
        if first is not None and (first.upper in NOOP_LEADS or (first.kind == "op" and first.text == "/")):
            return [self.noop(first.upper or first.text)]
        return super().apply()  # unrecognized statement


def _handler(tokens: list[Tok], dialect: str) -> type[Statement]:
    words = tuple(tok.upper for tok in tokens[:2])
    for handlers in (DIALECT_HANDLERS[dialect], HANDLERS):
        for lead, handler in handlers.items():
            if words[:len(lead)] == lead:
                return handler
    return _NoopStatement
