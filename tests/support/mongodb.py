"""MongoDB change events for the silver tests (no tests here): the table of extended JSON values with the type and
the value silver gives each (checked by tests/unit/test_mongodb_fields.py for the inferred type and by
tests/integration/silver/test_silver_mongodb.py through dbt), and the seeds' golden MongoDB events plus documents
of our own as `kcat -J` lines for the debezium-json source."""

from __future__ import annotations

import copy
import datetime as dt
import json
import math
from decimal import Decimal
from pathlib import Path
from typing import Any, NamedTuple

import orjson

from ingest.events import envelope as ev
from ingest.events.source_info import mongodb_source

ROOT = Path(__file__).resolve().parents[2]
PREFIX = "fulfillment"


class Conversion(NamedTuple):
    """One document field: its extended JSON value, the type name generate infers from it alone, the Spark type of
    its column and the value silver holds (for json: the parsed JSON; NaN compared as NaN)."""

    field: str
    value: Any
    type_name: str
    spark_type: str
    silver: Any


CONVERSIONS = [
    Conversion("int_wrapped", {"$numberInt": "-7"}, "int", "int", -7),
    Conversion("int_plain", 42, "int", "int", 42),
    Conversion("long_wrapped", {"$numberLong": "9007199254740993"}, "bigint", "bigint", 9007199254740993),
    Conversion("long_plain", -9007199254740993, "bigint", "bigint", -9007199254740993),  # relaxed mode
    Conversion("double_wrapped", {"$numberDouble": "0.1"}, "double", "double", 0.1),
    Conversion("double_plain", 993702636.5144999, "double", "double", 993702636.5144999),  # every digit kept
    Conversion("double_nan", {"$numberDouble": "NaN"}, "double", "double", math.nan),
    Conversion("double_minus_inf", {"$numberDouble": "-Infinity"}, "double", "double", -math.inf),
    Conversion("decimal", {"$numberDecimal": "-123.4500"}, "decimal(38,4)", "decimal(38,4)", Decimal("-123.4500")),
    Conversion("decimal_nan", {"$numberDecimal": "NaN"}, "text", "string", "NaN"),
    Conversion("date_millis", {"$date": 1558965508123}, "timestamp", "timestamp",
               dt.datetime(2019, 5, 27, 13, 58, 28, 123000)),
    Conversion("date_iso", {"$date": "2019-05-27T15:58:28.5+02:00"}, "timestamp", "timestamp",
               dt.datetime(2019, 5, 27, 13, 58, 28, 500000)),
    Conversion("date_canonical", {"$date": {"$numberLong": "-1000"}}, "timestamp", "timestamp",
               dt.datetime(1969, 12, 31, 23, 59, 59)),
    Conversion("owner", {"$oid": "596e275826f08b2730779e1f"}, "objectid", "string", "596e275826f08b2730779e1f"),
    Conversion("flag", True, "boolean", "boolean", True),
    Conversion("name", "Zoë \"Z\" O'Neil\n", "string", "string", "Zoë \"Z\" O'Neil\n"),
    Conversion("tags", ["a", {"$numberInt": "1"}, None], "json", "string", ["a", {"$numberInt": "1"}, None]),
    Conversion("nested", {"a": {"b": [1.5, 993702636.5144999]}}, "json", "string",
               {"a": {"b": [1.5, 993702636.5144999]}}),
    Conversion("binary", {"$binary": "a2Fma2E=", "$type": "00"}, "json", "string",
               {"$binary": "a2Fma2E=", "$type": "00"}),
    Conversion("oplog_time", {"$timestamp": {"t": 1558965508, "i": 1}}, "json", "string",
               {"$timestamp": {"t": 1558965508, "i": 1}}),
    Conversion("nothing", None, "string", "string", None),
]


def same_value(got: Any, want: Any, spark_type: str) -> bool:
    """Silver's value equals the table's (json parsed, NaN equal to NaN)."""
    if isinstance(want, float) and math.isnan(want):
        return isinstance(got, float) and math.isnan(got)
    if spark_type == "string" and isinstance(want, dict | list):
        return got is not None and json.loads(got) == want
    return type(got) is type(want) and got == want


def kcat_line(offset: int, topic: str, key: str | dict[str, Any], value: str | dict[str, Any] | None) -> bytes:
    """A Kafka record as `kcat -J` writes it: key and value as given (JsonConverter text, or embedded JSON)."""
    return orjson.dumps({"topic": topic, "partition": 0, "offset": offset, "key": key, "payload": value}) + b"\n"


def golden_lines() -> list[tuple[str, dict[str, Any] | None]]:
    """The seed's MongoDB example (tests/golden/mongodb.json) as (key text, value) pairs: read, update (patch),
    delete and tombstone of customer 1004, the key with its schema, each value as documented with its
    corrections applied (JsonConverter's explicit nulls). One change: the seed's update and delete reuse the
    read's source position and share `ord` 6 (Q22 of seed-003-inventory.md), which would order them before the
    read and make them one event (same seq); a real oplog gives every operation its own position, so they get
    ord 32 and 33, after the read's 31."""
    fixture = json.loads((ROOT / "tests" / "golden" / "mongodb.json").read_text(encoding="utf-8"))
    cases = {c["id"]: c for c in fixture["cases"]}
    key = json.dumps(cases["G-MG-KEY"]["documented"])
    out: list[tuple[str, dict[str, Any] | None]] = []
    for case_id, ord_ in (("G-MG-R", 31), ("G-MG-U", 32), ("G-MG-D", 33)):
        value = copy.deepcopy(cases[case_id]["documented"])
        for correction in cases[case_id]["corrections"]:
            assert correction["op"] == "add"
            value[correction["path"]] = correction["value"]
        value["source"]["ord"] = ord_
        out.append((key, value))
    out.append((key, cases["G-MG-TOMB"]["documented"]["value"]))
    return out


class Collection:
    """Change events of one collection built with ingest.events (JsonConverter key and value with schemas), or
    bare values for what the builders do not make (updateDescription); each at the next oplog position."""

    def __init__(self, collection: str, ts_ms: int) -> None:
        self.table = ev.mongodb_table_schemas(PREFIX, db="inventory", collection=collection)
        self.collection, self.ts_ms, self.ord = collection, ts_ms, 0

    def _source(self) -> dict[str, Any]:
        self.ord += 1
        return mongodb_source(version="2.7.0.Final", name=PREFIX, ts_ms=self.ts_ms, db="inventory",
                              collection=self.collection, ord=self.ord)

    def change(self, op: str, id_json: str, after: dict[str, Any] | None = None,
               patch: dict[str, Any] | None = None) -> tuple[str, str]:
        event = ev.mongodb_change(self.table, op, id_json=id_json, source=self._source(),
                                  after=None if after is None else json.dumps(after),
                                  patch=None if patch is None else json.dumps(patch), ts_ms=self.ts_ms + 5)
        _, key, value = ev.record(event)
        assert key is not None and value is not None
        return key.decode(), value.decode()

    def update_description(self, id_json: str, updated: dict[str, Any], removed: list[str]) -> tuple[str, dict]:
        """A change-stream update without the document lookup (bare value, no schemas)."""
        value = {"after": None, "patch": None, "source": self._source(), "op": "u", "ts_ms": self.ts_ms + 5,
                 "updateDescription": {"updatedFields": json.dumps(updated), "removedFields": removed,
                                       "truncatedArrays": []}}
        return json.dumps({"id": id_json}), value
