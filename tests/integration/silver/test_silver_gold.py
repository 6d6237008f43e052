"""Gold for the demo inventory database: customer order totals and stock on hand, built by dbt from
silver models generated over bronze rows shaped like the MySQL connector's (table ids db.table)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from ingest.demo.pipeline import GOLD_MODELS
from ingest.generate.catalog import captured_tables
from ingest.generate.render import WriteResult, render_source, write_files
from tests.support.silver import DATE, INT32, STRING, Bronze, make_project, run_dbt

pytestmark = pytest.mark.integration
FLOAT = {"type": "float64"}
TABLES = {
    "inventory.customers": ([("id", INT32)], [("id", INT32), ("first_name", STRING), ("last_name", STRING),
                                              ("email", STRING)]),
    "inventory.products": ([("id", INT32)], [("id", INT32), ("name", STRING), ("description", STRING),
                                             ("weight", FLOAT)]),
    "inventory.products_on_hand": ([("product_id", INT32)], [("product_id", INT32), ("quantity", INT32)]),
    "inventory.orders": ([("order_number", INT32)], [("order_number", INT32), ("order_date", DATE),
                                                     ("purchaser", INT32), ("quantity", INT32),
                                                     ("product_id", INT32)]),
}


def _ins(b: Bronze, table: str, row: dict, op: str = "r") -> dict:
    keys, cols = TABLES[table]
    return b.event(table, op, {k: row[k] for k, _ in keys}, None, row, keys, cols)


def test_inventory_gold(engine, warehouse: Path, tmp_path: Path):
    spark = engine.spark
    b = Bronze(spark, warehouse, source="inventory")
    b.land([
        _ins(b, "inventory.customers", {"id": 1001, "first_name": "Sally", "last_name": "Thomas", "email": "s@x"}),
        _ins(b, "inventory.customers", {"id": 1002, "first_name": "George", "last_name": "Bailey", "email": "g@x"}),
        _ins(b, "inventory.products", {"id": 101, "name": "scooter", "description": "s", "weight": 3.0}),
        _ins(b, "inventory.products", {"id": 102, "name": "battery", "description": "b", "weight": 8.0}),
        _ins(b, "inventory.products_on_hand", {"product_id": 101, "quantity": 3}),
        _ins(b, "inventory.orders", {"order_number": 10001, "order_date": 16816, "purchaser": 1001,
                                     "quantity": 1, "product_id": 101}),
        _ins(b, "inventory.orders", {"order_number": 10002, "order_date": 16817, "purchaser": 1001,
                                     "quantity": 2, "product_id": 102}),
    ])
    project = make_project(tmp_path, warehouse)
    shutil.copytree(GOLD_MODELS, project / "models" / "gold")
    write_files(render_source("inventory", captured_tables(spark, "inventory"), project / "models"),
                WriteResult([], [], []))
    run_dbt(engine, project, "build", "--vars", "{lakecdc_gold_inventory: true}")
    totals = spark.sql("SELECT customer_id, order_count, total_quantity, total_weight FROM gold.customer_order_totals "
                       "ORDER BY customer_id").collect()
    assert [tuple(r) for r in totals] == [(1001, 2, 3, 19.0), (1002, 0, 0, 0.0)]
    stock = spark.sql("SELECT product_id, quantity_on_hand, weight_on_hand, quantity_ordered FROM gold.stock_on_hand "
                      "ORDER BY product_id").collect()
    assert [tuple(r) for r in stock] == [(101, 3, 9.0, 1), (102, 0, 0.0, 2)]
