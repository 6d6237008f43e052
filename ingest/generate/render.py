"""Render model files (SQL and YAML) for captured tables, and write them without clobbering user edits.

Every generated file starts with a marker line holding the sha256 of the rest of the file. On a
re-run a file is rewritten only when its marker still matches its body (nobody edited it); an edited
file, or one without the marker, is left alone and reported.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from ingest.bronze.contract import BRONZE_SCHEMA, table_name
from ingest.generate.catalog import CapturedTable

MARKER = "lakecdc:generated"
_MARKER_RE = re.compile(r"^(?:--|#) lakecdc:generated sha256=([0-9a-f]{64})\n")


def model_base(table: CapturedTable, taken: set[str]) -> str:
    """<source>__<table>, or with all id parts when the plain table name is not unique in the source."""
    short = table.table_id.split(".")[-1]
    name = short if short not in taken else "_".join(table.table_id.split("."))
    return f"{table.source}__{re.sub(r'[^0-9A-Za-z_]', '_', name).lower()}"


def _sql_string(value: str) -> str:
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _mongodb_fields(table: CapturedTable) -> str:
    """A MongoDB collection's fields with their type names as a Jinja list of [name, type] pairs, one a line (the
    staging and silver models must agree on it; a list, because dbt's model config does not keep a dict's order,
    which is the column order)."""
    if table.mongodb is None:
        return ""
    lines = ",\n".join(f"    [{_sql_string(name)}, {_sql_string(type_name)}]"
                       for name, type_name in table.mongodb.types().items())
    return "[\n" + lines + "]"


def staging_sql(table: CapturedTable) -> str:
    fields = f", mongodb_fields={_mongodb_fields(table)}" if table.mongodb is not None else ""
    return (
        "{{ config(materialized='ephemeral') }}\n"
        f"{{{{ lakecdc.lakecdc_staging({_sql_string(table.source)}, {_sql_string(table.table_id)}{fields}) }}}}\n"
    )


def silver_sql(table: CapturedTable, base: str, kind: str) -> str:
    materialization = "lakecdc_current" if kind == "current" else "lakecdc_history"
    fields = f",\n    lakecdc_mongodb_fields={_mongodb_fields(table)}" if table.mongodb is not None else ""
    return (
        f"{{{{ config(materialized='{materialization}', schema='silver', "
        f"lakecdc_source={_sql_string(table.source)}, lakecdc_table_id={_sql_string(table.table_id)}{fields}) }}}}\n"
        f"select * from {{{{ ref('stg_{base}') }}}}\n"
    )


def changelog_sql(table: CapturedTable, base: str) -> str:
    """Silver of a table without a key: every change in seq order, the row as the event leaves it (the new row;
    a delete's old row), like Debezium's new-record-state flattening with deletes kept. Rebuilt in full on
    every run; current state needs a key."""
    columns = ", ".join(_quoted(c.name) for c in table.columns)
    return (
        "{{ config(materialized='table', schema='silver') }}\n"
        f"-- {table.table_id} has no primary key: a changelog, not current state (docs/silver.md)\n"
        f"select {columns}{', ' if columns else ''}_op, _seq, _source_ts, _batch_id\n"
        f"from {{{{ ref('stg_{base}') }}}}\n"
    )


def _quoted(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def keyless_note(table: CapturedTable, base: str) -> str:
    """What `generate` says about a table without a key."""
    return (f"{table.table_id} has no primary key: its silver is the changelog {base}_changelog (every change, "
            f"in seq order); current state and history need a key (a primary key, or on MySQL/MariaDB a "
            f"unique index on NOT NULL columns)")


def _column_docs(table: CapturedTable) -> list[dict]:
    cols = []
    described = {c.name: c.description for c in table.columns if c.description}
    for k in table.keys:
        cols.append({"name": k, "description": described.get(k, "primary key column")})
    for c in table.columns:
        if c.name in table.keys:
            continue
        desc = c.description or (f"source type {c.source_type}" if c.source_type else "captured column")
        cols.append({"name": c.name, "description": desc})
    return cols


class _PlainDumper(yaml.SafeDumper):
    """No anchors and aliases (&id001 / *id001) for repeated values such as a key list: readable, editable YAML."""

    def ignore_aliases(self, data: object) -> bool:
        return True


def _dump(doc: dict) -> str:
    return yaml.dump(doc, Dumper=_PlainDumper, sort_keys=False)


# Freshness of bronze (`dbt source freshness`): the writer stamps every row's ingested_at
BRONZE_FRESHNESS = {"warn_after": {"count": 1, "period": "hour"}, "error_after": {"count": 24, "period": "hour"}}


def models_yaml(source: str, tables: list[tuple[CapturedTable, str]]) -> str:
    models = []
    for table, base in tables:
        keys = table.keys
        if not keys:
            models.append({"name": f"stg_{base}", "description": f"Typed change events of {table.table_id}.",
                           "columns": _column_docs(table)})
            models.append({"name": f"{base}_changelog",
                           "description": f"Every change of {table.table_id} (no primary key, so no current state).",
                           "columns": _column_docs(table)})
            continue
        models.append({"name": f"stg_{base}", "description": f"Typed change events of {table.table_id}.",
                       "columns": _column_docs(table)})
        current: dict = {
            "name": base,
            "description": f"Current state of {table.table_id} (one row per key, latest change applied).",
            "columns": _column_docs(table),
        }
        if keys:
            # lakecdc_unique_current also fails on a null key (one test where `not_null` on each key made more)
            # MongoDB: documents with fields or values the generated columns do not hold (`lakecdc generate` again)
            values_test = ("lakecdc.lakecdc_no_placeholders" if table.mongodb is None else {
                "lakecdc.lakecdc_mongodb_fields": {"arguments": {"ignored": sorted(table.mongodb.skipped)},
                                                   "config": {"severity": "warn"}}})
            current["data_tests"] = [{"lakecdc.lakecdc_unique_current": {"arguments": {"keys": keys}}}, values_test]
        models.append(current)
        history: dict = {"name": f"{base}_history",
                         "description": f"Every version of every row of {table.table_id} (SCD2).",
                         "columns": _column_docs(table)}
        if keys:
            # no_overlap also finds a key with two open versions: a unique_current test on is_current would repeat it
            history["data_tests"] = [{"lakecdc.lakecdc_history_no_overlap": {"arguments": {"keys": keys}}}]
        models.append(history)
    return _dump({"version": 2, "models": models})


def sources_yaml(source: str) -> str:
    tables: list[dict] = [{"name": table_name(source, kind)} for kind in ("events", "schemas", "schema_changes")]
    tables[0]["config"] = {"freshness": BRONZE_FRESHNESS, "loaded_at_field": "ingested_at"}
    doc = {"version": 2, "sources": [{"name": f"bronze_{source}", "schema": BRONZE_SCHEMA,
                                      "description": f"Bronze change events of source {source}.",
                                      "tables": tables}]}
    return _dump(doc)


def with_marker(body: str, comment: str) -> str:
    digest = hashlib.sha256(body.encode()).hexdigest()
    return f"{comment} {MARKER} sha256={digest}\n{body}"


def is_unedited(text: str) -> bool:
    m = _MARKER_RE.match(text)
    if not m:
        return False
    return hashlib.sha256(text[m.end():].encode()).hexdigest() == m.group(1)


@dataclass
class WriteResult:
    written: list[Path]
    unchanged: list[Path]
    kept: list[Path]   # edited by the user (or not generated): left alone
    notes: list[str] = field(default_factory=list)   # what the user should know (tables without a key)


def write_files(files: dict[Path, str], result: WriteResult) -> None:
    for path, body in files.items():
        comment = "#" if path.suffix in (".yml", ".yaml") else "--"
        text = with_marker(body, comment)
        if path.exists():
            current = path.read_text()
            if current == text:
                result.unchanged.append(path)
                continue
            if not is_unedited(current):
                result.kept.append(path)
                continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        result.written.append(path)


def model_names(tables: list[CapturedTable]) -> list[tuple[CapturedTable, str]]:
    """Each table with its model base name (model_base, unique within the source)."""
    taken: set[str] = set()
    shorts = [t.table_id.split(".")[-1] for t in tables]
    duplicated = {s for s in shorts if shorts.count(s) > 1}
    named = []
    for table in tables:
        base = model_base(table, duplicated | taken)
        taken.add(base)
        named.append((table, base))
    return named


def render_source(source: str, tables: list[CapturedTable], models_dir: Path) -> dict[Path, str]:
    """All files for one source: staging views, silver current and history models, YAML."""
    files: dict[Path, str] = {}
    named = model_names(tables)
    for table, base in named:
        files[models_dir / "staging" / source / f"stg_{base}.sql"] = staging_sql(table)
        if not table.keys:
            files[models_dir / "silver" / source / f"{base}_changelog.sql"] = changelog_sql(table, base)
            continue
        files[models_dir / "silver" / source / f"{base}.sql"] = silver_sql(table, base, "current")
        files[models_dir / "silver" / source / f"{base}_history.sql"] = silver_sql(table, base, "history")
    files[models_dir / "staging" / source / f"_{source}__sources.yml"] = sources_yaml(source)
    files[models_dir / "silver" / source / f"_{source}__models.yml"] = models_yaml(source, named)
    return files
