"""The DDL interpreter: `SchemaState.apply(ddl, dialect, default_database)` applies one or more statements to
an in-memory catalog and returns one `Change` per effect (see ingest/schema/__init__.py for the contract).

Statements are tokenized with sqlglot's dialect tokenizer and read by the grammar in this module and
ingest.schema.columns (sqlglot's own parser rejects or turns into opaque `Command`s many statements a binlog
or redo log carries: MySQL RENAME TABLE, ALTER ... ADD COLUMN (a, b), MODIFY IF EXISTS, CONVERT TO, ALTER
IGNORE, partition clauses, NATIONAL VARCHAR, POINT, INET6, PERSISTENT columns; Oracle storage clauses).
Every statement either changes the catalog, is recognized as a no-op (indexes, grants, views, routines,
comments ...), or becomes an ERROR change with the reason; a failed statement leaves the catalog unchanged.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass
from typing import Any

from ingest.errors import LakecdcError
from ingest.schema.columns import (
    ColumnSpec,
    _read_type,
    charset_of_collation,
    literal_value,
    parse_column,
    parse_key_columns,
    parse_position,
    read_expression,
)
from ingest.schema.model import (
    ALTER,
    CREATE,
    DATABASE,
    DROP,
    ERROR,
    NOOP,
    TRUNCATE,
    USE,
    Change,
    Column,
    Table,
    TableId,
)
from ingest.schema.tokens import Cursor, DdlSyntaxError, Tok, split_statements, tokenize
from ingest.schema.types import DIALECTS, TypeError_, resolve_type

_NOOP_LEADS = {
    "GRANT", "REVOKE", "FLUSH", "ANALYZE", "OPTIMIZE", "REPAIR", "CHECKSUM", "SET", "BEGIN", "COMMIT", "ROLLBACK",
    "SAVEPOINT", "RELEASE", "XA", "LOCK", "UNLOCK", "INSERT", "UPDATE", "DELETE", "REPLACE", "MERGE", "CALL",
    "DECLARE", "PURGE", "INSTALL", "UNINSTALL", "KILL", "VACUUM", "REINDEX", "CLUSTER", "REFRESH", "NOTIFY",
    "SECURITY", "REASSIGN", "DISCARD", "DO", "SELECT", "WITH", "EXPLAIN", "SHOW", "DESCRIBE", "DESC", "HANDLER",
    "LOAD", "COMMENT", "AUDIT", "NOAUDIT", "PRINT", "GO", "DBCC", "DENY", "BACKUP", "RESTORE", "CHECKPOINT",
    "RESET", "CHANGE", "START", "STOP", "SIGNAL", "RESIGNAL", "EXECUTE", "PREPARE", "DEALLOCATE", "BINLOG",
    "ASSOCIATE", "DISASSOCIATE", "LISTEN", "UNLISTEN", "IMPORT", "COPY", "CREATEUSER", "SHUTDOWN",
}
_NOOP_OBJECTS = {
    "INDEX", "VIEW", "PROCEDURE", "FUNCTION", "TRIGGER", "EVENT", "SEQUENCE", "USER", "ROLE", "SYNONYM", "TYPE",
    "PACKAGE", "MATERIALIZED", "EXTENSION", "PUBLICATION", "SUBSCRIPTION", "DOMAIN", "TABLESPACE", "SERVER",
    "LOGFILE", "AGGREGATE", "RULE", "POLICY", "STATISTICS", "COLLATION", "CONVERSION", "OPERATOR", "LANGUAGE",
    "CAST", "TEXT", "FOREIGN", "ACCESS", "DIRECTORY", "LIBRARY", "JAVA", "CONTEXT", "DIMENSION", "CLUSTER",
    "OUTLINE", "PROFILE", "RESOURCE", "ROLLBACK", "SESSION", "SYSTEM", "LOGIN", "SCHEMA_BINDING", "ASSEMBLY",
    "CERTIFICATE", "CREDENTIAL", "ENDPOINT", "FULLTEXT", "MESSAGE", "QUEUE", "ROUTE", "SERVICE", "CONTRACT",
    "PARTITION", "XML", "SPATIAL", "UNIQUE", "BITMAP", "CLUSTERED", "NONCLUSTERED", "COLUMNSTORE", "DATABASE LINK",
    "PUBLIC", "EDITIONABLE", "NONEDITIONABLE", "DEFINER", "SQL", "ALGORITHM", "AUDIT", "FLASHBACK", "NO",
    "GLOBAL_TEMP", "DEFAULT", "EDITION", "TRANSFORM", "EVENT_TRIGGER", "PLUGGABLE", "CONSTRAINT", "OWNED",
    "GROUP", "ORGANIZATION", "TEMPLATE",
}
# ALTER TABLE clauses that do not change the column structure (first word of the clause)
_ALTER_NOOP = {
    "ENGINE", "AUTO_INCREMENT", "ROW_FORMAT", "ALGORITHM", "LOCK", "FORCE", "ENABLE", "DISABLE", "ORDER",
    "OWNER", "REPLICA", "CLUSTER", "INHERIT", "NO", "NOCHECK", "CHECK", "PARTITION", "COALESCE", "REORGANIZE",
    "EXCHANGE", "ANALYZE", "OPTIMIZE", "REBUILD", "REPAIR", "TRUNCATE", "REMOVE", "DISCARD", "IMPORT",
    "KEY_BLOCK_SIZE", "MAX_ROWS", "MIN_ROWS", "PACK_KEYS", "PASSWORD", "STATS_AUTO_RECALC", "STATS_PERSISTENT",
    "STATS_SAMPLE_PAGES", "CHECKSUM", "DELAY_KEY_WRITE", "INSERT_METHOD", "UNION", "DATA", "INDEX", "TABLESPACE",
    "STORAGE", "PCTFREE", "PCTUSED", "INITRANS", "MAXTRANS", "LOGGING", "NOLOGGING", "COMPRESS", "NOCOMPRESS",
    "CACHE", "NOCACHE", "PARALLEL", "NOPARALLEL", "MOVE", "SHRINK", "ALLOCATE", "DEALLOCATE", "MONITORING",
    "NOMONITORING", "ROW", "READ", "FLASHBACK", "SUPPLEMENTAL", "RESET", "ATTACH", "DETACH", "VALIDATE",
    "SWITCH", "PAGE_CHECKSUM", "TRANSACTIONAL", "ENCRYPTED", "ENCRYPTION_KEY_ID", "IETF_QUOTES",
    "SEQUENCE", "WITH", "WITHOUT", "UPGRADE", "SECONDARY_ENGINE", "ENCRYPTION", "COMPRESSION", "SET",
}


@dataclass
class DatabaseInfo:
    name: str
    charset: str | None = None


def _strip_routine(tokens: list[Tok]) -> list[Tok]:
    return tokens


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
            run = _Run(self, dialect, default_database, default_schema, text, stmt_tokens, ddl)
            try:
                changes.extend(run.statement())
            except (DdlSyntaxError, TypeError_, KeyError, ValueError, IndexError) as exc:
                message = str(exc) if not isinstance(exc, KeyError) else f"unknown column {exc.args[0]}"
                changes.append(Change(kind=ERROR, statement=text, table_id=run.target, detail=message))
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
    except (TypeError_, LakecdcError, ValueError):
        return "STRING"


class _Run:
    """Interpretation of one statement."""

    def __init__(self, state: SchemaState, dialect: str, default_database: str | None,
                 default_schema: str | None, text: str, tokens: list[Tok], full_sql: str) -> None:
        self.state = state
        self.dialect = dialect
        self.mysql = dialect in ("mysql", "mariadb")
        self.default_database = default_database
        self.default_schema = default_schema or state.default_schema
        self.text = text
        self.cur = Cursor(tokens, full_sql)
        self.target: TableId | None = None
        self._parent_pk_names: set[str] = set()  # while an ALTER is replayed on a partition: ancestors' PK names
        self._replay_kind: str | None = None  # "partition" / "inherits" while replaying on a child table

    # ------------------------------------------------------------------ names
    def fold(self, name: str, quoted: bool) -> str:
        if quoted:
            return name
        if self.dialect == "postgres":
            return name.lower()
        if self.dialect == "oracle":
            return name.upper()
        return name

    def name(self) -> str:
        return self.fold(*self.cur.ident())

    def table_id(self, parts: list[tuple[str, bool]]) -> TableId:
        names = [self.fold(n, q) for n, q in parts]
        if self.mysql:
            if len(names) > 2:
                names = names[-2:]
            database = names[0] if len(names) == 2 else (self.state.current_database or self.default_database)
            if database is None:
                raise DdlSyntaxError(f"no database selected for table {names[-1]}")
            return TableId(database, None, names[-1])
        schema_default = self.default_schema or {"postgres": "public", "tsql": "dbo"}.get(self.dialect)
        database = self.state.current_database or self.default_database
        if len(names) >= 3:
            return TableId(names[-3] if self.dialect == "tsql" else database, names[-2], names[-1])
        if len(names) == 2:
            return TableId(database, names[0], names[1])
        return TableId(database, schema_default, names[0])

    def lookup(self, tid: TableId) -> Table | None:
        table = self.state.tables.get(tid)
        if table is None and self.dialect == "tsql":  # SQL Server names are case-insensitive
            key = (str(tid.database).lower(), str(tid.schema).lower(), tid.table.lower())
            for other_id, other in self.state.tables.items():
                if (str(other_id.database).lower(), str(other_id.schema).lower(), other_id.table.lower()) == key:
                    return other
        return table

    def read_table_id(self) -> TableId:
        tid = self.table_id(self.cur.dotted())
        self.target = self.target or tid
        return tid

    # ------------------------------------------------------------------ dispatch
    def statement(self) -> list[Change]:
        cur = self.cur
        if cur.at("CREATE"):
            return self.create()
        if cur.at("ALTER"):
            return self.alter()
        if cur.at("DROP"):
            return self.drop()
        if cur.at("RENAME"):
            return self.rename()
        if cur.at("TRUNCATE"):
            return self.truncate()
        if cur.at("USE"):
            cur.next()
            name = self.name()
            self.state.current_database = name
            return [Change(kind=USE, statement=self.text, database=name)]
        if self.dialect == "postgres" and (cur.at("SET", "SEARCH_PATH") or cur.at("SET", "SCHEMA")):
            return self.set_search_path()
        if self.dialect == "tsql" and cur.at_any(("EXEC", "EXECUTE")):
            return self.tsql_exec()
        first = cur.peek()
        if first is not None and (first.upper in _NOOP_LEADS or (first.kind == "op" and first.text == "/")):
            return [self.noop(first.upper or first.text)]
        raise cur.error("unrecognized statement")

    def noop(self, what: str) -> Change:
        return Change(kind=NOOP, statement=self.text, detail=what, table_id=self.target)

    # ------------------------------------------------------------------ CREATE
    def create(self) -> list[Change]:
        cur = self.cur
        cur.expect("CREATE")
        cur.accept("OR", "REPLACE")
        temporary = False
        while cur.at_any(("TEMPORARY", "TEMP", "GLOBAL", "LOCAL", "PRIVATE", "UNLOGGED", "SHARDED",
                          "DUPLICATED", "BLOCKCHAIN", "IMMUTABLE")):
            word = cur.next().upper
            temporary = temporary or word in ("TEMPORARY", "TEMP")
        if cur.at("TABLE"):
            return self.create_table(temporary)
        if cur.at_any(("DATABASE", "SCHEMA")):
            return self.create_database()
        # DEFINER=... / ALGORITHM=... / SQL SECURITY ... before VIEW / PROCEDURE ...
        for k in range(0, 12):
            tok = cur.peek(k)
            if tok is None:
                break
            if tok.upper == "TABLE" and k == 0:
                break
            if tok.upper in _NOOP_OBJECTS and tok.upper not in ("DEFINER", "ALGORITHM", "SQL", "DEFAULT", "NO"):
                return [self.noop(f"CREATE {tok.upper}")]
        raise cur.error("unrecognized CREATE statement")

    def create_database(self) -> list[Change]:
        cur = self.cur
        kind = cur.next().upper
        cur.accept("IF", "NOT", "EXISTS")
        if self.dialect == "postgres" and cur.at("AUTHORIZATION"):
            cur.next()
        name = self.name()
        if self.mysql:
            charset = self._charset_options() or self.state.server_charset
            existing = self.state.databases.get(name)
            if existing is None:
                self.state.databases[name] = DatabaseInfo(name, charset)
        return [Change(kind=DATABASE, statement=self.text, database=name, detail=f"CREATE {kind}")]

    def _charset_options(self) -> str | None:
        """[DEFAULT] CHARACTER SET [=] x / CHARSET x / COLLATE x anywhere in the rest of the statement."""
        cur = self.cur
        charset = None
        collation = None
        while not cur.done():
            if cur.accept("CHARACTER", "SET") or cur.accept("CHARSET") or cur.accept("CHAR", "SET"):
                cur.accept_op("=")
                charset = cur.next().text.lower()
            elif cur.accept("COLLATE"):
                cur.accept_op("=")
                collation = cur.next().text.lower()
            else:
                cur.next()
        return charset or charset_of_collation(collation)

    def database_charset(self, database: str | None) -> str | None:
        info = self.state.databases.get(database or "")
        return info.charset if info and info.charset else self.state.server_charset

    def create_table(self, temporary: bool) -> list[Change]:
        cur = self.cur
        cur.expect("TABLE")
        if_not_exists = cur.accept("IF", "NOT", "EXISTS")
        tid = self.read_table_id()
        if temporary:
            return [self.noop("CREATE TEMPORARY TABLE")]
        if if_not_exists and self.lookup(tid) is not None:
            return [self.noop("CREATE TABLE IF NOT EXISTS (table exists)")]
        table = Table(id=tid)
        specs: list[ColumnSpec] = []
        like: Table | None = None
        partition_of: TableId | None = None
        if cur.accept("LIKE") or (cur.at_op("(") and cur.peek(1) is not None and cur.peek(1).upper == "LIKE"
                                  and self.mysql):
            wrapped = cur.accept_op("(")
            if wrapped:
                cur.expect("LIKE")
            like = self._existing(self.read_other_table())
            if wrapped:
                cur.expect_op(")")
        elif cur.accept("PARTITION", "OF"):
            like = self._existing(self.read_other_table())
            partition_of = like.id
        if like is not None:
            table = like.copy()
            table.id = tid
            table.version = 0
            table.primary_key_name = None
            table.partition_of = partition_of
            table.inherits = []
        elif cur.at_op("("):
            self._table_elements(table, specs)
        options = self._table_options()
        if options.get("as_select") and (not specs or (self.dialect == "postgres" and not all(
                s.type_words or s.prebuilt for s in specs))):
            raise DdlSyntaxError("CREATE TABLE ... AS SELECT without column definitions: the column types "
                                 "come from the query, which a DDL parser cannot know")
        parents = [self._existing(p) for p in options.get("inherits", [])]
        if like is None and not specs and not parents:
            raise DdlSyntaxError("CREATE TABLE without columns")
        if like is None:
            charset = options.get("charset") or self.database_charset(tid.database)
            table.default_charset = charset if self.mysql else None
            self._build_columns(table, specs)
            if self.mysql and not table.primary_key and self.unique_keys:
                self._unique_as_primary_key(table, self.unique_keys[0])
        if parents:
            self._inherit(table, parents)
        if options.get("comment") is not None:
            table.comment = options["comment"]
        if self.mysql and options.get("charset") and like is None:
            table.default_charset = options["charset"]
        self._fix_pk(table)
        table.renumber()
        replaced = self.state.tables.get(tid)
        changes = []
        if replaced is not None:  # CREATE OR REPLACE TABLE
            changes.append(self._commit_drop(tid))
        table.version = self.state.next_version(tid)
        self.state.tables[tid] = table
        changes.append(Change(kind=CREATE, statement=self.text, table_id=tid, table=table.copy()))
        return changes

    def read_other_table(self) -> TableId:
        return self.table_id(self.cur.dotted())

    def _existing(self, tid: TableId) -> Table:
        table = self.lookup(tid)
        if table is None:
            raise DdlSyntaxError(f"table {tid} is not in the schema history")
        return table

    def _table_elements(self, table: Table, specs: list[ColumnSpec]) -> None:
        cur = self.cur
        self.unique_keys: list[list[str]] = []  # MySQL: the unique keys in order (_unique_as_primary_key)
        cur.expect_op("(")
        while True:
            self._table_element(table, specs)
            if cur.accept_op(","):
                continue
            cur.expect_op(")")
            break

    def _table_element(self, table: Table, specs: list[ColumnSpec]) -> None:
        cur = self.cur
        constraint_name = None
        if cur.at("CONSTRAINT") and not cur.at_op(",", 1):
            cur.next()
            if not cur.at_any(("PRIMARY", "UNIQUE", "FOREIGN", "CHECK", "EXCLUDE")):
                constraint_name = self.name()
        if cur.at("PRIMARY", "KEY"):
            cur.i += 2
            while not cur.at_op("("):
                cur.next()  # USING BTREE, CLUSTERED, index name
            table.primary_key = parse_key_columns(cur, self.fold)
            table.primary_key_name = constraint_name
            cur.skip_to_comma()
            return
        if self.mysql and cur.at("UNIQUE"):
            cur.next()
            while not cur.at_op("("):
                cur.next()  # KEY/INDEX, index name, USING BTREE
            self.unique_keys.append(parse_key_columns(cur, self.fold))
            cur.skip_to_comma()
            return
        if cur.at_any(("UNIQUE", "FOREIGN", "CHECK", "EXCLUDE", "FULLTEXT", "SPATIAL")) or \
                (cur.at_any(("KEY", "INDEX")) and self._looks_like_index()) or cur.at("PERIOD", "FOR") or \
                cur.at("SUPPLEMENTAL", "LOG") or constraint_name is not None:
            cur.skip_to_comma()
            return
        if cur.at("LIKE") and self.dialect == "postgres":
            cur.next()
            like = self._existing(self.read_other_table())
            options = self._like_options()
            for col in like.columns:
                specs.append(_spec_from_column(col, options))
            if "INDEXES" in options and like.primary_key:
                table.primary_key = list(like.primary_key)
            return
        spec = parse_column(cur, self.dialect)
        spec.name = self.fold(spec.name, spec.quoted)
        specs.append(spec)
        if self.mysql and spec.unique:
            self.unique_keys.append([spec.name])

    def _inherit(self, table: Table, parents: list[Table]) -> None:
        """PostgreSQL INHERITS: the parents' columns come first (with NOT NULL and defaults, no key); a local
        column of the same name merges into the inherited one (NOT NULL if either says so, local default wins)."""
        columns: list[Column] = []
        for parent in parents:
            for col in parent.columns:
                if not any(c.name == col.name for c in columns):
                    copied = copy.deepcopy(col)
                    copied.auto_increment = copied.auto_increment and bool(copied.default)  # identity is not inherited
                    columns.append(copied)
        for col in table.columns:
            same = next((c for c in columns if c.name == col.name), None)
            if same is None:
                columns.append(col)
                continue
            same.nullable = same.nullable and col.nullable
            if col.has_default:
                same.has_default, same.default, same.default_is_literal = True, col.default, col.default_is_literal
        table.columns = columns
        table.inherits = [p.id for p in parents]

    def _like_options(self) -> set[str]:
        """PostgreSQL LIKE ... {INCLUDING|EXCLUDING} {DEFAULTS|IDENTITY|GENERATED|INDEXES|...|ALL}."""
        cur = self.cur
        options: set[str] = set()
        every = {"COMMENTS", "COMPRESSION", "CONSTRAINTS", "DEFAULTS", "GENERATED", "IDENTITY", "INDEXES",
                 "STATISTICS", "STORAGE"}
        while cur.at_any(("INCLUDING", "EXCLUDING")):
            including = cur.next().upper == "INCLUDING"
            what = cur.next().upper
            names = every if what == "ALL" else {what}
            options = options | names if including else options - names
        return options

    def _looks_like_index(self) -> bool:
        # KEY/INDEX followed by a name or '(' is an index; a column named `key` would be quoted in practice
        nxt = self.cur.peek(1)
        return nxt is not None and (nxt.kind == "op" and nxt.text == "(" or nxt.kind in ("word", "ident")) and \
            not (nxt.kind == "word" and self._is_type_word(nxt.upper))

    def _is_type_word(self, word: str) -> bool:
        try:
            resolve_type(self.dialect, [word], ["1"] if word in ("VARCHAR", "VARBINARY", "VARCHAR2") else [])
            return True
        except (TypeError_, LakecdcError):
            return False

    def _table_options(self) -> dict[str, Any]:
        cur = self.cur
        opts: dict[str, Any] = {}
        depth = 0
        while not cur.done():
            if cur.at_op("("):
                depth += 1
                cur.next()
            elif cur.at_op(")"):
                depth -= 1
                cur.next()
            elif depth == 0 and (cur.accept("CHARACTER", "SET") or cur.accept("CHARSET")):
                cur.accept_op("=")
                opts["charset"] = cur.next().text.lower()
            elif depth == 0 and cur.accept("COLLATE"):
                cur.accept_op("=")
                collation = cur.next().text.lower()
                opts.setdefault("charset", charset_of_collation(collation))
            elif depth == 0 and self.dialect == "postgres" and cur.accept("INHERITS"):
                cur.expect_op("(")
                opts["inherits"] = [self.read_other_table()]
                while cur.accept_op(","):
                    opts["inherits"].append(self.read_other_table())
                cur.expect_op(")")
            elif depth == 0 and cur.accept("COMMENT"):
                cur.accept_op("=")
                opts["comment"] = cur.next().text
            elif depth == 0 and (cur.at("SELECT") or cur.at("AS") and cur.peek(1) is not None and (
                    cur.at_op("(", 1) or cur.peek(1).upper in ("SELECT", "WITH", "VALUES", "TABLE", "EXECUTE"))):
                opts["as_select"] = True
                break
            else:
                cur.next()
        return opts

    def _build_columns(self, table: Table, specs: list[ColumnSpec]) -> None:
        names: set[str] = set()
        for spec in specs:
            col = spec.build(self.dialect, table.default_charset)
            if col.name.lower() in names:
                raise DdlSyntaxError(f"duplicate column {col.name}")
            names.add(col.name.lower())
            self._serial_default(table, col)
            table.columns.append(col)
            if spec.default_constraint:
                table.default_constraints[spec.default_constraint.lower()] = col.name
            if spec.primary_key:
                table.primary_key = [col.name]
                table.primary_key_name = spec.constraint_name

    def _serial_default(self, table: Table, col: Column) -> None:
        if col.default == "nextval" and self.dialect == "postgres":
            schema = "" if table.id.schema in (None, "public") else f"{table.id.schema}."
            col.default = f"nextval('{schema}{table.id.table}_{col.name}_seq'::regclass)"

    @staticmethod
    def _unique_as_primary_key(table: Table, names: list[str]) -> None:
        """Debezium's MySQL DDL parser keys a table without a primary key by its first unique key, when every
        column of that key exists and is NOT NULL (else by nothing: the later unique keys are not tried)."""
        columns = [table.column(name) for name in names]
        if all(c is not None and not c.nullable for c in columns):
            table.primary_key = [c.name for c in columns]  # type: ignore[union-attr]

    def _fix_pk(self, table: Table) -> None:
        resolved = []
        for name in table.primary_key:
            col = table.column(name)
            if col is None:
                raise DdlSyntaxError(f"primary key column {name} does not exist")
            if col.nullable and self.dialect == "oracle" and col.name not in table.pk_implied_not_null:
                table.pk_implied_not_null.append(col.name)
            col.nullable = False
            resolved.append(col.name)
        table.primary_key = resolved
        if table.primary_key and table.primary_key_name is None and self.dialect == "postgres":
            table.primary_key_name = f"{table.id.table}_pkey"

    # ------------------------------------------------------------------ ALTER
    def alter(self) -> list[Change]:
        cur = self.cur
        cur.expect("ALTER")
        while cur.at_any(("ONLINE", "OFFLINE", "IGNORE")):
            cur.next()
        if cur.at_any(("DATABASE", "SCHEMA")):
            return self.alter_database()
        if not cur.at("TABLE"):
            tok = cur.peek()
            if tok is not None and tok.upper in _NOOP_OBJECTS | {"SESSION", "SYSTEM", "USER"}:
                return [self.noop(f"ALTER {tok.upper}")]
            raise cur.error("unrecognized ALTER statement")
        cur.next()
        if_exists = cur.accept("IF", "EXISTS")
        only = cur.accept("ONLY")
        tid = self.read_table_id()
        original = self.lookup(tid)
        if original is None:
            if if_exists:
                return [self.noop("ALTER TABLE IF EXISTS (no such table)")]
            raise DdlSyntaxError(f"table {tid} is not in the schema history")
        start = cur.i
        table = original.copy()
        self._alter_clauses(table)
        table.renumber()
        # PostgreSQL applies column changes of a partitioned table to its partitions too (unless ONLY)
        children: list[Table] = []
        if self.dialect == "postgres" and not only:
            children = self._partition_changes(original, start)
        changes = []
        if not table.same_structure(original):
            changes.append(self._commit_alter(original.id, table))
        else:
            original.primary_key_name = table.primary_key_name  # RENAME CONSTRAINT: metadata, no new version
        for child in children:
            changes.append(self._commit_alter(child.id, child))
        return changes or [self.noop("ALTER TABLE without structural change")]

    def _partition_changes(self, parent: Table, start: int, seen: set[TableId] | None = None) -> list[Table]:
        """Re-run the ALTER clauses (from token `start`) on every partition of `parent`, recursively. The
        parent's own identity (RENAME TO, SET SCHEMA) does not carry over; its primary key constraint does."""
        seen = seen if seen is not None else {parent.id}
        changed = []
        for child_id, child in list(self.state.tables.items()):
            if child_id in seen or not (child.partition_of == parent.id or parent.id in child.inherits):
                continue
            seen.add(child_id)
            copy_ = child.copy()
            self.cur.i = start
            saved = self._parent_pk_names, self._replay_kind
            self._parent_pk_names = saved[0] | ({parent.primary_key_name.lower()} if parent.primary_key_name else set())
            self._replay_kind = "partition" if child.partition_of == parent.id else "inherits"
            try:
                self._alter_clauses(copy_)
                copy_.id = child_id
                copy_.renumber()
                if not copy_.same_structure(child):
                    changed.append(copy_)
                changed.extend(self._partition_changes(child, start, seen))
            finally:
                self._parent_pk_names, self._replay_kind = saved
        return changed

    def _commit_alter(self, old_id: TableId, table: Table) -> Change:
        self.state.tables.pop(old_id, None)
        if old_id != table.id:  # partitions / inheritance children follow a renamed parent
            for other in self.state.tables.values():
                if other.partition_of == old_id:
                    other.partition_of = table.id
                other.inherits = [table.id if p == old_id else p for p in other.inherits]
        table.version = self.state.next_version(table.id)
        self.state.tables[table.id] = table
        previous = old_id if old_id != table.id else None
        return Change(kind=ALTER, statement=self.text, table_id=table.id, table=table.copy(), previous_id=previous)

    def _commit_drop(self, tid: TableId) -> Change:
        table = self.state.tables.pop(tid)
        table = table.copy()
        table.version = self.state.next_version(tid)
        return Change(kind=DROP, statement=self.text, table_id=tid, table=table)

    def alter_database(self) -> list[Change]:
        cur = self.cur
        cur.next()
        name = None
        if not cur.at_any(("DEFAULT", "CHARACTER", "CHARSET", "COLLATE", "CHAR")):
            name = self.name()
        name = name or self.state.current_database or self.default_database
        if self.mysql and name:
            charset = self._charset_options()
            if charset:
                self.state.databases.setdefault(name, DatabaseInfo(name)).charset = charset
        return [Change(kind=DATABASE, statement=self.text, database=name, detail="ALTER DATABASE")]

    def _alter_clauses(self, table: Table) -> None:
        cur = self.cur
        while not cur.done():
            adding = cur.at("ADD")
            self._alter_clause(table)
            if cur.accept_op(","):
                # SQL Server: ADD a INT, b INT, CONSTRAINT ... (one ADD for several elements)
                while self.dialect == "tsql" and adding and self._tsql_add_continuation():
                    self._add(table, continuation=True)
                    if not cur.accept_op(","):
                        break
                continue
            if cur.done():
                break
            if self.dialect not in ("oracle",) and not cur.at_any(("ADD", "DROP", "MODIFY", "RENAME")):
                raise cur.error("unexpected text after ALTER TABLE clause")

    def _tsql_add_continuation(self) -> bool:
        cur = self.cur
        return not cur.at_any(("ADD", "DROP", "ALTER", "WITH", "CHECK", "NOCHECK", "ENABLE", "DISABLE", "SWITCH",
                               "SET", "REBUILD"))

    def _alter_clause(self, table: Table) -> None:  # noqa: C901 - a flat keyword switch
        cur = self.cur
        if cur.at("ADD"):
            cur.next()
            self._add(table)
        elif cur.at("DROP"):
            cur.next()
            self._drop_clause(table)
        elif cur.at("MODIFY"):
            cur.next()
            if cur.at_any(("CONSTRAINT", "PRIMARY", "UNIQUE", "PARTITION", "DEFAULT", "LOB", "NESTED", "VARRAY")):
                cur.skip_to_comma()
                return
            cur.accept("COLUMN")
            if_exists = cur.accept("IF", "EXISTS")
            if self.dialect == "oracle" and cur.at_op("("):
                cur.next()
                while True:
                    self._modify(table, if_exists=False)
                    if not cur.accept_op(","):
                        break
                cur.expect_op(")")
            else:
                self._modify(table, if_exists)
        elif cur.at("CHANGE"):
            cur.next()
            cur.accept("COLUMN")
            if_exists = cur.accept("IF", "EXISTS")
            old = self.name()
            spec = parse_column(cur, self.dialect)
            spec.position = parse_position(cur)
            if table.column(old) is None:
                if if_exists:
                    return
                raise KeyError(old)
            self._replace_column(table, old, spec)
        elif cur.at("RENAME"):
            cur.next()
            self._rename_clause(table)
        elif cur.at("ALTER"):
            cur.next()
            if cur.at_any(("INDEX", "CONSTRAINT", "CHECK")):
                cur.skip_to_comma()
                return
            cur.accept("COLUMN")
            cur.accept("IF", "EXISTS")
            name = self.name()
            self._alter_column(table, name)
        elif cur.accept("CONVERT", "TO"):
            if not (cur.accept("CHARACTER", "SET") or cur.accept("CHARSET")):
                raise cur.error("expected CHARACTER SET")
            charset = cur.next().text.lower()
            if cur.accept("COLLATE"):
                cur.next()
            if charset == "default":
                charset = self.database_charset(table.id.database)
            table.default_charset = charset
            for col in table.columns:
                if col.charset is not None:
                    col.charset = charset
                    col.collation = None
        elif cur.at_any(("DEFAULT", "CHARACTER", "CHARSET", "COLLATE")) and self.mysql:
            cur.accept("DEFAULT")
            if cur.accept("CHARACTER", "SET") or cur.accept("CHARSET"):
                cur.accept_op("=")
                table.default_charset = cur.next().text.lower()
                if cur.accept("COLLATE"):
                    cur.accept_op("=")
                    cur.next()
            elif cur.accept("COLLATE"):
                cur.accept_op("=")
                table.default_charset = charset_of_collation(cur.next().text) or table.default_charset
        elif cur.accept("COMMENT"):
            cur.accept_op("=")
            table.comment = cur.next().text
        elif self.dialect == "oracle" and cur.accept("SET", "UNUSED"):  # the column leaves the visible structure
            self._drop_clause(table)
            cur.accept("ONLINE")
        elif self.dialect == "postgres" and cur.accept("SET", "SCHEMA"):
            table.id = TableId(table.id.database, self.name(), table.id.table)
            for col in table.columns:  # owned (serial) sequences move with the table
                if col.auto_increment and col.default and col.default.startswith("nextval('"):
                    seq = col.default[len("nextval('"):].split("'", 1)[0].rsplit(".", 1)[-1]
                    schema = "" if table.id.schema == "public" else f"{table.id.schema}."
                    col.default = f"nextval('{schema}{seq}'::regclass)"
        elif self.dialect == "postgres" and cur.at_any(("ATTACH", "DETACH")) and cur.peek(1) is not None \
                and cur.peek(1).upper == "PARTITION":
            attach = cur.next().upper == "ATTACH"
            cur.next()
            child = self._existing(self.read_other_table())
            if self._replay_kind is None:  # not again while the clauses are replayed on partitions
                child.partition_of = table.id if attach else None  # metadata only: no new version
            cur.skip_to_comma()
        elif cur.at_any(_ALTER_NOOP):
            cur.skip_to_comma()
        else:
            raise cur.error("unrecognized ALTER TABLE clause")

    def _add(self, table: Table, continuation: bool = False) -> None:
        cur = self.cur
        constraint_name = None
        if cur.at("CONSTRAINT"):
            cur.next()
            if not cur.at_any(("PRIMARY", "UNIQUE", "FOREIGN", "CHECK")):
                constraint_name = self.name()
        if self.dialect == "tsql" and cur.accept("DEFAULT"):  # [CONSTRAINT n] DEFAULT expr FOR column
            s, e = read_expression(cur)
            value, is_literal = literal_value(cur, s, e)
            cur.expect("FOR")
            col = table.column(self.name())
            if col is None:
                raise DdlSyntaxError("DEFAULT constraint for an unknown column")
            col.has_default, col.default, col.default_is_literal = True, value, is_literal
            if constraint_name:
                table.default_constraints[constraint_name.lower()] = col.name
            cur.skip_to_comma()
            return
        if cur.at("PRIMARY", "KEY") and self._replay_kind == "inherits":  # keys are not inherited
            cur.skip_to_comma()
            return
        if cur.at("PRIMARY", "KEY"):
            cur.i += 2
            while not cur.at_op("("):
                cur.next()
            table.primary_key = parse_key_columns(cur, self.fold)
            table.primary_key_name = constraint_name or (f"{table.id.table}_pkey" if self.dialect == "postgres"
                                                         else None)
            self._fix_pk(table)
            cur.skip_to_comma()
            return
        if constraint_name is not None or cur.at_any(("UNIQUE", "FOREIGN", "CHECK", "INDEX", "KEY", "FULLTEXT",
                                                      "SPATIAL", "PARTITION", "EXCLUDE", "SUPPLEMENTAL")) or \
                cur.at("PERIOD", "FOR") or cur.at("SYSTEM", "VERSIONING"):
            if cur.at_any(("INDEX", "KEY")) and not self._looks_like_index():
                pass
            else:
                cur.skip_to_comma()
                return
        cur.accept("COLUMN")
        if_not_exists = cur.accept("IF", "NOT", "EXISTS")
        if cur.at_op("("):
            cur.next()
            while True:
                if cur.at("CONSTRAINT") or cur.at("PRIMARY", "KEY") or cur.at_any(("UNIQUE", "FOREIGN", "CHECK")):
                    self._add(table)
                else:
                    self._add_column(table, parse_column(cur, self.dialect), if_not_exists)
                if not cur.accept_op(","):
                    break
            cur.expect_op(")")
            return
        spec = parse_column(cur, self.dialect)
        spec.position = parse_position(cur)
        self._add_column(table, spec, if_not_exists)

    def _add_column(self, table: Table, spec: ColumnSpec, if_not_exists: bool) -> None:
        spec.name = self.fold(spec.name, spec.quoted)
        if table.column(spec.name) is not None:
            if if_not_exists:
                return
            raise DdlSyntaxError(f"column {spec.name} already exists")
        col = spec.build(self.dialect, table.default_charset)
        self._serial_default(table, col)
        self._place(table, col, spec.position, len(table.columns))
        if spec.default_constraint:
            table.default_constraints[spec.default_constraint.lower()] = col.name
        if spec.primary_key:
            table.primary_key = [col.name]
            table.primary_key_name = spec.constraint_name
            self._fix_pk(table)

    def _place(self, table: Table, col: Column, position: tuple[str, str | None] | None, default_index: int) -> None:
        if position is None:
            index = default_index
        elif position[0] == "FIRST":
            index = 0
        else:
            index = table.index_of(self.fold(position[1] or "", False)) + 1
        table.columns.insert(index, col)

    def _drop_clause(self, table: Table) -> None:
        cur = self.cur
        if cur.accept("PRIMARY", "KEY"):
            self._drop_pk(table)
            cur.skip_to_comma()
            return
        if cur.accept("CONSTRAINT"):
            if_exists = cur.accept("IF", "EXISTS")
            names = [self.name()]
            cur.skip_to_comma()
            while self.dialect == "tsql" and cur.at_op(",") and cur.peek(1) is not None and \
                    cur.peek(1).kind in ("word", "ident") and cur.peek(1).upper not in ("ADD", "DROP", "ALTER",
                                                                                     "COLUMN", "CONSTRAINT"):
                cur.next()  # SQL Server: DROP CONSTRAINT a, b
                names.append(self.name())
                cur.skip_to_comma()
            pk_names = self._parent_pk_names | ({table.primary_key_name.lower()} if table.primary_key_name else set())
            for name in names:
                if name.lower() in pk_names or (self.mysql and name.upper() == "PRIMARY"):
                    self._drop_pk(table)
                column = table.default_constraints.pop(name.lower(), None)
                col = table.column(column) if column else None
                if col is not None:  # a SQL Server DEFAULT constraint
                    col.has_default, col.default, col.default_is_literal = False, None, True
            del if_exists
            return
        if cur.at_any(("INDEX", "KEY", "FOREIGN", "CHECK", "PARTITION", "PERIOD", "SYSTEM", "UNUSED", "UNIQUE",
                       "SUPPLEMENTAL", "DEFAULT")):
            cur.skip_to_comma()
            return
        cur.accept("COLUMN")
        if_exists = cur.accept("IF", "EXISTS")
        if self.dialect == "oracle" and cur.at_op("("):
            cur.next()
            names = [self.name()]
            while cur.accept_op(","):
                names.append(self.name())
            cur.expect_op(")")
        else:
            names = [self.name()]
            if self.dialect == "tsql":  # DROP COLUMN a, b
                while cur.at_op(",") and cur.peek(1) is not None and cur.peek(1).upper not in (
                        "ADD", "DROP", "ALTER", "CONSTRAINT", "COLUMN"):
                    cur.next()
                    names.append(self.name())
        while cur.at_any(("CASCADE", "RESTRICT", "CONSTRAINTS", "INVALIDATE", "CHECKPOINT")):
            cur.next()
            if cur.peek() is not None and cur.peek().kind == "number":
                cur.next()
        for name in names:
            col = table.column(name)
            if col is None:
                if if_exists:
                    continue
                raise KeyError(name)
            table.columns.remove(col)
            table.primary_key = [k for k in table.primary_key if k != col.name]

    def _drop_pk(self, table: Table) -> None:
        """Oracle: columns that were NOT NULL only because of the key become nullable again (MySQL, PostgreSQL
        and SQL Server keep the NOT NULL)."""
        for name in table.pk_implied_not_null:
            col = table.column(name)
            if col is not None:
                col.nullable = True
        table.pk_implied_not_null = []
        table.primary_key = []
        table.primary_key_name = None

    def _modify(self, table: Table, if_exists: bool) -> None:
        cur = self.cur
        spec = parse_column(cur, self.dialect)
        spec.position = parse_position(cur)
        name = self.fold(spec.name, spec.quoted)
        if table.column(name) is None:
            if if_exists:
                return
            raise KeyError(name)
        if self.dialect == "oracle":
            self._oracle_modify(table, name, spec)
        else:
            self._replace_column(table, name, spec)

    def _replace_column(self, table: Table, old_name: str, spec: ColumnSpec) -> None:
        """MySQL MODIFY / CHANGE: the new definition replaces the old one entirely."""
        spec.name = self.fold(spec.name, spec.quoted)
        old = table.column(old_name)
        assert old is not None
        index = table.columns.index(old)
        if spec.name.lower() != old.name.lower() and table.column(spec.name) is not None:
            raise DdlSyntaxError(f"column {spec.name} already exists")
        col = spec.build(self.dialect, table.default_charset)
        if old.name in table.primary_key:
            col.nullable = False
            table.primary_key = [col.name if k == old.name else k for k in table.primary_key]
        table.columns.remove(old)
        self._place(table, col, spec.position, index)
        if spec.primary_key:
            table.primary_key = [col.name]
            self._fix_pk(table)

    def _oracle_modify(self, table: Table, name: str, spec: ColumnSpec) -> None:
        """Oracle MODIFY changes only what it names (type, default, NULL/NOT NULL)."""
        old = table.column(name)
        assert old is not None
        if spec.type_words:
            built = spec.build(self.dialect, table.default_charset)
            for attr in ("type_name", "jdbc_type", "source_type", "type_expression", "length", "scale", "spark_type"):
                setattr(old, attr, getattr(built, attr))
        if "nullable" in spec.written:
            declared_not_null = spec.nullable is False or spec.default_on_null
            old.nullable = not declared_not_null and old.name not in table.primary_key
            if declared_not_null:  # now NOT NULL in its own right: survives dropping the key
                table.pk_implied_not_null = [n for n in table.pk_implied_not_null if n != old.name]
        if "default" in spec.written:
            old.has_default, old.default = spec.has_default, spec.default
            old.default_is_literal = spec.default_is_literal
        if spec.primary_key:
            table.primary_key = [old.name]
            self._fix_pk(table)

    def _rename_clause(self, table: Table) -> None:
        cur = self.cur
        if cur.accept("COLUMN"):
            old = self.name()
            cur.expect("TO")
            new = self.name()
            self._rename_column(table, old, new)
        elif cur.accept("CONSTRAINT"):
            old = self.name()
            cur.expect("TO")
            new = self.name()
            if table.primary_key_name and old.lower() == table.primary_key_name.lower() and \
                    self._replay_kind is None:
                table.primary_key_name = new
        elif cur.at_any(("INDEX", "KEY")):
            cur.skip_to_comma()
        elif cur.at("TO") or cur.at("AS") or not (self.dialect == "postgres"):
            if not (cur.accept("TO") or cur.accept("AS")) and self.dialect == "postgres":
                raise cur.error("expected TO")
            parts = cur.dotted()
            if self.mysql or self.dialect == "tsql" or len(parts) > 1:
                table.id = self.table_id(parts)
            else:  # PostgreSQL / Oracle: the new name stays in the table's schema
                table.id = TableId(table.id.database, table.id.schema, self.fold(*parts[0]))
        else:  # PostgreSQL RENAME old TO new (column)
            old = self.name()
            cur.expect("TO")
            self._rename_column(table, old, self.name())

    def _rename_column(self, table: Table, old: str, new: str) -> None:
        col = table.column(old)
        if col is None:
            raise KeyError(old)
        if table.column(new) is not None and new.lower() != old.lower():
            raise DdlSyntaxError(f"column {new} already exists")
        table.primary_key = [new if k == col.name else k for k in table.primary_key]
        table.pk_implied_not_null = [new if k == col.name else k for k in table.pk_implied_not_null]
        table.default_constraints = {k: new if v == col.name else v for k, v in table.default_constraints.items()}
        col.name = new

    def _alter_column(self, table: Table, name: str) -> None:
        cur = self.cur
        col = table.column(name)
        if col is None:
            raise KeyError(name)
        if cur.accept("SET", "DEFAULT"):
            s, e = read_expression(cur)
            col.has_default = True
            col.default, col.default_is_literal = literal_value(cur, s, e)
        elif cur.accept("DROP", "DEFAULT"):
            col.has_default, col.default = False, None
        elif cur.accept("SET", "NOT", "NULL"):
            col.nullable = False
        elif cur.accept("DROP", "NOT", "NULL"):
            col.nullable = col.name in table.primary_key and False or True
        elif cur.accept("SET", "DATA", "TYPE") or cur.accept("TYPE"):
            spec = ColumnSpec(name=col.name, quoted=True)
            _read_type(cur, self.dialect, spec)
            self._retype(table, col, spec)
            cur.skip_to_comma()  # USING expr / COLLATE
        elif cur.at("ADD", "GENERATED"):
            col.auto_increment = True
            col.nullable = False
            cur.skip_to_comma()
        elif cur.accept("DROP", "IDENTITY"):
            col.auto_increment = False
            cur.skip_to_comma()
        elif cur.accept("DROP", "EXPRESSION"):  # PostgreSQL: a generated column becomes a plain one
            col.generation_expression, col.generated = None, False
            col.has_default, col.default = False, None
            cur.skip_to_comma()
        elif cur.at_any(("SET", "RESET", "DROP")):
            cur.skip_to_comma()  # SET STATISTICS / STORAGE / VISIBLE, DROP EXPRESSION ...
        elif self.dialect == "tsql":
            spec = ColumnSpec(name=col.name, quoted=True)
            _read_type(cur, self.dialect, spec)
            nullable = True
            if cur.accept("NOT", "NULL"):
                nullable = False
            elif cur.accept("NULL"):
                nullable = True
            self._retype(table, col, spec)
            col.nullable = nullable and col.name not in table.primary_key
            cur.skip_to_comma()
        else:
            raise cur.error("unrecognized ALTER COLUMN action")

    def _retype(self, table: Table, col: Column, spec: ColumnSpec) -> None:
        built = spec.build(self.dialect, table.default_charset)
        for attr in ("type_name", "jdbc_type", "source_type", "type_expression", "length", "scale", "spark_type",
                     "enum_values"):
            setattr(col, attr, getattr(built, attr))
        if "identity" in col.type_name and "identity" not in built.type_name and self.dialect == "tsql":
            col.type_name = built.type_name

    # ------------------------------------------------------------------ DROP / RENAME / TRUNCATE
    def drop(self) -> list[Change]:
        cur = self.cur
        cur.expect("DROP")
        temporary = cur.accept("TEMPORARY")
        if cur.at_any(("DATABASE", "SCHEMA")):
            return self.drop_database()
        if not cur.at("TABLE"):
            tok = cur.peek()
            if tok is not None and tok.upper in _NOOP_OBJECTS | {"USER"}:
                return [self.noop(f"DROP {tok.upper}")]
            raise cur.error("unrecognized DROP statement")
        cur.next()
        cur.accept("IF", "EXISTS")
        ids = [self.read_table_id()]
        while cur.accept_op(","):
            ids.append(self.read_table_id())
        if temporary:
            return [self.noop("DROP TEMPORARY TABLE")]
        changes = []
        for tid in ids:
            table = self.lookup(tid)
            if table is not None:
                changes.extend(self._commit_drop(p) for p in self._partitions(table.id) if p in self.state.tables)
                changes.append(self._commit_drop(table.id))
        return changes or [self.noop("DROP TABLE (no such table)")]

    def _partitions(self, parent: TableId) -> list[TableId]:
        """Partitions of `parent`, deepest first (PostgreSQL drops them with their parent)."""
        out: list[TableId] = []
        for tid, table in list(self.state.tables.items()):
            if table.partition_of == parent or parent in table.inherits:
                out.extend(self._partitions(tid))
                out.append(tid)
        return out

    def drop_database(self) -> list[Change]:
        cur = self.cur
        kind = cur.next().upper
        cur.accept("IF", "EXISTS")
        names = [self.name()]
        while cur.accept_op(","):
            names.append(self.name())
        changes = []
        for name in names:
            for tid in sorted(self.state.tables):
                in_scope = tid.database == name if self.mysql else tid.schema == name
                if in_scope:
                    changes.append(self._commit_drop(tid))
            if self.mysql:
                self.state.databases.pop(name, None)
                if self.state.current_database == name:
                    self.state.current_database = None
            changes.append(Change(kind=DATABASE, statement=self.text, database=name, detail=f"DROP {kind}"))
        return changes

    def rename(self) -> list[Change]:
        cur = self.cur
        cur.expect("RENAME")
        if cur.at("USER"):
            return [self.noop("RENAME USER")]
        cur.accept("TABLE") or cur.accept("TABLES")
        pairs = []
        while True:
            old = self.read_table_id()
            cur.accept("WAIT") and cur.next()
            cur.accept("NOWAIT")
            cur.expect("TO")
            parts = cur.dotted()
            if self.dialect == "oracle" and len(parts) == 1:
                new = TableId(old.database, old.schema, self.fold(*parts[0]))
            else:
                new = self.table_id(parts)
            pairs.append((old, new))
            if not cur.accept_op(","):
                break
        # validate on a scratch copy first: a failing pair leaves the catalog untouched
        names = {tid: tid for tid in self.state.tables}
        for old, new in pairs:
            if old not in names:
                raise DdlSyntaxError(f"table {old} is not in the schema history")
            if new in names:
                raise DdlSyntaxError(f"table {new} already exists")
            del names[old]
            names[new] = new
        changes = []
        for old, new in pairs:
            table = self.state.tables[old].copy()
            table.id = new
            changes.append(self._commit_alter(old, table))
        return changes

    def truncate(self) -> list[Change]:
        cur = self.cur
        cur.expect("TRUNCATE")
        cur.accept("TABLE")
        cur.accept("ONLY")
        ids = [self.read_table_id()]
        while cur.accept_op(","):
            cur.accept("ONLY")
            ids.append(self.read_table_id())
        return [Change(kind=TRUNCATE, statement=self.text, table_id=tid, table=self.lookup(tid)) for tid in ids]

    # ------------------------------------------------------------------ dialect specifics
    def set_search_path(self) -> list[Change]:
        cur = self.cur
        cur.next()
        cur.next()
        cur.accept("TO") or cur.accept_op("=")
        first = cur.next()
        if first.kind in ("word", "ident", "string") and first.upper not in ("DEFAULT",):
            self.default_schema = first.text if first.kind != "word" else first.text.lower()
            self.state.default_schema = self.default_schema
        return [self.noop("SET search_path")]

    def tsql_exec(self) -> list[Change]:
        cur = self.cur
        cur.next()
        parts = cur.dotted()
        if parts[-1][0].lower() != "sp_rename":
            return [self.noop("EXEC")]
        args = []
        while not cur.done():
            tok = cur.next()
            if tok.kind == "string":
                args.append(tok.text)
        if len(args) < 2:
            raise DdlSyntaxError("sp_rename needs two arguments")
        objtype = args[2].upper() if len(args) > 2 else "OBJECT"
        obj_parts = [(p.strip("[]"), True) for p in args[0].split(".")]
        if objtype == "COLUMN":
            tid = self.table_id(obj_parts[:-1])
            self.target = tid
            table = self._existing(tid).copy()
            self._rename_column(table, obj_parts[-1][0], args[1])
            return [self._commit_alter(tid, table)]
        if objtype in ("INDEX", "STATISTICS", "USERDATATYPE"):
            return [self.noop("sp_rename " + objtype)]
        tid = self.table_id(obj_parts)
        self.target = tid
        original = self.lookup(tid)
        if original is None:
            return [self.noop("sp_rename (not a known table)")]
        table = original.copy()
        table.id = TableId(tid.database, tid.schema, args[1])
        return [self._commit_alter(original.id, table)]


def _spec_from_column(col: Column, options: set[str]) -> ColumnSpec:
    """PostgreSQL (LIKE other [INCLUDING ...]): a copy of the column with its type and NOT NULL; the default,
    identity and generation expression only with INCLUDING DEFAULTS / IDENTITY / GENERATED."""
    copied = copy.deepcopy(col)
    serial_default = bool(col.default and col.default.startswith("nextval(") and col.auto_increment)
    if "DEFAULTS" not in options and not col.generation_expression:
        copied.has_default, copied.default, copied.default_is_literal = False, None, True
        if serial_default:  # a plain integer column now
            copied.auto_increment = False
            copied.type_name = {"serial": "int4", "bigserial": "int8", "smallserial": "int2"}.get(
                col.type_name, col.type_name)
            copied.type_expression = copied.type_name
    if col.auto_increment and not serial_default and "IDENTITY" not in options:
        copied.auto_increment = False
    if col.generation_expression and "GENERATED" not in options:
        copied.generation_expression, copied.generated = None, False
        copied.has_default, copied.default = False, None
    spec = ColumnSpec(name=col.name, quoted=True, prebuilt=copied)
    spec.nullable = copied.nullable
    return spec
