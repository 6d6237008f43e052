"""One DDL statement being interpreted: its tokens, its dialect's hooks (dialects.py), how written names become
table ids, and the helpers every statement kind commits its changes with. Each statement kind subclasses
`Statement` (create_table.py, alter_table.py, drop_rename.py, session.py); ingest/schema/interpreter.py picks the
handler by the statement's first words."""

from __future__ import annotations

import re
from typing import Protocol

from ingest.errors import LakecdcError
from ingest.schema.columns import charset_of_collation
from ingest.schema.dialects import HOOKS
from ingest.schema.model import ALTER, DROP, NOOP, Change, Column, DatabaseInfo, Table, TableId
from ingest.schema.tokens import Cursor, DdlSyntaxError, Tok
from ingest.schema.types import ColumnTypeError, resolve_type

_PG_SAFE_IDENT = re.compile(r"[a-z_][a-z0-9_]*")
_NEXTVAL = re.compile(r"nextval\('((?:[^']|'')*)'")


class Catalog(Protocol):
    """What a statement reads and changes of the catalog (`ingest.schema.interpreter.SchemaState`)."""

    tables: dict[TableId, Table]
    databases: dict[str, DatabaseInfo]
    server_charset: str | None
    default_schema: str | None
    current_database: str | None

    def next_version(self, table_id: TableId) -> int: ...


class Statement:
    """A statement of no particular kind; the handlers override `apply`."""

    def __init__(self, state: Catalog, dialect: str, default_database: str | None,
                 default_schema: str | None, text: str, tokens: list[Tok], full_sql: str) -> None:
        self.state = state
        self.dialect = dialect
        self.hooks = HOOKS[dialect]
        self.mysql = self.hooks.mysql
        self.default_database = default_database
        self.default_schema = default_schema or state.default_schema
        self.text = text
        self.cur = Cursor(tokens, full_sql)
        self.target: TableId | None = None  # the table an ERROR change is about
        self.dropped_sequences: set[str] = set()  # PostgreSQL: owned sequences dropped by this statement

    def apply(self) -> list[Change]:
        raise self.cur.error("unrecognized statement")

    # ------------------------------------------------------------------ names
    def fold(self, name: str, quoted: bool) -> str:
        return self.hooks.fold(name, quoted)

    def name(self) -> str:
        return self.fold(*self.cur.ident())

    def table_id(self, parts: list[tuple[str, bool]]) -> TableId:
        names = [self.fold(n, q) for n, q in parts]
        return self.hooks.table_id(names, self.state.current_database or self.default_database, self.default_schema)

    def read_table_id(self) -> TableId:
        """The next dotted name as a table id; the first one read is the statement's target."""
        tid = self.table_id(self.cur.dotted())
        self.target = self.target or tid
        return tid

    def read_other_table(self) -> TableId:
        """A table the statement refers to (LIKE, PARTITION OF, INHERITS) without being its target."""
        return self.table_id(self.cur.dotted())

    def lookup(self, tid: TableId) -> Table | None:
        table = self.state.tables.get(tid)
        if table is None and self.hooks.names_case_insensitive:
            key = (str(tid.database).lower(), str(tid.schema).lower(), tid.table.lower())
            for other_id, other in self.state.tables.items():
                if (str(other_id.database).lower(), str(other_id.schema).lower(), other_id.table.lower()) == key:
                    return other
        return table

    def existing(self, tid: TableId) -> Table:
        table = self.lookup(tid)
        if table is None:
            raise DdlSyntaxError(f"table {tid} is not in the schema history")
        return table

    def database_charset(self, database: str | None) -> str | None:
        info = self.state.databases.get(database or "")
        return info.charset if info and info.charset else self.state.server_charset

    # ------------------------------------------------------------------ grammar shared by CREATE and ALTER
    def charset_options(self) -> str | None:
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

    def looks_like_index(self) -> bool:
        """KEY/INDEX followed by a name or '(' is an index; a column named `key` would be quoted in practice."""
        nxt = self.cur.peek(1)
        return nxt is not None and (nxt.kind == "op" and nxt.text == "(" or nxt.kind in ("word", "ident")) and \
            not (nxt.kind == "word" and self._is_type_word(nxt.upper))

    def _is_type_word(self, word: str) -> bool:
        try:
            resolve_type(self.dialect, [word], ["1"] if word in ("VARCHAR", "VARBINARY", "VARCHAR2") else [])
            return True
        except (ColumnTypeError, LakecdcError):
            return False

    # ------------------------------------------------------------------ table rules shared by CREATE and ALTER
    def fix_primary_key(self, table: Table) -> None:
        """The key's columns exist and are NOT NULL (Oracle remembers which were NOT NULL only for the key); an
        unnamed key gets the dialect's name for it."""
        resolved = []
        for name in table.primary_key:
            col = table.column(name)
            if col is None:
                raise DdlSyntaxError(f"primary key column {name} does not exist")
            if col.nullable and self.hooks.marks_key_implied_not_null and col.name not in table.pk_implied_not_null:
                table.pk_implied_not_null.append(col.name)
            col.nullable = False
            resolved.append(col.name)
        table.primary_key = resolved
        if table.primary_key and table.primary_key_name is None:
            table.primary_key_name = self.hooks.primary_key_name(table.id.table)

    def serial_default(self, table: Table, col: Column) -> None:
        """A PostgreSQL serial column's default: nextval of the sequence <table>_<column>_seq, owned by the table;
        names are printed as PostgreSQL quotes them ('"t_Col_seq"')."""
        if col.default == "nextval" and self.dialect == "postgres":
            schema = "" if table.id.schema in (None, "public") else f"{pg_quote_ident(table.id.schema)}."
            sequence = f"{table.id.table}_{col.name}_seq"
            col.default = f"nextval('{schema}{pg_quote_ident(sequence)}'::regclass)"
            table.owned_sequences[sequence] = col.name

    # ------------------------------------------------------------------ commits
    def noop(self, what: str) -> Change:
        return Change(kind=NOOP, statement=self.text, detail=what, table_id=self.target)

    def commit_alter(self, old_id: TableId, table: Table) -> Change:
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

    def commit_drop(self, tid: TableId) -> Change:
        table = self.state.tables.pop(tid)
        table = table.copy()
        table.version = self.state.next_version(tid)
        return Change(kind=DROP, statement=self.text, table_id=tid, table=table)

    def commit_sequence_dependents(self) -> list[Change]:
        """PostgreSQL: a dropped table or serial column drops its owned sequences; with CASCADE the nextval
        defaults other tables copied (LIKE ... INCLUDING DEFAULTS) go with them."""
        dropped, self.dropped_sequences = self.dropped_sequences, set()
        changes = []
        for tid, other in list(self.state.tables.items()):
            if not any(_sequence_of(c.default) in dropped for c in other.columns if c.has_default):
                continue
            table = other.copy()
            for col in table.columns:
                if col.has_default and _sequence_of(col.default) in dropped:
                    end_serial(col)
                    col.has_default, col.default = False, None
            changes.append(self.commit_alter(tid, table))
        return changes


def pg_quote_ident(name: str) -> str:
    """An identifier as PostgreSQL prints it: quoted unless lower-case letters, digits and underscores."""
    return name if _PG_SAFE_IDENT.fullmatch(name) else '"' + name.replace('"', '""') + '"'


def _sequence_of(default: str | None) -> str | None:
    """The unqualified sequence name of a nextval('...'::regclass) default."""
    m = _NEXTVAL.match(default or "")
    if not m:
        return None
    name = m.group(1).replace("''", "'")
    parts = re.findall(r'"((?:[^"]|"")*)"|([^".]+)', name)
    quoted, plain = parts[-1] if parts else ("", name)
    return quoted.replace('""', '"') if quoted else plain


def end_serial(col: Column) -> None:
    """A serial column whose nextval default is replaced or dropped: a plain integer column."""
    if col.auto_increment and (col.default or "").startswith("nextval("):
        col.auto_increment = False
        col.type_name = {"serial": "int4", "bigserial": "int8", "smallserial": "int2"}.get(col.type_name,
                                                                                           col.type_name)
        col.type_expression = col.type_name
