"""The inventory demo generator: deterministic output, Debezium MySQL record structure, and records that
replay (ordered by source position, as a correct consumer orders them) to exactly the expected state."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from ingest.demo.generate import generate_demo, load_expected, load_manifest
from ingest.errors import LakecdcError

pytestmark = pytest.mark.unit

TABLES = ("products", "products_on_hand", "customers", "addresses", "orders")


@pytest.fixture(scope="module")
def demo_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("demo")
    generate_demo(root, seed=7, changes=3000)
    return root


def read_records(root: Path) -> list[dict]:
    return [json.loads(line) for line in (root / "events" / "inventory.jsonl").read_text().splitlines()]


def digest(root: Path) -> str:
    h = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        h.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes())
    return h.hexdigest()


def position(record: dict) -> tuple[int, int, int]:
    source = record["value"]["payload"]["source"]
    return int(source["file"].rsplit(".", 1)[1]), source["pos"], source["row"]


def test_same_seed_same_bytes_other_seed_other_bytes(tmp_path: Path, demo_dir: Path) -> None:
    generate_demo(tmp_path / "a", seed=7, changes=3000)
    generate_demo(tmp_path / "b", seed=8, changes=3000)
    assert digest(tmp_path / "a") == digest(demo_dir)
    assert digest(tmp_path / "b") != digest(demo_dir)


def test_too_small_a_workload_is_refused(tmp_path: Path) -> None:
    with pytest.raises(LakecdcError, match="at least 100"):
        generate_demo(tmp_path, changes=10)


def test_kafka_record_shape_and_offsets(demo_dir: Path) -> None:
    records = read_records(demo_dir)
    manifest = load_manifest(demo_dir)
    assert len(records) == manifest["records"]
    topics = {r["topic"] for r in records}
    assert topics == {"inventory"} | {f"inventory.inventory.{t}" for t in TABLES}
    last_offset: dict[str, int] = {}
    rereads = 0
    for r in records:
        assert set(r) <= {"topic", "partition", "offset", "timestamp", "headers", "key", "value"}
        assert r["partition"] == 0 and isinstance(r["timestamp"], int)
        assert set(r["key"]) == {"schema", "payload"}
        if r["value"] is not None:
            assert set(r["value"]) == {"schema", "payload"}
        previous = last_offset.get(r["topic"], -1)
        if r["offset"] <= previous:
            rereads += 1  # a consumer re-read: an offset seen before, never a gap-filling jump backwards
            assert r["offset"] >= previous - 10
        last_offset[r["topic"]] = max(previous, r["offset"])
    assert rereads == manifest["delivery"]["reread"] > 0


def test_snapshot_comes_first_with_schema_changes_then_reads(demo_dir: Path) -> None:
    records = read_records(demo_dir)
    creates = records[:5]
    assert [r["topic"] for r in creates] == ["inventory"] * 5
    assert [r["value"]["payload"]["tableChanges"][0]["type"] for r in creates] == ["CREATE"] * 5
    assert all(r["value"]["payload"]["ddl"].startswith("CREATE TABLE") for r in creates)
    reads = [r for r in records if r["value"] and r["value"]["payload"].get("op") == "r"]
    assert len(reads) == 33 == load_manifest(demo_dir)["events_by_op"]["r"]  # the tutorial's rows
    assert records[5:5 + 33] == reads
    # Debezium 3.x: source.snapshot is the Enum string, marked by the row's position in the snapshot
    marks = [r["value"]["payload"]["source"]["snapshot"] for r in reads]
    assert marks[0] == "first" and marks[-1] == "last"
    assert set(marks[1:-1]) <= {"first_in_data_collection", "true", "last_in_data_collection"}
    snapshot_positions = {position(r) for r in reads}
    assert len(snapshot_positions) == 1  # every snapshot row carries the snapshot's binlog position
    streamed = [r for r in records[38:] if r["value"] and r["value"]["payload"].get("op")]
    assert all(r["value"]["payload"]["source"]["snapshot"] == "false" for r in streamed)
    assert min(position(r) for r in streamed) > snapshot_positions.pop()
    sally = next(r for r in reads if r["key"]["payload"] == {"id": 1001})
    assert sally["value"]["payload"]["after"] == {"id": 1001, "first_name": "Sally", "last_name": "Thomas",
                                                   "email": "sally.thomas@acme.com"}
    order = next(r for r in reads if r["key"]["payload"] == {"order_number": 10001})
    assert order["value"]["payload"]["after"]["order_date"] == 16816  # 2016-01-16 as io.debezium.time.Date


def test_every_delete_is_followed_by_its_tombstone(demo_dir: Path) -> None:
    records = [r for r in read_records(demo_dir)]
    deletes = 0
    for i, r in enumerate(records):
        if r["value"] is not None and r["value"]["payload"].get("op") == "d":
            deletes += 1
            # the tombstone follows in the same topic with the same key (possibly after other topics' records)
            nxt = next(x for x in records[i + 1:] if x["topic"] == r["topic"])
            assert nxt["value"] is None and nxt["key"] == r["key"]
    manifest = load_manifest(demo_dir)
    assert deletes >= manifest["events_by_op"]["d"] > 100
    assert manifest["tombstones"] >= manifest["events_by_op"]["d"]


def test_primary_key_change_is_delete_tombstone_create_with_key_headers(demo_dir: Path) -> None:
    change = load_manifest(demo_dir)["primary_key_changes"][0]
    records = read_records(demo_dir)
    with_headers = [(i, r) for i, r in enumerate(records) if r.get("headers")]
    assert len(with_headers) >= 2
    (i_del, delete), (i_new, create) = with_headers[0], with_headers[1]
    assert delete["value"]["payload"]["op"] == "d" and delete["key"]["payload"] == {"id": change["old"]}
    assert delete["headers"] == [{"key": "__debezium.newkey", "value": json.dumps({"id": change["new"]},
                                                                                   separators=(",", ":"))}]
    assert records[i_del + 1]["value"] is None and records[i_del + 1]["key"] == delete["key"]
    assert i_new == i_del + 2
    assert create["value"]["payload"]["op"] == "c" and create["key"]["payload"] == {"id": change["new"]}
    assert create["headers"][0]["key"] == "__debezium.oldkey"
    assert position(delete) == position(create)  # one binlog row


def test_schema_changes_mid_stream_change_the_value_schema(demo_dir: Path) -> None:
    records = read_records(demo_dir)
    alters = [(i, r) for i, r in enumerate(records)
              if r["topic"] == "inventory" and r["value"]["payload"]["ddl"].startswith("ALTER")]
    assert [r["value"]["payload"]["ddl"] for _, r in alters] == [
        "ALTER TABLE `customers` ADD COLUMN `phone` VARCHAR(32) NULL",
        "ALTER TABLE `products` RENAME COLUMN `description` TO `details`",
    ]
    (i_add, add), (i_ren, ren) = alters
    columns = [c["name"] for c in add["value"]["payload"]["tableChanges"][0]["table"]["columns"]]
    assert columns == ["id", "first_name", "last_name", "email", "phone"]
    columns = [c["name"] for c in ren["value"]["payload"]["tableChanges"][0]["table"]["columns"]]
    assert columns == ["id", "name", "details", "weight"]

    def value_fields(r: dict) -> list[str]:
        return [f["field"] for f in r["value"]["schema"]["fields"][1]["fields"]]

    customers = [(i, r) for i, r in enumerate(records) if r["topic"].endswith(".customers") and r["value"]]
    assert any("phone" not in value_fields(r) for i, r in customers if i < i_add)
    assert all("phone" in value_fields(r) for i, r in customers if i > i_add and position(r) > position(add))
    products = [(i, r) for i, r in enumerate(records) if r["topic"].endswith(".products") and r["value"]]
    after_rename = [r for i, r in products if position(r) > position(ren)]
    assert after_rename and all("details" in value_fields(r) for r in after_rename)
    assert all("description" in value_fields(r) for i, r in products if position(r) < position(ren))


def test_late_and_duplicated_deliveries_are_present(demo_dir: Path) -> None:
    records = [r for r in read_records(demo_dir) if r["value"] is not None and r["topic"] != "inventory"]
    seen: dict[tuple, tuple] = {}
    late = duplicates = 0
    newest: dict[tuple, tuple] = {}
    for r in records:
        ident = (r["topic"], json.dumps(r["key"]["payload"]), position(r), r["value"]["payload"]["op"])
        if ident in seen:
            duplicates += 1
            continue
        seen[ident] = position(r)
        key = ident[:2]
        if key in newest and position(r) < newest[key]:
            late += 1  # an older change of this row arrived after a newer one
        newest[key] = max(newest.get(key, position(r)), position(r))
    delivery = load_manifest(demo_dir)["delivery"]
    assert late >= delivery["late"] > 0
    assert duplicates > 0
    # every copy (tombstones included) is byte-identical to an earlier record apart from its offset
    texts = [json.dumps({k: v for k, v in r.items() if k != "offset"}, sort_keys=True)
             for r in read_records(demo_dir)]
    assert len(texts) - len(set(texts)) == delivery["redelivered"] + delivery["reread"]


def replay(records: list[dict]) -> dict[str, dict[str, dict]]:
    """An independent consumer: sort by source position (ties: input order), apply schema changes
    (renames by column position), keep the latest image per key, deletes remove."""
    events = []
    for index, r in enumerate(records):
        if r["value"] is None:
            continue
        events.append((position(r), index, r))
    events.sort(key=lambda e: (e[0], e[1]))
    state: dict[str, dict[str, dict]] = {}
    columns: dict[str, list[str]] = {}
    applied: set[tuple] = set()
    for pos, _, r in events:
        payload = r["value"]["payload"]
        if r["topic"] == "inventory":
            change = payload["tableChanges"][0]
            table = change["id"].split(".")[1].strip('"')
            new_cols = [c["name"] for c in change["table"]["columns"]]
            old_cols = columns.get(table, new_cols)
            renames = {o: n for o, n in zip(old_cols, new_cols, strict=False) if o != n and o not in new_cols}
            for row in state.get(table, {}).values():
                for old, new in renames.items():
                    row[new] = row.pop(old)
                for c in new_cols:
                    row.setdefault(c, None)
            columns[table] = new_cols
            continue
        ident = (r["topic"], json.dumps(r["key"]["payload"]), pos, payload["op"])
        if ident in applied:
            continue
        applied.add(ident)
        table = r["topic"].rsplit(".", 1)[1]
        rows = state.setdefault(table, {})
        key = json.dumps(r["key"]["payload"], sort_keys=True)
        if payload["op"] == "d":
            rows.pop(key, None)
        else:
            rows[key] = dict(payload["after"])
    return state


def test_records_replay_to_the_expected_final_state(demo_dir: Path) -> None:
    import datetime as dt

    state = replay(read_records(demo_dir))
    expected = load_expected(demo_dir)
    assert set(expected) == set(TABLES)
    for table in TABLES:
        got = sorted(state[table].values(), key=lambda row: json.dumps(row, sort_keys=True))
        if table == "orders":
            for row in got:
                row["order_date"] = (dt.date(1970, 1, 1) + dt.timedelta(days=row["order_date"])).isoformat()
        want = sorted(expected[table], key=lambda row: json.dumps(row, sort_keys=True))
        assert got == want, table
        assert len(want) == load_manifest(demo_dir)["expected_rows"][table] > 0
    assert expected["customers"][-1]["id"] == load_manifest(demo_dir)["primary_key_changes"][0]["new"]
    assert set(expected["products"][0]) == {"id", "name", "details", "weight"}
    assert set(expected["customers"][0]) == {"id", "first_name", "last_name", "email", "phone"}


def test_arrival_order_would_give_a_wrong_state(demo_dir: Path) -> None:
    """The faults matter: applying records in file order (ignoring positions) diverges from the truth."""
    records = read_records(demo_dir)
    naive: dict[str, dict[str, dict]] = {}
    for r in records:
        if r["value"] is None or r["topic"] == "inventory":
            continue
        rows = naive.setdefault(r["topic"].rsplit(".", 1)[1], {})
        key = json.dumps(r["key"]["payload"], sort_keys=True)
        if r["value"]["payload"]["op"] == "d":
            rows.pop(key, None)
        else:
            rows[key] = r["value"]["payload"]["after"]
    correct = replay(records)
    assert any(naive[t] != correct[t] for t in ("customers", "addresses", "orders", "products", "products_on_hand"))


def test_schema_change_ddl_parses_to_the_same_columns_as_its_table_changes(demo_dir: Path) -> None:
    """The project's DDL interpreter (what builds the schema history) reads the demo's DDL as the
    tableChanges describe it."""
    from ingest.schema import SchemaState

    state = SchemaState(server_charset="utf8mb4")
    schema_records = [r for r in read_records(demo_dir) if r["topic"] == "inventory"]
    assert len(schema_records) == 7
    for r in schema_records:
        payload = r["value"]["payload"]
        changes = [c for c in state.apply(payload["ddl"], "mysql", default_database="inventory")
                   if c.kind in ("CREATE", "ALTER")]
        assert len(changes) == 1, payload["ddl"]
        described = payload["tableChanges"][0]["table"]
        assert [c.name for c in changes[0].table.columns] == [c["name"] for c in described["columns"]]
        assert list(changes[0].table.primary_key) == described["primaryKeyColumnNames"]
