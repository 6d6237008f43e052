"""MongoDB collections end to end: change events as `kcat -J` lines -> the debezium-json source (`run_source`) ->
real bronze -> `lakecdc generate` -> `dbt build` -> silver current state and history, compared row by row, value
and type, with what the documents say (docs/connectors/mongodb-silver.md).

Two collections of one source, built once; then new documents with a new field and a wider value, built
incrementally before and after `lakecdc generate` runs again:
- inventory.customers: the seed's golden example (read, $set patch, delete and tombstone of 1004) and documents of
  our own: fields whose kinds widen (int -> bigint, int -> double, int + string -> text), a nested document,
  inserts, an update with the whole document (a field left out), an old-version patch ($set of a field and of a
  path inside one, $unset), a change-stream update (updateDescription), a delete, and an update in a form silver
  cannot read (MongoDB 5's `$v: 2` diff);
- inventory.kinds: one document holding every row of the conversion table (tests/support/mongodb.py), with an
  ObjectId _id, and one with a string _id (so `_id_value` is text);
- then customers again: 1001 with a double in `visits` (so far bigint) and a new field, a patch of 1002. Before
  `lakecdc generate` sees them, the build warns (`lakecdc_mongodb_fields`) and `visits` is null; after it, the
  changed type rebuilds silver from bronze, and both documents are right.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest

from ingest.bronze.contract import BatchLimits
from ingest.config import load_config
from ingest.generate.commands import generate
from ingest.runner import run_source
from tests.support.mongodb import CONVERSIONS, PREFIX, Collection, golden_lines, kcat_line, same_value
from tests.support.silver import make_project, run_dbt

pytestmark = [pytest.mark.integration, pytest.mark.slow]

OID = "596e275826f08b2730779e1f"
SINCE = dt.datetime(2019, 5, 27, 14, 0, 0)


def _oid_key(oid: str) -> str:
    return '{"$oid" : "' + oid + '"}'   # strict mode, as the seed documents the key of an ObjectId _id


def _customer(id_: int, **fields: Any) -> dict[str, Any]:
    return {"_id": {"$numberLong": str(id_)}, **fields}


def _input_lines() -> list[bytes]:
    topic = f"{PREFIX}.inventory.customers"
    records: list[tuple[str, str, Any]] = [(topic, key, value) for key, value in golden_lines()]
    c = Collection("customers", ts_ms=1558966000000)
    since = {"$date": int(SINCE.replace(tzinfo=dt.UTC).timestamp() * 1000)}
    records += [(topic, *c.change("c", "1001", after=_customer(
                    1001, first_name="Sally", last_name="Thomas", email="sally.thomas@acme.com", visits=3, score=7,
                    tag=5, address={"street": "1 Main St", "zip": {"$numberInt": "12345"}}, since=since))),
                (topic, *c.change("c", "1002", after=_customer(
                    1002, first_name="George", last_name="Bailey", email="gbailey@foobar.com",
                    visits={"$numberLong": "5000000000"}, score=2.5, tag="vip",
                    address={"street": "2 Elm St", "city": "Bedford Falls"}))),
                (topic, *c.change("c", "1003", after=_customer(1003, first_name="Edward", last_name="Walker",
                                                               email="ed@walker.com", score=1))),
                # the whole document again (change streams with the lookup): the address is gone
                (topic, *c.change("u", "1001", after=_customer(
                    1001, first_name="Sally", last_name="Thomas-Hart", email="sally@hart.com", visits=4, score=8,
                    tag=6, since=since))),
                # an old version's patch: a field set, a path inside the address set, the tag removed
                (topic, *c.change("u", "1002", patch={"$v": 1, "$set": {"first_name": "Georgie",
                                                                       "address.city": "Pottersville"},
                                                      "$unset": {"tag": True}})),
                # a change stream's update without the lookup
                (topic, *c.update_description("1003", {"email": "edward@walker.com", "visits": 1}, ["last_name"])),
                (topic, *c.change("c", "1005", after=_customer(1005, first_name="Temp"))),
                (topic, *c.change("d", "1005")),
                # an update silver cannot read (MongoDB 5's oplog diff): every field null until a whole document
                (topic, *c.change("c", "1006", after=_customer(1006, first_name="Ola", score=3))),
                (topic, *c.change("u", "1006", patch={"$v": 2, "diff": {"u": {"first_name": "Ola N."}}}))]
    k = Collection("kinds", ts_ms=1558967000000)
    kinds_topic = f"{PREFIX}.inventory.kinds"
    first = {"_id": {"$oid": OID}, **{case.field: case.value for case in CONVERSIONS}}
    records += [(kinds_topic, *k.change("r", _oid_key(OID), after=first)),
                (kinds_topic, *k.change("r", '"k2"', after={"_id": "k2", "name": "second"}))]
    return [kcat_line(offset, topic, key, value) for offset, (topic, key, value) in enumerate(records)]


def _later_lines() -> list[bytes]:
    topic = f"{PREFIX}.inventory.customers"
    c = Collection("customers", ts_ms=1558968000000)
    records = [c.change("u", "1001", after=_customer(1001, first_name="Sally", last_name="Thomas-Hart",
                                                     email="sally@hart.com", visits=4.5, score=8, tag=6, vip=True)),
               c.change("u", "1002", patch={"$set": {"email": "george@bailey.com"}})]
    return [kcat_line(100 + offset, topic, key, value) for offset, (key, value) in enumerate(records)]


def _statuses(project: Path) -> dict[str, str]:
    """dbt's result per node of the last invocation (models: success; tests: pass / warn / fail)."""
    results = json.loads((project / "target/run_results.json").read_text())["results"]
    return {r["unique_id"].split(".")[2]: r["status"] for r in results}


def _rows(spark: Any, table: str, order: str) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """Rows (as dicts) and column -> Spark type of a silver table."""
    df = spark.sql(f"SELECT * FROM {table} ORDER BY {order}")
    types = {f.name: f.dataType.simpleString() for f in df.schema.fields}
    return [r.asDict() for r in df.collect()], types


def _doc(row: dict[str, Any]) -> Any:
    return None if row["_document"] is None else json.loads(row["_document"])


CUSTOMER_TYPES = {"_id": "string", "_id_value": "bigint", "first_name": "string", "last_name": "string",
                  "email": "string", "visits": "bigint", "score": "double", "tag": "string", "address": "string",
                  "since": "timestamp", "_document": "string"}
CUSTOMER_COLUMNS = ["first_name", "last_name", "email", "visits", "score", "tag", "address", "since"]


def test_mongodb_collections_in_silver(engine, warehouse: Path, tmp_path: Path) -> None:
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    (inbox / "events.jsonl").write_bytes(b"".join(_input_lines()))
    config_file = tmp_path / "lakecdc.yml"
    config_file.write_text(f"engine:\n  warehouse: {warehouse}\nsources:\n  mongo:\n    connector: debezium-json\n"
                           f"    path: {inbox.name}\n    topic.prefix: {PREFIX}\n")
    config = load_config(config_file)
    landed = run_source(config, "mongo", until_caught_up=True, limits=BatchLimits(max_events=8), progress=False)
    assert (landed.events, landed.rejects) == (16, 0)   # the tombstone too

    project = make_project(tmp_path, warehouse)
    result = generate(config, ["mongo"], project / "models")
    assert result.notes == [] and len(result.written) == 8   # 2 x (staging, current, history) + 2 YAML
    staging = (project / "models/staging/mongo/stg_mongo__customers.sql").read_text()
    assert "mongodb_fields=[\n    ['_id', 'bigint'],\n    ['first_name', 'string']," in staging
    run_dbt(engine, project, "build")
    statuses = _statuses(project)
    assert set(statuses.values()) == {"success", "pass"}, statuses
    assert "lakecdc_lakecdc_mongodb_fields_mongo__customers_" in statuses

    spark = engine.spark
    # -- customers: current state ---------------------------------------------------------------------------
    rows, types = _rows(spark, "silver.mongo__customers", "_id")
    assert list(types.items()) == [*CUSTOMER_TYPES.items(), ("_op", "string"), ("_seq", "string"),
                                   ("_source_ts", "timestamp")]   # in the documents' order
    got = {r["_id"]: {c: r[c] for c in ["_id_value", *CUSTOMER_COLUMNS, "_op"]} for r in rows}
    assert got == {   # 1004 (the seed's) and 1005 were deleted
        "1001": {"_id_value": 1001, "first_name": "Sally", "last_name": "Thomas-Hart", "email": "sally@hart.com",
                 "visits": 4, "score": 8.0, "tag": "6", "address": None, "since": SINCE, "_op": "u"},
        # the patch: first_name set, tag removed, the address changed inside (so unknown: null); the rest kept
        "1002": {"_id_value": 1002, "first_name": "Georgie", "last_name": "Bailey", "email": "gbailey@foobar.com",
                 "visits": 5000000000, "score": 2.5, "tag": None, "address": None, "since": None, "_op": "u"},
        # updateDescription: email and visits set, last_name removed; first_name and score kept
        "1003": {"_id_value": 1003, "first_name": "Edward", "last_name": None, "email": "edward@walker.com",
                 "visits": 1, "score": 1.0, "tag": None, "address": None, "since": None, "_op": "u"},
        "1006": {"_id_value": 1006, **dict.fromkeys(CUSTOMER_COLUMNS), "_op": "u"}}
    documents = {r["_id"]: _doc(r) for r in rows}
    assert documents["1001"] == _customer(1001, first_name="Sally", last_name="Thomas-Hart", email="sally@hart.com",
                                          visits=4, score=8, tag=6, since={"$date": int(SINCE.replace(
                                              tzinfo=dt.UTC).timestamp() * 1000)})
    assert documents["1002"] is None and documents["1003"] is None and documents["1006"] is None

    # -- customers: history ---------------------------------------------------------------------------------
    history, types = _rows(spark, "silver.mongo__customers_history", "_id, valid_from_seq")
    assert {c: types[c] for c in CUSTOMER_TYPES} == CUSTOMER_TYPES
    versions = [(r["_id"], r["_op"], r["is_current"], r["first_name"], r["last_name"], r["email"], r["visits"],
                 r["score"], r["tag"]) for r in history]
    assert versions == [
        ("1001", "c", False, "Sally", "Thomas", "sally.thomas@acme.com", 3, 7.0, "5"),
        ("1001", "u", True, "Sally", "Thomas-Hart", "sally@hart.com", 4, 8.0, "6"),
        ("1002", "c", False, "George", "Bailey", "gbailey@foobar.com", 5000000000, 2.5, "vip"),
        ("1002", "u", True, "Georgie", "Bailey", "gbailey@foobar.com", 5000000000, 2.5, None),
        ("1003", "c", False, "Edward", "Walker", "ed@walker.com", None, 1.0, None),
        ("1003", "u", True, "Edward", None, "edward@walker.com", 1, 1.0, None),
        # the seed's 1004: the read, then the patch's version, closed by the delete
        ("1004", "r", False, "Anne", "Kretchmar", "annek@noanswer.org", None, None, None),
        ("1004", "u", False, "Anne Marie", "Kretchmar", "annek@noanswer.org", None, None, None),
        ("1005", "c", False, "Temp", None, None, None, None, None),
        ("1006", "c", False, "Ola", None, None, None, 3.0, None),
        ("1006", "u", True, None, None, None, None, None, None)]
    by_version = {(r["_id"], r["_op"]): r for r in history}
    assert _doc(by_version[("1004", "r")]) == {"_id": {"$numberLong": "1004"}, "first_name": "Anne",
                                               "last_name": "Kretchmar", "email": "annek@noanswer.org"}
    assert by_version[("1004", "r")]["_id_value"] == 1004 and _doc(by_version[("1004", "u")]) is None
    assert json.loads(by_version[("1001", "c")]["address"]) == {"street": "1 Main St", "zip": {"$numberInt": "12345"}}
    assert json.loads(by_version[("1002", "c")]["address"]) == {"street": "2 Elm St", "city": "Bedford Falls"}
    assert by_version[("1002", "u")]["address"] is None
    closed = [r for r in history if not r["is_current"]]
    assert all(r["valid_to_seq"] is not None for r in closed)
    assert by_version[("1004", "u")]["valid_to_seq"] > by_version[("1004", "u")]["valid_from_seq"]

    # -- kinds: every row of the conversion table -----------------------------------------------------------
    rows, types = _rows(spark, "silver.mongo__kinds", "_id")
    assert [r["_id"] for r in rows] == ['"k2"', _oid_key(OID)]
    assert [r["_id_value"] for r in rows] == ["k2", OID] and types["_id_value"] == "string"   # objectid + string
    second, first = rows
    wrong = [(case.field, types[case.field], first[case.field]) for case in CONVERSIONS
             if types[case.field] != case.spark_type or not same_value(first[case.field], case.silver,
                                                                        case.spark_type)]
    assert not wrong, wrong
    assert second["name"] == "second" and all(second[case.field] is None for case in CONVERSIONS
                                              if case.field != "name")
    assert _doc(second) == {"_id": "k2", "name": "second"}

    # -- later documents: a wider value and a new field, before and after `lakecdc generate` --------------------
    (inbox / "later.jsonl").write_bytes(b"".join(_later_lines()))
    assert run_source(config, "mongo", until_caught_up=True, progress=False).events == 2
    customers = ["--select", "mongo__customers", "mongo__customers_history"]
    run_dbt(engine, project, "build", *customers)
    assert _statuses(project)["lakecdc_lakecdc_mongodb_fields_mongo__customers_"] == "warn"
    rows, types = _rows(spark, "silver.mongo__customers", "_id")
    assert "vip" not in types and [(r["_id"], r["visits"], r["email"]) for r in rows] == [
        ("1001", None, "sally@hart.com"), ("1002", 5000000000, "george@bailey.com"), ("1003", 1, "edward@walker.com"),
        ("1006", None, None)]

    again = generate(config, ["mongo"], project / "models")
    assert sorted(p.name for p in again.written) == ["_mongo__models.yml", "mongo__customers.sql",
                                                     "mongo__customers_history.sql", "stg_mongo__customers.sql"]
    run_dbt(engine, project, "build", *customers)
    statuses = _statuses(project)
    assert set(statuses.values()) == {"success", "pass"}, statuses
    rows, types = _rows(spark, "silver.mongo__customers", "_id")
    assert (types["visits"], types["vip"]) == ("double", "boolean")
    got = {r["_id"]: {c: r[c] for c in ["first_name", "last_name", "email", "visits", "score", "vip"]} for r in rows}
    assert got == {
        "1001": {"first_name": "Sally", "last_name": "Thomas-Hart", "email": "sally@hart.com", "visits": 4.5,
                 "score": 8.0, "vip": True},
        "1002": {"first_name": "Georgie", "last_name": "Bailey", "email": "george@bailey.com", "visits": 5e9,
                 "score": 2.5, "vip": None},   # carried over both patches, from the first batch
        "1003": {"first_name": "Edward", "last_name": None, "email": "edward@walker.com", "visits": 1.0,
                 "score": 1.0, "vip": None},
        "1006": dict.fromkeys(["first_name", "last_name", "email", "visits", "score", "vip"])}
    history, _ = _rows(spark, "silver.mongo__customers_history", "_id, valid_from_seq")
    assert [(r["_id"], r["_op"], r["is_current"], r["visits"]) for r in history if r["_id"] in ("1001", "1002")] == [
        ("1001", "c", False, 3.0), ("1001", "u", False, 4.0), ("1001", "u", True, 4.5),
        ("1002", "c", False, 5e9), ("1002", "u", False, 5e9), ("1002", "u", True, 5e9)]
