"""Debezium's metrics of a run (ingest/metrics.py), counted from landed batches with a clock the test moves.
(Served by a real `lakecdc run --metrics-port`: tests/integration/bronze/test_runner.py.)"""

from __future__ import annotations

import pytest

from ingest.bronze.contract import Batch, BronzeEvent, BronzeReject, BronzeSchemaChange
from ingest.connectors.progress import SnapshotProgress
from ingest.metrics import RunMetrics

pytestmark = pytest.mark.unit


def event(op: str | None, table: str = "db.t", source_ts_ms: int | None = 1_000, txn: str | None = None) -> BronzeEvent:
    return BronzeEvent("topic", table, op, "seq", None, None, None, None, None, source_ts_ms, txn, None)


def parsed(metrics: RunMetrics) -> dict[str, float]:
    out = {}
    for line in metrics.prometheus().splitlines():
        name, value = line.rsplit(" ", 1)
        out[name.replace('plugin="mariadb",', "").replace(',name="shop"', "")] = float(value)
    return out


def test_snapshot_then_streaming_then_a_schema_change() -> None:
    now = [100.0]
    metrics = RunMetrics("shop", "mariadb", clock=lambda: now[0])
    progress = SnapshotProgress([("db.a", 2), ("db.b", None)], clock=lambda: now[0])
    progress.start_table("db.a")
    metrics.landed(Batch(events=[event("r", "db.a"), event("r", "db.a")]), progress)
    first = parsed(metrics)
    assert first['debezium_metrics_SnapshotRunning{context="snapshot"}'] == 1
    assert first['debezium_metrics_RemainingTableCount{context="snapshot"}'] == 2
    assert first['debezium_metrics_TotalTableCount{context="snapshot"}'] == 2
    assert first['debezium_metrics_RowsScanned{context="snapshot",table="db.a"}'] == 2
    assert 'debezium_metrics_MilliSecondsBehindSource{context="streaming"}' not in first   # no change streamed yet

    now[0] = 104.5
    progress.start_table("db.b")
    progress.finish()
    metrics.landed(Batch(events=[event("r", "db.b"), event("c", txn="1"), event("u", txn="1"), event(None),
                                 event("d", txn="2", source_ts_ms=103_000)],
                         rejects=[BronzeReject("s", "decode", "bad", b"x", None)]), progress)
    now[0] = 106.0
    metrics.landed(Batch(schema_changes=[BronzeSchemaChange("s", 1, "db", None, "ALTER TABLE t ADD c INT", None,
                                                            "{}", None)]), progress)
    now[0] = 107.0
    metrics.stopped()
    last = parsed(metrics)
    assert last['debezium_metrics_SnapshotCompleted{context="snapshot"}'] == 1
    assert last['debezium_metrics_SnapshotRunning{context="snapshot"}'] == 0
    assert last['debezium_metrics_SnapshotDurationInSeconds{context="snapshot"}'] == 4
    assert last['debezium_metrics_RemainingTableCount{context="snapshot"}'] == 0
    assert last['debezium_metrics_TotalNumberOfEventsSeen{context="snapshot"}'] == 3
    assert last['debezium_metrics_TotalNumberOfEventsSeen{context="streaming"}'] == 3   # the heartbeat is not one
    assert [last[f'debezium_metrics_TotalNumberOf{w}EventsSeen{{context="streaming"}}']
            for w in ("Create", "Update", "Delete")] == [1, 1, 1]
    assert last['debezium_metrics_NumberOfCommittedTransactions{context="streaming"}'] == 2
    assert last['debezium_metrics_MilliSecondsBehindSource{context="streaming"}'] == 104_500 - 103_000
    assert last['debezium_metrics_MilliSecondsSinceLastEvent{context="streaming"}'] == 2_500
    assert last['debezium_metrics_ChangesApplied{context="schema-history"}'] == 1
    assert last['debezium_metrics_MilliSecondsSinceLastAppliedChange{context="schema-history"}'] == 1_000
    assert last['debezium_metrics_Connected{context="streaming"}'] == 0
    assert last['lakecdc_bronze_batches_total{source="shop"}'] == 3
    assert last['lakecdc_bronze_rejects_total{source="shop"}'] == 1
    assert last['lakecdc_bronze_last_commit_timestamp_seconds{source="shop"}'] == 106.0


def test_label_values_are_escaped() -> None:
    metrics = RunMetrics("shop", "mariadb")
    metrics.landed(Batch(events=[event("r", 'db."odd\\name')]))
    assert 'table="db.\\"odd\\\\name"} 1' in metrics.prometheus()
