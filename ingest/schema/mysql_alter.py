"""MySQL/MariaDB ALTER TABLE: every clause is resolved against the table as it was before the statement, the way
the server builds the new definition (sql_table.cc, mysql_prepare_alter_table), not in written order:

1. the old columns in their order: dropped ones leave, a CHANGE/MODIFY without FIRST/AFTER replaces its column in
   place, ALTER COLUMN SET/DROP DEFAULT and RENAME COLUMN apply to the (new) definition;
2. then, in written order, the added columns, the CHANGE/MODIFY clauses with FIRST/AFTER (moved from their old
   place, where an earlier AFTER may have referred to them), and a MODIFY of a column added by this statement
   (which takes its new place: the end unless FIRST/AFTER is written);
3. the primary key: the old one (its columns renamed, dropped ones removed) unless DROP PRIMARY KEY, then
   ADD PRIMARY KEY (a second key without dropping the first is an error); key columns become NOT NULL.

So `ADD c INT FIRST, MODIFY c MEDIUMINT` leaves c at the end, `ADD PRIMARY KEY (c), DROP PRIMARY KEY` keeps the
new key, and `MODIFY pk BIGINT, DROP PRIMARY KEY` leaves pk nullable. Clauses that do not touch columns or the
key (CONVERT TO, table options, RENAME TO, index clauses) are applied as they come by the shared ALTER TABLE
clauses (`ingest.schema.alter_table.AlterStatement`).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

from ingest.schema.alter_table import AlterStatement
from ingest.schema.columns import (
    ColumnSpec,
    charset_of_collation,
    check_mysql_key_part,
    is_number,
    literal_value,
    parse_column,
    parse_key_parts,
    parse_position,
    read_expression,
    widen_text,
)
from ingest.schema.defaults import convert_default, mysql_added_value
from ingest.schema.model import Column, DatabaseInfo, Table
from ingest.schema.tokens import Cursor, DdlSyntaxError


class MysqlAlterStatement(AlterStatement):
    """ALTER TABLE / DATABASE of MySQL/MariaDB."""

    def read_clauses(self, table: Table) -> None:
        MysqlAlter(self, table).apply()

    def dialect_clause(self, table: Table) -> bool:
        """[DEFAULT] CHARACTER SET / CHARSET / COLLATE: the table's default character set."""
        cur = self.cur
        if not cur.at_any(("DEFAULT", "CHARACTER", "CHARSET", "COLLATE")):
            return False
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
        return True

    def database_options(self, name: str) -> None:
        charset = self.charset_options()
        if charset:
            self.state.databases.setdefault(name, DatabaseInfo(name)).charset = charset


@dataclass
class _Change:
    """ADD (old is None), MODIFY (old = the new name) or CHANGE old new."""

    spec: ColumnSpec
    old: str | None
    if_exists: bool = False
    column: Column | None = None


@dataclass
class _Plan:
    ops: list[_Change] = field(default_factory=list)   # ADD / MODIFY / CHANGE in written order
    drops: list[tuple[str, bool]] = field(default_factory=list)
    renames: list[tuple[str, str]] = field(default_factory=list)
    defaults: list[tuple[str, bool, str | None, bool, bool]] = field(default_factory=list)  # name, set, value...
    drop_pk: int = 0
    add_pks: list[list[tuple[str, bool]]] = field(default_factory=list)  # key parts: (name, has prefix length)
    if_not_exists: set[int] = field(default_factory=set)  # ids of ADD ops written with IF NOT EXISTS
    convert: str | None = None  # CONVERT TO CHARACTER SET: every character column of the result


class MysqlAlter:
    def __init__(self, run: MysqlAlterStatement, table: Table) -> None:
        self.run = run
        self.cur: Cursor = run.cur
        self.table = table
        self.plan = _Plan()

    # ------------------------------------------------------------------ parse
    def apply(self) -> None:
        cur = self.cur
        while not cur.done():
            self._clause()
            if cur.accept_op(","):
                continue
            if not cur.done():
                raise cur.error("unexpected text after ALTER TABLE clause")
        self._build()

    def _clause(self) -> None:  # noqa: C901 - a flat keyword switch
        cur, plan = self.cur, self.plan
        start = cur.i
        if cur.accept("ADD"):
            if cur.accept("CONSTRAINT") and not cur.at("PRIMARY"):
                if not cur.at_any(("UNIQUE", "FOREIGN", "CHECK")):
                    self.run.name()
            if cur.accept("PRIMARY", "KEY"):
                while not cur.at_op("("):
                    cur.next()  # USING BTREE, index name
                plan.add_pks.append(self._key_parts())
                cur.skip_to_comma()
                return
            if cur.at_any(("UNIQUE", "FOREIGN", "CHECK", "FULLTEXT", "SPATIAL", "PARTITION", "CONSTRAINT")) or \
                    cur.at("PERIOD", "FOR") or cur.at("SYSTEM", "VERSIONING") or (
                    cur.at_any(("INDEX", "KEY")) and self.run.looks_like_index()):
                cur.skip_to_comma()
                return
            cur.accept("COLUMN")
            if_not_exists = cur.accept("IF", "NOT", "EXISTS")
            if cur.accept_op("("):
                while True:
                    if cur.at("PRIMARY", "KEY") or cur.at_any(("CONSTRAINT", "UNIQUE", "INDEX", "KEY", "FOREIGN",
                                                                "CHECK")):
                        self._add_element()
                    else:
                        self._add_op(parse_column(cur, self.run.dialect), None, if_not_exists)
                    if not cur.accept_op(","):
                        break
                cur.expect_op(")")
                return
            spec = parse_column(cur, self.run.dialect)
            spec.position = parse_position(cur)
            self._add_op(spec, None, if_not_exists)
        elif cur.accept("DROP"):
            if cur.accept("PRIMARY", "KEY"):
                plan.drop_pk += 1
            elif cur.accept("CONSTRAINT"):
                cur.accept("IF", "EXISTS")
                if self.run.name().upper() == "PRIMARY":
                    plan.drop_pk += 1
            elif cur.at_any(("INDEX", "KEY", "FOREIGN", "CHECK", "PARTITION", "PERIOD", "SYSTEM", "UNIQUE")):
                pass
            else:
                cur.accept("COLUMN")
                if_exists = cur.accept("IF", "EXISTS")
                plan.drops.append((self.run.name(), if_exists))
            cur.skip_to_comma()
        elif cur.at_any(("MODIFY", "CHANGE")):
            change = cur.next().upper == "CHANGE"
            cur.accept("COLUMN")
            if_exists = cur.accept("IF", "EXISTS")
            old = self.run.name() if change else None
            spec = parse_column(cur, self.run.dialect)
            spec.position = parse_position(cur)
            spec.name = self.run.fold(spec.name, spec.quoted)
            plan.ops.append(_Change(spec, old if change else spec.name, if_exists))
        elif cur.at("RENAME") and cur.peek(1) is not None and cur.peek(1).upper == "COLUMN":
            cur.i += 2
            old = self.run.name()
            cur.expect("TO")
            plan.renames.append((old, self.run.name()))
        elif cur.at("ALTER") and not (cur.peek(1) is not None and cur.peek(1).upper in ("INDEX", "CONSTRAINT",
                                                                                        "CHECK")):
            cur.next()
            cur.accept("COLUMN")
            cur.accept("IF", "EXISTS")
            name = self.run.name()
            if cur.accept("SET", "DEFAULT"):
                s, e = read_expression(cur)
                value, literal = literal_value(cur, s, e)
                plan.defaults.append((name, True, value, literal, is_number(cur, s, e)))
            elif cur.accept("DROP", "DEFAULT"):
                plan.defaults.append((name, False, None, True, False))
            cur.skip_to_comma()
        elif cur.accept("CONVERT", "TO"):
            if not (cur.accept("CHARACTER", "SET") or cur.accept("CHARSET")):
                raise cur.error("expected CHARACTER SET")
            charset = cur.next().text.lower()
            if cur.accept("COLLATE"):
                cur.next()
            if charset == "default":
                charset = self.run.database_charset(self.table.id.database) or charset
            self.table.default_charset = plan.convert = charset
        else:
            cur.i = start
            self.run.alter_clause(self.table)  # table options, RENAME TO, no-ops

    def _add_element(self) -> None:
        cur = self.cur
        if cur.accept("CONSTRAINT") and not cur.at_any(("PRIMARY", "UNIQUE", "FOREIGN", "CHECK")):
            self.run.name()
        if cur.accept("PRIMARY", "KEY"):
            while not cur.at_op("("):
                cur.next()
            self.plan.add_pks.append(self._key_parts())
        cur.skip_to_comma()

    def _add_op(self, spec: ColumnSpec, old: str | None, if_not_exists: bool) -> None:
        spec.name = self.run.fold(spec.name, spec.quoted)
        op = _Change(spec, old)
        if if_not_exists:
            self.plan.if_not_exists.add(id(op))
        self.plan.ops.append(op)

    def _key_parts(self) -> list[tuple[str, bool]]:
        return parse_key_parts(self.cur, self.run.fold)

    # ------------------------------------------------------------------ build
    def _build(self) -> None:
        table, plan = self.table, self.plan
        old_cols = {c.name.lower(): c for c in table.columns}
        dropped: set[str] = set()
        for name, if_exists in plan.drops:
            if name.lower() not in old_cols or name.lower() in dropped:
                if if_exists:
                    continue
                raise KeyError(name)
            dropped.add(name.lower())
        in_place: dict[str, _Change] = {}
        for op in plan.ops:
            if op.old is not None and op.old.lower() in old_cols:
                if op.old.lower() in dropped or op.old.lower() in in_place:  # dropped / changed twice
                    raise KeyError(op.old)
                in_place[op.old.lower()] = op
        new_cols: list[Column] = []
        renamed: dict[str, Column] = {}  # old name (lower) -> its column in the new table
        for col in table.columns:
            key = col.name.lower()
            if key in dropped:
                continue
            op = in_place.get(key)
            if op is not None:  # in its old place; one with FIRST/AFTER moves there in step 2
                new = op.column = self._column(op.spec)
            else:
                new = copy.deepcopy(col)
            new_cols.append(new)
            renamed[key] = new
        for old, new_name in plan.renames:
            col = renamed.get(old.lower())
            if col is None:
                raise KeyError(old)
            col.name = new_name
        added: dict[str, Column] = {}
        for op in plan.ops:
            if op.old is None:  # ADD
                if _find(new_cols, op.spec.name) is not None:
                    if id(op) in plan.if_not_exists:
                        continue
                    raise DdlSyntaxError(f"column {op.spec.name} already exists")
                col = self._column(op.spec)
                self._place(new_cols, col, op.spec.position)
                added[col.name.lower()] = col
            elif op.old.lower() in old_cols:
                if op.spec.position is not None and op.column is not None:
                    self._place(new_cols, op.column, op.spec.position)
            else:  # MODIFY / CHANGE of a column this statement added: it takes its new place
                target = added.pop(op.old.lower(), None)
                if target is None:
                    if op.if_exists:
                        continue
                    raise KeyError(op.old)
                new_cols.remove(target)
                col = self._column(op.spec)
                self._place(new_cols, col, op.spec.position)
                added[col.name.lower()] = col
        # ALTER COLUMN names a column the statement does not otherwise redefine (a CHANGE/MODIFY in place or a
        # RENAME COLUMN of it, or a second ALTER of it, is an "unknown column" on the server)
        redefined = {k for k, op in in_place.items() if op.spec.position is None} | \
            {old.lower() for old, _ in plan.renames}
        altered: set[str] = set()
        for name, set_default, value, literal, number in plan.defaults:
            col = renamed.get(name.lower()) or added.get(name.lower())
            if col is None or name.lower() in redefined or name.lower() in altered:
                raise KeyError(name)
            altered.add(name.lower())
            col.has_default, col.default, col.default_is_literal = set_default, value, literal
            convert_default(col, self.run.dialect, number, definition=False)
        for col in added.values():
            col.missing_value = mysql_added_value(col)
        seen: set[str] = set()
        for col in new_cols:
            if col.name.lower() in seen:
                raise DdlSyntaxError(f"duplicate column {col.name}")
            seen.add(col.name.lower())
        if plan.convert:
            for col in new_cols:
                if col.charset is not None:
                    widen_text(col, col.charset, plan.convert)
                    col.charset, col.collation = plan.convert, None
        table.columns = new_cols
        table.primary_key = self._primary_key(table, old_cols, dropped, renamed, new_cols)

    def _primary_key(self, table: Table, old_cols: dict[str, Column], dropped: set[str],
                     renamed: dict[str, Column], new_cols: list[Column]) -> list[str]:
        plan = self.plan
        if plan.drop_pk > 1 or (plan.drop_pk and not table.primary_key):
            raise DdlSyntaxError("DROP PRIMARY KEY: the table has no primary key")
        pk: list[str] = []
        if not plan.drop_pk:
            pk = [renamed[k.lower()].name for k in table.primary_key if k.lower() not in dropped]
        for parts in plan.add_pks + [[(op.spec.name, False)] for op in plan.ops if op.spec.primary_key]:
            if pk:
                raise DdlSyntaxError("multiple primary keys defined")
            for name, prefix in parts:
                col = _find(new_cols, name)
                if col is None:
                    raise KeyError(name)
                check_mysql_key_part(col, prefix)
                pk.append(col.name)
        for name in pk:
            col = _find(new_cols, name)
            assert col is not None
            col.nullable = False
        del old_cols
        return pk

    def _column(self, spec: ColumnSpec) -> Column:
        return spec.build(self.run.dialect, self.table.default_charset)

    def _place(self, cols: list[Column], col: Column, position: tuple[str, str | None] | None) -> None:
        if col in cols:
            cols.remove(col)
        if position is None:
            cols.append(col)
        elif position[0] == "FIRST":
            cols.insert(0, col)
        else:
            after = _find(cols, position[1] or "")
            if after is None:
                raise KeyError(position[1])
            cols.insert(cols.index(after) + 1, col)


def _find(cols: list[Column], name: str) -> Column | None:
    lowered = name.lower()
    return next((c for c in cols if c.name.lower() == lowered), None)
