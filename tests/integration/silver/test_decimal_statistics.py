"""The embedded engine's decimal statistics defect (docs/engine.md): Sail 0.7 reads a DECIMAL column from a Delta
file's statistics when they give it one value, parsed through a double. lakecdc's tables keep no decimal
statistics on Sail (test_silver_numbers.py builds silver through it); `lakecdc doctor` finds the tables an
earlier lakecdc wrote with them."""

from __future__ import annotations

import shutil
from decimal import Decimal
from pathlib import Path

import pytest

from ingest.config import ProjectConfig
from ingest.delta_log import misread_decimal_columns
from ingest.doctor import check_warehouse_tables
from ingest.errors import LakecdcError

pytestmark = pytest.mark.integration

LONG = "-71163320215847.039674"   # more digits than a double holds
SHORT = "9999999999.99"           # a double holds it


def write(spark, warehouse: Path, name: str, properties: str = "") -> Path:
    location = warehouse / "silver" / name
    spark.sql("CREATE SCHEMA IF NOT EXISTS silver")
    spark.sql(f"CREATE TABLE silver.{name} USING delta LOCATION '{location}' {properties} AS "
              f"SELECT id, CAST('{LONG}' AS DECIMAL(20, 6)) AS d, CAST('{SHORT}' AS DECIMAL(12, 2)) AS m, "
              f"CAST(id AS DECIMAL(20, 6)) * CAST('{LONG}' AS DECIMAL(20, 6)) AS varies FROM range(1, 4)")
    return location


def test_doctor_finds_the_tables_whose_decimal_statistics_sail_misreads(engine, warehouse: Path):
    spark = engine.spark
    old = write(spark, warehouse, "written_before")
    # the defect itself: when Sail reads this right, the workaround (and this test) can go
    assert {r.d for r in spark.sql("SELECT d FROM silver.written_before").collect()} != {Decimal(LONG)}
    assert misread_decimal_columns(old) == ["d"]   # m: a double holds it; varies: not one value
    config = ProjectConfig(engine=engine.settings, sources={})
    with pytest.raises(LakecdcError, match=r"silver\.written_before \(d\).*--full-refresh"):
        check_warehouse_tables(config)

    spark.sql("DROP TABLE silver.written_before")
    shutil.rmtree(old)
    new = write(spark, warehouse, "written_now", "TBLPROPERTIES ('delta.dataSkippingStatsColumns' = '`id`')")
    assert {r.d for r in spark.sql("SELECT d FROM silver.written_now").collect()} == {Decimal(LONG)}
    assert misread_decimal_columns(new) == []
    assert check_warehouse_tables(config) == "1 Delta tables, none with misread decimal statistics"
