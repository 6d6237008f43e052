"""`lakecdc schema rebuild [--source S]` and `lakecdc schema show TABLE [--at SEQ] [--source S]`."""

from __future__ import annotations

import argparse
import difflib
import json

from ingest.config import ProjectConfig
from ingest.errors import LakecdcError


def _sources(config: ProjectConfig, name: str | None) -> list[str]:
    if name:
        config.source(name)
        return [name]
    if not config.sources:
        raise LakecdcError("no sources configured: pass --source or add one to lakecdc.yml")
    return sorted(config.sources)


def _truthy(value: object, default: bool) -> bool:
    if value is None:
        return default
    return str(value).strip().lower() in ("1", "true", "yes", "on")


def cmd_rebuild(args: argparse.Namespace, config: ProjectConfig) -> int:
    from ingest.engine import start_engine
    from ingest.schema.history import SKIP_UNPARSEABLE_PROPERTY, build_history, dialect_for_connector
    from ingest.schema.store import append_rejects, read_schema_changes, recorded_connector, write_history

    engine = start_engine(config.engine)
    for source in _sources(config, args.source):
        settings = config.source(source)
        records = read_schema_changes(engine.spark, config.engine, source)
        # the source's own connector's dialect (mariadb is not mysql, though its events say "mysql"); for sources
        # that land other connectors' records as they are (debezium-json, `connector: debezium`), the recording
        # connector's; a source without schema change events has an empty history
        dialect = ""
        if records:
            try:
                dialect = dialect_for_connector(settings.connector)
            except LakecdcError:
                dialect = dialect_for_connector(recorded_connector(engine.spark, config.engine, source)
                                                or settings.connector)
        rows, rejects, _ = build_history(
            records, dialect, source=source,
            server_charset=settings.properties.get("database.server.charset"),
            skip_unparseable=_truthy(settings.properties.get(SKIP_UNPARSEABLE_PROPERTY), True))
        write_history(engine.spark, config.engine, source, rows)
        added = append_rejects(engine.spark, config.engine, source, rejects)
        errors = sum(1 for r in rows if r["parse_status"] == "error")
        print(f"{source}: {len(records)} schema changes -> {len(rows)} history rows "
              f"({errors} parse errors, {added} new rejects)", flush=True)
    return 0


def cmd_show(args: argparse.Namespace, config: ProjectConfig) -> int:
    from ingest.engine import start_engine
    from ingest.schema.store import columns_of, history_table_ids, read_history, version_at

    sources = _sources(config, args.source)
    if len(sources) > 1:
        raise LakecdcError("several sources are configured: pass --source")
    engine = start_engine(config.engine)
    rows = read_history(engine.spark, config.engine, sources[0], args.table)
    row = version_at(rows, args.at)
    if row is None:
        where = f" at seq {args.at}" if args.at else ""
        known = history_table_ids(engine.spark, config.engine, sources[0])
        close = difflib.get_close_matches(args.table, known, n=3, cutoff=0.5)
        hint = (f"; did you mean {', '.join(close)}?" if close else
                f"; the history has {', '.join(known[:10])}{' ...' if len(known) > 10 else ''}" if known else
                "; the history is empty")
        raise LakecdcError(f"no schema for {args.table}{where} in the history of {sources[0]}{hint}")
    print(f"{row['table_id']} version {row['version']} ({row['change_kind']}, valid from seq "
          f"{row['valid_from_seq']}, source {row['state_source']})")
    if row["change_kind"] == "DROP":
        print("(dropped)")
        return 0
    key = set(json.loads(row["primary_key"] or "[]"))
    for col in columns_of(row):
        print(column_line(col, key))
    return 0


def column_line(col: dict, key: set[str]) -> str:
    """One column of `schema show`: position, name, source type, Spark type, PK, nullability, default."""
    flags = ("PK " if col["name"] in key else "") + ("NOT NULL" if not col["nullable"] else "NULL")
    value = "NULL" if col.get("default") is None else col["default"]   # has_default with None: DEFAULT NULL
    default = f" DEFAULT {value}" if col.get("has_default") else ""
    return f"  {col['position']:>3} {col['name']:<30} {col['source_type']:<28} {col['spark_type']:<16} {flags}{default}"


def add_commands(subparsers: argparse._SubParsersAction) -> None:
    schema = subparsers.add_parser("schema", help="schema history: rebuild from bronze, show a table's schema",
                                   description="Parsed DDL history per source (bronze S_schema_history).")
    sub = schema.add_subparsers(dest="schema_command", metavar="ACTION", required=True)
    rebuild = sub.add_parser("rebuild", help="rebuild S_schema_history from S_schema_changes",
                             description="Replay every schema change of the source in seq order.")
    rebuild.add_argument("--source", help="source name (default: every configured source)")
    rebuild.set_defaults(func=cmd_rebuild)
    show = sub.add_parser("show", help="print a table's columns at a position",
                          description="Print the schema version of TABLE valid at --at SEQ (default: latest).")
    show.add_argument("table", metavar="TABLE", help="table id as in bronze: db.table or db.schema.table")
    show.add_argument("--at", metavar="SEQ", help="seq position (inclusive)")
    show.add_argument("--source", help="source name (needed when several are configured)")
    show.set_defaults(func=cmd_show)
