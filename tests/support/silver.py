"""Shared helpers for the silver tests (no tests here): write bronze rows with the contract columns
through the engine, and run dbt in-process on a scratch project that uses the repository's macros."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
from dataclasses import dataclass, field
from decimal import Context, Decimal
from pathlib import Path

from ingest.bronze.contract import EVENTS_COLUMNS, SCHEMAS_COLUMNS, ddl_columns, encode_seq
from ingest.dbt_runner import DBT_PACKAGE_MACROS

ROOT = Path(__file__).resolve().parents[2]
PLACEHOLDER = "__debezium_unavailable_value"

INT32 = {"type": "int32"}
INT64 = {"type": "int64"}
STRING = {"type": "string"}
DATE = {"type": "int32", "name": "io.debezium.time.Date"}
MICRO_TS = {"type": "int64", "name": "io.debezium.time.MicroTimestamp"}
ZONED_TS = {"type": "string", "name": "io.debezium.time.ZonedTimestamp"}


def decimal_field(precision: int, scale: int) -> dict:
    return {"type": "bytes", "name": "org.apache.kafka.connect.data.Decimal",
            "parameters": {"scale": str(scale), "connect.decimal.precision": str(precision)}}


def encode_decimal(value: Decimal, scale: int) -> str:
    """Kafka Connect Decimal: unscaled two's complement big-endian bytes, base64."""
    unscaled = int(value.scaleb(scale, Context(prec=200)))  # the default context would round to 28 digits
    length = max(1, (unscaled.bit_length() + 8) // 8)
    return base64.b64encode(unscaled.to_bytes(length, "big", signed=True)).decode()


def envelope_schema(topic: str, columns: list[tuple[str, dict]]) -> dict:
    row = {"type": "struct", "optional": True, "name": f"{topic}.Value",
           "fields": [{**t, "optional": True, "field": n} for n, t in columns]}
    return {"type": "struct", "name": f"{topic}.Envelope", "optional": False, "fields": [
        {**row, "field": "before"}, {**row, "field": "after"},
        {"type": "struct", "optional": False, "field": "source", "fields": []},
        {"type": "string", "optional": False, "field": "op"},
        {"type": "int64", "optional": True, "field": "ts_ms"}]}


def key_schema(topic: str, keys: list[tuple[str, dict]]) -> dict:
    return {"type": "struct", "name": f"{topic}.Key", "optional": False,
            "fields": [{**t, "optional": False, "field": n} for n, t in keys]}


def schema_id(schema: dict) -> str:
    return hashlib.sha256(json.dumps(schema, sort_keys=True, separators=(",", ":")).encode()).hexdigest()[:16]


@dataclass
class Bronze:
    """Bronze tables of one source in a warehouse; every `land` is one Delta commit (one batch)."""

    spark: object
    warehouse: Path
    source: str = "inv"
    batch: int = 0
    counter: int = 0
    registered: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        self.spark.sql("CREATE SCHEMA IF NOT EXISTS bronze")
        for kind, cols in (("events", EVENTS_COLUMNS), ("schemas", SCHEMAS_COLUMNS)):
            name = f"{self.source}_{kind}"
            self.spark.sql(f"CREATE TABLE IF NOT EXISTS bronze.{name} ({ddl_columns(cols)}) USING delta "
                           f"LOCATION '{self.warehouse}/bronze/{name}'")

    def next_seq(self) -> str:
        self.counter += 1
        return encode_seq([self.counter, 0], [12, 4])

    def event(self, table_id: str, op: str | None, key: dict | None, before: dict | None, after: dict | None,
              keys: list[tuple[str, dict]], columns: list[tuple[str, dict]], seq: str | None = None,
              ts_ms: int = 1_700_000_000_000) -> dict:
        topic = f"{self.source}.{table_id}"
        vs, ks = envelope_schema(topic, columns), key_schema(topic, keys)
        value = None if op is None else json.dumps({"before": before, "after": after, "source": {},
                                                    "op": op, "ts_ms": ts_ms})
        return {"table_id": table_id, "topic": topic, "op": op, "seq": seq or self.next_seq(),
                "key": None if key is None else json.dumps(key), "value": value,
                "ts_ms": ts_ms, "source_ts_ms": ts_ms, "schemas": (ks, vs)}

    def land(self, events: list[dict]) -> int:
        """Append events (and their new schemas) as one batch; returns the batch id."""
        import datetime

        self.batch += 1
        now = datetime.datetime(2024, 1, 1)
        schema_rows, event_rows = [], []
        for e in events:
            ks, vs = e["schemas"]
            ids = []
            for s in (ks, vs):
                sid = schema_id(s)
                ids.append(sid)
                if sid not in self.registered:
                    self.registered.add(sid)
                    schema_rows.append((sid, json.dumps(s), e["seq"], self.batch, now))
            event_rows.append((self.source, e["topic"], e["table_id"], e["op"], e["seq"], e["key"], e["value"],
                               ids[0] if e["key"] is not None else None, ids[1] if e["value"] else None,
                               e["ts_ms"], e["source_ts_ms"], None, "false", None, self.batch, now))
        if schema_rows:
            self._append("schemas", SCHEMAS_COLUMNS, schema_rows)
        if event_rows:
            self._append("events", EVENTS_COLUMNS, event_rows)
        return self.batch

    def _append(self, kind: str, columns, rows: list[tuple]) -> None:
        ddl = ", ".join(f"`{n}` {t}" for n, t in columns)
        df = self.spark.createDataFrame(rows, schema=ddl)
        df.write.format("delta").mode("append").save(f"{self.warehouse}/bronze/{self.source}_{kind}")


def make_project(tmp: Path, warehouse: Path, run_end: bool = True) -> Path:
    """A scratch dbt project using lakecdc's dbt package in place (as the repository's own project does: named
    lakecdc, the package's macros as its own, and its hooks declared); models come from generate. The columns the
    materializations remember for the tests after them are checked against the tables
    (lakecdc_verify_remembered_columns). `run_end=False`: without the package's on-run-end hook (each model then
    writes its own watermark)."""
    proj = tmp / "proj"
    (proj / "models").mkdir(parents=True)
    shutil.copy(ROOT / "profiles.yml", proj / "profiles.yml")
    (proj / "dbt_project.yml").write_text(
        "name: lakecdc\nversion: '1.0'\nconfig-version: 2\nprofile: lakecdc\n"
        f"macro-paths: ['{DBT_PACKAGE_MACROS}']\n"
        "on-run-start: [\"{{ lakecdc.lakecdc_on_run_start() }}\"]\n"
        + ("on-run-end: [\"{{ lakecdc.lakecdc_on_run_end() }}\"]\n" if run_end else "")
        + f"vars:\n  lakecdc_warehouse: '{warehouse}'\n  lakecdc_verify_remembered_columns: true\n"
        "models:\n  lakecdc:\n    +file_format: \"{{ var('lakecdc_table_format', 'delta') }}\"\n")
    return proj


def run_dbt(engine, project: Path, *args: str) -> None:
    """dbt in this process against the test's engine; raises with dbt's output on failure."""
    from dbt.cli.main import dbtRunner

    overrides = {"SPARK_REMOTE": engine.remote_url, "LAKECDC_WAREHOUSE": str(engine.settings.warehouse)}
    saved = {name: os.environ.get(name) for name in overrides}
    os.environ.update(overrides)
    try:  # restored afterwards: later tests (and their subprocesses) must not inherit this test's warehouse
        result = dbtRunner().invoke([*args, "--project-dir", str(project), "--profiles-dir", str(project),
                                     "--log-path", str(project / "logs"), "--target-path", str(project / "target")])
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
    if not result.success:
        log = (project / "logs" / "dbt.log").read_text()[-6000:] if (project / "logs" / "dbt.log").exists() else ""
        raise AssertionError(f"dbt {' '.join(args)} failed: {result.exception}\n{log}")


def delta_versions(path: Path) -> int:
    return len(list((path / "_delta_log").glob("*.json")))
