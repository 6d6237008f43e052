"""A Debezium MySQL schema change event value for tests: CREATE TABLE <db>.<table> (id int primary key,
price decimal(8,2)), its tableChanges as Debezium writes them."""

from __future__ import annotations

from typing import Any

COLUMNS = [{"name": "id", "jdbcType": 4, "typeName": "INT", "typeExpression": "INT", "position": 1,
            "optional": False, "enumValues": []},
           {"name": "price", "jdbcType": 3, "typeName": "DECIMAL", "typeExpression": "DECIMAL", "length": 8,
            "scale": 2, "position": 2, "optional": True, "enumValues": []}]


def create_table(db: str, table: str, pos: int = 4) -> dict[str, Any]:
    return {"source": {"connector": "mysql", "db": db, "file": "bin.000001", "pos": pos, "row": 0},
            "ddl": f"CREATE TABLE {table} (id int primary key, price decimal(8,2))",
            "tableChanges": [{"type": "CREATE", "id": f'"{db}"."{table}"',
                              "table": {"primaryKeyColumnNames": ["id"], "columns": COLUMNS}}]}
