"""Compare silver current-state tables with the generator's expected final state of the source database.

Silver table of table T of the demo source: `silver.inventory__T` (lakecdc generate's naming). Columns
whose names start with `_` are lakecdc metadata and are ignored; every other column must be one of the
source table's current columns, and every row must equal the expected row (DATE compared as ISO text).
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ingest.demo.generate import load_expected


@dataclass
class TableComparison:
    table: str
    expected_rows: int
    silver_rows: int | None = None       # None: the silver table does not exist
    missing: int = 0                     # expected keys absent from silver
    extra: int = 0                       # silver keys absent from the source
    differing: int = 0                   # same key, other values
    extra_columns: list[str] = field(default_factory=list)
    missing_columns: list[str] = field(default_factory=list)
    example: str | None = None

    @property
    def matches(self) -> bool:
        return (self.silver_rows is not None and not (self.missing or self.extra or self.differing)
                and not self.extra_columns and not self.missing_columns)

    def describe(self) -> str:
        if self.silver_rows is None:
            return f"{self.table}: no silver table"
        if self.matches:
            return f"{self.table}: {self.silver_rows} rows match"
        parts = []
        if self.missing_columns:
            parts.append(f"missing columns {', '.join(self.missing_columns)}")
        if self.extra_columns:
            parts.append(f"extra columns {', '.join(self.extra_columns)}")
        for name in ("missing", "extra", "differing"):
            if getattr(self, name):
                parts.append(f"{getattr(self, name)} {name} rows")
        return f"{self.table}: " + "; ".join(parts)


def _plain(value: Any) -> Any:
    if isinstance(value, dt.datetime):
        return value.isoformat()
    if isinstance(value, dt.date):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return float(value)
    return value


def compare_rows(table: str, expected: list[dict[str, Any]], silver: list[dict[str, Any]] | None,
                 key_columns: list[str]) -> TableComparison:
    result = TableComparison(table=table, expected_rows=len(expected))
    if silver is None:
        return result
    result.silver_rows = len(silver)
    want_columns = list(expected[0]) if expected else []
    have_columns = [c for c in (silver[0] if silver else {}) if not c.startswith("_")]
    if silver and expected:
        result.missing_columns = [c for c in want_columns if c not in have_columns]
        result.extra_columns = [c for c in have_columns if c not in want_columns]
    want = {tuple(r[k] for k in key_columns): r for r in expected}
    have: dict[tuple[Any, ...], dict[str, Any]] = {}
    for row in silver:
        have[tuple(_plain(row.get(k)) for k in key_columns)] = {c: _plain(row.get(c)) for c in want_columns}
    result.missing = len(want.keys() - have.keys())
    result.extra = len(have.keys() - want.keys())
    for key in want.keys() & have.keys():
        if want[key] != have[key]:
            result.differing += 1
            if result.example is None:
                result.example = f"key {key}: expected {json.dumps(want[key])}, silver {json.dumps(have[key])}"
    return result


def compare_silver(spark: Any, warehouse: Path, data_dir: Path, source: str = "inventory") -> list[TableComparison]:
    """Read every silver current-state table of the demo source and compare it with the expected state."""
    expected = load_expected(data_dir)
    tables = json.loads((data_dir / "expected" / "tables.json").read_text())
    out = []
    for table, rows in expected.items():
        location = warehouse / "silver" / f"{source}__{table}"
        silver = None
        if (location / "_delta_log").is_dir():
            silver = [r.asDict() for r in spark.read.format("delta").load(str(location)).collect()]
        out.append(compare_rows(table, rows, silver, tables[table]["primary_key"]))
    return out
