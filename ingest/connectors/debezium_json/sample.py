"""Synthetic Debezium PostgreSQL change events for an inventory-like database, as `kcat -J` lines
(key and value are JsonConverter text with schemas), for tests and benchmarks of the debezium-json source.

The mix: a snapshot (op r) of customers, addresses, products and products_on_hand, then transactions of
inserts (orders, customers, addresses), updates (products_on_hand, customers) and deletes (addresses,
each followed by its tombstone). Deterministic for a seed. Source commit order is kept in `source.lsn`
and `source.sequence`; `shuffle_window` > 1 delivers records out of order within that window (late
deliveries) and `duplicate_every` repeats every n-th record (duplicated deliveries).
"""

from __future__ import annotations

import random
from collections.abc import Iterator

import orjson

_TABLES = {
    "customers": [("id", "int32", False), ("first_name", "string", False), ("last_name", "string", False),
                  ("email", "string", False)],
    "addresses": [("id", "int32", False), ("customer_id", "int32", False), ("street", "string", False),
                  ("city", "string", False), ("state", "string", False), ("zip", "string", False),
                  ("type", "string", False)],
    "products": [("id", "int32", False), ("name", "string", False), ("description", "string", True),
                 ("weight", "double", True)],
    "products_on_hand": [("product_id", "int32", False), ("quantity", "int32", False)],
    "orders": [("id", "int32", False), ("order_date", "int32", False), ("purchaser", "int32", False),
               ("quantity", "int32", False), ("product_id", "int32", False)],
}
_KEYS = {"customers": "id", "addresses": "id", "products": "id", "products_on_hand": "product_id", "orders": "id"}
_FIRST = ["Sally", "George", "Edward", "Anne", "Maria", "Kenji", "Ola", "Ines"]
_LAST = ["Thomas", "Bailey", "Walker", "Kretchmar", "Lopez", "Sato", "Nordmann", "Silva"]
_CITIES = ["Euless", "Hampton", "Lebanon", "Springfield", "Portland"]


def _field(name: str, type_: str, optional: bool) -> dict:
    f: dict = {"type": type_, "optional": optional, "field": name}
    if name == "order_date":
        f.update(name="io.debezium.time.Date", version=1)
    return f


def _schemas(topic: str, table: str) -> tuple[str, str]:
    cols = _TABLES[table]
    key_col = _KEYS[table]
    row = {"type": "struct", "fields": [_field(*c) for c in cols], "optional": True, "name": f"{topic}.Value",
           "field": "before"}
    source = {"type": "struct", "fields": [
        {"type": "string", "optional": False, "field": "version"},
        {"type": "string", "optional": False, "field": "connector"},
        {"type": "string", "optional": False, "field": "name"},
        {"type": "int64", "optional": False, "field": "ts_ms"},
        {"type": "string", "optional": True, "name": "io.debezium.data.Enum", "version": 1,
         "parameters": {"allowed": "true,last,false,incremental"}, "default": "false", "field": "snapshot"},
        {"type": "string", "optional": False, "field": "db"},
        {"type": "string", "optional": True, "field": "sequence"},
        {"type": "string", "optional": False, "field": "schema"},
        {"type": "string", "optional": False, "field": "table"},
        {"type": "int64", "optional": True, "field": "txId"},
        {"type": "int64", "optional": True, "field": "lsn"},
        {"type": "int64", "optional": True, "field": "xmin"}],
        "optional": False, "name": "io.debezium.connector.postgresql.Source", "field": "source"}
    value = {"type": "struct", "fields": [row, {**row, "field": "after"}, source,
                                          {"type": "string", "optional": False, "field": "op"},
                                          {"type": "int64", "optional": True, "field": "ts_ms"}],
             "optional": False, "name": f"{topic}.Envelope", "version": 1}
    key = {"type": "struct", "fields": [_field(*c) for c in cols if c[0] == key_col], "optional": False,
           "name": f"{topic}.Key"}
    return orjson.dumps(key).decode(), orjson.dumps(value).decode()


class InventoryEvents:
    """Generates change events in source commit order (see module doc)."""

    def __init__(self, seed: int = 7, prefix: str = "inventory", db: str = "inventory") -> None:
        self.rng = random.Random(seed)
        self.prefix, self.db = prefix, db
        self.lsn = 24_000_000
        self.last_commit = 0
        self.txid = 500
        self.ts = 1_700_000_000_000
        self.schemas = {t: _schemas(f"{prefix}.public.{t}", t) for t in _TABLES}
        self.rows: dict[str, dict[int, dict]] = {t: {} for t in _TABLES}
        self.next_id = {t: 1001 for t in _TABLES}
        self.recent: dict[str, list[int]] = {t: [] for t in _TABLES}  # the last 50 ids per table

    def _remember(self, table: str, ident: int, row: dict) -> None:
        self.rows[table][ident] = row
        recent = self.recent[table]
        recent.append(ident)
        if len(recent) > 50:
            del recent[0]

    def _row(self, table: str, ident: int) -> dict:
        r = self.rng
        if table == "customers":
            first, last = r.choice(_FIRST), r.choice(_LAST)
            return {"id": ident, "first_name": first, "last_name": last,
                    "email": f"{first.lower()}.{last.lower()}{ident}@example.com"}
        if table == "addresses":
            return {"id": ident, "customer_id": 1001 + r.randrange(max(1, len(self.rows["customers"]))),
                    "street": f"{r.randrange(1, 9999)} Main Street", "city": r.choice(_CITIES), "state": "Texas",
                    "zip": f"{r.randrange(10000, 99999)}", "type": r.choice(["SHIPPING", "BILLING", "LIVING"])}
        if table == "products":
            return {"id": ident, "name": f"product {ident}", "description": "a useful thing " * r.randrange(1, 4),
                    "weight": round(r.uniform(0.1, 20), 3)}
        if table == "products_on_hand":
            return {"product_id": ident, "quantity": r.randrange(0, 500)}
        return {"id": ident, "order_date": 19_000 + r.randrange(400), "purchaser": 1001 + r.randrange(100),
                "quantity": r.randrange(1, 9), "product_id": 1001 + r.randrange(100)}

    def _record(self, table: str, op: str, before: dict | None, after: dict | None, snapshot: str,
                tombstone: bool = False) -> tuple[str, str | None, str | None]:
        topic = f"{self.prefix}.public.{table}"
        key_schema, value_schema = self.schemas[table]
        ident = (after or before or {})[_KEYS[table]]
        key = f'{{"schema":{key_schema},"payload":{{"{_KEYS[table]}":{ident}}}}}'
        if tombstone:
            return topic, key, None
        self.lsn += self.rng.randrange(40, 400)
        self.ts += self.rng.randrange(0, 5)
        source = {"version": "2.7.0.Final", "connector": "postgresql", "name": self.prefix, "ts_ms": self.ts,
                  "snapshot": snapshot, "db": self.db,
                  "sequence": orjson.dumps([str(self.last_commit) if self.last_commit else None,
                                            str(self.lsn)]).decode(),
                  "schema": "public", "table": table, "txId": self.txid, "lsn": self.lsn, "xmin": None}
        payload = {"before": before, "after": after, "source": source, "op": op, "ts_ms": self.ts + 3}
        value = f'{{"schema":{value_schema},"payload":{orjson.dumps(payload).decode()}}}'
        return topic, key, value

    def events(self, count: int, snapshot_rows: int | None = None) -> Iterator[tuple[str, str | None, str | None]]:
        """(topic, key JSON, value JSON or None) in source commit order; `count` records in all."""
        produced = 0
        snap = snapshot_rows if snapshot_rows is not None else min(count // 10, 2000)
        tables = ["customers", "addresses", "products", "products_on_hand"]
        for i in range(snap):  # snapshot: one transaction at one LSN
            table = tables[i % 4]
            ident = self.next_id[table]
            self.next_id[table] += 1
            row = self._row(table, ident)
            self._remember(table, ident, row)
            yield self._record(table, "r", None, row, "last" if i == snap - 1 else ("first" if i == 0 else "true"))
            produced += 1
        self.last_commit = self.lsn
        while produced < count:
            self.txid += 1
            for _ in range(self.rng.randrange(1, 5)):
                if produced >= count:
                    break
                choice = self.rng.random()
                if choice < 0.35:
                    table = self.rng.choice(["orders", "customers", "addresses"])
                    ident = self.next_id[table]
                    self.next_id[table] += 1
                    row = self._row(table, ident)
                    self._remember(table, ident, row)
                    yield self._record(table, "c", None, row, "false")
                    produced += 1
                elif choice < 0.85 or not self.recent["addresses"]:
                    table = self.rng.choice(["products_on_hand", "customers"])
                    if not self.recent[table]:
                        continue
                    ident = self.rng.choice(self.recent[table])
                    before = self.rows[table][ident]
                    after = {**before, **({"quantity": self.rng.randrange(500)} if table == "products_on_hand"
                                          else {"email": f"changed{self.txid}@example.com"})}
                    self.rows[table][ident] = after
                    yield self._record(table, "u", before, after, "false")
                    produced += 1
                else:
                    ident = self.rng.choice(self.recent["addresses"])
                    self.recent["addresses"].remove(ident)
                    before = self.rows["addresses"].pop(ident)
                    yield self._record("addresses", "d", before, None, "false")
                    produced += 1
                    if produced < count:
                        yield self._record("addresses", "d", before, None, "false", tombstone=True)
                        produced += 1
            self.lsn += 16
            self.last_commit = self.lsn


def kcat_lines(count: int, seed: int = 7, shuffle_window: int = 1, duplicate_every: int = 0,
               snapshot_rows: int | None = None) -> Iterator[bytes]:
    """`kcat -J` lines (with the trailing newline) for `count` events (plus duplicates)."""
    gen = InventoryEvents(seed)
    rng = random.Random(seed + 1)
    offsets: dict[str, int] = {}
    window: list[tuple[str, str | None, str | None]] = []

    def emit(item: tuple[str, str | None, str | None]) -> bytes:
        topic, key, value = item
        offset = offsets.get(topic, 0)
        offsets[topic] = offset + 1
        record = {"topic": topic, "partition": 0, "offset": offset, "tstype": "create", "ts": gen.ts, "broker": 1,
                  "headers": None, "key": key, "payload": value}
        return orjson.dumps(record) + b"\n"

    for n, item in enumerate(gen.events(count, snapshot_rows), start=1):
        window.append(item)
        if duplicate_every and n % duplicate_every == 0:
            window.append(item)
        if len(window) >= shuffle_window:
            yield emit(window.pop(rng.randrange(len(window))))
    rng.shuffle(window)
    for item in window:
        yield emit(item)
