"""The connector family suite: what every database connector that runs here must do the same way, written once
and run for each (tests.support.connector_family.MEMBERS: PostgreSQL and MariaDB), each on a private server
of its own (the shared servers must never be restarted or reconfigured):

- prerequisite errors: an unreachable server, a login without the replication privilege and a change log
  the connector cannot read are refused by `validate()` with one line saying what to do;
- server restarts while streaming into bronze (connector.batches() -> BronzeWriter.write -> acknowledge, as
  the runner does): the server is restarted cleanly, then crashed, while a workload keeps committing and
  retries through the outages; every committed transaction lands exactly once and bronze replays to the
  source state;
- heartbeats (heartbeat.interval.ms) land while idle and go on after a restart without a seq twice.

A kill -9 of the ingest job itself is tested once for the runner in tests/integration/bronze/test_crash_safety.py
and against both servers by `make soak` (bench/soak.py)."""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from ingest.config import EngineSettings
from ingest.errors import LakecdcError
from tests.support.connector_family import (
    MEMBERS,
    FamilyMember,
    Workload,
    assert_each_commit_landed_once,
    bronze_events,
    create_tables,
    source_rows,
)
from tests.support.pg import free_port

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module", params=sorted(MEMBERS))
def family(request: pytest.FixtureRequest) -> Iterator[tuple[FamilyMember, Any]]:
    """A member of the family and its private server (one per member for the whole module)."""
    member = MEMBERS[request.param]
    with member.private_server() as server:
        yield member, server


def _one_line(exc: pytest.ExceptionInfo) -> str:
    text = str(exc.value)
    assert "\n" not in text, text
    return text


def _refusal(connector) -> str:
    try:
        with pytest.raises(LakecdcError) as exc:
            connector.validate()
    finally:
        connector.close()
    return _one_line(exc)


def test_unreachable_server_is_one_line(family: tuple[FamilyMember, Any]) -> None:
    member, server = family
    port = free_port()
    refused = _refusal(member.make_connector(server, "fam_unreachable", **{"database.port": port}))
    assert "cannot connect to" in refused and f"127.0.0.1:{port}" in refused, refused


def test_login_without_replication_privilege_is_refused(family: tuple[FamilyMember, Any]) -> None:
    member, server = family
    login = member.create_user_without_replication(server)
    assert member.no_replication_error() in _refusal(member.make_connector(server, "fam_norepl", **login))


def test_change_log_the_connector_cannot_read_is_refused(family: tuple[FamilyMember, Any]) -> None:
    member, server = family
    with member.change_log_off(server) as words:
        assert words in _refusal(member.make_connector(server, "fam_nolog"))
    member.make_connector(server, "fam_nolog").validate()   # accepted again once the setting is back


@pytest.mark.slow
def test_server_restart_clean_then_crash_during_streaming(family: tuple[FamilyMember, Any], engine,
                                                           engine_settings: EngineSettings, warehouse: Path,
                                                           caplog: pytest.LogCaptureFixture) -> None:
    from ingest.bronze.writer import BronzeWriter

    member, server = family
    source = "fam_restart"
    caplog.set_level(logging.WARNING)
    create_tables(member, server)
    writer = BronzeWriter(engine.spark, engine_settings, source)
    connector = member.make_connector(server, source)
    connector.validate()
    workload = Workload(member, server)
    restarts: list[str] = []
    restarter_error: list[BaseException] = []

    def restarter() -> None:
        try:
            for mode in member.restart_modes:
                time.sleep(2.0)
                member.restart(server, mode)
                restarts.append(mode)
            time.sleep(2.0)
        except BaseException as exc:  # surfaced by the test
            restarter_error.append(exc)
        finally:
            workload.stop_flag.set()

    thread = threading.Thread(target=restarter, daemon=True)
    streamed = 0
    deadline = time.monotonic() + 50
    try:
        for batch in connector.batches(writer.resume_state(), member.limits):
            writer.write(batch)
            connector.acknowledge(batch)
            streamed += sum(1 for e in batch.events if e.op in ("c", "u", "d"))
            if batch.caught_up and not thread.is_alive() and not workload.is_alive():
                if not workload.ident:  # snapshot done and streaming: start the workload and the restarts
                    workload.start()
                    thread.start()
                    continue
                ops = member.query(server, "SELECT count(*) FROM family.ops")[0][0]
                landed = sum(1 for e in bronze_events(warehouse, source) if e["table_id"].endswith(".ops"))
                if landed >= ops:
                    break
            assert time.monotonic() < deadline, f"timed out: restarts {restarts}, {streamed} changes streamed"
    finally:
        workload.stop_flag.set()
        connector.close()

    assert workload.error is None, workload.error
    assert not restarter_error, restarter_error
    assert restarts == list(member.restart_modes)
    assert workload.outages >= 2  # the workload really saw both outages
    lost = [r for r in caplog.records if member.lost_message in r.getMessage()]
    assert len(lost) >= 2, [r.getMessage() for r in caplog.records]  # and so did the connector, streaming

    committed = assert_each_commit_landed_once(bronze_events(warehouse, source), source_rows(member, server))
    assert committed > 200
    assert workload.attempted >= committed


def test_heartbeats_land_while_idle_and_resume_exactly_once(family: tuple[FamilyMember, Any], engine,
                                                            engine_settings: EngineSettings, warehouse: Path) -> None:
    """heartbeat.interval.ms: heartbeat events on <topic.heartbeat.prefix>.<topic.prefix> (op NULL, key
    serverName, value ts_ms) while the stream is idle; a restarted connector numbers its heartbeats on after
    the landed ones (no seq twice) and a change made meanwhile lands once, after them."""
    from ingest.bronze.writer import BronzeWriter

    member, server = family
    source = "fam_beat"
    member.execute(server, "CREATE SCHEMA IF NOT EXISTS family", "CREATE TABLE family.beat (k INT PRIMARY KEY)")
    writer = BronzeWriter(engine.spark, engine_settings, source)
    props = {"heartbeat.interval.ms": 50, "topic.heartbeat.prefix": "beats"}

    def stream_until(connector, done) -> None:
        landed: list = []
        deadline = time.monotonic() + 60
        try:
            for batch in connector.batches(writer.resume_state(), member.limits):
                writer.write(batch)
                connector.acknowledge(batch)
                landed += batch.events
                if batch.caught_up and done(landed):
                    return
                assert time.monotonic() < deadline, f"timed out with {len(landed)} events"
        finally:
            connector.close()

    def heartbeats(events: list) -> list:
        return [e for e in events if e.table_id == f"beats.{source}"]

    stream_until(member.make_connector(server, source, **props), lambda landed: len(heartbeats(landed)) >= 3)
    member.execute(server, "INSERT INTO family.beat VALUES (1)")
    stream_until(member.make_connector(server, source, **props),
                 lambda landed: len(heartbeats(landed)) >= 2 and any(e.op == "c" for e in landed))

    rows = sorted(bronze_events(warehouse, source), key=lambda e: e["seq"])
    seqs = [e["seq"] for e in rows]
    assert len(seqs) == len(set(seqs)), "a seq landed twice"
    beats = [e for e in rows if e["table_id"] == f"beats.{source}"]
    assert len(beats) >= 5 and all(e["op"] is None for e in beats)
    assert {e["key"] for e in beats} == {json.dumps({"serverName": source}, separators=(",", ":"))}
    assert all(isinstance(json.loads(e["value"])["ts_ms"], int) for e in beats)
    inserts = [e for e in rows if e["table_id"].endswith(".beat") and e["op"] == "c"]
    assert len(inserts) == 1
