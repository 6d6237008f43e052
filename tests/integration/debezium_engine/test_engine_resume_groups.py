"""Exactly once when a run stops between records that share one Debezium offset.

Debezium gives several records the same source offset: a delete and its tombstone; a PostgreSQL key change
(delete, tombstone, create: one WAL message). It resumes after a whole offset, so a run whose last landed record
is the delete of a key change would, resuming from that offset, never get the tombstone and the create.

Deterministic, no kill timing: Debezium hands over one record at a time (`max.batch.size: 1`) and every run stops
after its first landed batch (`--max-events 1`), so without care a run would stop inside each group. Bronze must
end only at an offset boundary: each run lands one whole group, and bronze then holds exactly what an
uninterrupted capture of the same changes (a second source with its own slot) holds: the same seqs, each once."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from tests.support.e2e import (
    PG_DB,
    PG_SCHEMA,
    PG_SOURCE,
    Project,
    pg_debezium_properties,
    pg_drop_slot,
    pg_execute,
    pg_setup,
)
from tests.support.pg import drop_slot_and_publication

pytestmark = [pytest.mark.integration, pytest.mark.slow]

WHOLE_SLOT = "e2e_whole"


def streamed(project: Project) -> Counter[tuple[str, str | None]]:
    """The streamed records' (seq, op), each with its count (the snapshots of two slots differ in position)."""
    return Counter((event["seq"], event["op"]) for event in project.bronze_events() if event["op"] != "r")


def test_runs_that_stop_inside_a_group_of_records_with_one_offset_lose_and_repeat_nothing(
        pg_dsn: str, tmp_path: Path) -> None:
    drop_slot_and_publication(pg_dsn, WHOLE_SLOT, WHOLE_SLOT)   # left by an interrupted run: DROP DATABASE waits
    dsn = pg_setup(pg_dsn)
    one_by_one = Project(tmp_path / "one", PG_SOURCE, "debezium",
                         {**pg_debezium_properties(pg_dsn), "max.batch.size": 1, "max.queue.size": 2})
    whole = Project(tmp_path / "whole", PG_SOURCE, "debezium",
                    {**pg_debezium_properties(pg_dsn), "slot.name": WHOLE_SLOT, "publication.name": WHOLE_SLOT})
    try:
        one_by_one.ingest()   # the snapshots (Debezium takes an unfinished one again from its beginning)
        whole.ingest()
        pg_execute(dsn,
                   f"UPDATE {PG_SCHEMA}.notes SET id = 600 WHERE id = 6",      # delete, tombstone, create
                   f"DELETE FROM {PG_SCHEMA}.notes WHERE id = 9",               # delete, tombstone
                   f"UPDATE {PG_SCHEMA}.accounts SET id = 500 WHERE id = 5")
        whole.ingest()
        expected = streamed(whole)
        records = sum(expected.values())
        assert records == 8, expected   # 2 key changes (3 records each), a delete (2)
        runs = 0
        while sum(streamed(one_by_one).values()) < records and runs < 3 * records:
            runs += 1
            try:   # a run waits for its one record: when bronze lacks one that never comes, it is stopped
                #    (a generous limit: only a failing run reaches it; a busy machine is slow, not wrong)
                subprocess.run([sys.executable, "-m", "ingest.cli", "run", "--source", PG_SOURCE, "--max-events", "1",
                                "--quiet"], cwd=one_by_one.dir, env=one_by_one.env, check=True, timeout=600)
            except subprocess.TimeoutExpired:
                break
        one_by_one.ingest()   # and nothing more comes
        landed = streamed(one_by_one)
        twice = {seq: n for seq, n in landed.items() if n > 1}
        assert not twice, f"landed twice: {twice}"
        assert landed == expected, (f"missing {sorted(expected - landed)}; not expected {sorted(landed - expected)}")
        creates = [json.loads(e["key"]) for e in one_by_one.bronze_events()
                   if e["op"] == "c" and e["table_id"] == f"{PG_DB}.{PG_SCHEMA}.notes"]
        assert {"id": 600} in creates, creates
        assert runs == 3, runs   # one run per offset group: the 3 statements
    finally:
        pg_drop_slot(pg_dsn)
        drop_slot_and_publication(dsn, WHOLE_SLOT, WHOLE_SLOT)
