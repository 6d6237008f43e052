"""A deterministic workload on the inventory database: the snapshot, then transactions of inserts, updates
and deletes, a primary-key change, a column added and a column renamed, all applied to an in-memory copy
of the database so that its final state is known exactly.

The output is logical (rows as Python values, DDL text, the table definition in force); ingest.demo.records
turns it into Debezium MySQL connector records. Same seed and size, same result, byte for byte.
"""

from __future__ import annotations

import datetime as dt
import random
from dataclasses import dataclass, field
from typing import Any

from ingest.demo.inventory import TUTORIAL_ROWS, DemoColumn, DemoTable, inventory_tables

Row = dict[str, Any]

BASE_TIME_MS = 1_767_600_000_000  # 2026-01-05T08:00:00Z: the snapshot starts here

FIRST_NAMES = ("Ada", "Bruno", "Chloe", "Dmitri", "Elena", "Farid", "Grace", "Hiro", "Ines", "Jonas", "Kemi",
               "Liam", "Mira", "Nils", "Olga", "Pedro", "Quinn", "Rosa", "Sven", "Tara", "Umar", "Vera", "Wen",
               "Ximena", "Yusuf", "Zoe")
LAST_NAMES = ("Adams", "Berg", "Costa", "Dubois", "Eriksen", "Fischer", "Garcia", "Hansen", "Ito", "Jensen",
              "Kowalski", "Lopez", "Moreau", "Novak", "Okafor", "Petrov", "Rossi", "Silva", "Tanaka", "Weber")
STREETS = ("Maple Street", "Oak Avenue", "Pine Road", "Cedar Lane", "Elm Drive", "Birch Court", "Willow Way",
           "Harbor Road", "Station Street", "Mill Lane")
PLACES = (("Austin", "Texas", "787"), ("Denver", "Colorado", "802"), ("Portland", "Oregon", "972"),
          ("Madison", "Wisconsin", "537"), ("Boise", "Idaho", "837"), ("Albany", "New York", "122"),
          ("Tulsa", "Oklahoma", "741"), ("Raleigh", "North Carolina", "276"))
PRODUCTS = (("screwdriver", "Phillips screwdriver"), ("wrench", "adjustable wrench"), ("ladder", "6 ft step ladder"),
            ("tape", "duct tape roll"), ("gloves", "work gloves, pair"), ("saw", "hand saw"),
            ("level", "24 inch spirit level"), ("clamp", "bar clamp"))


@dataclass
class RowChange:
    """One row event: op c (insert), u (update), d (delete) or r (snapshot read), values as Python values."""

    table: DemoTable            # the table definition in force (the event's value schema)
    op: str
    before: Row | None
    after: Row | None
    pk_change: bool = False     # the delete or the create half of a primary-key change
    snapshot_marker: str | None = None  # snapshot rows: first | first_in_data_collection | ... | last


@dataclass
class DdlChange:
    table: DemoTable            # the definition after the statement
    ddl: str
    kind: str                   # CREATE | ALTER


@dataclass
class Statement:
    """One SQL statement: a DDL, or the row events of one binlog rows event (row = index in the list)."""

    changes: list[RowChange | DdlChange]
    query: str


@dataclass
class Transaction:
    ts_ms: int
    statements: list[Statement]
    snapshot: bool = False
    thread: int | None = None


@dataclass
class WorkloadStats:
    transactions: int = 0
    by_op: dict[str, int] = field(default_factory=lambda: {"r": 0, "c": 0, "u": 0, "d": 0})
    ddl: list[str] = field(default_factory=list)
    pk_changes: list[tuple[str, Any, Any]] = field(default_factory=list)

    @property
    def row_changes(self) -> int:
        return self.by_op["c"] + self.by_op["u"] + self.by_op["d"]


class InventoryDatabase:
    """The in-memory inventory database: table definitions and rows keyed by primary key tuple."""

    def __init__(self) -> None:
        self.tables: dict[str, DemoTable] = inventory_tables()
        self.rows: dict[str, dict[tuple[Any, ...], Row]] = {name: {} for name in self.tables}
        self.next_id: dict[str, int] = {name: t.auto_increment_start for name, t in self.tables.items()}
        for name, rows in TUTORIAL_ROWS.items():
            for row in rows:
                self._put(name, dict(row))
                pk = self.tables[name].primary_key[0]
                self.next_id[name] = max(self.next_id[name], int(row[pk]) + 1)

    def key(self, table: str, row: Row) -> tuple[Any, ...]:
        return tuple(row[c] for c in self.tables[table].primary_key)

    def _put(self, table: str, row: Row) -> None:
        self.rows[table][self.key(table, row)] = row

    def insert(self, table: str, values: Row) -> RowChange:
        definition = self.tables[table]
        pk = definition.primary_key[0]
        if pk not in values and definition.column(pk).auto_increment:
            values = {pk: self.next_id[table], **values}
            self.next_id[table] += 1
        row = {c: values.get(c) for c in definition.column_names}
        if self.key(table, row) in self.rows[table]:
            raise ValueError(f"duplicate key in {table}: {self.key(table, row)}")
        self._put(table, row)
        return RowChange(definition, "c", None, dict(row))

    def update(self, table: str, key: tuple[Any, ...], changes: Row) -> RowChange:
        before = self.rows[table][key]
        after = {**before, **changes}
        self.rows[table][key] = after
        return RowChange(self.tables[table], "u", dict(before), dict(after))

    def delete(self, table: str, key: tuple[Any, ...]) -> RowChange:
        before = self.rows[table].pop(key)
        return RowChange(self.tables[table], "d", dict(before), None)

    def change_key(self, table: str, key: tuple[Any, ...], new_pk: Any) -> list[RowChange]:
        """UPDATE ... SET <pk> = new: Debezium emits a delete of the old key and a create of the new one."""
        before = self.rows[table].pop(key)
        after = {**before, self.tables[table].primary_key[0]: new_pk}
        self._put(table, after)
        definition = self.tables[table]
        return [RowChange(definition, "d", dict(before), None, pk_change=True),
                RowChange(definition, "c", None, dict(after), pk_change=True)]

    def add_column(self, table: str, column: DemoColumn) -> DdlChange:
        definition = self.tables[table].clone()
        definition.add_column(column)
        self.tables[table] = definition
        for row in self.rows[table].values():
            row[column.name] = None
        return DdlChange(definition, f"ALTER TABLE `{table}` ADD COLUMN {column.ddl()}", "ALTER")

    def rename_column(self, table: str, old: str, new: str) -> DdlChange:
        definition = self.tables[table].clone()
        definition.rename_column(old, new)
        self.tables[table] = definition
        for key, row in self.rows[table].items():
            self.rows[table][key] = {new if c == old else c: v for c, v in row.items()}
        return DdlChange(definition, f"ALTER TABLE `{table}` RENAME COLUMN `{old}` TO `{new}`", "ALTER")

    def final_state(self) -> dict[str, list[Row]]:
        """Every table's rows sorted by primary key, with the table's current columns."""
        return {name: [dict(self.rows[name][k]) for k in sorted(self.rows[name])] for name in self.tables}


class Workload:
    """Generates the snapshot and `changes` row changes (at least) from `seed`."""

    # (kind, weight) of the ordinary transactions
    MIX = (("new_order", 18), ("new_customer", 12), ("update_customer", 15), ("update_address", 10),
           ("restock", 10), ("update_product", 8), ("new_product", 4), ("cancel_order", 8),
           ("delete_address", 5), ("delete_customer", 4), ("update_order", 6))

    def __init__(self, seed: int = 42, changes: int = 5000) -> None:
        if changes < 100:
            raise ValueError("the demo workload needs at least 100 changes")
        self.rng = random.Random(seed)
        self.target = changes
        self.db = InventoryDatabase()
        self.stats = WorkloadStats()
        self.now_ms = BASE_TIME_MS
        self.milestones = [
            (0.35, self._add_phone_column),
            (0.50, self._change_customer_key),
            (0.65, self._rename_description),
        ]
        self.has_phone = False
        self.description_column = "description"

    # -- driver ---------------------------------------------------------------------------------------------

    def transactions(self) -> list[Transaction]:
        out = [self._snapshot()]
        kinds, weights = zip(*self.MIX, strict=True)
        while self.stats.row_changes < self.target:
            self.now_ms += self.rng.randint(40, 2500)
            if self.milestones and self.stats.row_changes >= self.milestones[0][0] * self.target:
                _, action = self.milestones.pop(0)
                out.extend(action())
                continue
            kind = self.rng.choices(kinds, weights)[0]
            statements = getattr(self, f"_{kind}")()
            if statements:
                out.append(self._txn(statements))
        for _, action in self.milestones:  # a tiny target may not reach every milestone: run them anyway
            out.extend(action())
        self.milestones = []
        return out

    def _txn(self, statements: list[Statement]) -> Transaction:
        self.stats.transactions += 1
        for statement in statements:
            for change in statement.changes:
                if isinstance(change, RowChange):
                    self.stats.by_op[change.op] += 1
        return Transaction(self.now_ms, statements, thread=self.rng.randint(7, 12))

    def _snapshot(self) -> Transaction:
        statements = [Statement([DdlChange(t, t.create_ddl(), "CREATE")], t.create_ddl())
                      for t in self.db.tables.values()]
        reads: list[RowChange] = []
        for name, table in self.db.tables.items():
            rows = [RowChange(table, "r", None, dict(row)) for _, row in sorted(self.db.rows[name].items())]
            if rows:
                rows[0].snapshot_marker = "first_in_data_collection"
                rows[-1].snapshot_marker = "last_in_data_collection"
            reads.extend(rows)
        for change in reads:
            change.snapshot_marker = change.snapshot_marker or "true"
        reads[0].snapshot_marker, reads[-1].snapshot_marker = "first", "last"
        statements.extend(Statement([r], "") for r in reads)
        self.stats.by_op["r"] = len(reads)
        return Transaction(self.now_ms, statements, snapshot=True)

    # -- helpers --------------------------------------------------------------------------------------------

    def _pick(self, table: str, where: Any = None) -> tuple[Any, ...] | None:
        keys = [k for k, row in self.db.rows[table].items() if where is None or where(row)]
        return self.rng.choice(sorted(keys)) if keys else None

    def _today(self) -> dt.date:
        return dt.datetime.fromtimestamp(self.now_ms / 1000, tz=dt.UTC).date()

    def _person(self) -> Row:
        first, last = self.rng.choice(FIRST_NAMES), self.rng.choice(LAST_NAMES)
        row = {"first_name": first, "last_name": last,
               "email": f"{first.lower()}.{last.lower()}.{self.db.next_id['customers']}@example.com"}
        if self.has_phone and self.rng.random() < 0.7:
            row["phone"] = self._phone()
        return row

    def _phone(self) -> str:
        return f"+1-555-{self.rng.randint(100, 999)}-{self.rng.randint(1000, 9999)}"

    def _address(self, customer_id: int, kind: str) -> Row:
        city, state, zip_prefix = self.rng.choice(PLACES)
        return {"customer_id": customer_id, "street": f"{self.rng.randint(1, 9999)} {self.rng.choice(STREETS)}",
                "city": city, "state": state, "zip": f"{zip_prefix}{self.rng.randint(10, 99)}", "type": kind}

    @staticmethod
    def _stmt(query: str, *changes: RowChange | DdlChange) -> Statement:
        return Statement(list(changes), query)

    # -- ordinary transactions ------------------------------------------------------------------------------

    def _new_order(self) -> list[Statement]:
        customer = self._pick("customers")
        product = self._pick("products_on_hand", lambda r: r["quantity"] > 0)
        if customer is None or product is None:
            return self._restock()
        on_hand = self.db.rows["products_on_hand"][product]
        quantity = self.rng.randint(1, min(4, on_hand["quantity"]))
        insert = self.db.insert("orders", {"order_date": self._today(), "purchaser": customer[0],
                                           "quantity": quantity, "product_id": product[0]})
        stock = self.db.update("products_on_hand", product, {"quantity": on_hand["quantity"] - quantity})
        return [self._stmt("INSERT INTO orders ...", insert), self._stmt("UPDATE products_on_hand ...", stock)]

    def _new_customer(self) -> list[Statement]:
        insert = self.db.insert("customers", self._person())
        customer_id = insert.after["id"]  # type: ignore[index]
        kinds = ["SHIPPING", "BILLING"] if self.rng.random() < 0.5 else ["LIVING"]
        addresses = [self.db.insert("addresses", self._address(customer_id, k)) for k in kinds]
        return [self._stmt("INSERT INTO customers ...", insert), self._stmt("INSERT INTO addresses ...", *addresses)]

    def _update_customer(self) -> list[Statement]:
        key = self._pick("customers")
        if key is None:
            return self._new_customer()
        choice = self.rng.random()
        if self.has_phone and choice < 0.4:
            changes: Row = {"phone": self._phone()}
        elif choice < 0.7:
            changes = {"email": f"{self.rng.choice(FIRST_NAMES).lower()}.{key[0]}.{self.now_ms % 100000}@example.org"}
        else:
            changes = {"last_name": self.rng.choice(LAST_NAMES)}
        return [self._stmt("UPDATE customers ...", self.db.update("customers", key, changes))]

    def _update_address(self) -> list[Statement]:
        key = self._pick("addresses")
        if key is None:
            return []
        fresh = self._address(self.db.rows["addresses"][key]["customer_id"], self.db.rows["addresses"][key]["type"])
        return [self._stmt("UPDATE addresses ...", self.db.update("addresses", key, fresh))]

    def _restock(self) -> list[Statement]:
        keys = sorted(self.db.rows["products_on_hand"])
        chosen = sorted(self.rng.sample(keys, k=min(len(keys), self.rng.randint(1, 4))))
        stock = self.db.rows["products_on_hand"]
        updates = [self.db.update("products_on_hand", k, {"quantity": stock[k]["quantity"] + self.rng.randint(5, 40)})
                   for k in chosen]
        return [self._stmt("UPDATE products_on_hand ...", *updates)]  # one rows event, several rows

    def _update_product(self) -> list[Statement]:
        key = self._pick("products")
        if key is None:
            return []
        row = self.db.rows["products"][key]
        if self.rng.random() < 0.5:
            changes: Row = {"weight": round(max(0.05, (row["weight"] or 1.0) * self.rng.uniform(0.8, 1.2)), 3)}
        else:
            changes = {self.description_column: f"{row['name']} (rev {self.rng.randint(2, 9)})"}
        return [self._stmt("UPDATE products ...", self.db.update("products", key, changes))]

    def _new_product(self) -> list[Statement]:
        name, description = self.rng.choice(PRODUCTS)
        insert = self.db.insert("products", {"name": name, self.description_column: description,
                                             "weight": round(self.rng.uniform(0.1, 12.0), 3)})
        stock = self.db.insert("products_on_hand", {"product_id": insert.after["id"],  # type: ignore[index]
                                                    "quantity": self.rng.randint(0, 50)})
        return [self._stmt("INSERT INTO products ...", insert), self._stmt("INSERT INTO products_on_hand ...", stock)]

    def _cancel_order(self) -> list[Statement]:
        key = self._pick("orders")
        if key is None:
            return []
        order = self.db.rows["orders"][key]
        stock_key = (order["product_id"],)
        statements = [self._stmt("DELETE FROM orders ...", self.db.delete("orders", key))]
        if stock_key in self.db.rows["products_on_hand"]:
            quantity = self.db.rows["products_on_hand"][stock_key]["quantity"] + order["quantity"]
            statements.append(self._stmt("UPDATE products_on_hand ...",
                                         self.db.update("products_on_hand", stock_key, {"quantity": quantity})))
        return statements

    def _update_order(self) -> list[Statement]:
        key = self._pick("orders")
        if key is None:
            return []
        quantity = self.rng.randint(1, 6)
        return [self._stmt("UPDATE orders ...", self.db.update("orders", key, {"quantity": quantity}))]

    def _delete_address(self) -> list[Statement]:
        key = self._pick("addresses")
        return [] if key is None else [self._stmt("DELETE FROM addresses ...", self.db.delete("addresses", key))]

    def _delete_customer(self) -> list[Statement]:
        if len(self.db.rows["customers"]) <= 20:
            return self._new_customer()
        key = self._pick("customers")
        assert key is not None
        orders = [self.db.delete("orders", k) for k, r in sorted(self.db.rows["orders"].items())
                  if r["purchaser"] == key[0]]
        addresses = [self.db.delete("addresses", k) for k, r in sorted(self.db.rows["addresses"].items())
                     if r["customer_id"] == key[0]]
        statements = []
        if orders:
            statements.append(self._stmt("DELETE FROM orders WHERE purchaser = ...", *orders))
        if addresses:
            statements.append(self._stmt("DELETE FROM addresses WHERE customer_id = ...", *addresses))
        statements.append(self._stmt("DELETE FROM customers ...", self.db.delete("customers", key)))
        return statements

    # -- milestones -----------------------------------------------------------------------------------------

    def _ddl(self, change: DdlChange) -> Transaction:
        self.stats.ddl.append(change.ddl)
        self.now_ms += self.rng.randint(40, 2500)
        return Transaction(self.now_ms, [Statement([change], change.ddl)], thread=self.rng.randint(7, 12))

    def _add_phone_column(self) -> list[Transaction]:
        self.has_phone = True
        return [self._ddl(self.db.add_column("customers", DemoColumn("phone", "VARCHAR", 32, optional=True)))]

    def _rename_description(self) -> list[Transaction]:
        self.description_column = "details"
        return [self._ddl(self.db.rename_column("products", "description", "details"))]

    def _change_customer_key(self) -> list[Transaction]:
        """A customer without orders or addresses gets a new id (UPDATE customers SET id = ...)."""
        insert = self.db.insert("customers", self._person())
        old_id = insert.after["id"]  # type: ignore[index]
        first = self._txn([self._stmt("INSERT INTO customers ...", insert)])
        self.now_ms += self.rng.randint(40, 2500)
        new_id = old_id + 50_000
        changes = self.db.change_key("customers", (old_id,), new_id)
        self.stats.pk_changes.append(("customers", old_id, new_id))
        second = self._txn([self._stmt(f"UPDATE customers SET id = {new_id} WHERE id = {old_id}", *changes)])
        return [first, second]
