"""Exactly once through the real Debezium connector in the embedded engine: Debezium's postgres connector
(`connector: debezium`) captures the PostgreSQL end-to-end workload (inserts, updates, deletes, key changes,
TOASTed values, truncates, new tables) while `lakecdc run` is killed with SIGKILL at least 10 times, during
Debezium's initial snapshot (which it takes again from the beginning: bronze drops the unfinished one) and
while streaming; after catch-up, bronze replayed in seq order equals every source table, no seq twice."""

from __future__ import annotations

import random
import signal
import time
from collections import Counter
from pathlib import Path

import pytest
import yaml

from ingest.connectors.debezium_engine.offsets import EngineOffsets
from tests.support.pg import DB, assert_same_rows, drop_slot_and_publication, dsn_params, execute
from tests.support.pg_e2e import (
    SCHEMA,
    SOURCE,
    Workload,
    bronze_events,
    events_commits,
    prepare_source,
    replay,
    resume_position,
    source_rows,
    start_run,
)

pytestmark = [pytest.mark.integration, pytest.mark.slow]

SLOT = "dbz_engine_e2e"


def write_config(tmp_path: Path, pg_dsn: str) -> Path:
    params = dsn_params(pg_dsn)
    config = {
        "engine": {"profile": "local", "warehouse": str(tmp_path / "warehouse")},
        "sources": {SOURCE: {
            "connector": "debezium", "connector.class": "io.debezium.connector.postgresql.PostgresConnector",
            "database.hostname": params["host"], "database.port": params["port"], "database.user": params["user"],
            "database.password": params["password"], "database.dbname": DB, "topic.prefix": "e2e",
            "plugin.name": "pgoutput", "slot.name": SLOT, "publication.name": SLOT,
            "publication.autocreate.mode": "all_tables", "table.include.list": f"{SCHEMA}\\..*",
            "skipped.operations": "none", "poll.interval.ms": 200}},
    }
    path = tmp_path / "lakecdc.yml"
    path.write_text(yaml.safe_dump(config))
    return path


def committed_phase(warehouse: Path) -> str:
    """nothing, snapshot or streaming: where the last committed batch's offsets are (where a run resumes)."""
    position = resume_position(warehouse)
    if position is None:
        return "nothing"
    return "snapshot" if EngineOffsets.from_position(position).unfinished_snapshot() else "streaming"


def test_kill_minus_nine_during_debeziums_snapshot_and_streaming(pg_dsn: str, tmp_path: Path) -> None:
    dsn = prepare_source(pg_dsn, 20_000)
    drop_slot_and_publication(dsn, SLOT, SLOT)
    config = write_config(tmp_path, pg_dsn)
    warehouse = tmp_path / "warehouse"
    log = tmp_path / "run.log"
    workload = Workload(dsn, seed=11)
    workload.start()
    rng = random.Random(5)
    phases: list[str] = []
    try:
        while phases.count("snapshot") < 4 or phases.count("streaming") < 6:
            assert len(phases) < 20, phases
            version = events_commits(warehouse)
            proc = start_run(config, log, until_caught_up=False)
            if phases.count("snapshot") < 4:  # strike as soon as the snapshot commits a batch (a run that finds
                # an unfinished snapshot in bronze first removes it: one more commit, before any snapshot row)
                deadline = time.monotonic() + 120
                while proc.poll() is None and time.monotonic() < deadline and not (
                        events_commits(warehouse) > version and committed_phase(warehouse) == "snapshot"):
                    time.sleep(0.05)
            else:  # let the snapshot finish, then strike while streaming
                deadline = time.monotonic() + 240
                while proc.poll() is None and time.monotonic() < deadline and committed_phase(warehouse) != "streaming":
                    time.sleep(0.3)
                time.sleep(rng.uniform(0.5, 2.5))
            assert proc.poll() is None, f"lakecdc run exited by itself: {log.read_text()[-3000:]}"
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=30)
            phases.append(committed_phase(warehouse))
    finally:
        workload.stop_flag.set()
        workload.join(timeout=30)
    assert workload.error is None, workload.error
    for _ in range(2):  # catch up without interruption (the second run finds nothing new)
        proc = start_run(config, log)
        assert proc.wait(timeout=600) == 0, log.read_text()[-3000:]
    from deltalake import DeltaTable

    # each run that found an unfinished snapshot in bronze removed it (one DELETE commit)
    history = DeltaTable(str(warehouse / "bronze" / f"{SOURCE}_events")).history()
    assert sum(1 for commit in history if commit.get("operation") == "DELETE") >= 4, history
    events = bronze_events(warehouse)
    twice = Counter(e["seq"] for e in events) - Counter(set(e["seq"] for e in events))
    assert not twice, f"seqs landed twice: {[e for e in events if e['seq'] in twice]}"
    assert {"r", "c", "u", "d", "t", None} <= {e["op"] for e in events}
    state = replay(events)
    source = source_rows(dsn)
    assert set(source) <= set(state) | {t for t, rows in source.items() if not rows}
    for table, rows in source.items():
        assert_same_rows({str(k): v for k, v in state.get(table, {}).items()},
                         {str(k): v for k, v in rows.items()})
    drop_slot_and_publication(dsn, SLOT, SLOT)
    execute(dsn, f"DROP SCHEMA IF EXISTS {SCHEMA} CASCADE")
