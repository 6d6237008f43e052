"""Schema history: captured DDL (and Debezium tableChanges) -> versioned table schemas.

API (stable; used by the connectors and the dbt helper)
--------------------------------------------------------
Dialects (exact names): "mysql", "mariadb" (same grammar), "postgres", "oracle", "tsql".

    from ingest.schema import SchemaState, TableId

    state = SchemaState(server_charset="utf8mb4")          # MySQL/MariaDB: the server default charset
    changes = state.apply(ddl, "mariadb", default_database="inventory")   # -> list[Change]
    # PostgreSQL / Oracle / SQL Server: default_database is the catalog (database) part of table ids and
    # default_schema the schema unqualified names resolve to (postgres: public, tsql: dbo, oracle: none):
    state.apply(ddl, "oracle", default_database="ORCLPDB1", default_schema="DEBEZIUM")

    for change in changes:
        change.kind          # CREATE ALTER DROP (structural: a new table version) | TRUNCATE NOOP DATABASE USE ERROR
        change.table_id      # TableId(database, schema, table); str() gives db.table (MySQL) / db.schema.table
        change.previous_id   # the old id when a table was renamed
        change.table         # Table after the change (DROP: the last state); TRUNCATE: the current table
        change.detail        # NOOP: what it was ("CREATE INDEX", ...); ERROR: the parse/apply error
        change.statement     # the statement text
        change.to_table_change()   # Debezium tableChanges entry (dict) for structural changes, else None

    state.tables[TableId("inventory", None, "customers")]       # current Table
    state.apply_table_changes(entries, "mariadb")               # apply Debezium tableChanges (authoritative)

Model (ingest.schema.model): `Table(id, columns, primary_key, default_charset, comment, version)` (plus
interpreter bookkeeping that is not part of the structure: primary_key_name, partition_of, inherits,
pk_implied_not_null, default_constraints),
`Table.to_table_change(kind, previous_id=None)` -> {"type", "id", "table": {"defaultCharsetName",
"primaryKeyColumnNames", "columns": [{name, jdbcType, nativeType, typeName, typeExpression, charsetName,
length, scale, position, optional, autoIncremented, generated, comment, hasDefaultValue,
defaultValueExpression, enumValues}], "comment"}}; `Table.spark_schema()` -> "`id` INT, `name` STRING".
`Column` fields: name, type_name, jdbc_type, source_type (server-canonical type text, e.g. MariaDB
COLUMN_TYPE "int(10) unsigned", PostgreSQL format_type "character varying(20)"), length, scale, nullable,
has_default, default, auto_increment, generated, generation_expression, position (1-based), charset,
collation, enum_values, comment, spark_type. Type rules per dialect: ingest.schema.types.

A statement that cannot be parsed or applied yields a Change(kind="ERROR") and leaves the catalog unchanged;
the other statements of the same DDL text still apply.

Persistence (ingest.schema.history / ingest.schema.store): bronze `S_schema_history`, one row per table
version, rebuilt from `S_schema_changes` by `lakecdc schema rebuild`; see docs/schema-history.md.
"""

from __future__ import annotations

import importlib
from typing import Any

# Loaded on first use (PEP 562), not when a submodule is imported: the interpreter brings sqlglot in (0.3 s),
# which every `lakecdc` command paid at start through the CLI's `ingest.schema.commands`.
_EXPORTS = {
    **dict.fromkeys(("SchemaState", "parse_debezium_ids", "table_from_debezium"), "ingest.schema.interpreter"),
    **dict.fromkeys(("ALTER", "CREATE", "DATABASE", "DROP", "ERROR", "NOOP", "STRUCTURAL_KINDS", "TRUNCATE", "USE",
                     "Change", "Column", "Table", "TableId"), "ingest.schema.model"),
    **dict.fromkeys(("DIALECTS", "resolve_type"), "ingest.schema.types"),
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module 'ingest.schema' has no attribute {name!r}")
    return getattr(importlib.import_module(_EXPORTS[name]), name)
