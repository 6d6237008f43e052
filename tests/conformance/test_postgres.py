"""PostgreSQL: the real Debezium 3.6.3 postgres connector (pgoutput, its own slot and publication) and
lakecdc's connector capture the same workload (pg_workload.py) in four runs covering every handling mode;
every event must be identical except the excluded fields and the written exceptions (compare.py)."""

from __future__ import annotations

import json

import pytest

from tests.conformance import pg_workload as pg
from tests.conformance.capture import Captured
from tests.conformance.compare import to_event
from tests.conformance.conftest import compared

pytestmark = pytest.mark.integration


@pytest.mark.parametrize("run", list(pg.RUNS))
def test_events_identical_to_debezium(pg_captured: Captured, run: str) -> None:
    result = compared("postgresql", pg_captured, run)
    if result.groups:
        pytest.fail(result.report(examples=2), pytrace=False)


@pytest.mark.parametrize("run", list(pg.RUNS))
def test_every_type_row_went_through_snapshot_and_streaming(pg_captured: Captured, run: str) -> None:
    """The comparison is not vacuous: Debezium delivered every type column with its first value non-null,
    once from the snapshot and once streamed."""
    debezium, _ = pg_captured.runs[run]
    rows = {e.op: e.payload["after"] for e in map(to_event, debezium)
            if e.topic == f"{run}.{run}.types" and e.op in ("r", "c")
            and (e.payload.get("after") or {}).get("id") in (1, pg.STREAM_ID + 1)}
    assert set(rows) == {"r", "c"}
    for t in pg.TYPES:
        for op in ("r", "c"):
            assert f"c_{t.name}" in rows[op], (t.name, op)


def test_scenarios_went_through(pg_captured: Captured) -> None:
    """Debezium produced what the scenario run is there to compare: placeholders for unchanged TOAST values,
    tombstones, a truncate, key changes, transaction boundaries and logical messages."""
    run = pg.SCENARIO_RUN
    events = [to_event(r) for r in pg_captured.runs[run][0]]
    kinds = {e.kind for e in events}
    assert {"tombstone", "transaction", "message", "data"} <= kinds
    assert any(e.op == "t" for e in events)
    toast = [e for e in events if e.topic.endswith(".toast_default") and e.op == "u"]
    assert any("__debezium_unavailable_value" in json.dumps(e.payload["after"]) for e in toast)
    keyed = [e for e in events if e.topic.endswith(".pk_change") and e.op in ("d", "c")]
    assert len(keyed) == 4


def test_logical_message_exception_is_still_needed(pg_captured: Captured) -> None:
    """Pins the written exception logical-message-identity-hash: Debezium's END event names the message
    collection with a Java identity hash."""
    events = [to_event(r) for r in pg_captured.runs[pg.SCENARIO_RUN][0]]
    names = [c["data_collection"] for e in events if e.kind == "transaction" and e.payload["status"] == "END"
             for c in e.payload["data_collections"]]
    assert any("LogicalDecodingMessageId@" in n for n in names), names
