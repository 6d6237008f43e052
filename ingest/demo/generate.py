"""`generate_demo(out_dir, seed, changes)`: write the inventory demo's Kafka records and the expected final
state of every table.

    <out_dir>/events/inventory.jsonl     one Kafka record per line: topic, partition, offset, timestamp,
                                         [headers], key, value ({"schema", "payload"}; null = tombstone)
    <out_dir>/expected/<table>.jsonl     the source database's final rows, sorted by primary key, with
                                         natural values (DATE as "YYYY-MM-DD")
    <out_dir>/expected/tables.json       per table: current columns, primary key, topic, row count
    <out_dir>/manifest.json              seed, sizes, counts by op, DDL, key changes, delivery faults

The same seed and size give byte-identical files.
"""

from __future__ import annotations

import json
import os
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ingest.demo.delivery import DeliveryStats, KafkaRecord, deliver
from ingest.demo.inventory import DATABASE
from ingest.demo.records import CONNECTOR, TOPIC_PREFIX, RecordBuilder, table_schemas
from ingest.demo.workload import Workload, WorkloadStats
from ingest.errors import LakecdcError
from ingest.events.json_converter import dumps

EVENTS_FILE = Path("events") / "inventory.jsonl"
EXPECTED_DIR = Path("expected")
MANIFEST_FILE = "manifest.json"
DEFAULT_SEED = 42
DEFAULT_CHANGES = 5000


@dataclass(frozen=True)
class DemoData:
    root: Path
    events_file: Path
    expected_dir: Path
    records: int
    workload: WorkloadStats
    delivery: DeliveryStats
    expected_rows: dict[str, int]


def generate_demo(out_dir: str | os.PathLike[str], *, seed: int = DEFAULT_SEED,
                  changes: int = DEFAULT_CHANGES) -> DemoData:
    if changes < 100:
        raise LakecdcError(f"demo: --changes must be at least 100 (got {changes})")
    root = Path(out_dir)
    workload = Workload(seed=seed, changes=changes)
    transactions = workload.transactions()
    builder = RecordBuilder(random.Random(seed + 1))
    records: list[KafkaRecord] = []
    first_streamed = 0
    for txn in transactions:
        records.extend(builder.transaction(txn))
        if txn.snapshot:
            first_streamed = len(records)
    delivered, delivery = deliver(records, random.Random(seed + 2), first_streamed=first_streamed)

    events_file = root / EVENTS_FILE
    events_file.parent.mkdir(parents=True, exist_ok=True)
    _write_atomic(events_file, b"".join(dumps(r.as_json()) + b"\n" for r in delivered))

    final = workload.db.final_state()
    expected_dir = root / EXPECTED_DIR
    expected_dir.mkdir(parents=True, exist_ok=True)
    tables: dict[str, Any] = {}
    for name, rows in final.items():
        table = workload.db.tables[name]
        lines = [json.dumps({c.name: c.decode(c.encode(row[c.name])) for c in table.columns}) + "\n" for row in rows]
        _write_atomic(expected_dir / f"{name}.jsonl", "".join(lines).encode())
        tables[name] = {"table_id": f"{DATABASE}.{name}", "topic": table_schemas(table).topic,
                        "primary_key": table.primary_key, "rows": len(rows),
                        "columns": [{"name": c.name, "type": c.type_expression, "optional": c.optional}
                                    for c in table.columns]}
    _write_atomic(expected_dir / "tables.json", (json.dumps(tables, indent=2) + "\n").encode())

    stats = workload.stats
    manifest = {
        "generator": "lakecdc demo", "connector": CONNECTOR, "topic_prefix": TOPIC_PREFIX, "database": DATABASE,
        "seed": seed, "changes_requested": changes, "records": len(delivered),
        "transactions": stats.transactions, "events_by_op": stats.by_op,
        "tombstones": sum(1 for r in delivered if r.value is None),
        "schema_change_records": sum(1 for r in delivered if not r.is_data),
        "ddl": stats.ddl,
        "primary_key_changes": [{"table": t, "old": o, "new": n} for t, o, n in stats.pk_changes],
        "delivery": {"late": delivery.late, "redelivered": delivery.redelivered, "reread": delivery.reread,
                     "records_by_topic": dict(sorted(delivery.by_topic.items()))},
        "expected_rows": {name: len(rows) for name, rows in final.items()},
    }
    _write_atomic(root / MANIFEST_FILE, (json.dumps(manifest, indent=2) + "\n").encode())
    return DemoData(root=root, events_file=events_file, expected_dir=expected_dir, records=len(delivered),
                    workload=stats, delivery=delivery, expected_rows=manifest["expected_rows"])


def load_expected(out_dir: str | os.PathLike[str]) -> dict[str, list[dict[str, Any]]]:
    """The expected final rows per table, as written by generate_demo."""
    expected_dir = Path(out_dir) / EXPECTED_DIR
    if not (expected_dir / "tables.json").exists():
        raise LakecdcError(f"no expected state under {expected_dir} (run `lakecdc demo generate` first)")
    tables = json.loads((expected_dir / "tables.json").read_text())
    return {name: [json.loads(line) for line in (expected_dir / f"{name}.jsonl").read_text().splitlines() if line]
            for name in tables}


def load_manifest(out_dir: str | os.PathLike[str]) -> dict[str, Any]:
    return json.loads((Path(out_dir) / MANIFEST_FILE).read_text())


def _write_atomic(path: Path, data: bytes) -> None:
    partial = path.with_name(path.name + ".partial")
    partial.write_bytes(data)
    partial.replace(path)
