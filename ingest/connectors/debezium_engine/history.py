"""Debezium's schema history (its `FileSchemaHistory` file) rebuilt from bronze, for the connectors that keep
one (MySQL, SQL Server, Oracle, Db2): the engine then recovers its table definitions on any machine.

Each schema change event the connector emitted landed in S_schema_changes with the partition and offset of its
record; a history record is that event's content at that position. Its `tableChanges` come as the connector's
schema change events write them (Kafka Connect's form); the history file's form names the same fields, and says
`hasDefaultValue` where the event only carries `defaultValueExpression`.
"""

from __future__ import annotations

import json
from typing import Any


def history_record(event_json: str, position_json: str) -> dict[str, Any]:
    """The history record of one schema change event and its {"partition", "offset"}."""
    event = json.loads(event_json)
    position = json.loads(position_json)
    record: dict[str, Any] = {"source": position["partition"], "position": position["offset"]}
    for name in ("ts_ms", "databaseName", "schemaName", "ddl"):
        if event.get(name) is not None:
            record[name] = event[name]
    if event.get("tableChanges"):
        record["tableChanges"] = [_table_change(change) for change in event["tableChanges"]]
    return record


def _table_change(change: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in change.items() if v is not None and k != "table"}
    table = change.get("table")
    if table is not None:
        out["table"] = {**{k: v for k, v in table.items() if v is not None and k != "columns"},
                        "columns": [_column(c) for c in table.get("columns") or []]}
    return out


def _column(column: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in column.items() if v is not None}
    out["hasDefaultValue"] = column.get("defaultValueExpression") is not None
    return out


def history_lines(rows: list[tuple[str, ...]]) -> list[str]:
    """The history file's lines from bronze's (seq, event JSON, position JSON) schema change rows, in seq
    order; rows without a position (landed by another source) are skipped."""
    lines = []
    for _seq, event, position in sorted(rows):
        if position and '"partition"' in position:
            lines.append(json.dumps(history_record(event, position), separators=(",", ":")))
    return lines
