"""Read a local Delta table's log without an engine: its newest table properties, and the data files whose
statistics the embedded engine would misread (see `misread_decimal_columns`)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq


def _actions(location: Path, kinds: tuple[str, ...]) -> Iterator[tuple[str, dict[str, Any]]]:
    """(kind, action) of the table's log in commit order: the newest checkpoint's, then every later commit's.
    Numbers in JSON commits are read as Decimal, so statistics keep every digit."""
    log_dir = location / "_delta_log"
    checkpoint = max(log_dir.glob("*.checkpoint.parquet"), default=None)
    start = -1
    if checkpoint is not None:
        start = int(checkpoint.name[:20])
        table = pq.read_table(checkpoint, columns=[k for k in kinds if k in pq.read_schema(checkpoint).names])
        for kind in table.column_names:
            for action in table.column(kind).to_pylist():
                if action:
                    yield kind, action
    for commit in sorted(log_dir.glob("*.json")):
        if int(commit.name[:20]) <= start:
            continue
        for line in commit.read_text().splitlines():
            if not line.strip():
                continue
            action = json.loads(line, parse_float=Decimal)
            for kind in kinds:
                if kind in action:
                    yield kind, action[kind]


def delta_configuration(location: Path) -> dict[str, str] | None:
    """The table properties in the newest metaData action of a local Delta table (None: no local log)."""
    if not (location / "_delta_log").is_dir():
        return None
    found: dict[str, str] | None = None
    for _, meta in _actions(location, ("metaData",)):
        found = dict(meta.get("configuration") or {})
    return found


def misread_decimal_columns(location: Path) -> list[str]:
    """The decimal columns of a local Delta table that the embedded engine (Sail 0.7) reads wrongly: some live
    data file's statistics give the column one value (min = max) that a double cannot hold, and Sail then
    takes the value from those statistics, parsed through a double. The tables lakecdc writes now keep no
    decimal statistics on Sail (lakecdc_stats_properties); a table written before needs one full rebuild."""
    if not (location / "_delta_log").is_dir():
        return []
    decimals: set[str] = set()
    live: dict[str, str | None] = {}
    for kind, action in _actions(location, ("metaData", "add", "remove")):
        if kind == "metaData":
            fields = json.loads(action.get("schemaString") or "{}").get("fields") or []
            decimals = {f["name"] for f in fields if str(f.get("type", "")).startswith("decimal")}
        elif kind == "add":
            live[action["path"]] = action.get("stats")
        else:
            live.pop(action["path"], None)
    found: set[str] = set()
    for stats_text in live.values():
        if not stats_text:
            continue
        stats = json.loads(stats_text, parse_float=Decimal)
        low, high = stats.get("minValues") or {}, stats.get("maxValues") or {}
        found.update(name for name in decimals
                     if name in low and low[name] == high.get(name) and not _survives_double(low[name]))
    return sorted(found)


def _survives_double(value: Any) -> bool:
    """A decimal statistic that a double holds exactly enough to read back right (9999999999.99, 1.5)."""
    number = Decimal(str(value))
    return number.is_finite() and Decimal(repr(float(number))) == number
