"""PostgreSQL's own prerequisites give one clear error line: SELECT privilege, a missing publication with
autocreate disabled, a slot of another plugin. The ones every connector shares (an unreachable server, no
REPLICATION attribute, wal_level below logical) are in tests/integration/connectors/test_connector_family.py."""

from __future__ import annotations

import time

import pytest

from ingest.errors import LakecdcError
from tests.support.pg import (
    connector,
    drop_slot_and_publication,
    ensure_database,
    execute,
)

pytestmark = pytest.mark.integration

def _one_line(exc: pytest.ExceptionInfo) -> str:
    text = str(exc.value)
    assert "\n" not in text
    return text


@pytest.fixture()
def schema(pg_dsn: str):
    dsn = ensure_database(pg_dsn)
    execute(dsn, "DROP SCHEMA IF EXISTS pgconn_prereq CASCADE", "CREATE SCHEMA pgconn_prereq",
            "CREATE TABLE pgconn_prereq.t (id int PRIMARY KEY)",
            "DO $$ BEGIN CREATE ROLE pgconn_norepl LOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END $$",
            "DO $$ BEGIN CREATE ROLE pgconn_repl LOGIN REPLICATION; "
            "EXCEPTION WHEN duplicate_object THEN NULL; END $$",
            "GRANT USAGE ON SCHEMA pgconn_prereq TO pgconn_norepl, pgconn_repl")
    yield dsn
    drop_slot_and_publication(dsn, "pgconn_prereq", "pgconn_prereq")
    execute(dsn, "DROP SCHEMA IF EXISTS pgconn_prereq CASCADE")


def test_missing_select_privilege(pg_dsn, schema) -> None:
    conn = connector(pg_dsn, "prereq", "pgconn_prereq", **{"database.user": "pgconn_repl"})
    with pytest.raises(LakecdcError) as exc:
        conn.validate()
    conn.close()
    assert "no SELECT privilege on pgconn_prereq.t" in _one_line(exc)


def test_missing_publication_with_autocreate_disabled(pg_dsn, schema) -> None:
    conn = connector(pg_dsn, "prereq", "pgconn_prereq", **{"publication.autocreate.mode": "disabled"})
    with pytest.raises(LakecdcError) as exc:
        conn.validate()
    conn.close()
    assert _one_line(exc).startswith("publication pgconn_prereq does not exist and publication.autocreate.mode "
                                     "is disabled")


def test_publication_creation_needs_privilege(pg_dsn, schema) -> None:
    execute(schema, "GRANT SELECT ON pgconn_prereq.t TO pgconn_repl")
    conn = connector(pg_dsn, "prereq", "pgconn_prereq", **{"database.user": "pgconn_repl"})
    with pytest.raises(LakecdcError) as exc:
        conn.validate()
    conn.close()
    assert _one_line(exc).startswith("cannot create publication pgconn_prereq as pgconn_repl")


def test_slot_of_another_plugin(pg_dsn, schema) -> None:
    execute(schema, "SELECT pg_create_logical_replication_slot('pgconn_prereq', 'test_decoding')")
    conn = connector(pg_dsn, "prereq", "pgconn_prereq")
    with pytest.raises(LakecdcError) as exc:
        conn.validate()
    conn.close()
    assert "exists for plugin test_decoding" in _one_line(exc)


def test_publication_over_tables_without_identity_is_warned(pg_dsn, schema, caplog) -> None:
    """Issue 20 item 3: a publication that publishes UPDATE/DELETE of a table without a replica identity makes
    the application's UPDATE and DELETE on it fail. doctor (check) and run (validate) name such tables before
    the publication is created; tables with a key or REPLICA IDENTITY FULL are not named."""
    import logging

    execute(schema, "CREATE TABLE pgconn_prereq.nokey (a int, b text)",
            "CREATE TABLE pgconn_prereq.full_nokey (a int)",
            "ALTER TABLE pgconn_prereq.full_nokey REPLICA IDENTITY FULL")
    conn = connector(pg_dsn, "prereq", "pgconn_prereq")
    try:
        line = conn.check()
        assert "WARNING: UPDATE and DELETE on 1 table(s) without a replica identity (pgconn_prereq.nokey)" in line
        assert "full_nokey" not in line and "pgconn_prereq.t " not in line
        with caplog.at_level(logging.WARNING, logger="ingest.connectors.postgres.setup"):
            conn.validate()
        assert any("pgconn_prereq.nokey" in r.getMessage() for r in caplog.records), caplog.text
    finally:
        conn.close()
    execute(schema, "ALTER TABLE pgconn_prereq.nokey ADD PRIMARY KEY (a)")
    conn = connector(pg_dsn, "prereq", "pgconn_prereq")
    try:
        assert "WARNING" not in conn.check()
    finally:
        conn.close()


def test_source_drop_slot(pg_dsn, schema, tmp_path) -> None:
    """Issue 20 item 4: `lakecdc source drop-slot` for whoever deletes the warehouse to start over. A slot in
    use is refused; a missing one is one clear line."""
    import yaml
    from psycopg2.extras import LogicalReplicationConnection

    from tests.conftest import run_lakecdc
    from tests.support.pg import dsn_params, psycopg2_connect, query

    params = dsn_params(pg_dsn)
    (tmp_path / "lakecdc.yml").write_text(yaml.safe_dump({"sources": {"pg": {
        "connector": "postgresql", "database.hostname": params["host"], "database.port": params["port"],
        "database.user": params["user"], "database.dbname": "pgconn_test", "topic.prefix": "pg",
        "slot.name": "pgconn_prereq"}}}))
    slots = "SELECT active_pid FROM pg_replication_slots WHERE slot_name = 'pgconn_prereq'"
    holder = psycopg2_connect(params, LogicalReplicationConnection)
    try:
        cur = holder.cursor()
        cur.create_replication_slot("pgconn_prereq", output_plugin="pgoutput")
        execute(schema, "CREATE PUBLICATION pgconn_prereq FOR TABLE pgconn_prereq.t")
        cur.start_replication(slot_name="pgconn_prereq", decode=False,
                              options={"proto_version": "1", "publication_names": "pgconn_prereq"})
        busy = run_lakecdc("source", "drop-slot", cwd=tmp_path)
        assert busy.returncode == 2 and "is in use by another connection" in busy.stderr, busy.stderr
        assert query(schema, slots)
    finally:
        holder.close()
    deadline = time.monotonic() + 60
    while query(schema, slots)[0][0] is not None:   # the walsender ends with its connection
        assert time.monotonic() < deadline
        time.sleep(0.1)
    dropped = run_lakecdc("source", "drop-slot", "--source", "pg", cwd=tmp_path)
    assert dropped.returncode == 0 and "pg: dropped replication slot pgconn_prereq" in dropped.stdout, dropped.stderr
    assert query(schema, slots) == []
    again = run_lakecdc("source", "drop-slot", cwd=tmp_path)
    assert again.returncode == 2 and "replication slot pgconn_prereq does not exist" in again.stderr
    # `source reset` starts over whether or not a slot is left (no bronze here: nothing else to remove)
    reset = run_lakecdc("source", "reset", "--yes", cwd=tmp_path)
    assert reset.returncode == 0, reset.stderr
    assert "pg: no replication slot pgconn_prereq in pgconn_test" in reset.stdout
