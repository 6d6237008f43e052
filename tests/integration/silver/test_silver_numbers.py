"""Numbers reach silver exactly (issue 17): thousands of random doubles and floats (in Python's and in Java's
text form, as Kafka's JsonConverter writes them), NaN / Infinity, arrays of doubles, points, int64 and decimals
at their edges, a DECIMAL(20,6) that is one value in every row (the embedded engine's statistics defect,
docs/engine.md), through `lakecdc generate` + `dbt build` on the local engine, compared without tolerance."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from ingest.generate.catalog import captured_tables
from ingest.generate.render import WriteResult, render_source, write_files
from tests.support.silver import Bronze, make_project, run_dbt
from tests.support.silver_numbers import (
    N_ROWS,
    build_rows,
    land,
)

pytestmark = pytest.mark.integration


def same(a: float | None, b: float | None) -> bool:
    """Bit-exact equality (NaN equals NaN, -0.0 differs from 0.0)."""
    if a is None or b is None:
        return a is b
    if not isinstance(a, float):
        return False
    return struct.pack("<d", a) == struct.pack("<d", b)


def check(spark, table: str, rows: list[dict]) -> None:
    got = {r["id"]: r.asDict() for r in spark.sql(f"SELECT * FROM {table}").collect()}
    assert sorted(got) == [r["id"] for r in rows]
    bad = []
    for want in rows:
        row = got[want["id"]]
        for name in ("d_old", "d_new", "f_old", "f_new"):
            if not same(row[name], want[name]):
                bad.append((want["id"], name, row[name], want[name]))
        arr = row["arr"]
        if (arr is None) != (want["arr"] is None) or (arr is not None and (
                len(arr) != len(want["arr"]) or not all(same(a, b) for a, b in zip(arr, want["arr"], strict=True)))):
            bad.append((want["id"], "arr", arr, want["arr"]))
        pt = None if row["pt"] is None else (row["pt"]["x"], row["pt"]["y"])
        if (pt is None) != (want["pt"] is None) or (pt is not None and not all(map(same, pt, want["pt"]))):
            bad.append((want["id"], "pt", pt, want["pt"]))
        if row["vsd"] != format(want["vsd"], "f"):  # the exact text, scale included (silver type string)
            bad.append((want["id"], "vsd", row["vsd"], want["vsd"]))
        for name in ("big", "dec38", "frac38", "money", "fixed"):
            if row[name] != want[name]:
                bad.append((want["id"], name, row[name], want[name]))
    assert not bad, f"{len(bad)} values differ, e.g. {bad[:8]}"


@pytest.mark.slow
def test_numbers_reach_silver_exactly(engine, warehouse: Path, tmp_path: Path):
    spark = engine.spark
    bronze = Bronze(spark, warehouse)
    rows = build_rows(seed=17)
    land(bronze, rows, "r")
    project = make_project(tmp_path, warehouse)
    write_files(render_source("inv", captured_tables(spark, "inv"), project / "models"), WriteResult([], [], []))
    run_dbt(engine, project, "build")
    check(spark, "silver.inv__measures", rows)
    current = [r.asDict() for r in spark.sql("SELECT * FROM silver.inv__measures_history WHERE is_current").collect()]
    assert len(current) == N_ROWS
    # the incremental path: every row updated with new random numbers
    updated = build_rows(seed=18)
    land(bronze, updated, "u")
    run_dbt(engine, project, "build")
    check(spark, "silver.inv__measures", updated)
    spark.sql("CREATE OR REPLACE TEMPORARY VIEW cur AS SELECT * FROM silver.inv__measures_history WHERE is_current")
    check(spark, "cur", updated)
