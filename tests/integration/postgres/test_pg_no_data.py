"""`snapshot.mode: no_data` when the first run lands no event (the tables stayed quiet): its slot and its schema
changes are in place, and the next run must stream from that slot. Found while testing incremental snapshots:
the second run took the empty bronze for a new source, replaced the slot and lost every change made between the
runs (and landed the schema changes again)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.support.pg import execute
from tests.support.pg_e2e import ROOT, SCHEMA, SOURCE, bronze_events, prepare_source, write_config

pytestmark = pytest.mark.integration


def run_until_caught_up(config: Path) -> None:
    result = subprocess.run([sys.executable, "-m", "ingest.cli", "--config", str(config), "run", "--source", SOURCE,
                             "--until-caught-up", "--quiet"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr


def test_changes_between_a_no_data_run_that_landed_nothing_and_the_next_run_are_kept(pg_dsn: str,
                                                                                     tmp_path: Path) -> None:
    from deltalake import DeltaTable

    dsn = prepare_source(pg_dsn, 10)
    config = write_config(tmp_path, pg_dsn)
    settings = yaml.safe_load(config.read_text())
    settings["sources"][SOURCE]["snapshot.mode"] = "no_data"
    config.write_text(yaml.safe_dump(settings))
    warehouse = tmp_path / "warehouse"
    run_until_caught_up(config)
    assert bronze_events(warehouse) == []   # nothing changed: only the tables' schema changes landed
    execute(dsn, f"INSERT INTO {SCHEMA}.t1 VALUES (900001, 'between runs', 1)",
            f"UPDATE {SCHEMA}.t3 SET v = 'changed between runs' WHERE id = 1")
    run_until_caught_up(config)
    events = bronze_events(warehouse)
    assert sorted((e["op"], json.loads(e["key"])["id"]) for e in events if e["op"]) == [("c", 900001), ("u", 1)]
    changes = DeltaTable(str(warehouse / "bronze" / f"{SOURCE}_schema_changes")).to_pyarrow_table(
        columns=["table_changes"]).column("table_changes").to_pylist()
    created = sorted(c["id"] for text in changes for c in json.loads(text) if c["type"] == "CREATE")
    assert created == [f'"{SCHEMA}"."t1"', f'"{SCHEMA}"."t2"', f'"{SCHEMA}"."t3"'], created   # once each: same slot
