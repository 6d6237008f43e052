"""Debezium's connector metrics for a `lakecdc run`, the same for every connector: counted from the batches the
runner lands (a metric never runs ahead of bronze: what Debezium counts when the connector emits a record,
lakecdc counts when bronze committed it), and served in Prometheus' text format under the names Debezium's
JMX exporter set-up gives them (`debezium_metrics_<Attribute>{plugin, context, name}`), so dashboards made for
Debezium read them. Served by `lakecdc run --metrics-port` (MetricsServer), and appended after each landed batch
to bronze.<source>_metrics by the runner (BronzeWriter.write_metrics).

Contexts and attributes (Debezium's names):
- snapshot: SnapshotRunning, SnapshotCompleted, SnapshotDurationInSeconds, TotalTableCount, RemainingTableCount,
  RowsScanned (per table, label `table`), TotalNumberOfEventsSeen, MilliSecondsSinceLastEvent
- streaming: Connected, TotalNumberOfEventsSeen, TotalNumberOfCreateEventsSeen, TotalNumberOfUpdateEventsSeen,
  TotalNumberOfDeleteEventsSeen, MilliSecondsBehindSource (bronze commit time - the last event's source
  timestamp), MilliSecondsSinceLastEvent, NumberOfCommittedTransactions (transaction ids seen to change)
- schema-history: ChangesApplied, MilliSecondsSinceLastAppliedChange
and lakecdc's own `lakecdc_bronze_batches_total`, `lakecdc_bronze_rejects_total`,
`lakecdc_bronze_last_commit_timestamp_seconds` (label `source`).
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from ingest.bronze.contract import Batch
from ingest.connectors.progress import SnapshotProgress

_STREAMING_OPS = {"c": "Create", "u": "Update", "d": "Delete"}


class RunMetrics:
    """The metrics of one source's run; `landed` after each bronze commit, `prometheus` from any thread."""

    def __init__(self, source: str, plugin: str, clock: Callable[[], float] = time.time) -> None:
        self.source, self.plugin, self.clock = source, plugin, clock
        self._lock = threading.Lock()
        self.connected = True
        self.snapshot_events = 0
        self.rows_scanned: Counter[str] = Counter()
        self.streaming_events = 0
        self.by_op: Counter[str] = Counter()
        self.committed_transactions = 0
        self.behind_source_ms: int | None = None
        self.changes_applied = 0
        self.batches = self.rejects = 0
        self._last_txn: str | None = None
        self._last_snapshot_event: float | None = None
        self._last_streaming_event: float | None = None
        self._last_change: float | None = None
        self._last_commit: float | None = None
        self._snapshot: SnapshotProgress | None = None
        self._snapshot_began: float | None = None
        self._snapshot_seconds: float | None = None   # kept once the snapshot finished

    def landed(self, batch: Batch, snapshot: SnapshotProgress | None = None) -> None:
        """Count one committed batch (`snapshot`: the connector's snapshot progress, when it has one)."""
        now = self.clock()
        snapshot_events, streaming_events, last_source_ts = 0, 0, None
        rows: Counter[str] = Counter()
        ops: Counter[str] = Counter()
        transactions, last_txn = 0, self._last_txn
        for event in batch.events:
            op = event.op
            if op is None:   # heartbeats, transaction markers
                continue
            if op == "r":
                snapshot_events += 1
                rows[event.table_id] += 1
                continue
            streaming_events += 1
            ops[op] += 1
            if event.source_ts_ms is not None:
                last_source_ts = event.source_ts_ms
            if event.txn_id is not None and event.txn_id != last_txn:
                transactions += 1
                last_txn = event.txn_id
        for block in batch.blocks:   # columnar snapshot rows: one table version each
            if block.columns.num_rows:
                snapshot_events += block.columns.num_rows
                rows[block.columns.column("table_id")[0].as_py()] += block.columns.num_rows
        with self._lock:
            self.batches += 1 if len(batch) else 0
            self.rejects += len(batch.rejects)
            self._last_commit = now if len(batch) else self._last_commit
            if snapshot_events:
                self.snapshot_events += snapshot_events
                self.rows_scanned.update(rows)
                self._last_snapshot_event = now
            if streaming_events:
                self.streaming_events += streaming_events
                self.by_op.update(ops)
                self._last_streaming_event = now
            if last_source_ts is not None:
                self.behind_source_ms = max(0, int(now * 1000) - last_source_ts)
            self.committed_transactions += transactions
            self._last_txn = last_txn
            if batch.schema_changes:
                self.changes_applied += len(batch.schema_changes)
                self._last_change = now
            self._snapshot = snapshot
            if snapshot is not None and self._snapshot_began is None:
                self._snapshot_began = now
            if snapshot is not None and snapshot.finished and self._snapshot_seconds is None:
                self._snapshot_seconds = now - (self._snapshot_began or now)

    def stopped(self) -> None:
        with self._lock:
            self.connected = False

    # -- figures ----------------------------------------------------------------------------------------------
    def samples(self) -> list[tuple[str, str, str | None, float]]:
        """(context, attribute, table or None, value) of every figure now; `bronze` context: lakecdc's own."""
        now = self.clock()
        out: list[tuple[str, str, str | None, float]] = []

        def add(context: str, name: str, value: float | int | bool | None, table: str | None = None) -> None:
            if value is not None:
                out.append((context, name, table, float(value)))

        def since(moment: float | None) -> int | None:
            return None if moment is None else int((now - moment) * 1000)

        with self._lock:
            snapshot = self._snapshot
            if snapshot is not None:
                add("snapshot", "SnapshotRunning", not snapshot.finished)
                add("snapshot", "SnapshotCompleted", snapshot.finished)
                seconds = self._snapshot_seconds if self._snapshot_seconds is not None else (
                    now - self._snapshot_began if self._snapshot_began is not None else None)
                add("snapshot", "SnapshotDurationInSeconds", None if seconds is None else int(seconds))
                add("snapshot", "TotalTableCount", len(snapshot.tables))
                add("snapshot", "RemainingTableCount",
                    0 if snapshot.finished else len(snapshot.tables) - max(snapshot.current, 0))
            add("snapshot", "TotalNumberOfEventsSeen", self.snapshot_events)
            add("snapshot", "MilliSecondsSinceLastEvent", since(self._last_snapshot_event))
            for table, count in sorted(self.rows_scanned.items()):
                add("snapshot", "RowsScanned", count, table)
            add("streaming", "Connected", self.connected)
            add("streaming", "TotalNumberOfEventsSeen", self.streaming_events)
            for op, word in _STREAMING_OPS.items():
                add("streaming", f"TotalNumberOf{word}EventsSeen", self.by_op[op])
            add("streaming", "MilliSecondsBehindSource", self.behind_source_ms)
            add("streaming", "MilliSecondsSinceLastEvent", since(self._last_streaming_event))
            add("streaming", "NumberOfCommittedTransactions", self.committed_transactions)
            add("schema-history", "ChangesApplied", self.changes_applied)
            add("schema-history", "MilliSecondsSinceLastAppliedChange", since(self._last_change))
            add("bronze", "batches_total", self.batches)
            add("bronze", "rejects_total", self.rejects)
            add("bronze", "last_commit_timestamp_seconds", self._last_commit)
        return out

    def prometheus(self) -> str:
        """The figures in Prometheus' text format."""
        lines = []
        for context, name, table, value in self.samples():
            if context == "bronze":
                lines.append(f'lakecdc_bronze_{name}{{source="{_escaped(self.source)}"}} {_number(value)}')
                continue
            labels = {"plugin": self.plugin, "context": context, "name": self.source}
            if table is not None:
                labels["table"] = table
            text = ",".join(f'{k}="{_escaped(v)}"' for k, v in labels.items())
            lines.append(f"debezium_metrics_{name}{{{text}}} {_number(value)}")
        return "\n".join(lines) + "\n"


def _number(value: float) -> str:
    return str(int(value)) if value.is_integer() and abs(value) < 2**53 else repr(value)


def _escaped(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


class MetricsServer:
    """`GET /metrics` on a loopback (or given) address while a run goes, on a daemon thread."""

    def __init__(self, metrics: RunMetrics, port: int, host: str = "127.0.0.1") -> None:
        self.metrics = metrics

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:   # scrapes are not log lines
                pass

            def do_GET(self) -> None:  # noqa: N802 (http.server's name)
                if self.path.split("?", 1)[0] not in ("/metrics", "/"):
                    self.send_error(404, "the metrics are at /metrics")
                    return
                body = metrics.prometheus().encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        try:
            self._server = ThreadingHTTPServer((host, port), Handler)
        except OSError as exc:
            from ingest.errors import LakecdcError

            raise LakecdcError(f"--metrics-port {port}: cannot listen on {host}:{port} ({exc.strerror})") from None
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, name="lakecdc-metrics", daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
