"""lakecdc's side of the comparison: run sources into a temporary warehouse with the runner (as `lakecdc run
--until-caught-up` does) and read the events back from bronze (S_events joined with S_schemas) as the records
a Kafka consumer of Debezium would see."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ingest.config import EngineSettings, ProjectConfig, SourceSettings
from tests.conformance.debezium import Record


class LakecdcCapture:
    """Several lakecdc sources sharing one local warehouse and one embedded engine, started by `start` and
    stopped by `stop` (so that no later test of the process inherits the engine or its Spark session)."""

    def __init__(self, warehouse: Path, sources: dict[str, tuple[str, dict[str, Any]]]) -> None:
        """sources: source name -> (connector, Debezium-named properties)."""
        self.warehouse = warehouse
        self.config = ProjectConfig(
            engine=EngineSettings(profile="local", warehouse=warehouse),
            sources={name: SourceSettings(name, connector, dict(props))
                     for name, (connector, props) in sources.items()})

    def start(self) -> None:
        from ingest.engine import start_engine

        self._engine = start_engine(self.config.engine, reuse=False)

    def stop(self) -> None:
        engine = getattr(self, "_engine", None)
        if engine is not None:
            engine.stop()
            self._engine = None

    def run(self, source: str) -> None:
        """Snapshot and/or stream `source` until caught up with the database (the runner reuses the engine)."""
        from ingest.runner import run_source

        run_source(self.config, source, until_caught_up=True, progress=False)

    def records(self, source: str) -> list[Record]:
        """Every event of `source` in seq order, with its key and value rebuilt as {schema, payload} JSON."""
        from deltalake import DeltaTable

        bronze = self.warehouse / "bronze"
        schemas = {row["schema_id"]: row["schema"] for row in
                   DeltaTable(str(bronze / f"{source}_schemas")).to_pyarrow_table(
                       columns=["schema_id", "schema"]).to_pylist()}
        rows = DeltaTable(str(bronze / f"{source}_events")).to_pyarrow_table(
            columns=["topic", "seq", "key", "value", "key_schema_id", "value_schema_id"]).to_pylist()
        rows.sort(key=lambda r: r["seq"])
        return [Record(r["topic"], _with_schema(r["key"], r["key_schema_id"], schemas),
                       _with_schema(r["value"], r["value_schema_id"], schemas)) for r in rows]

    def bronze_schemas(self, source: str) -> list[str]:
        """Every schema registered in S_schemas (the replay test deserializes records of each)."""
        from deltalake import DeltaTable

        table = DeltaTable(str(self.warehouse / "bronze" / f"{source}_schemas"))
        return [row["schema"] for row in table.to_pyarrow_table(columns=["schema"]).to_pylist()]


def _with_schema(payload: str | None, schema_id: str | None, schemas: dict[str, str]) -> str | None:
    """The JsonConverter envelope {"schema": ..., "payload": ...} of a bronze key or value (None stays null)."""
    if payload is None:
        return None
    schema = "null" if schema_id is None else schemas[schema_id]
    return f'{{"schema":{schema},"payload":{payload}}}'

