"""The CREATE handler of the DDL interpreter: CREATE TABLE (columns, keys, LIKE, PARTITION OF, INHERITS, table
options) and CREATE DATABASE / SCHEMA; CREATE of other objects (views, indexes, routines ...) is a no-op."""

from __future__ import annotations

import copy
from typing import Any

from ingest.schema.columns import (
    ColumnSpec,
    charset_of_collation,
    check_mysql_key_part,
    parse_column,
    parse_key_parts,
)
from ingest.schema.keywords import NOOP_OBJECTS
from ingest.schema.model import (
    CREATE,
    DATABASE,
    Change,
    Column,
    DatabaseInfo,
    Table,
    TableId,
)
from ingest.schema.statement import Statement
from ingest.schema.tokens import DdlSyntaxError


class CreateStatement(Statement):
    """CREATE [OR REPLACE] [TEMPORARY ...] TABLE / DATABASE / SCHEMA / other objects."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self._unique_keys: list[list[tuple[str, bool]]] = []  # MySQL: unique keys in order (_unique_as_primary_key)
        self._mysql_key_prefixes: dict[str, bool] = {}  # MySQL: primary key column -> has a prefix length

    def apply(self) -> list[Change]:
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
            if tok.upper in NOOP_OBJECTS and tok.upper not in ("DEFINER", "ALGORITHM", "SQL", "DEFAULT", "NO"):
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
            charset = self.charset_options() or self.state.server_charset
            existing = self.state.databases.get(name)
            if existing is None:
                self.state.databases[name] = DatabaseInfo(name, charset)
        return [Change(kind=DATABASE, statement=self.text, database=name, detail=f"CREATE {kind}")]

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
            like = self.existing(self.read_other_table())
            if wrapped:
                cur.expect_op(")")
        elif cur.accept("PARTITION", "OF"):
            like = self.existing(self.read_other_table())
            partition_of = like.id
        if like is not None:
            table = like.copy()
            table.id = tid
            table.version = 0
            table.primary_key_name = None
            table.partition_of = partition_of
            table.inherits = []
            table.owned_sequences = {}
        elif cur.at_op("("):
            self._table_elements(table, specs)
        options = self._table_options()
        if options.get("as_select") and (not specs or (self.dialect == "postgres" and not all(
                s.type_words or s.prebuilt for s in specs))):
            raise DdlSyntaxError("CREATE TABLE ... AS SELECT without column definitions: the column types "
                                 "come from the query, which a DDL parser cannot know")
        parents = [self.existing(p) for p in options.get("inherits", [])]
        if like is None and not specs and not parents:
            raise DdlSyntaxError("CREATE TABLE without columns")
        if like is None:
            charset = options.get("charset") or self.database_charset(tid.database)
            table.default_charset = charset if self.mysql else None
            self._build_columns(table, specs)
            if self.mysql and not table.primary_key and self._unique_keys:
                self._unique_as_primary_key(table, self._unique_keys[0])
        if parents:
            self._inherit(table, parents)
        if options.get("comment") is not None:
            table.comment = options["comment"]
        if self.mysql and options.get("charset") and like is None:
            table.default_charset = options["charset"]
        self.fix_primary_key(table)
        if self.mysql and like is None:  # a BLOB/TEXT key column needs a prefix length
            for name in table.primary_key:
                check_mysql_key_part(table.column(name), self._mysql_key_prefixes.get(name.lower(), False))
        table.renumber()
        replaced = self.state.tables.get(tid)
        changes = []
        if replaced is not None:  # CREATE OR REPLACE TABLE
            changes.append(self.commit_drop(tid))
        table.version = self.state.next_version(tid)
        self.state.tables[tid] = table
        changes.append(Change(kind=CREATE, statement=self.text, table_id=tid, table=table.copy()))
        return changes

    def _table_elements(self, table: Table, specs: list[ColumnSpec]) -> None:
        cur = self.cur
        self._unique_keys = []
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
            if table.primary_key and self.hooks.one_primary_key:
                raise DdlSyntaxError(f"table {table.id} has two primary keys")
            parts = parse_key_parts(cur, self.fold)
            table.primary_key = [name for name, _ in parts]
            table.primary_key_name = constraint_name
            if self.mysql:
                self._mysql_key_prefixes = {name.lower(): prefix for name, prefix in parts}
            cur.skip_to_comma()
            return
        if self.mysql and cur.at("UNIQUE"):
            cur.next()
            while not cur.at_op("("):
                cur.next()  # KEY/INDEX, index name, USING BTREE
            self._unique_keys.append(parse_key_parts(cur, self.fold))
            cur.skip_to_comma()
            return
        if cur.at_any(("UNIQUE", "FOREIGN", "CHECK", "EXCLUDE", "FULLTEXT", "SPATIAL")) or \
                (cur.at_any(("KEY", "INDEX")) and self.looks_like_index()) or cur.at("PERIOD", "FOR") or \
                cur.at("SUPPLEMENTAL", "LOG") or constraint_name is not None:
            cur.skip_to_comma()
            return
        if cur.at("LIKE") and self.dialect == "postgres":
            cur.next()
            like = self.existing(self.read_other_table())
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
            self._unique_keys.append([(spec.name, False)])

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
            self.serial_default(table, col)
            table.columns.append(col)
            if spec.default_constraint:
                table.default_constraints[spec.default_constraint.lower()] = col.name
            if spec.primary_key:
                if table.primary_key and self.hooks.one_primary_key:
                    raise DdlSyntaxError(f"table {table.id} has two primary keys")
                table.primary_key = [col.name]
                table.primary_key_name = spec.constraint_name

    def _unique_as_primary_key(self, table: Table, parts: list[tuple[str, bool]]) -> None:
        """Debezium's MySQL DDL parser keys a table without a primary key by its first unique key, when every
        column of that key exists and is NOT NULL (else by nothing: the later unique keys are not tried)."""
        columns = [table.column(name) for name, _ in parts]
        if all(c is not None and not c.nullable for c in columns):
            table.primary_key = [c.name for c in columns]  # type: ignore[union-attr]
            self._mysql_key_prefixes = {name.lower(): prefix for name, prefix in parts}


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
