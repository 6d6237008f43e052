"""MariaDB: Debezium 3.6.3's MySQL connector (the wheel has no MariaDB connector) reads a MariaDB started
as --version=5.7.19-MariaDB-log, and lakecdc's MariaDB connector reads the same server; four runs cover
every handling mode (mariadb_workload.py). Keys, row values, envelopes and schemas must be identical; the
binlog coordinates the MySQL connector cannot read on MariaDB are compared against seed 004 instead."""

from __future__ import annotations

import base64
import re

import pytest

from tests.conformance import mariadb_workload as my
from tests.conformance.capture import Captured
from tests.conformance.compare import to_event
from tests.conformance.conftest import compared

pytestmark = pytest.mark.integration

# Debezium 3.x's io.debezium.connector.mariadb.Source: the binlog connectors' shared struct maker (the
# MySQL layout, tests/golden/debezium363_schemas.json), not seed 004's older order (ts_us/ts_ns after ts_ms)
MARIADB_SOURCE_FIELDS = ["version", "connector", "name", "ts_ms", "snapshot", "db", "sequence", "ts_us", "ts_ns",
                         "table", "server_id", "gtid", "file", "pos", "row", "thread", "query"]


@pytest.mark.parametrize("run", list(my.RUNS))
def test_events_identical_to_debezium(mariadb_captured: Captured, run: str) -> None:
    result = compared("mariadb", mariadb_captured, run)
    if result.groups:
        pytest.fail(result.report(examples=2), pytrace=False)


@pytest.mark.parametrize("run", list(my.RUNS))
def test_every_type_row_went_through_snapshot_and_streaming(mariadb_captured: Captured, run: str) -> None:
    debezium, _ = mariadb_captured.runs[run]
    rows = {e.op: e.payload["after"] for e in map(to_event, debezium)
            if e.topic == f"{run}.{run}.types" and e.op in ("r", "c")
            and (e.payload.get("after") or {}).get("id") in (1, my.STREAM_ID + 1)}
    assert set(rows) == {"r", "c"}
    for t in my.TYPES:
        for op in ("r", "c"):
            assert f"c_{t.name}" in rows[op], (t.name, op)


def test_mariadb_source_block(mariadb_captured: Captured) -> None:
    """What the MySQL connector cannot tell on MariaDB: the source block is io.debezium.connector.mariadb.Source
    with the 3.x binlog layout, names the connector mariadb, and streamed events carry MariaDB's GTID
    (domain-server-sequence), the server id, binlog file and position."""
    _, lakecdc = mariadb_captured.runs[my.SCENARIO_RUN]
    events = [e for e in map(to_event, lakecdc) if e.kind == "data"]
    assert events
    for e in events:
        source_schema = next(f for f in e.value["schema"]["fields"] if f["field"] == "source")
        assert source_schema["name"] == "io.debezium.connector.mariadb.Source"
        assert [f["field"] for f in source_schema["fields"]] == MARIADB_SOURCE_FIELDS
        assert source_schema["version"] == 1
        source = e.payload["source"]
        assert source["connector"] == "mariadb"
        assert re.fullmatch(r"binlog\.\d{6}", source["file"]) and source["pos"] > 0
        if e.phase == "streaming":
            assert re.fullmatch(r"\d+-\d+-\d+", source["gtid"] or ""), source
            assert source["server_id"] == 1
            assert source["thread"] is None or source["thread"] > 0


def test_mariadb_exceptions_are_still_needed(mariadb_captured: Captured) -> None:
    """Pins the written exceptions mariadb-connector-name and mariadb-source-schema-name: the reference is
    the MySQL connector."""
    debezium, _ = mariadb_captured.runs[my.SCENARIO_RUN]
    e = next(e for e in map(to_event, debezium) if e.kind == "data")
    assert e.payload["source"]["connector"] == "mysql"
    source_schema = next(f for f in e.value["schema"]["fields"] if f["field"] == "source")
    assert source_schema["name"] == "io.debezium.connector.mysql.Source"


def test_float_snapshot_exception_is_still_needed(mariadb_captured: Captured) -> None:
    """Pins mariadb-float-snapshot-digits: row 2's c_float is -1.76229696E8; Debezium's snapshot reads the
    server's 6-digit text (-1.7623E8), its binlog reader and lakecdc (both phases) the stored float."""
    run = my.SCENARIO_RUN
    debezium, lakecdc = ({(e.op, e.payload["after"]["id"]): e.payload["after"] for e in map(to_event, records)
                          if e.topic == f"{run}.{run}.types" and e.op in ("r", "c")}
                         for records in mariadb_captured.runs[run])
    streamed = my.STREAM_ID + 2
    assert (debezium[("r", 2)]["c_float"], debezium[("c", streamed)]["c_float"]) == ("-1.7623E8", "-1.76229696E8")
    assert lakecdc[("r", 2)]["c_float"] == lakecdc[("c", my.STREAM_ID + 2)]["c_float"] == "-1.76229696E8"


def test_column_mappers_took_effect(mariadb_captured: Captured) -> None:
    """The runs' column mappers changed Debezium's records (identical events then mean lakecdc maps the same
    way): masks of character columns (ENUM and SET included, NULL too), truncation of characters and of bytes,
    v1 and v2 hashes; and the field schemas carry `masked` / `truncateLength`."""
    def data(run: str) -> list:
        return [e for e in map(to_event, mariadb_captured.runs[run][0])
                if e.topic == f"{run}.{run}.types" and e.kind == "data" and e.payload["after"] is not None]

    rows = [e.payload["after"] for e in data("my_d")]
    assert rows and {r["c_enum"] for r in rows} == {r["c_set"] for r in rows} == {"****"}
    assert {type(r["c_int"]) for r in rows} <= {int, type(None)}                 # not a character type
    assert {len(r["c_text_utf8mb4"]) for r in rows if r["c_text_utf8mb4"]} <= {1, 2}
    assert {len(r["c_text"]) for r in rows if r["c_text"] is not None} == {64}    # SHA-256 hex
    assert {len(r["c_longtext"]) for r in rows if r["c_longtext"] is not None} == {32}   # MD5 hex
    after = next(f for f in data("my_d")[0].value["schema"]["fields"] if f["field"] == "after")
    fields = {f["field"]: f for f in after["fields"]}
    assert fields["c_int"]["parameters"] == {"masked": "true"}
    assert fields["c_varchar"]["parameters"]["truncateLength"] == "2"
    blobs = [e.payload["after"]["c_blob"] for e in data("my_a") if e.payload["after"]["c_blob"] is not None]
    assert blobs and {len(base64.b64decode(b)) for b in blobs} == {1}
    # run my_c propagates source types: in the value's field schemas, not in the key's
    event = data("my_c")[0]
    after = next(f for f in event.value["schema"]["fields"] if f["field"] == "after")
    fields = {f["field"]: f.get("parameters", {}) for f in after["fields"]}
    assert fields["c_decimal_10_2"]["__debezium.source.column.type"] == "DECIMAL"
    assert fields["c_decimal_10_2"]["__debezium.source.column.scale"] == "2"
    assert fields["id"]["__debezium.source.column.name"] == "id"
    assert fields["c_year"]["__debezium.source.column.type"] == "YEAR"    # by type
    assert all("parameters" not in f for f in event.key["schema"]["fields"])
    # run my_a's message.key.columns: keyless keyed by (a, b), pk_change by (v, id)
    my_a = [e for e in map(to_event, mariadb_captured.runs["my_a"][0]) if e.kind == "data"]
    assert {tuple(e.key["payload"]) for e in my_a if e.topic.endswith(".keyless")} == {("a", "b")}
    assert {tuple(e.key["payload"]) for e in my_a if e.topic.endswith(".pk_change")} == {("v", "id")}
    # run my_b's snapshot.select.statement.overrides: no snapshot row of `defaults` (filtered), defs' row read
    my_b = [e for e in map(to_event, mariadb_captured.runs["my_b"][0]) if e.kind == "data" and e.op == "r"]
    assert not [e for e in my_b if e.topic.endswith(".defaults")]
    assert len([e for e in my_b if e.topic.endswith(".defs")]) == 1
