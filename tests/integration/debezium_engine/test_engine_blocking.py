"""Blocking snapshots, lakecdc's PostgreSQL connector against Debezium's own (the real postgres connector in the
embedded engine, `connector: debezium`): the same tables, the same blocking `execute-snapshot` signal row; the read
events and the notifications must agree in everything that does not depend on when they were taken: the
source.snapshot marks per table, the source block's fields and how its lsn, txId and sequence describe where the
stream paused (the signal's transaction), and the notifications' types and additional data."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.e2e import (
    PG_SCHEMA,
    PG_SLOT,
    PG_SOURCE,
    pg_debezium_properties,
    pg_drop_slot,
    pg_execute,
    pg_properties,
    pg_setup,
)
from tests.support.pg_e2e import ROOT, bronze_events

pytestmark = [pytest.mark.integration, pytest.mark.slow]

SIGNALS = f"{PG_SCHEMA}.dbz_signal"
TABLES = [f"{PG_SCHEMA}.accounts", f"{PG_SCHEMA}.notes"]


def blocking_snapshot(tmp_path: Path, dsn: str, connector: str, properties: dict[str, Any]) -> list[dict]:
    """A no_data start, the blocking signal, two runs: bronze's events in seq order."""
    config, warehouse = tmp_path / f"{connector}.yml", tmp_path / f"warehouse-{connector}"
    config.write_text(yaml.safe_dump({"engine": {"profile": "local", "warehouse": str(warehouse)}, "sources": {
        PG_SOURCE: {"connector": connector, **properties, "snapshot.mode": "no_data",
                    "signal.data.collection": SIGNALS, "notification.enabled.channels": "sink",
                    "notification.sink.topic.name": f"__debezium-notification.{PG_SOURCE}"}}}))

    def run() -> None:
        result = subprocess.run([sys.executable, "-m", "ingest.cli", "--config", str(config), "run", "--source",
                                 PG_SOURCE, "--until-caught-up", "--quiet"], cwd=ROOT, capture_output=True,
                                text=True, timeout=600)
        assert result.returncode == 0, result.stdout + result.stderr[-3000:]

    run()
    pg_execute(dsn, f"INSERT INTO {SIGNALS} VALUES ('b-{connector}', 'execute-snapshot', %s)",
               params=[(json.dumps({"data-collections": TABLES, "type": "blocking"}),)])
    run()
    run()   # Debezium's engine may hand the snapshot's end over in the next run
    return sorted(bronze_events(warehouse, PG_SOURCE), key=lambda r: r["seq"])


def reads(events: list[dict]) -> dict[str, list[dict]]:
    """The source blocks of the read events, per table."""
    out: dict[str, list[dict]] = {}
    for event in events:
        if event["op"] == "r":
            source = json.loads(event["value"])["source"]
            out.setdefault(source["table"], []).append(source)
    return out


def signal_change(events: list[dict]) -> dict:
    """The source block of the signal row's own change event (the last change before the pause)."""
    rows = [json.loads(e["value"])["source"] for e in events if e["op"] == "c" and e["table_id"].endswith("dbz_signal")]
    assert len(rows) == 1, rows
    return rows[0]


def notifications(events: list[dict]) -> list[tuple[str, str, list]]:
    """(aggregate type, type, additional data) of the blocking snapshot's per-table notifications, data_collections
    as a sorted list (Debezium's comes from a set), sorted (the engine's records of one snapshot share their source
    position, so bronze's seq does not order them). The data's key order is not compared: two of its keys share a
    HashMap bucket, whose order comes from a Map.of that the JVM orders at random (measured: either order); the
    order otherwise is the unit tests' (test_notification_data_is_ordered_as_debeziums_hashmap)."""
    out = []
    for event in events:
        if event["table_id"].startswith("__debezium-notification"):
            value = json.loads(event["value"])
            if value["type"] in ("IN_PROGRESS", "TABLE_SCAN_COMPLETED"):
                data = sorted((k, sorted(v.split(",")) if k == "data_collections" else v)
                              for k, v in value["additional_data"].items())
                out.append((value["aggregate_type"], value["type"], data))
    return sorted(out, key=json.dumps)


def test_a_blocking_snapshot_reads_like_debeziums(pg_dsn: str, tmp_path: Path) -> None:
    dsn = pg_setup(pg_dsn)
    pg_execute(dsn, f"CREATE TABLE {SIGNALS} (id varchar(64) PRIMARY KEY, type varchar(32), data varchar(2048))")
    try:
        debezium = blocking_snapshot(tmp_path, dsn, "debezium", pg_debezium_properties(pg_dsn))
        pg_drop_slot(pg_dsn)
        pg_execute(dsn, f"DROP PUBLICATION IF EXISTS {PG_SLOT}")
        native = blocking_snapshot(tmp_path, dsn, "postgresql", pg_properties(pg_dsn))
    finally:
        pg_drop_slot(pg_dsn)
    theirs, ours = reads(debezium), reads(native)
    assert sorted(theirs) == sorted(ours) == ["accounts", "notes"]
    for table in theirs:
        assert len(theirs[table]) == len(ours[table]), table
        # the marks of a table's rows (Debezium's row order within a table is the server's, unordered)
        assert sorted(s["snapshot"] for s in theirs[table]) == sorted(s["snapshot"] for s in ours[table]), table
        assert list(theirs[table][0]) == list(ours[table][0])   # the same fields, in the same order
    for events, sources, exact in ((debezium, theirs, False), (native, ours, True)):
        paused = signal_change(events)
        for source in (s for rows in sources.values() for s in rows):
            assert source["txId"] == paused["txId"]
            # Debezium's offset holds the signal's LSN, or a later one of its transaction when its stream took the
            # COMMIT before the pause (a race; seen both ways); lakecdc's is always the last change's
            assert source["lsn"] == paused["lsn"] if exact else source["lsn"] >= paused["lsn"], (source, paused)
            # sequence is [last commit LSN, LSN]: Debezium's COMMIT, when its stream took it before the pause, set
            # both to the commit's LSN (SourceInfo.updateLastCommit); before any commit the first is null
            took_commit = not exact and source["lsn"] > paused["lsn"]
            first = str(source["lsn"]) if took_commit else None
            assert json.loads(source["sequence"]) == [first, str(source["lsn"])], (source, paused)
            assert source["db"] == "e2e_pg" and source["schema"] == PG_SCHEMA
    assert notifications(native) == notifications(debezium)
