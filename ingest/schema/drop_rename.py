"""The DROP, RENAME and TRUNCATE handlers of the DDL interpreter, with SQL Server's EXEC sp_rename (a rename)."""

from __future__ import annotations

from ingest.schema.alter_table import rename_column
from ingest.schema.keywords import NOOP_OBJECTS
from ingest.schema.model import (
    DATABASE,
    TRUNCATE,
    Change,
    TableId,
)
from ingest.schema.statement import Statement
from ingest.schema.tokens import DdlSyntaxError


class DropStatement(Statement):
    """DROP [TEMPORARY] TABLE (with PostgreSQL's partitions and owned sequences) / DATABASE / SCHEMA / other objects."""

    def apply(self) -> list[Change]:
        cur = self.cur
        cur.expect("DROP")
        temporary = cur.accept("TEMPORARY")
        if cur.at_any(("DATABASE", "SCHEMA")):
            return self._drop_database()
        if not cur.at("TABLE"):
            tok = cur.peek()
            if tok is not None and tok.upper in NOOP_OBJECTS | {"USER"}:
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
                for dropped in [*(p for p in self._partitions(table.id) if p in self.state.tables), table.id]:
                    self.dropped_sequences.update(self.state.tables[dropped].owned_sequences)
                    changes.append(self.commit_drop(dropped))
        changes.extend(self.commit_sequence_dependents())
        return changes or [self.noop("DROP TABLE (no such table)")]

    def _partitions(self, parent: TableId) -> list[TableId]:
        """Partitions of `parent`, deepest first (PostgreSQL drops them with their parent)."""
        out: list[TableId] = []
        for tid, table in list(self.state.tables.items()):
            if table.partition_of == parent or parent in table.inherits:
                out.extend(self._partitions(tid))
                out.append(tid)
        return out

    def _drop_database(self) -> list[Change]:
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
                    changes.append(self.commit_drop(tid))
            if self.mysql:
                self.state.databases.pop(name, None)
                if self.state.current_database == name:
                    self.state.current_database = None
            changes.append(Change(kind=DATABASE, statement=self.text, database=name, detail=f"DROP {kind}"))
        return changes


class RenameStatement(Statement):
    """RENAME TABLE a TO b[, c TO d] (MySQL/MariaDB), RENAME a TO b (Oracle); RENAME USER is a no-op."""

    def apply(self) -> list[Change]:
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
            changes.append(self.commit_alter(old, table))
        return changes


class TruncateStatement(Statement):
    """TRUNCATE [TABLE] [ONLY] t[, ...]: a TRUNCATE change per table, the catalog unchanged."""

    def apply(self) -> list[Change]:
        cur = self.cur
        cur.expect("TRUNCATE")
        cur.accept("TABLE")
        cur.accept("ONLY")
        ids = [self.read_table_id()]
        while cur.accept_op(","):
            cur.accept("ONLY")
            ids.append(self.read_table_id())
        return [Change(kind=TRUNCATE, statement=self.text, table_id=tid, table=self.lookup(tid)) for tid in ids]


class TsqlExecStatement(Statement):
    """SQL Server EXEC sp_rename 'table' | 'table.column', 'new'[, 'COLUMN']; other procedures are no-ops."""

    def apply(self) -> list[Change]:
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
            table = self.existing(tid).copy()
            rename_column(table, obj_parts[-1][0], args[1])
            return [self.commit_alter(tid, table)]
        if objtype in ("INDEX", "STATISTICS", "USERDATATYPE"):
            return [self.noop("sp_rename " + objtype)]
        tid = self.table_id(obj_parts)
        self.target = tid
        original = self.lookup(tid)
        if original is None:
            return [self.noop("sp_rename (not a known table)")]
        table = original.copy()
        table.id = TableId(tid.database, tid.schema, args[1])
        return [self.commit_alter(original.id, table)]
