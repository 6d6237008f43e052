"""The ALTER handler of the DDL interpreter: ALTER TABLE, partition / inheritance replay, ALTER DATABASE; ALTER of
other objects is a no-op.

`AlterStatement` reads the clauses every dialect shares; a subclass per dialect holds what only that dialect
writes: `PostgresAlterStatement` (its subcommand passes, SET SCHEMA, ATTACH/DETACH PARTITION),
`OracleAlterStatement` (MODIFY, SET UNUSED, column lists in parentheses), `TsqlAlterStatement` (ADD a, b, DEFAULT
... FOR, ALTER COLUMN type) and `ingest.schema.mysql_alter.MysqlAlterStatement` (every clause resolved against the
table as it was)."""

from __future__ import annotations

from typing import Any

from ingest.schema.columns import (
    ColumnSpec,
    _read_type,
    is_number,
    literal_value,
    parse_column,
    parse_key_columns,
    parse_position,
    read_expression,
)
from ingest.schema.defaults import convert_default
from ingest.schema.keywords import ALTER_NOOP, NOOP_OBJECTS
from ingest.schema.model import (
    DATABASE,
    Change,
    Column,
    Table,
    TableId,
)
from ingest.schema.statement import Statement, end_serial
from ingest.schema.tokens import Cursor, DdlSyntaxError


class AlterStatement(Statement):
    """ALTER TABLE / DATABASE / other objects; the clauses every dialect shares."""

    strict_clause_end = True  # after a clause comes ',' or the next clause's keyword (not so in Oracle)
    rename_needs_column_keyword = True  # PostgreSQL: RENAME [COLUMN] old TO new
    key_goes_with_its_columns = False  # PostgreSQL: dropping any key column drops the key constraint

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self._parent_pk_names: set[str] = set()  # while an ALTER is replayed on a partition: ancestors' PK names
        self._replay_kind: str | None = None  # "partition" / "inherits" while replaying on a child table

    def apply(self) -> list[Change]:
        cur = self.cur
        cur.expect("ALTER")
        while cur.at_any(("ONLINE", "OFFLINE", "IGNORE")):
            cur.next()
        if cur.at_any(("DATABASE", "SCHEMA")):
            return self.alter_database()
        if not cur.at("TABLE"):
            tok = cur.peek()
            if tok is not None and tok.upper in NOOP_OBJECTS | {"SESSION", "SYSTEM", "USER"}:
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
        self.read_clauses(table)
        table.renumber()
        # PostgreSQL applies column changes of a partitioned table to its partitions too (unless ONLY)
        children: list[Table] = []
        if self.hooks.partitions_follow_alter and not only:
            children = self._partition_changes(original, start)
        changes = []
        if not table.same_structure(original):
            changes.append(self.commit_alter(original.id, table))
        else:
            original.primary_key_name = table.primary_key_name  # RENAME CONSTRAINT: metadata, no new version
            original.owned_sequences = table.owned_sequences
        for child in children:
            changes.append(self.commit_alter(child.id, child))
        changes.extend(self.commit_sequence_dependents())
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
                self.read_clauses(copy_)
                copy_.id = child_id
                copy_.renumber()
                if not copy_.same_structure(child):
                    changed.append(copy_)
                changed.extend(self._partition_changes(child, start, seen))
            finally:
                self._parent_pk_names, self._replay_kind = saved
        return changed

    def alter_database(self) -> list[Change]:
        cur = self.cur
        cur.next()
        name = None
        if not cur.at_any(("DEFAULT", "CHARACTER", "CHARSET", "COLLATE", "CHAR")):
            name = self.name()
        name = name or self.state.current_database or self.default_database
        if name:
            self.database_options(name)
        return [Change(kind=DATABASE, statement=self.text, database=name, detail="ALTER DATABASE")]

    def database_options(self, name: str) -> None:
        """ALTER DATABASE's options that the catalog keeps (MySQL/MariaDB: the character set)."""

    def read_clauses(self, table: Table) -> None:
        """The clauses in written order."""
        cur = self.cur
        while not cur.done():
            adding = cur.at("ADD")
            self.alter_clause(table)
            if cur.accept_op(","):
                if adding:
                    self.continue_add(table)
                continue
            if cur.done():
                break
            if self.strict_clause_end and not cur.at_any(("ADD", "DROP", "MODIFY", "RENAME")):
                raise cur.error("unexpected text after ALTER TABLE clause")

    def continue_add(self, table: Table) -> None:
        """After `ADD x,`: more elements of the same ADD (SQL Server)."""

    def alter_clause(self, table: Table) -> None:  # noqa: C901 - a flat keyword switch
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
            self.modify_clause(table, if_exists)
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
        elif cur.accept("COMMENT"):
            cur.accept_op("=")
            table.comment = cur.next().text
        elif self.dialect_clause(table):
            pass
        elif cur.at_any(ALTER_NOOP):
            cur.skip_to_comma()
        else:
            raise cur.error("unrecognized ALTER TABLE clause")

    def dialect_clause(self, table: Table) -> bool:
        """A clause only this dialect has: applied (True), or nothing read (False)."""
        return False

    def _add(self, table: Table) -> None:
        cur = self.cur
        constraint_name = None
        if cur.at("CONSTRAINT"):
            cur.next()
            if not cur.at_any(("PRIMARY", "UNIQUE", "FOREIGN", "CHECK")):
                constraint_name = self.name()
        if self.add_default_constraint(table, constraint_name):
            return
        if cur.at("PRIMARY", "KEY") and self._replay_kind == "inherits":  # keys are not inherited
            cur.skip_to_comma()
            return
        if cur.at("PRIMARY", "KEY"):
            if table.primary_key and self.hooks.one_primary_key and self._replay_kind is None:
                raise DdlSyntaxError(f"table {table.id} already has a primary key")
            cur.i += 2
            while not cur.at_op("("):
                cur.next()
            table.primary_key = parse_key_columns(cur, self.fold)
            table.primary_key_name = constraint_name or self.hooks.primary_key_name(table.id.table)
            self.fix_primary_key(table)
            cur.skip_to_comma()
            return
        if constraint_name is not None or cur.at_any(("UNIQUE", "FOREIGN", "CHECK", "INDEX", "KEY", "FULLTEXT",
                                                      "SPATIAL", "PARTITION", "EXCLUDE", "SUPPLEMENTAL")) or \
                cur.at("PERIOD", "FOR") or cur.at("SYSTEM", "VERSIONING"):
            if cur.at_any(("INDEX", "KEY")) and not self.looks_like_index():
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

    def add_default_constraint(self, table: Table, constraint_name: str | None) -> bool:
        """ADD [CONSTRAINT n] DEFAULT expr FOR column (SQL Server): applied (True), or nothing read (False)."""
        return False

    def _add_column(self, table: Table, spec: ColumnSpec, if_not_exists: bool) -> None:
        spec.name = self.fold(spec.name, spec.quoted)
        if table.column(spec.name) is not None:
            if if_not_exists:
                return
            raise DdlSyntaxError(f"column {spec.name} already exists")
        col = spec.build(self.dialect, table.default_charset)
        self.serial_default(table, col)
        self._place(table, col, spec.position, len(table.columns))
        if spec.default_constraint:
            table.default_constraints[spec.default_constraint.lower()] = col.name
        if spec.primary_key:
            table.primary_key = [col.name]
            table.primary_key_name = spec.constraint_name
            self.fix_primary_key(table)

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
            names.extend(self.more_constraint_names())
            pk_names = self._parent_pk_names | ({table.primary_key_name.lower()} if table.primary_key_name else set())
            for name in names:
                if name.lower() in pk_names:
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
        names = self.dropped_column_names()
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
            if self.key_goes_with_its_columns and col.name in table.primary_key:
                table.primary_key, table.primary_key_name = [], None
            table.primary_key = [k for k in table.primary_key if k != col.name]
            for sequence, owner in list(table.owned_sequences.items()):  # even if its default was replaced
                if owner == col.name:
                    del table.owned_sequences[sequence]
                    self.dropped_sequences.add(sequence)

    def more_constraint_names(self) -> list[str]:
        """After DROP CONSTRAINT a: the names of a list (SQL Server's DROP CONSTRAINT a, b)."""
        return []

    def dropped_column_names(self) -> list[str]:
        """DROP [COLUMN] a: the column names (a list in Oracle and SQL Server)."""
        return [self.name()]

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

    def modify_clause(self, table: Table, if_exists: bool) -> None:
        """MODIFY [COLUMN] [IF EXISTS] column (after the keywords)."""
        self._modify(table, if_exists)

    def _modify(self, table: Table, if_exists: bool) -> None:
        cur = self.cur
        spec = parse_column(cur, self.dialect)
        spec.position = parse_position(cur)
        name = self.fold(spec.name, spec.quoted)
        if table.column(name) is None:
            if if_exists:
                return
            raise KeyError(name)
        self.modify_column(table, name, spec)

    def modify_column(self, table: Table, name: str, spec: ColumnSpec) -> None:
        raise self.cur.error("MODIFY is MySQL/Oracle syntax")

    def _rename_clause(self, table: Table) -> None:
        cur = self.cur
        if cur.accept("COLUMN"):
            old = self.name()
            cur.expect("TO")
            new = self.name()
            rename_column(table, old, new)
        elif cur.accept("CONSTRAINT"):
            old = self.name()
            cur.expect("TO")
            new = self.name()
            if table.primary_key_name and old.lower() == table.primary_key_name.lower() and \
                    self._replay_kind is None:
                table.primary_key_name = new
        elif cur.at_any(("INDEX", "KEY")):
            cur.skip_to_comma()
        elif cur.at("TO") or cur.at("AS") or self.rename_needs_column_keyword:
            cur.accept("TO") or cur.accept("AS")
            parts = cur.dotted()
            if not self.hooks.rename_keeps_schema or len(parts) > 1:
                table.id = self.table_id(parts)
            else:  # PostgreSQL / Oracle: the new name stays in the table's schema
                table.id = TableId(table.id.database, table.id.schema, self.fold(*parts[0]))
        else:  # PostgreSQL RENAME old TO new (column)
            old = self.name()
            cur.expect("TO")
            rename_column(table, old, self.name())

    def _alter_column(self, table: Table, name: str) -> None:
        cur = self.cur
        col = table.column(name)
        if col is None:
            raise KeyError(name)
        if cur.accept("SET", "DEFAULT"):
            s, e = read_expression(cur)
            end_serial(col)  # a serial's nextval default replaced: a plain column now
            col.has_default = True
            col.default, col.default_is_literal = literal_value(cur, s, e)
            convert_default(col, self.dialect, is_number(cur, s, e))
        elif cur.accept("DROP", "DEFAULT"):
            end_serial(col)
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
            identity = col.auto_increment and not (col.default or "").startswith("nextval(")
            if not identity and not cur.accept("IF", "EXISTS"):
                raise DdlSyntaxError(f"column {col.name} is not an identity column")
            col.auto_increment = col.auto_increment and not identity  # IF EXISTS on a serial: nothing
            cur.skip_to_comma()
        elif cur.accept("DROP", "EXPRESSION"):  # PostgreSQL: a generated column becomes a plain one
            col.generation_expression, col.generated = None, False
            col.has_default, col.default = False, None
            cur.skip_to_comma()
        elif cur.at_any(("SET", "RESET", "DROP")):
            cur.skip_to_comma()  # SET STATISTICS / STORAGE / VISIBLE, DROP EXPRESSION ...
        else:
            self.alter_column_other(table, col)

    def alter_column_other(self, table: Table, col: Column) -> None:
        """ALTER COLUMN c followed by none of the shared actions (SQL Server: a new type)."""
        raise self.cur.error("unrecognized ALTER COLUMN action")

    def _retype(self, table: Table, col: Column, spec: ColumnSpec) -> None:
        built = spec.build(self.dialect, table.default_charset)
        for attr in ("type_name", "jdbc_type", "source_type", "type_expression", "length", "scale", "spark_type",
                     "enum_values"):
            setattr(col, attr, getattr(built, attr))


class PostgresAlterStatement(AlterStatement):
    rename_needs_column_keyword = False
    key_goes_with_its_columns = True

    def read_clauses(self, table: Table) -> None:
        """PostgreSQL runs the subcommands of one ALTER TABLE in passes (tablecmds.c AlterTablePass): every DROP
        (column, constraint, DEFAULT, NOT NULL, IDENTITY) first, then ALTER TYPE, ADD COLUMN, SET NOT NULL /
        identity, primary keys, SET DEFAULT; written order within a pass. So `SET DEFAULT 1, DROP DEFAULT`
        keeps the default and `SET NOT NULL, DROP NOT NULL` keeps NOT NULL."""
        cur = self.cur
        starts: list[tuple[int, int, int]] = []
        while not cur.done():
            starts.append((_pg_pass(cur), len(starts), cur.i))
            cur.skip_to_comma()
            if not cur.accept_op(",") and not cur.done():
                raise cur.error("unexpected text after ALTER TABLE clause")
        end = cur.i
        for _, _, start in sorted(starts):
            cur.i = start
            self.alter_clause(table)
            if not (cur.done() or cur.at_op(",")):
                raise cur.error("unexpected text after ALTER TABLE clause")
        cur.i = end

    def dialect_clause(self, table: Table) -> bool:
        cur = self.cur
        if cur.accept("SET", "SCHEMA"):
            table.id = TableId(table.id.database, self.name(), table.id.table)
            for col in table.columns:  # owned (serial) sequences move with the table
                if col.auto_increment and col.default and col.default.startswith("nextval('"):
                    seq = col.default[len("nextval('"):].split("'", 1)[0].rsplit(".", 1)[-1]
                    schema = "" if table.id.schema == "public" else f"{table.id.schema}."
                    col.default = f"nextval('{schema}{seq}'::regclass)"
            return True
        if cur.at_any(("ATTACH", "DETACH")) and cur.peek(1) is not None and cur.peek(1).upper == "PARTITION":
            attach = cur.next().upper == "ATTACH"
            cur.next()
            child = self.existing(self.read_other_table())
            if self._replay_kind is None:  # not again while the clauses are replayed on partitions
                child.partition_of = table.id if attach else None  # metadata only: no new version
            cur.skip_to_comma()
            return True
        return False


class OracleAlterStatement(AlterStatement):
    strict_clause_end = False

    def dialect_clause(self, table: Table) -> bool:
        if self.cur.accept("SET", "UNUSED"):  # the column leaves the visible structure
            self._drop_clause(table)
            self.cur.accept("ONLINE")
            return True
        return False

    def modify_clause(self, table: Table, if_exists: bool) -> None:
        cur = self.cur
        if not cur.at_op("("):
            self._modify(table, if_exists)
            return
        cur.next()  # MODIFY (a ..., b ...)
        while True:
            self._modify(table, if_exists=False)
            if not cur.accept_op(","):
                break
        cur.expect_op(")")

    def modify_column(self, table: Table, name: str, spec: ColumnSpec) -> None:
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
            self.fix_primary_key(table)

    def dropped_column_names(self) -> list[str]:
        cur = self.cur
        if not cur.at_op("("):
            return [self.name()]
        cur.next()  # DROP (a, b)
        names = [self.name()]
        while cur.accept_op(","):
            names.append(self.name())
        cur.expect_op(")")
        return names


class TsqlAlterStatement(AlterStatement):
    def continue_add(self, table: Table) -> None:
        """ADD a INT, b INT, CONSTRAINT ... (one ADD for several elements)."""
        cur = self.cur
        while not cur.at_any(("ADD", "DROP", "ALTER", "WITH", "CHECK", "NOCHECK", "ENABLE", "DISABLE", "SWITCH",
                              "SET", "REBUILD")):
            self._add(table)
            if not cur.accept_op(","):
                break

    def add_default_constraint(self, table: Table, constraint_name: str | None) -> bool:
        cur = self.cur
        if not cur.accept("DEFAULT"):
            return False
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
        return True

    def more_constraint_names(self) -> list[str]:
        cur = self.cur
        names = []
        while cur.at_op(",") and cur.peek(1) is not None and cur.peek(1).kind in ("word", "ident") and \
                cur.peek(1).upper not in ("ADD", "DROP", "ALTER", "COLUMN", "CONSTRAINT"):
            cur.next()
            names.append(self.name())
            cur.skip_to_comma()
        return names

    def dropped_column_names(self) -> list[str]:
        cur = self.cur
        names = [self.name()]
        while cur.at_op(",") and cur.peek(1) is not None and cur.peek(1).upper not in (
                "ADD", "DROP", "ALTER", "CONSTRAINT", "COLUMN"):
            cur.next()
            names.append(self.name())
        return names

    def alter_column_other(self, table: Table, col: Column) -> None:
        """ALTER COLUMN c type [NULL | NOT NULL]."""
        cur = self.cur
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


def rename_column(table: Table, old: str, new: str) -> None:
    """RENAME COLUMN old TO new, with the key, the constraints and the owned sequences that name it."""
    col = table.column(old)
    if col is None:
        raise KeyError(old)
    if table.column(new) is not None and new.lower() != old.lower():
        raise DdlSyntaxError(f"column {new} already exists")
    table.primary_key = [new if k == col.name else k for k in table.primary_key]
    table.pk_implied_not_null = [new if k == col.name else k for k in table.pk_implied_not_null]
    table.default_constraints = {k: new if v == col.name else v for k, v in table.default_constraints.items()}
    table.owned_sequences = {k: new if v == col.name else v for k, v in table.owned_sequences.items()}
    col.name = new


def _pg_pass(cur: Cursor) -> int:
    """The AlterTablePass of the PostgreSQL subcommand at the cursor (lower runs first)."""
    words = [(cur.peek(k).upper if cur.peek(k) is not None else "") for k in range(7)]
    if words[0] == "DROP":
        return 0
    if words[0] == "ALTER":
        action = words[3:] if words[1] == "COLUMN" else words[2:]
        if action[0] == "DROP":
            return 0
        if action[0] == "TYPE" or action[:3] == ["SET", "DATA", "TYPE"]:
            return 1
        if action[:2] == ["SET", "DEFAULT"]:
            return 9
        if action[:2] == ["SET", "NOT"] or action[0] == "ADD" or action[:2] == ["SET", "GENERATED"]:
            return 6
        return 10
    if words[0] == "ADD":
        rest = words[3:] if words[1] == "CONSTRAINT" else words[1:]
        if rest[:2] == ["PRIMARY", "KEY"] or rest[0] == "UNIQUE":
            return 7
        if rest[0] in ("CHECK", "FOREIGN", "EXCLUDE"):
            return 9
        return 4
    return 10
