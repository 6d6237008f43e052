"""Debezium's "inventory" example database (the MySQL tutorial schema and its starting rows) as a small
in-memory table model: columns with their MySQL types, the Kafka Connect schema Debezium's MySQL
connector gives each column, and the `tableChanges` entry of a schema change event.

Types used (Debezium MySQL mapping, `time.precision.mode=adaptive_time_microseconds`):
INT -> int32, VARCHAR -> string, FLOAT -> float64, DATE -> int32 `io.debezium.time.Date` (days since
epoch), ENUM -> string `io.debezium.data.Enum` with the `allowed` parameter.
"""

from __future__ import annotations

import copy
import datetime as dt
from dataclasses import dataclass, field, replace
from typing import Any

from ingest.events import connect_schema as cs
from ingest.events import envelope as ev

DATABASE = "inventory"
CHARSET = "utf8mb4"
EPOCH = dt.date(1970, 1, 1)

# java.sql.Types codes used in tableChanges
_JDBC = {"INT": 4, "VARCHAR": 12, "FLOAT": 7, "DATE": 91, "ENUM": 1}


@dataclass(frozen=True)
class DemoColumn:
    name: str
    type_name: str                      # INT | VARCHAR | FLOAT | DATE | ENUM
    length: int | None = None
    optional: bool = False
    auto_increment: bool = False
    enum_values: tuple[str, ...] = ()

    @property
    def type_expression(self) -> str:
        if self.type_name == "VARCHAR":
            return f"VARCHAR({self.length})"
        if self.type_name == "ENUM":
            return "ENUM(" + ",".join(f"'{v}'" for v in self.enum_values) + ")"
        return self.type_name

    def ddl(self) -> str:
        parts = [f"`{self.name}`", self.type_expression.lower() if self.type_name == "ENUM" else self.type_expression]
        parts.append("NULL" if self.optional else "NOT NULL")
        if self.auto_increment:
            parts.append("AUTO_INCREMENT")
        return " ".join(parts)

    def connect_schema(self) -> dict[str, Any]:
        """The field schema as Debezium's MySQL connector writes it (JsonConverter layout, without "field")."""
        if self.type_name == "INT":
            return cs.int32(self.optional)
        if self.type_name == "VARCHAR":
            return cs.string(self.optional)
        if self.type_name == "FLOAT":
            return cs.float64(self.optional)
        if self.type_name == "DATE":
            return cs.int32(self.optional, name="io.debezium.time.Date", version=1)
        if self.type_name == "ENUM":
            return cs.debezium_enum(",".join(self.enum_values), optional=self.optional)
        raise ValueError(f"unsupported column type {self.type_name}")  # pragma: no cover

    def table_change_column(self, position: int) -> ev.Column:
        """One column of a `tableChanges[].table.columns` list."""
        textual = self.type_name in ("VARCHAR", "ENUM")
        return ev.Column(
            name=self.name, jdbc_type=_JDBC[self.type_name], type_name=self.type_name, position=position,
            optional=self.optional, type_expression=self.type_name,
            charset_name=CHARSET if textual else None,
            length=self.length if self.type_name == "VARCHAR" else (1 if self.type_name == "ENUM" else None),
            auto_incremented=self.auto_increment, generated=self.auto_increment,
        )

    def encode(self, value: Any) -> Any:
        """A Python value (date for DATE) as Debezium's JSON payload value."""
        if value is None:
            return None
        if self.type_name == "DATE":
            return (value - EPOCH).days
        if self.type_name == "FLOAT":
            return float(value)
        return value

    def decode(self, value: Any) -> Any:
        """The payload value back to its natural form (DATE: ISO date string) for expected-state files."""
        if value is None:
            return None
        if self.type_name == "DATE":
            return (EPOCH + dt.timedelta(days=int(value))).isoformat()
        return value


@dataclass
class DemoTable:
    name: str
    columns: list[DemoColumn]
    primary_key: list[str]
    auto_increment_start: int = 1
    foreign_keys: list[str] = field(default_factory=list)  # DDL fragments, for CREATE TABLE only

    def column(self, name: str) -> DemoColumn:
        for col in self.columns:
            if col.name == name:
                return col
        raise KeyError(f"{self.name} has no column {name}")

    @property
    def column_names(self) -> list[str]:
        return [c.name for c in self.columns]

    def create_ddl(self) -> str:
        body = [c.ddl() for c in self.columns]
        body.append("PRIMARY KEY (" + ", ".join(f"`{c}`" for c in self.primary_key) + ")")
        body.extend(self.foreign_keys)
        tail = f" AUTO_INCREMENT={self.auto_increment_start}" if self.auto_increment_start > 1 else ""
        return (f"CREATE TABLE `{self.name}` (\n  " + ",\n  ".join(body)
                + f"\n) ENGINE=InnoDB{tail} DEFAULT CHARSET={CHARSET}")

    def table_change(self, kind: str) -> ev.TableChange:
        """A `tableChanges` entry describing the whole table after the change."""
        return ev.TableChange(type=kind, id=ev.quoted_table_id(DATABASE, self.name),
                              columns=[c.table_change_column(i) for i, c in enumerate(self.columns, start=1)],
                              primary_key_column_names=tuple(self.primary_key), default_charset_name=CHARSET)

    def add_column(self, column: DemoColumn) -> None:
        self.columns.append(column)

    def rename_column(self, old: str, new: str) -> None:
        self.columns = [replace(c, name=new) if c.name == old else c for c in self.columns]

    def clone(self) -> DemoTable:
        return copy.deepcopy(self)


def inventory_tables() -> dict[str, DemoTable]:
    """The five tables of Debezium's MySQL tutorial database, in creation order."""
    varchar = 255
    return {
        "products": DemoTable(
            "products",
            [DemoColumn("id", "INT", auto_increment=True), DemoColumn("name", "VARCHAR", varchar),
             DemoColumn("description", "VARCHAR", 512, optional=True), DemoColumn("weight", "FLOAT", optional=True)],
            ["id"], auto_increment_start=101),
        "products_on_hand": DemoTable(
            "products_on_hand",
            [DemoColumn("product_id", "INT"), DemoColumn("quantity", "INT")],
            ["product_id"], foreign_keys=["FOREIGN KEY (`product_id`) REFERENCES `products` (`id`)"]),
        "customers": DemoTable(
            "customers",
            [DemoColumn("id", "INT", auto_increment=True), DemoColumn("first_name", "VARCHAR", varchar),
             DemoColumn("last_name", "VARCHAR", varchar), DemoColumn("email", "VARCHAR", varchar)],
            ["id"], auto_increment_start=1001),
        "addresses": DemoTable(
            "addresses",
            [DemoColumn("id", "INT", auto_increment=True), DemoColumn("customer_id", "INT"),
             DemoColumn("street", "VARCHAR", varchar), DemoColumn("city", "VARCHAR", varchar),
             DemoColumn("state", "VARCHAR", varchar), DemoColumn("zip", "VARCHAR", varchar),
             DemoColumn("type", "ENUM", enum_values=("SHIPPING", "BILLING", "LIVING"))],
            ["id"], auto_increment_start=10,
            foreign_keys=["FOREIGN KEY (`customer_id`) REFERENCES `customers` (`id`)"]),
        "orders": DemoTable(
            "orders",
            [DemoColumn("order_number", "INT", auto_increment=True), DemoColumn("order_date", "DATE"),
             DemoColumn("purchaser", "INT"), DemoColumn("quantity", "INT"), DemoColumn("product_id", "INT")],
            ["order_number"], auto_increment_start=10001,
            foreign_keys=["FOREIGN KEY (`purchaser`) REFERENCES `customers` (`id`)",
                          "FOREIGN KEY (`product_id`) REFERENCES `products` (`id`)"]),
    }


# The rows of Debezium's tutorial database (debezium/container-images, examples/mysql/inventory.sql).
TUTORIAL_ROWS: dict[str, list[dict[str, Any]]] = {
    "products": [
        {"id": 101, "name": "scooter", "description": "Small 2-wheel scooter", "weight": 3.14},
        {"id": 102, "name": "car battery", "description": "12V car battery", "weight": 8.1},
        {"id": 103, "name": "12-pack drill bits",
         "description": "12-pack of drill bits with sizes ranging from #40 to #3", "weight": 0.8},
        {"id": 104, "name": "hammer", "description": "12oz carpenter's hammer", "weight": 0.75},
        {"id": 105, "name": "hammer", "description": "14oz carpenter's hammer", "weight": 0.875},
        {"id": 106, "name": "hammer", "description": "16oz carpenter's hammer", "weight": 1.0},
        {"id": 107, "name": "rocks", "description": "box of assorted rocks", "weight": 5.3},
        {"id": 108, "name": "jacket", "description": "water resistent black wind breaker", "weight": 0.1},
        {"id": 109, "name": "spare tire", "description": "24 inch spare tire", "weight": 22.2},
    ],
    "products_on_hand": [
        {"product_id": pid, "quantity": qty}
        for pid, qty in ((101, 3), (102, 8), (103, 18), (104, 4), (105, 5), (106, 0), (107, 44), (108, 2), (109, 5))
    ],
    "customers": [
        {"id": 1001, "first_name": "Sally", "last_name": "Thomas", "email": "sally.thomas@acme.com"},
        {"id": 1002, "first_name": "George", "last_name": "Bailey", "email": "gbailey@foobar.com"},
        {"id": 1003, "first_name": "Edward", "last_name": "Walker", "email": "ed@walker.com"},
        {"id": 1004, "first_name": "Anne", "last_name": "Kretchmar", "email": "annek@noanswer.org"},
    ],
    "addresses": [
        {"id": 10, "customer_id": 1001, "street": "3183 Moore Avenue", "city": "Euless", "state": "Texas",
         "zip": "76036", "type": "SHIPPING"},
        {"id": 11, "customer_id": 1001, "street": "2389 Hidden Valley Road", "city": "Harrisburg",
         "state": "Pennsylvania", "zip": "17116", "type": "BILLING"},
        {"id": 12, "customer_id": 1002, "street": "281 Riverside Drive", "city": "Augusta", "state": "Georgia",
         "zip": "30901", "type": "BILLING"},
        {"id": 13, "customer_id": 1003, "street": "3787 Brownton Road", "city": "Columbus", "state": "Mississippi",
         "zip": "39701", "type": "SHIPPING"},
        {"id": 14, "customer_id": 1003, "street": "2458 Lost Creek Road", "city": "Bethlehem",
         "state": "Pennsylvania", "zip": "18018", "type": "SHIPPING"},
        {"id": 15, "customer_id": 1003, "street": "4800 Simpson Square", "city": "Hillsdale", "state": "Oklahoma",
         "zip": "74743", "type": "BILLING"},
        {"id": 16, "customer_id": 1004, "street": "1289 University Hill Road", "city": "Canehill",
         "state": "Arkansas", "zip": "72717", "type": "LIVING"},
    ],
    "orders": [
        {"order_number": 10001, "order_date": dt.date(2016, 1, 16), "purchaser": 1001, "quantity": 1,
         "product_id": 102},
        {"order_number": 10002, "order_date": dt.date(2016, 1, 17), "purchaser": 1002, "quantity": 2,
         "product_id": 105},
        {"order_number": 10003, "order_date": dt.date(2016, 2, 19), "purchaser": 1002, "quantity": 2,
         "product_id": 106},
        {"order_number": 10004, "order_date": dt.date(2016, 2, 21), "purchaser": 1003, "quantity": 1,
         "product_id": 107},
    ],
}
