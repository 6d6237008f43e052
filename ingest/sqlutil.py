"""Quoting for Spark SQL text. Every identifier that comes from configuration or a source catalog
goes through `quote_ident`; every literal through `quote_literal`."""

from __future__ import annotations


def quote_ident(name: str) -> str:
    """Backtick-quote one Spark SQL identifier part."""
    return "`" + str(name).replace("`", "``") + "`"


def quote_source_ident(name: str, dialect: str) -> str:
    """Quote one identifier part for a source database: PostgreSQL "x" (dialect "postgres"), MySQL/MariaDB `x`."""
    if dialect == "postgres":
        return '"' + str(name).replace('"', '""') + '"'
    return quote_ident(name)


def qualified(*parts: str | None) -> str:
    """`a`.`b`.`c` from the non-empty parts."""
    return ".".join(quote_ident(p) for p in parts if p)


def quote_literal(value: str) -> str:
    """A Spark SQL string literal."""
    return "'" + str(value).replace("\\", "\\\\").replace("'", "\\'") + "'"
