"""Both captures of one database workload: start the real Debezium engines and lakecdc's sources (snapshot),
run the streaming workload once, and wait until both delivered everything (a sentinel row written last)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.conformance import mariadb_workload as my
from tests.conformance import pg_workload as pg
from tests.conformance.debezium import DebeziumCapture, Record, stop_all
from tests.conformance.lakecdc import LakecdcCapture


@dataclass
class Captured:
    """Per run: (Debezium's records, lakecdc's records), and the lakecdc warehouse they came from."""

    lakecdc: LakecdcCapture
    runs: dict[str, tuple[list[Record], list[Record]]] = field(default_factory=dict)
    refused: dict[str, str] = field(default_factory=dict)   # run -> why lakecdc refused its configuration
    seconds: float = 0.0


def _snapshot_done(records: list[Record]) -> bool:
    return any(r.value is not None and '"snapshot":"last"' in r.value for r in records)


def _has_topic(topic: str) -> Callable[[list[Record]], bool]:
    return lambda records: any(r.topic == topic for r in records)


def _lakecdc_until(lakecdc: LakecdcCapture, source: str, topic: str, attempts: int = 20) -> list[Record]:
    """Run a lakecdc source until caught up, again while the sentinel has not landed (a condition wait)."""
    for _ in range(attempts):
        lakecdc.run(source)
        records = lakecdc.records(source)
        if any(r.topic == topic for r in records):
            return records
    raise AssertionError(f"lakecdc source {source}: no event on {topic} after {attempts} runs")


def _both(captures: dict[str, DebeziumCapture], lakecdc: LakecdcCapture, run_workload: Callable[[], None],
          sentinel_topic: Callable[[str], str], result: Captured) -> None:
    """The shared sequence: snapshots (Debezium engines in parallel, lakecdc sources one by one), the
    streaming workload once, then wait for every run's sentinel on both sides. A run whose configuration
    lakecdc refuses is recorded in `result.refused` (with no lakecdc events) and the others go on."""
    from ingest.errors import ConfigError

    try:
        lakecdc.start()
        for c in captures.values():
            c.start()
        for run in captures:
            try:
                lakecdc.run(run)
            except ConfigError as exc:
                result.refused[run] = str(exc)
        for c in captures.values():
            c.wait(_snapshot_done, "end of snapshot")
        run_workload()
        for run, c in captures.items():
            lc_records = [] if run in result.refused else _lakecdc_until(lakecdc, run, sentinel_topic(run))
            result.runs[run] = (c.wait(_has_topic(sentinel_topic(run)), "sentinel event"), lc_records)
    finally:
        stop_all(list(captures.values()))
        lakecdc.stop()


# ------------------------------------------------------------------------------------------------ PostgreSQL

def capture_postgres(pg_dsn: str, workdir: Path) -> Captured:
    import psycopg2

    began = time.monotonic()
    params = dict(p.split("=", 1) for p in pg_dsn.split())
    database = "conformance"
    admin = psycopg2.connect(pg_dsn)
    admin.autocommit = True
    with admin.cursor() as cur:
        cur.execute("SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE database = %s",
                    (database,))
        cur.execute(f"DROP DATABASE IF EXISTS {database} WITH (FORCE)")
        cur.execute(f"CREATE DATABASE {database}")
    admin.close()
    dsn = " ".join([p for p in pg_dsn.split() if not p.startswith("dbname=")] + [f"dbname={database}"])
    conn = psycopg2.connect(dsn)
    conn.autocommit = True

    def execute(statements: list[str], schema: str) -> None:
        with conn.cursor() as cur:
            for statement in statements:
                cur.execute(statement.replace("{s}", schema))

    execute(list(pg.DATABASE_SETUP), "")
    for run in pg.RUNS:
        execute([f"CREATE SCHEMA {run}", *pg.schema_statements(run)], run)

    connection = {"database.hostname": params.get("host", "127.0.0.1"), "database.port": params.get("port", "5432"),
                  "database.user": params.get("user", "postgres"), "database.password": params.get("password", ""),
                  "database.dbname": database}

    def common(run: str) -> dict[str, Any]:
        return {**connection, **pg.RUNS[run], "topic.prefix": run, "table.include.list": f"{run}\\..*",
                "skipped.operations": "none", "provide.transaction.metadata": "true",
                "publication.autocreate.mode": "filtered"}

    captures = {run: DebeziumCapture(run, {
        **common(run), "connector.class": "io.debezium.connector.postgresql.PostgresConnector",
        "plugin.name": "pgoutput", "slot.name": f"dbz_{run}", "publication.name": f"dbz_{run}",
        "slot.drop.on.stop": "true"}) for run in pg.RUNS}
    lakecdc = LakecdcCapture(workdir / "pg-warehouse", {
        run: ("postgresql", {**common(run), "slot.name": f"lc_{run}", "publication.name": f"lc_{run}",
                             "poll.interval.ms": 50}) for run in pg.RUNS})

    def workload() -> None:
        for run in pg.RUNS:
            execute(pg.streaming_statements(run), run)
        for run in pg.RUNS:
            execute([pg.SENTINEL], run)

    result = Captured(lakecdc)
    try:
        _both(captures, lakecdc, workload, lambda run: f"{run}.{run}.sentinel", result)
    finally:
        with conn.cursor() as cur:
            cur.execute("SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots "
                        "WHERE database = %s AND NOT active", (database,))
        conn.close()
    result.seconds = time.monotonic() - began
    return result


# ------------------------------------------------------------------------------------------------ MariaDB

def capture_mariadb(url: str, workdir: Path) -> Captured:
    """MariaDB started as --version=5.7.19-MariaDB-log: Debezium's MySQL connector and lakecdc's MariaDB
    connector read the same server."""
    from urllib.parse import urlparse

    import pymysql

    began = time.monotonic()
    u = urlparse(url)
    connection = {"database.hostname": u.hostname or "127.0.0.1", "database.port": u.port or 3306,
                  "database.user": u.username or "root", "database.password": u.password or ""}
    conn = pymysql.connect(host=connection["database.hostname"], port=connection["database.port"],
                           user=connection["database.user"], password=connection["database.password"],
                           autocommit=True)

    def execute(statements: list[str], database: str) -> None:
        with conn.cursor() as cur:
            for statement in statements:
                cur.execute(statement.replace("{s}", database))

    for run in my.RUNS:
        execute([f"DROP DATABASE IF EXISTS {run}", f"CREATE DATABASE {run}", *my.schema_statements(run)], run)

    def common(run: str) -> dict[str, Any]:
        return {**connection, **my.RUNS[run], "topic.prefix": run, "database.include.list": run,
                "skipped.operations": "none", "include.schema.changes": "false"}

    history = workdir / "mariadb-history"
    history.mkdir(parents=True, exist_ok=True)
    captures = {run: DebeziumCapture(run, {
        **common(run), "connector.class": "io.debezium.connector.mysql.MySqlConnector",
        "database.server.id": 6100 + i, "schema.history.internal": "io.debezium.storage.file.history.FileSchemaHistory",
        "schema.history.internal.file.filename": str(history / f"{run}.dat")}) for i, run in enumerate(my.RUNS)}
    lakecdc = LakecdcCapture(workdir / "mariadb-warehouse", {
        run: ("mariadb", {**common(run), "database.server.id": 6200 + i}) for i, run in enumerate(my.RUNS)})

    def workload() -> None:
        for run in my.RUNS:
            execute(my.streaming_statements(run), run)
        for run in my.RUNS:
            execute([my.SENTINEL], run)

    result = Captured(lakecdc)
    try:
        _both(captures, lakecdc, workload, lambda run: f"{run}.{run}.sentinel", result)
    finally:
        conn.close()
    result.seconds = time.monotonic() - began
    return result
