"""What bronze holds for a source: events landed, last seq, rejects, lag (for `lakecdc status`)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ingest.bronze.contract import BRONZE_SCHEMA, ResumeState, table_name
from ingest.sqlutil import qualified

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


@dataclass(frozen=True)
class SourceStatus:
    source: str
    landed: bool                  # the bronze tables exist
    events: int = 0
    batches: int = 0
    last_seq: str | None = None
    last_source_ts_ms: int | None = None
    schema_changes: int = 0
    rejects: int = 0
    lag_ms: int | None = None     # now - the newest source_ts_ms landed


def _count(spark: SparkSession, table: str) -> int | None:
    try:
        return int(spark.sql(f"SELECT count(*) FROM {table}").collect()[0][0])
    except Exception as exc:  # the table does not exist (yet)
        if "not found" in str(exc).lower() or "cannot be found" in str(exc).lower() or "TABLE_OR_VIEW" in str(exc):
            return None
        raise


def source_status(spark: SparkSession, source: str, catalog: str | None = None,
                  now_ms: int | None = None) -> SourceStatus:
    def name(kind: str) -> str:
        return qualified(catalog, BRONZE_SCHEMA, table_name(source, kind))

    if _count(spark, name("events")) is None:
        return SourceStatus(source=source, landed=False)
    row = spark.sql(f"SELECT count(*) AS events, count(DISTINCT batch_id) AS batches, max(seq) AS last_seq, "
                    f"max(source_ts_ms) AS last_ts FROM {name('events')}").collect()[0]
    now_ms = now_ms if now_ms is not None else int(time.time() * 1000)
    last_ts = row["last_ts"]
    return SourceStatus(
        source=source, landed=True, events=int(row["events"]), batches=int(row["batches"]),
        last_seq=row["last_seq"], last_source_ts_ms=last_ts,
        schema_changes=_count(spark, name("schema_changes")) or 0, rejects=_count(spark, name("rejects")) or 0,
        lag_ms=(now_ms - int(last_ts)) if last_ts is not None else None,
    )


def committed_position(spark: SparkSession, events_table: str, batch_id: int | None = None) -> str | None:
    """The position JSON of the newest committed batch of S_events (`batch_id`: that batch, when known): where a
    run resumes."""
    batch = str(batch_id) if batch_id is not None else f"(SELECT max(batch_id) FROM {events_table})"
    rows = spark.sql(f"SELECT position FROM {events_table} WHERE batch_id = {batch} "
                     f"ORDER BY seq DESC LIMIT 1").collect()
    return rows[0][0] if rows else None


def landed_resume_state(spark: SparkSession, source: str, catalog: str | None = None) -> ResumeState:
    """Where the source's next run would resume (read-only: for `lakecdc status`)."""
    events = qualified(catalog, BRONZE_SCHEMA, table_name(source, "events"))
    if _count(spark, events) is None:
        return ResumeState()
    return ResumeState.from_row(None, committed_position(spark, events))
