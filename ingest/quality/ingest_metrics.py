"""What the ingest page of the quality report shows (ingest.html): for each source whose runs wrote their metrics to
bronze (`lakecdc run --metrics-port`: `bronze.<source>_metrics`, docs/metrics.md), the figures after the newest
landed batch, and over the newest KEPT_BATCHES batches how far streaming was behind the source
(MilliSecondsBehindSource) and how many events per second the connector produced (TotalNumberOfEventsSeen of the
snapshot and streaming contexts between two batches of one run)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ingest.quality.discover import Lakehouse

KEPT_BATCHES = 500
LAG = ("streaming", "MilliSecondsBehindSource")
SEEN = "TotalNumberOfEventsSeen"


@dataclass
class SourceIngest:
    source: str
    table: str                                   # the metrics table, `schema.table`
    newest_batch: int
    recorded_at: datetime
    latest: list[tuple[str, str, str | None, float]]   # (context, attribute, table or None, value), newest batch
    lag_ms: list[tuple[datetime, float]] = field(default_factory=list)
    events_per_s: list[tuple[datetime, float]] = field(default_factory=list)


def read_ingest(lake: Lakehouse) -> list[SourceIngest]:
    """Every source with a metrics table, in name order (none when no run wrote metrics)."""
    found = []
    for source in lake.sources():
        table = lake.bronze(source, "metrics")
        if lake.exists(table):
            ingest = _read_source(lake, source, table)
            if ingest is not None:
                found.append(ingest)
    return found


def _read_source(lake: Lakehouse, source: str, table: str) -> SourceIngest | None:
    ref = lake.ref(table)
    newest = lake.spark.sql(f"SELECT max(batch_id) AS newest FROM {ref}").collect()[0]["newest"]
    if newest is None:
        return None
    rows = lake.spark.sql(
        f"SELECT batch_id, recorded_at, context, attribute, table_id, value FROM {ref} "
        f"WHERE batch_id > {int(newest) - KEPT_BATCHES} ORDER BY batch_id").collect()
    by_batch: dict[int, list] = {}
    for row in rows:
        by_batch.setdefault(int(row["batch_id"]), []).append(row)
    latest_rows = by_batch[int(newest)]
    ingest = SourceIngest(source, table, int(newest), latest_rows[0]["recorded_at"],
                          sorted((r["context"], r["attribute"], r["table_id"], float(r["value"]))
                                 for r in latest_rows))
    previous: tuple[datetime, float] | None = None
    for batch_rows in by_batch.values():
        at = batch_rows[0]["recorded_at"]
        seen = 0.0
        for row in batch_rows:
            if (row["context"], row["attribute"]) == LAG:
                ingest.lag_ms.append((at, float(row["value"])))
            elif row["attribute"] == SEEN and row["context"] in ("snapshot", "streaming"):
                seen += float(row["value"])
        if previous is not None:
            seconds, more = (at - previous[0]).total_seconds(), seen - previous[1]
            if seconds > 0 and more >= 0:   # a new run starts its counters again: no rate across runs
                ingest.events_per_s.append((at, more / seconds))
        previous = (at, seen)
    return ingest
