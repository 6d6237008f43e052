"""Kafka topics written by JsonConverter with schemas.enable=false: the records carry no schema, and silver still
equals the source.

The real Debezium MySQL connector (embedded engine, against the MariaDB started as 5.7.19-MariaDB-log) snapshots
the e2e MariaDB tables and streams a workload with ALTER TABLE ADD COLUMN; its records go to the broker as
payloads only, its schema change records to the `topic.prefix` topic. lakecdc's kafka source, told the
producer's decimal.handling.mode (string: silver's decimal columns are strings), gives every change event the
schema the connector would have sent (derived from the schema change records' tableChanges:
connectors/debezium_json/schema_resolver.py); the landing is split over two runs, so the second one finds the
earlier schemas in bronze. Then generate + dbt build: silver equals the source tables."""

from __future__ import annotations

import json
import uuid
from decimal import Decimal
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest

from ingest.bronze.contract import ResumeState
from tests.support.e2e import (
    MARIA_JSON,
    MARIA_TABLES,
    Project,
    compare_source,
    maria_server_id,
    maria_setup,
    maria_source_rows,
    maria_workload_1,
)
from tests.support.kafka import produce_debezium_records

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def test_records_without_schemas_land_with_derived_schemas_and_give_silver_equal_to_source(
        mariadb_dbz_url: str, kafka_bootstrap: str, tmp_path: Path) -> None:
    from confluent_kafka import Producer

    u = urlparse(mariadb_dbz_url)
    params = {"host": u.hostname or "127.0.0.1", "port": u.port or 3306, "user": u.username or "root",
              "password": u.password or ""}
    maria_setup(params)
    prefix = f"nos_{uuid.uuid4().hex[:8]}"   # new topics: the broker outlives a test
    debezium = {"connector.class": "io.debezium.connector.mysql.MySqlConnector",
                "database.hostname": params["host"], "database.port": params["port"],
                "database.user": params["user"], "database.password": params["password"],
                "database.server.id": maria_server_id() + 3, "topic.prefix": prefix,
                "database.include.list": "e2e_maria", "decimal.handling.mode": "string", "poll.interval.ms": 200}
    project = Project(tmp_path, "nos", "kafka", {
        "bootstrap.servers": kafka_bootstrap, "topics.regex": prefix + r"(\..*)?", "topic.prefix": prefix,
        "poll.interval.ms": 200, "decimal.handling.mode": "string"})
    landed = 0

    def land_then_workload() -> bool:
        """Caught up after the snapshot: land it (the first run), then stream a workload in the same engine run
        (Debezium's MySQL connector on MariaDB must not restart mid-stream: docs/connectors/debezium-engine.md)."""
        nonlocal landed
        landed += 1
        if landed == 1:
            project.ingest()
            maria_workload_1(params)
            return True
        return False

    produced, _ = produce_debezium_records(kafka_bootstrap, debezium, ResumeState(), schemas=False,
                                           on_caught_up=land_then_workload)
    assert produced > 110   # the snapshot alone: 40 customers, 60 orders, 10 documents
    producer = Producer({"bootstrap.servers": kafka_bootstrap})
    # a record of a table no schema change describes, without a schema: it lands without one
    producer.produce(f"{prefix}.e2e_maria.stray", key=b'{"id":1}', value=json.dumps({
        "before": None, "after": {"id": 1}, "op": "c", "ts_ms": 1,
        "source": {"connector": "mysql", "db": "e2e_maria", "table": "stray", "file": "binlog.000001",
                   "pos": 4, "row": 0, "server_id": 1}}).encode())
    assert producer.flush(30) == 0
    output = project.lakecdc("run", "--source", "nos", "--until-caught-up")   # not --quiet: the warning shows
    assert "e2e_maria.stray carry no schema" in output, output[-3000:]

    events = project.bronze_rows("events", ["table_id", "op", "value_schema_id"])
    changes = [e for e in events if e["op"] is not None]
    assert len(changes) >= 110
    without = sorted({e["table_id"] for e in changes if e["value_schema_id"] is None})
    assert without == ["e2e_maria.stray"], without
    assert len(project.bronze_rows("schema_changes", ["seq"])) > 0
    assert not project.bronze_rows("rejects", ["seq"])

    project.lakecdc("schema", "rebuild", "--source", "nos")
    generated = project.lakecdc("generate", "--source", "nos")
    assert "e2e_maria.stray: no event carries a schema" in generated, generated
    project.dbt_build_local()
    compare_source(project, MARIA_TABLES, MARIA_JSON, lambda t: as_strings(maria_source_rows(params, t)),
                   "records without schemas:")


def as_strings(rows: list[dict[str, Any]] | None) -> list[dict[str, Any]] | None:
    """The source's decimals as decimal.handling.mode=string has them (silver's columns are strings then)."""
    return None if rows is None else [{k: str(v) if isinstance(v, Decimal) else v for k, v in row.items()}
                                      for row in rows]
