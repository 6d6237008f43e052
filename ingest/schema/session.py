"""The session statements of the DDL interpreter: USE database, and PostgreSQL's SET search_path / SET SCHEMA (the
schema unqualified names resolve to from then on)."""

from __future__ import annotations

from ingest.schema.model import USE, Change
from ingest.schema.statement import Statement


class UseStatement(Statement):
    def apply(self) -> list[Change]:
        self.cur.next()
        name = self.name()
        self.state.current_database = name
        return [Change(kind=USE, statement=self.text, database=name)]


class SetSearchPathStatement(Statement):
    def apply(self) -> list[Change]:
        cur = self.cur
        cur.next()
        cur.next()
        cur.accept("TO") or cur.accept_op("=")
        first = cur.next()
        if first.kind in ("word", "ident", "string") and first.upper not in ("DEFAULT",):
            self.default_schema = first.text if first.kind != "word" else first.text.lower()
            self.state.default_schema = self.default_schema
        return [self.noop("SET search_path")]
