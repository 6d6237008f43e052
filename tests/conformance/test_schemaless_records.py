"""Records without schemas (JsonConverter schemas.enable=false) get the schema the real Debezium would have sent.

Every data record the real Debezium 3.6.3 MySQL connector wrote in this suite's MariaDB runs is stripped of its
schemas and decoded by the debezium-json decoder with a SchemaResolver that knows only the connector's schema
history (the tableChanges Debezium itself wrote to its history file, as its schema change events carry them) and
the run's type settings: the schema each record is given must be the one Debezium sent with it, byte for byte
(canonical JSON).

Runs whose connector changed schemas in ways the schema history does not say are left out where they do:
my_a's custom message keys (message.key.columns) and truncated columns, my_d's column mappers; my_c is not run
(its datatype.propagate.source.type adds parameters to columns of every table; they do not change how values
decode)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from ingest.bronze.contract import BronzeEvent
from ingest.connectors.debezium_json.records import Decoder
from ingest.connectors.debezium_json.schema_resolver import SchemaResolver
from tests.conformance import mariadb_workload as my
from tests.conformance.capture import Captured

pytestmark = pytest.mark.integration

MODES = ("time.precision.mode", "decimal.handling.mode", "bigint.unsigned.handling.mode", "binary.handling.mode")
# tables whose schemas the connector's settings change beyond its type modes (see the module's doc)
NOT_FROM_HISTORY = {"my_a": {"my_a.keyless", "my_a.pk_change", "my_a.types"}, "my_d": {"my_d.types"}}


def _split(text: str | None) -> tuple[str | None, str | None]:
    """(canonical schema, payload text) of a JsonConverter record part with schemas."""
    if text is None:
        return None, None
    part = orjson.loads(text)
    return (orjson.dumps(part["schema"], option=orjson.OPT_SORT_KEYS).decode(),
            None if part["payload"] is None else orjson.dumps(part["payload"]).decode())


def _difference(got: str | None, expected: str | None, what: str) -> str:
    """The fields of two schemas that differ (the row's fields for a value schema), or what else differs."""
    if got == expected:
        return ""
    if got is None or expected is None:
        return f"{what}: got {got}, expected {expected}; "

    def fields(schema: str) -> dict[str, Any]:
        obj = orjson.loads(schema)
        if what == "key":
            return {f["field"]: f for f in obj["fields"]}
        return {f["field"]: f for f in next(x for x in obj["fields"] if x["field"] == "after")["fields"]}

    mine, theirs = fields(got), fields(expected)
    rows = [f"{name}: got {mine.get(name)}, expected {theirs.get(name)}" for name in {**theirs, **mine}
            if mine.get(name) != theirs.get(name)]
    return f"{what}: " + ("; ".join(rows) if rows else "outside the row fields") + "; "


def _history_changes(path: Path) -> list[dict[str, Any]]:
    """The history file's records as schema change event values (source block of the mysql connector)."""
    values = []
    for line in path.read_text().splitlines():
        record = orjson.loads(line)
        position = record["position"]
        values.append({"source": {"connector": "mysql", "name": record["source"]["server"],
                                  "file": position["file"], "pos": position["pos"], "row": 0},
                       "databaseName": record.get("databaseName"), "ddl": record.get("ddl"),
                       "tableChanges": record.get("tableChanges") or [], "ts_ms": record.get("ts_ms")})
    return values


@pytest.mark.parametrize("run", [run for run in my.RUNS if run != "my_c"])
def test_records_without_schemas_get_debeziums_schemas_from_its_schema_history(
        run: str, mariadb_captured: Captured, conformance_dir: Path) -> None:
    debezium, _ = mariadb_captured.runs[run]
    resolver = SchemaResolver(run, {m: my.RUNS[run][m] for m in MODES})
    decoder = Decoder(run, event_type=BronzeEvent, resolver=resolver)
    for value in _history_changes(conformance_dir / "mariadb-history" / f"{run}.dat"):
        decoder.decode_record(run, None, orjson.dumps(value).decode())
    expected: list[tuple[BronzeEvent, str | None, str]] = []
    for record in debezium:
        if record.value is None or record.topic == run:
            continue
        key_schema, key = _split(record.key)
        value_schema, value = _split(record.value)
        event = decoder.decode_record(record.topic, key, value)
        if event.op in (None, "t"):
            continue
        assert event.value_schema is None   # it came without one
        expected.append((event, key_schema, value_schema))
    decoder.resolve_schemas()

    compared = differences = 0
    tables: set[str] = set()
    different: dict[str, str] = {}
    for event, key_schema, value_schema in expected:
        if event.table_id in NOT_FROM_HISTORY.get(run, ()):
            continue
        compared += 1
        tables.add(event.table_id)
        if (event.key_schema, event.value_schema) != (key_schema, value_schema):
            differences += 1
            different.setdefault(event.table_id, f"{event.op} {event.seq}: "
                                                 + _difference(event.key_schema, key_schema, "key")
                                                 + _difference(event.value_schema, value_schema, "value"))
    assert len(tables) >= 3, tables
    assert not differences, f"{differences} of {compared} records differ:\n" + "\n\n".join(
        f"{t}: {d}" for t, d in different.items())
    assert not resolver.unresolved
