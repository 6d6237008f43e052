"""`snapshot.mode: no_data` when the first run lands no event (the tables stayed quiet): the next run must stream
from the binlog position of the snapshot's schema changes. Until stop 31 it took a new snapshot at the binlog's
end and lost every change made between the runs (PostgreSQL had the same defect: test_pg_no_data.py)."""

from __future__ import annotations

import json

import pytest
import yaml

from tests.support.e2e import MARIA_DB, maria_execute

pytestmark = pytest.mark.integration


def test_a_change_between_a_no_data_run_that_landed_nothing_and_the_next_run_is_kept(maria_project,
                                                                                      mariadb_params: dict) -> None:
    project = maria_project
    config_file = project.dir / "lakecdc.yml"
    config = yaml.safe_load(config_file.read_text())
    config["sources"][project.source]["snapshot.mode"] = "no_data"
    config_file.write_text(yaml.safe_dump(config))
    project.ingest()
    assert project.bronze_events() == []   # only the schema changes landed
    maria_execute(mariadb_params, f"UPDATE {MARIA_DB}.customers SET visits = 7 WHERE id = 3",
                  f"DELETE FROM {MARIA_DB}.orders WHERE order_id = 10000000001")
    project.ingest()
    changed = sorted((e["op"], next(iter(json.loads(e["key"]).values())))
                     for e in project.bronze_events() if e["op"])
    assert changed == [("d", 10_000_000_001), ("u", 3)], changed
