"""PostgreSQL: the real Debezium 3.6.3 postgres connector (pgoutput, its own slot and publication) and
lakecdc's connector capture the same workload (pg_workload.py) in four runs covering every handling mode;
every event must be identical except the excluded fields and the written exceptions (compare.py)."""

from __future__ import annotations

import base64
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


def _end_collections(records: list) -> list[str]:
    return [c["data_collection"] for e in map(to_event, records) if e.kind == "transaction"
            and e.payload["status"] == "END" for c in e.payload["data_collections"]]


def test_logical_message_exception_is_still_needed(pg_captured: Captured) -> None:
    """Pins the written exception logical-message-identity-hash: Debezium's END event names the message
    collection with a Java identity hash, lakecdc with the message topic."""
    debezium, lakecdc = pg_captured.runs[pg.SCENARIO_RUN]
    assert any("LogicalDecodingMessageId@" in n for n in _end_collections(debezium)), _end_collections(debezium)
    assert f"{pg.SCENARIO_RUN}.message" in _end_collections(lakecdc)


def _types_rows(records: list, run: str) -> dict[tuple[str, int], dict]:
    return {(e.op, e.payload["after"]["id"]): e.payload["after"] for e in map(to_event, records)
            if e.topic == f"{run}.{run}.types" and e.op in ("r", "c")}


@pytest.mark.parametrize("run", list(pg.RUNS))
def test_bc_date_exception_is_still_needed(pg_captured: Captured, run: str) -> None:
    """Pins postgresql-bc-date-era: Debezium drops the era of 0044-03-15 BC in the snapshot's dates and in
    date arrays in both phases (-703383, the AD date), not in streamed dates (-735160, as PostgreSQL);
    lakecdc writes -735160 everywhere. The BC date is row 2's c_date and row 1's second c_date_array item
    (time.precision.mode does not change dates)."""
    debezium, lakecdc = (_types_rows(records, run) for records in pg_captured.runs[run])
    assert (debezium[("r", 2)]["c_date"], debezium[("c", pg.STREAM_ID + 2)]["c_date"]) == (-703383, -735160)
    assert debezium[("r", 1)]["c_date_array"] == debezium[("c", pg.STREAM_ID + 1)]["c_date_array"] == [17702, -703383]
    for i in (0, pg.STREAM_ID):
        row, array = lakecdc[("r" if i == 0 else "c", i + 2)], lakecdc[("r" if i == 0 else "c", i + 1)]
        assert (row["c_date"], array["c_date_array"]) == (-735160, [17702, -735160])


def test_reference_keeps_explicit_nulls(pg_captured: Captured) -> None:
    """The reference's converter runs with replace.null.with.default=false: an explicit NULL in a column with
    a default is null in Debezium's record (with the default still in the field schema), as lakecdc writes it.
    Its side effect, a null source.snapshot outside snapshots (written exception source-snapshot-false), is
    pinned here too."""
    for run in pg.RUNS:
        events = [e for e in map(to_event, pg_captured.runs[run][0]) if e.topic == f"{run}.{run}.defaults"]
        row = next(e for e in events if e.op == "c" and e.payload["after"]["id"] == 3)
        assert [row.payload["after"][c] for c in ("t", "n", "b", "d", "r", "n3")] == [None] * 6
        after = next(f for f in row.value["schema"]["fields"] if f["field"] == "after")
        defaulted = [f for f in after["fields"] if f["field"] in ("t", "n", "b", "d", "r", "n3") and "default" in f]
        assert len(defaulted) == 6
        assert row.payload["source"]["snapshot"] is None


def test_column_mappers_took_effect(pg_captured: Captured) -> None:
    """The runs' column mappers changed Debezium's records (so that identical events mean lakecdc maps the same
    way, not that neither side mapped): masks (NULL included), truncations (bytes cut as bytes), v1 and v2
    hashes cut to the column length."""
    def rows(run: str, table: str) -> list[dict]:
        return [e.payload["after"] for e in map(to_event, pg_captured.runs[run][0])
                if e.topic == f"{run}.{run}.{table}" and e.kind == "data" and e.payload["after"] is not None]

    types = rows("pgd", "types")
    assert types and {r["c_enum"] for r in types} == {"*****"}   # the all-NULL row too
    assert {len(r["c_text"]) for r in types if r["c_text"] is not None} == {32}          # MD5 hex
    assert {len(r["c_varchar"]) for r in types if r["c_varchar"] is not None} <= {0, 2, 3}
    assert all(len(r["v"]) == 5 for r in rows("pgd", "defaults"))                         # varchar(5)
    cut = [base64.b64decode(r["bin"]) for r in rows("pga", "toast_full") if r["bin"]]
    assert cut and all(len(b) <= 3 for b in cut if b != b"__debezium_unavailable_value"), cut
    # run pgb propagates the source types: in the value's field schemas, not in the key's
    event = next(e for e in map(to_event, pg_captured.runs["pgb"][0])
                 if e.topic == "pgb.pgb.types" and e.kind == "data" and e.op == "r")
    after = next(f for f in event.value["schema"]["fields"] if f["field"] == "after")
    fields = {f["field"]: f.get("parameters", {}) for f in after["fields"]}
    assert {k: v for k, v in fields["c_numeric_10_2"].items() if k.startswith("__debezium")} == {
        "__debezium.source.column.type": "NUMERIC", "__debezium.source.column.length": "10",
        "__debezium.source.column.scale": "2", "__debezium.source.column.name": "c_numeric_10_2"}
    assert fields["c_domain"]["__debezium.source.column.type"] == "CONFORMANCE_POSITIVE"
    assert all("parameters" not in f for f in event.key["schema"]["fields"])
    # run pga's message.key.columns: keyless_full keyed by a, pk_change by (v, id)
    pga = [e for e in map(to_event, pg_captured.runs["pga"][0]) if e.kind == "data"]
    assert {tuple(e.key["payload"]) for e in pga if e.topic.endswith(".keyless_full")} == {("a",)}
    assert {tuple(e.key["payload"]) for e in pga if e.topic.endswith(".pk_change")} == {("v", "id")}
    # run pgc's snapshot.select.statement.overrides: the snapshot row of `defaults` has i % 5
    read = [e.payload["after"] for e in map(to_event, pg_captured.runs["pgc"][0])
            if e.topic == "pgc.pgc.defaults" and e.kind == "data" and e.op == "r"]
    assert [r["i"] for r in read] == [7 % 5]
