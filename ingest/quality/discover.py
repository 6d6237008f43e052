"""What exists in the lakehouse: silver/gold tables, bronze sources and their schema history, and which
silver table holds which source table."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ingest.bronze.contract import table_name
from ingest.sqlutil import qualified

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

HISTORY_COLUMNS = ("valid_from", "valid_to", "is_current")
CURRENT_MARKER = "_seq"  # silver current-state tables carry _seq, _source_ts, _op (and optionally _is_deleted)


@dataclass
class Lakehouse:
    spark: SparkSession
    catalog: str | None
    schemas: dict[str, str]  # role (bronze/silver/gold) -> schema name
    _tables: dict[str, list[str]] = field(default_factory=dict)

    def ref(self, table: str) -> str:
        """Quoted reference for `schema.table`."""
        schema, _, name = table.partition(".")
        return qualified(self.catalog, schema, name)

    def read(self, table: str) -> DataFrame:
        return self.spark.table(self.ref(table))

    def tables(self, schema: str) -> list[str]:
        if schema not in self._tables:
            try:
                rows = self.spark.sql(f"SHOW TABLES IN {qualified(self.catalog, schema)}").collect()
                self._tables[schema] = sorted(r["tableName"] for r in rows if not r["isTemporary"])
            except Exception:  # the schema does not exist (yet)
                self._tables[schema] = []
        return self._tables[schema]

    def exists(self, table: str) -> bool:
        schema, _, name = table.partition(".")
        return name in self.tables(schema)

    def bronze(self, source: str, kind: str) -> str:
        return f"{self.schemas['bronze']}.{table_name(source, kind)}"

    def sources(self) -> list[str]:
        """Bronze sources S (those with an S_events table)."""
        return sorted(t[: -len("_events")] for t in self.tables(self.schemas["bronze"]) if t.endswith("_events"))

    def model_tables(self) -> list[str]:
        """`schema.table` of every silver and gold table (lakecdc's own bookkeeping tables, `lakecdc_*`,
        excluded)."""
        out = []
        for role in ("silver", "gold"):
            schema = self.schemas[role]
            out.extend(f"{schema}.{t}" for t in self.tables(schema) if not t.startswith("lakecdc_"))
        return out


def table_kind(columns: list[str]) -> str:
    names = {c.lower() for c in columns}
    if all(c in names for c in HISTORY_COLUMNS):
        return "history"
    if CURRENT_MARKER in names:
        return "current"
    return "table"


@dataclass
class SourceTable:
    """One captured table as the bronze layer knows it."""

    source: str
    table_id: str
    key: list[str]
    columns: list[dict[str, Any]]  # latest schema-history version: name, nullable, source_type, enum_values


def _candidate_names(source: str, table_id: str) -> set[str]:
    """Silver names a dbt model for table_id may have: any dotted suffix joined with '_', with or
    without the source prefix (customers, public_customers, inventory_customers, ...)."""
    parts = [p.lower() for p in table_id.split(".") if p]
    names = set()
    for i in range(len(parts)):
        tail = "_".join(parts[i:])
        names.update({tail, f"{source.lower()}_{tail}", f"{source.lower()}__{tail}"})
    return names


def match_source_table(table_name_: str, candidates: list[SourceTable]) -> SourceTable | None:
    """The source table a silver table holds (`x_history` / `x_scd2` / `x_current` map like `x`)."""
    base = re.sub(r"_(history|scd2|current|snapshot)$", "", table_name_.lower())
    for name in (table_name_.lower(), base):
        hits = [c for c in candidates if name in _candidate_names(c.source, c.table_id)]
        if len(hits) == 1:
            return hits[0]
    return None


_ENUM = re.compile(r"^\s*(enum|set)\s*\((.*)\)\s*$", re.IGNORECASE | re.DOTALL)


def enum_values(source_type: str | None) -> list[str] | None:
    """Values of a MySQL/MariaDB `enum('a','b')` source type, None for other types."""
    match = _ENUM.match(source_type or "")
    if not match or match.group(1).lower() != "enum":
        return None
    return [v.replace("''", "'") for v in re.findall(r"'((?:[^']|'')*)'", match.group(2))]


def _column_dict(raw: Any) -> dict[str, Any]:
    col = raw.asDict(recursive=True) if hasattr(raw, "asDict") else dict(raw)
    source_type = col.get("source_type") or col.get("type_name") or col.get("type") or col.get("column_type")
    values = col.get("enum_values") or enum_values(source_type if isinstance(source_type, str) else None)
    nullable = col.get("nullable", col.get("optional", True))
    return {"name": col.get("name"), "nullable": bool(nullable) if nullable is not None else True,
            "source_type": source_type, "enum_values": values}


def _as_list(value: Any) -> list[Any]:
    if value is None:
        return []
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return [v.strip() for v in value.split(",") if v.strip()]
    return list(value)


def source_tables(lake: Lakehouse) -> list[SourceTable]:
    """Every captured table of every source: columns and key from the latest schema-history version,
    or, without a schema history, the key field names of the table's first event key."""
    out: list[SourceTable] = []
    for source in lake.sources():
        history = lake.bronze(source, "schema_history")
        seen: set[str] = set()
        if lake.exists(history):
            df = lake.read(history)
            if {"table_id", "version", "columns"} <= set(df.columns):
                from pyspark.sql import functions as F

                df = df.where(F.col("table_id").isNotNull())
                if "parse_status" in df.columns:  # an unparsed statement's version carries no usable schema
                    df = df.where(F.coalesce(F.col("parse_status"), F.lit("ok")) != "error")
                latest = df.groupBy("table_id").agg(F.max("version").alias("_latest_version"))
                rows = (df.join(latest, on="table_id").where(F.col("version") == F.col("_latest_version"))
                        .drop("_latest_version").collect())
                for row in rows:
                    columns = [_column_dict(c) for c in _as_list(row["columns"])]
                    key = [str(k) for k in _as_list(row["primary_key"] if "primary_key" in row else None)]
                    if not key:
                        key = [c["name"] for c in _as_list(row["columns"]) if _key_flag(c)]
                    out.append(SourceTable(source, row["table_id"], key, columns))
                    seen.add(row["table_id"])
        events = lake.read(lake.bronze(source, "events"))
        first_keys = (events.where("key IS NOT NULL").groupBy("table_id").agg({"key": "min"})
                      .withColumnRenamed("min(key)", "key").collect())
        for row in first_keys:
            if row["table_id"] in seen:
                continue
            try:
                key = list(json.loads(row["key"]))
            except (TypeError, ValueError):
                key = []
            out.append(SourceTable(source, row["table_id"], key, []))
    return out


def _key_flag(col: Any) -> bool:
    data = col.asDict() if hasattr(col, "asDict") else col
    return bool(isinstance(data, dict) and (data.get("key") or data.get("is_key") or data.get("key_flag")))
