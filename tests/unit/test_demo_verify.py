"""The demo's silver-versus-source comparison and its summary rendering (no engine)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from ingest.demo.pipeline import DemoRun, StepResult
from ingest.demo.summary import expectation_counts, render_summary
from ingest.demo.verify import compare_rows

pytestmark = pytest.mark.unit

EXPECTED = [{"order_number": 1, "order_date": "2016-01-16", "quantity": 2},
            {"order_number": 2, "order_date": "2016-01-17", "quantity": 1}]


def silver(*rows: tuple[int, dt.date, int], extra: dict | None = None) -> list[dict]:
    return [{"order_number": n, "order_date": d, "quantity": q, "_seq": "x", **(extra or {})} for n, d, q in rows]


def test_equal_tables_match_and_metadata_columns_are_ignored() -> None:
    result = compare_rows("orders", EXPECTED, silver((2, dt.date(2016, 1, 17), 1), (1, dt.date(2016, 1, 16), 2)),
                          ["order_number"])
    assert result.matches and result.describe() == "orders: 2 rows match"


@pytest.mark.parametrize(("rows", "extra", "expected"), [
    ([(1, dt.date(2016, 1, 16), 2)], None, "1 missing rows"),
    ([(1, dt.date(2016, 1, 16), 2), (2, dt.date(2016, 1, 17), 1), (3, dt.date(2016, 1, 1), 1)], None,
     "1 extra rows"),
    ([(1, dt.date(2016, 1, 16), 2), (2, dt.date(2016, 1, 17), 5)], None, "1 differing rows"),
    ([(1, dt.date(2016, 1, 16), 2), (2, dt.date(2016, 1, 17), 1)], {"description": None}, "extra columns description"),
])
def test_differences_are_named(rows, extra, expected) -> None:
    result = compare_rows("orders", EXPECTED, silver(*rows, extra=extra), ["order_number"])
    assert not result.matches and expected in result.describe()


def test_missing_silver_table() -> None:
    result = compare_rows("orders", EXPECTED, None, ["order_number"])
    assert not result.matches and result.describe() == "orders: no silver table"


def test_summary_names_pending_and_failed_steps_and_counts_checks(tmp_path: Path) -> None:
    (tmp_path / "index.html").write_text("<html></html>")
    summary = {"path": str(tmp_path / "summary.json"), "status": "pass",
               "suites": [{"expectations": [{"success": True}, {"success": False}]},
                          {"expectations": [{"success": True}]}]}
    assert expectation_counts(summary) == (2, 3)
    run = DemoRun(root=tmp_path, config_path=tmp_path / "lakecdc.yml", steps=[
        StepResult("ingest", "ok", "landed"), StepResult("schema history", "pending", "absent"),
        StepResult("verify silver", "failed", "4 of 5 tables equal"),
        StepResult("quality", "ok", "report", data={"summary": summary}),
    ], rows={"bronze": {"inventory_events": 10, "inventory_rejects": 0}})
    text = render_summary(run)
    assert "bronze  10 rows in 2 tables" in text and "silver  no tables" in text
    assert "quality: 2 of 3 checks passed in 2 suites" in text
    assert f"HTML report: {tmp_path / 'index.html'}" in text
    assert "pending (not built yet): schema history" in text and "FAILED: verify silver" in text
    assert not run.ok


def test_the_demo_folder_is_rebuilt_but_a_foreign_folder_is_refused(tmp_path: Path) -> None:
    from ingest.demo.pipeline import prepare
    from ingest.errors import LakecdcError

    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "precious.txt").write_text("keep")
    with pytest.raises(LakecdcError, match="not a demo folder"):
        prepare(foreign)
    assert (foreign / "precious.txt").read_text() == "keep"

    demo = tmp_path / "demo"
    config = prepare(demo)
    (demo / "warehouse" / "bronze").mkdir(parents=True)
    prepare(demo)  # a second run wipes the previous warehouse
    assert not (demo / "warehouse").exists() and "connector: debezium-json" in config.read_text()
