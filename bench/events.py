"""Benchmark of the event model's per-event path: build a change event, add tombstones, map to a bronze row
(payload JSON via orjson). Also the full JsonConverter record with schemas enabled.

    .venv/bin/python bench/events.py [N]

Prints events/s per stage for an inventory-like mix (customers table, 60% updates, 25% inserts, 15% deletes).
"""

from __future__ import annotations

import sys
import time

from ingest.events import connect_schema as cs
from ingest.events import envelope as ev
from ingest.events import source_info as si
from ingest.events import to_bronze as tb


def main(n: int) -> None:
    table = ev.table_schemas(
        "mariadb", "inventory", db="inventory", table="customers",
        columns=[("id", cs.int32()), ("first_name", cs.string()), ("last_name", cs.string()), ("email", cs.string()),
                 ("balance", cs.bytes_(True, name="org.apache.kafka.connect.data.Decimal", version=1,
                                       parameters={"scale": "2", "connect.decimal.precision": "10"}))],
        key_columns=["id"],
    )
    rows = [{"id": i, "first_name": f"first{i}", "last_name": f"last{i}", "email": f"user{i}@example.org",
             "balance": "AeI="} for i in range(1000)]
    ops = ["u"] * 12 + ["c"] * 5 + ["d"] * 3

    t0 = time.perf_counter()
    events = []
    for i in range(n):
        op = ops[i % 20]
        row = rows[i % 1000]
        src = si.mariadb_source(version="3.4.0", name="inventory", ts_ms=1700000000000 + i, db="inventory",
                                table="customers", server_id=1, file="mariadb-bin.000003", pos=4 + i, row=0,
                                gtid=f"0-1-{i}")
        events.append(ev.change(table, op, before=row if op != "c" else None, after=row if op != "d" else None,
                                source=src, ts_ms=1700000000100 + i))
    t1 = time.perf_counter()
    with_tomb = list(ev.with_tombstones(events))
    t2 = time.perf_counter()
    rows_out = [tb.change_to_bronze(e, seq=f"{i:016x}", position=None) for i, e in enumerate(with_tomb)]
    t3 = time.perf_counter()
    sample = with_tomb[: min(len(with_tomb), 50_000)]
    for e in sample:
        ev.record(e, schemas_enable=True)
    t4 = time.perf_counter()

    total = len(rows_out)
    print(f"events: {n} changes + {total - n} tombstones = {total} records")
    print(f"build change events      {n / (t1 - t0):>12,.0f} events/s")
    print(f"add tombstones           {total / (t2 - t1):>12,.0f} records/s")
    print(f"to bronze rows (JSON)    {total / (t3 - t2):>12,.0f} records/s")
    print(f"build + bronze, overall  {total / (t3 - t0):>12,.0f} records/s")
    print(f"record(), schemas on     {len(sample) / (t4 - t3):>12,.0f} records/s (JsonConverter bytes incl. schema)")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 200_000)
