"""The Debezium documentation's example events for SQL Server and Oracle end to end: the `customers` create,
update, delete and tombstone of tests/golden/sqlserver.json and tests/golden/oracle.json as `kcat -J` lines ->
the debezium-json source (`run_source`) -> real bronze -> `lakecdc generate` -> `dbt build` -> silver current
state and history, compared with the final state the documented events describe.

The records are built as tests/unit/test_events_golden.py builds them (which checks them field by field against
the documented JSON): each case's documented payload with its corrections applied, its source block through
ingest.events' source builder, the row schema of the fixture's table (checked here against the documented
schema of the create example), the key schema and the tombstone from ingest.events.

The expected silver is derived from the events alone: replaying their after images in source-position order
gives each key's versions (history) and the final state (current: the deleted row is gone; history: every
version closed). One project, one ingest and one `dbt build` per connector.
"""

from __future__ import annotations

import copy
import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest

from ingest.bronze.contract import BatchLimits
from ingest.config import load_config
from ingest.events import connect_schema as cs
from ingest.events import envelope as ev
from ingest.events.source_info import SOURCE_BUILDERS
from ingest.generate.commands import generate
from ingest.runner import run_source
from tests.support.mongodb import kcat_line
from tests.support.silver import make_project, run_dbt

pytestmark = [pytest.mark.integration, pytest.mark.slow]

GOLDEN = Path(__file__).resolve().parents[2] / "golden"
PRIMS = {"int32": cs.int32, "string": cs.string}   # the fixture's column types as Connect schemas
SPARK_TYPES = {"int32": "int", "string": "string"}  # and the Spark type silver gives each
SOURCE = "docs"

# connector -> (key case, create, update, delete, tombstone): the documented `customers` example
CASES = {
    "sqlserver": ("G-SS-KEY", "G-SS-C", "G-SS-U", "G-SS-D", "G-SS-TOMB"),
    "oracle": ("G-OR-KEY", "G-OR-C", "G-OR-U", "G-OR-D", "G-OR-TOMB"),
}


def _walk(doc: Any, path: str) -> tuple[Any, Any]:
    parts: list[Any] = [int(p) if p.isdigit() else p for p in path.split("/")]
    for part in parts[:-1]:
        doc = doc[part]
    return doc, parts[-1]


def _corrected(case: dict[str, Any]) -> Any:
    """The documented JSON with the case's corrections applied (as tests/unit/test_events_golden.py does: a
    replace or remove must find the documented value it corrects)."""
    doc = copy.deepcopy(case["documented"])
    for corr in case["corrections"]:
        parent, last = _walk(doc, corr["path"])
        if corr["op"] == "add":
            if isinstance(parent, list):
                parent.insert(last, corr["value"])
            else:
                assert last not in parent, corr["path"]
                parent[last] = corr["value"]
        else:
            assert corr["op"] in ("replace", "remove") and parent[last] == corr["documented"], corr["path"]
            if corr["op"] == "replace":
                parent[last] = corr["value"]
            else:
                del parent[last]
    return doc


def _adjust_positions(connector: str, payloads: dict[str, dict[str, Any]]) -> None:
    """The one change to the documented events: Oracle's documented delete sits at SCN 2122184, before the
    create (2122185) and the update (2125544); its source block is the create's (same txId, row_id) with the
    SCNs and times lowered, so by position - the order silver applies changes in - the row would be deleted before it
    was created, and the create and update would leave it alive. A real delete of the row commits after the
    update, so it gets scn and commit_scn 2125545 (the update's + 1); nothing else changes (its ts_ms, txId,
    start_scn stay as documented). SQL Server's events are in order as documented (commit_lsn 0x..758:0005,
    0x..ac0:0007, 0x..db0:0007)."""
    if connector != "oracle":
        return
    create, update, delete = (payloads[k]["source"] for k in ("c", "u", "d"))
    assert int(delete["commit_scn"]) < int(create["commit_scn"]) < int(update["commit_scn"])  # as documented
    delete["scn"] = delete["commit_scn"] = str(int(update["commit_scn"]) + 1)


def _documented(connector: str) -> tuple[dict[str, Any], list[ev.ChangeEvent], dict[str, Any]]:
    """(the fixture's table spec, the records in documented order - create, update, delete, tombstone -,
    the documented value schema of the create example, corrected)."""
    fixture = json.loads((GOLDEN / f"{connector}.json").read_text(encoding="utf-8"))
    cases = {c["id"]: c for c in fixture["cases"]}
    key_id, *change_ids, tomb_id = CASES[connector]
    spec = fixture["tables"]["customers"]
    table = ev.table_schemas(connector, spec["prefix"], db=spec.get("db"), schema=spec.get("schema"),
                             table=spec["table"], columns=[(n, PRIMS[t]()) for n, t in spec["columns"]],
                             key_columns=spec["key"])
    assert table.key_schema == _corrected(cases[key_id])["schema"]   # the documented key schema
    documented = {cases[i]["op"]: _corrected(cases[i]) for i in change_ids}
    payloads = {op: doc["payload"] for op, doc in documented.items()}
    _adjust_positions(connector, payloads)
    events = []
    for op, payload in payloads.items():
        source = SOURCE_BUILDERS[connector](**{k: v for k, v in payload["source"].items() if k != "connector"})
        events.append(ev.change(table, op, source=source, before=payload["before"], after=payload["after"],
                                ts_ms=payload["ts_ms"], ts_us=payload.get("ts_us"), ts_ns=payload.get("ts_ns")))
    # in source-position order the documented events are the create, the update, the delete
    assert sorted(payloads, key=lambda op: _position(connector, payloads[op]["source"])) == ["c", "u", "d"]
    events = list(ev.with_tombstones(events))
    assert [e.op for e in events] == ["c", "u", "d", None]
    assert events[-1].key == cases[tomb_id]["documented"]["key"]   # the documented tombstone's key
    return spec, events, documented["c"]["schema"]


def _position(connector: str, source: dict[str, Any]) -> tuple[int, ...]:
    """The change's place in the source's commit order, as Debezium documents it: SQL Server commit_lsn,
    change_lsn, event_serial_no; Oracle commit_scn, scn, ssn."""
    if connector == "sqlserver":
        return (int(source["commit_lsn"].replace(":", ""), 16), int(source["change_lsn"].replace(":", ""), 16),
                source["event_serial_no"])
    return int(source["commit_scn"]), int(source["scn"]), source["ssn"]


def _replay(connector: str, events: list[ev.ChangeEvent], key: str) -> tuple[dict[Any, dict], list[dict]]:
    """What the events describe, applied in position order: the final rows by key, and every version (the
    after image of a create or update: its key, op, values, source time, whether it is still current)."""
    changes = sorted((e for e in events if e.op is not None), key=lambda e: _position(connector, e.source))
    state: dict[Any, dict] = {}
    versions: list[dict] = []
    for e in changes:
        row = e.after if e.op != "d" else e.before
        for version in versions:
            if version["key"] == row[key]:
                version["current"] = False
        if e.op == "d":
            state.pop(row[key], None)
            continue
        state[row[key]] = dict(e.after)
        versions.append({"key": row[key], "op": e.op, "row": dict(e.after), "current": True,
                         "source_ts": dt.datetime.fromtimestamp(e.source["ts_ms"] / 1000, dt.UTC).replace(
                             tzinfo=None)})
    return state, sorted(versions, key=lambda v: v["key"])   # stable: position order within a key


def _silver(spark: Any, table: str, order: str) -> tuple[list[dict[str, Any]], dict[str, str]]:
    df = spark.sql(f"SELECT * FROM {table} ORDER BY {order}")
    return [r.asDict() for r in df.collect()], {f.name: f.dataType.simpleString() for f in df.schema.fields}


@pytest.mark.parametrize("connector", sorted(CASES))
def test_documented_customers_events_in_silver(connector: str, engine, warehouse: Path, tmp_path: Path) -> None:
    spec, events, documented_schema = _documented(connector)
    # the row schema the records carry (and silver types the columns by) is the documented one
    after_schema = next(f for f in events[0].value_schema["fields"] if f["field"] == "after")
    assert after_schema == next(f for f in documented_schema["fields"] if f["field"] == "after")

    inbox = tmp_path / "inbox"
    inbox.mkdir()
    lines = []
    for offset, event in enumerate(events):
        topic, key, value = ev.record(event)
        assert key is not None
        lines.append(kcat_line(offset, topic, key.decode(), None if value is None else value.decode()))
    (inbox / "events.jsonl").write_bytes(b"".join(lines))
    config_file = tmp_path / "lakecdc.yml"
    config_file.write_text(f"engine:\n  warehouse: {warehouse}\nsources:\n  {SOURCE}:\n    connector: debezium-json\n"
                           f"    path: {inbox.name}\n    topic.prefix: {spec['prefix']}\n")
    config = load_config(config_file)
    landed = run_source(config, SOURCE, until_caught_up=True, limits=BatchLimits(max_events=2), progress=False)
    # two bronze batches (create + update, delete + tombstone), the tombstone landed too
    assert (landed.batches, landed.events, landed.rejects) == (2, 4, 0)

    project = make_project(tmp_path, warehouse)
    result = generate(config, [SOURCE], project / "models")
    model = f"{SOURCE}__{spec['table'].lower()}"
    assert result.notes == [] and sorted(p.name for p in result.written) == sorted(
        [f"_{SOURCE}__sources.yml", f"stg_{model}.sql", f"{model}.sql", f"{model}_history.sql",
         f"_{SOURCE}__models.yml"])
    run_dbt(engine, project, "build")
    statuses = {r["unique_id"]: r["status"]
                for r in json.loads((project / "target/run_results.json").read_text())["results"]}
    assert set(statuses.values()) == {"success", "pass"}, statuses

    columns = [column for column, _ in spec["columns"]]
    key = spec["key"][0]
    state, versions = _replay(connector, events, key)
    spark = engine.spark

    # -- current state: the final rows, exactly (the deleted row gone), typed by the documented schema ----------
    rows, types = _silver(spark, f"silver.{model}", key)
    assert types == {**{c: SPARK_TYPES[t] for c, t in spec["columns"]}, "_op": "string", "_seq": "string",
                     "_source_ts": "timestamp"}
    assert list(types) == [*columns, "_op", "_seq", "_source_ts"]   # in the table's order
    got = {r[key]: {c: r[c] for c in columns} for r in rows}
    assert got == state

    # -- history: one version per create / update in position order, with the after image's values; the
    # deleted row's last version closed ------------------------------------------------------------------------
    history, types = _silver(spark, f"silver.{model}_history", f"{key}, valid_from_seq")
    assert {c: types[c] for c in columns} == {c: SPARK_TYPES[t] for c, t in spec["columns"]}
    assert [{"key": r[key], "op": r["_op"], "row": {c: r[c] for c in columns}, "current": r["is_current"],
             "source_ts": r["_source_ts"]} for r in history] == versions
    assert {r[key]: {c: r[c] for c in columns} for r in history if r["is_current"]} == state
    for earlier, later in zip(history, history[1:], strict=False):
        if earlier[key] == later[key]:   # a version ends where the next begins
            assert earlier["valid_to_seq"] == later["valid_from_seq"]
    closed = [r for r in history if not r["is_current"]]
    assert closed and all(r["valid_to_seq"] is not None and r["valid_to_seq"] > r["valid_from_seq"] for r in closed)
