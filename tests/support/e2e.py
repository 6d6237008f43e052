"""End to end, source database -> silver, for the e2e tests: a project made by `lakecdc init` and driven
through the CLI (`Project`), the MariaDB and PostgreSQL set-ups and workloads, and the comparison of every silver
table with its source table.

Normalisations applied before comparing (docs/e2e.md), and nothing else:
- silver's metadata columns (`_op`, `_seq`, `_source_ts`) are dropped; every other column must exist on both
  sides with the same name;
- timestamps: silver holds instants (UTC); a source DATETIME / `timestamp without time zone` is read as UTC
  (Debezium's convention), a MariaDB TIMESTAMP is read in a session with time_zone '+00:00', a PostgreSQL
  timestamptz is converted to UTC;
- JSON: both sides parsed (`json.loads`), so key order and whitespace of the JSON text do not matter;
- decimals compared as `Decimal` values, binaries as `bytes` (memoryview -> bytes), booleans as ints
  (MariaDB's BOOLEAN is TINYINT(1): Debezium's int16 after a snapshot, boolean for a column created while
  streaming), UUIDs as strings.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import yaml

META_COLUMNS = ("_op", "_seq", "_source_ts")


HISTORY_COLUMNS = (*META_COLUMNS, "valid_from", "valid_to", "valid_from_seq", "valid_to_seq", "is_current")


ENV_OVERRIDES = ("LAKECDC_CONFIG", "LAKECDC_PROFILE", "LAKECDC_WAREHOUSE", "LAKECDC_REMOTE", "SPARK_REMOTE",
                 "DBT_PROJECT_DIR", "DBT_PROFILES_DIR")


class Project:
    """<tmp>/project: a project made by `lakecdc init` (lakecdc's dbt package installed with packages.yml), its
    lakecdc.yml naming the test's source; every command runs in a fresh process with this folder as working
    directory."""

    def __init__(self, tmp_path: Path, source: str, connector: str, properties: dict[str, Any]) -> None:
        self.source = source
        self.dir = tmp_path / "project"
        self.warehouse = tmp_path / "warehouse"
        self.env = {k: v for k, v in os.environ.items() if k not in ENV_OVERRIDES}
        self.env["RUST_LOG"] = "error"
        self.dir.mkdir(parents=True)
        self.lakecdc("init")
        config = {"engine": {"profile": "local", "warehouse": str(self.warehouse)},
                  "sources": {source: {"connector": connector, **properties}}}
        (self.dir / "lakecdc.yml").write_text(yaml.safe_dump(config, sort_keys=False))

    def run(self, *command: str, env: dict[str, str] | None = None) -> str:
        result = subprocess.run(list(command), cwd=self.dir, env={**self.env, **(env or {})}, capture_output=True,
                                text=True, timeout=1800)  # a generous limit: a busy machine is slow, not wrong
        output = result.stdout + result.stderr
        assert result.returncode == 0, f"{' '.join(command[-3:])} failed ({result.returncode}):\n{output[-6000:]}"
        return output

    def lakecdc(self, *args: str) -> str:
        return self.run(sys.executable, "-m", "ingest.cli", *args)

    def ingest(self) -> str:
        return self.lakecdc("run", "--source", self.source, "--until-caught-up", "--quiet")

    def prepare_models(self) -> None:
        """The schema history and the generated models, as a user refreshes them after an ingest."""
        self.lakecdc("schema", "rebuild", "--source", self.source)
        self.lakecdc("generate", "--source", self.source)

    def dbt_build_local(self) -> str:
        return self.lakecdc("dbt", "build")

    @contextlib.contextmanager
    def served(self) -> Iterator[Callable[[], str]]:
        """`lakecdc serve` in the background; yields a function running plain `dbt build` (the venv's dbt
        executable) with SPARK_REMOTE and LAKECDC_WAREHOUSE from `lakecdc serve --env-file`."""
        env_file = self.dir / "serve.env"
        serve = subprocess.Popen([sys.executable, "-m", "ingest.cli", "serve", "--port", "0", "--env-file",
                                  str(env_file)], cwd=self.dir, env=self.env, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.PIPE, text=True)
        try:
            deadline = time.monotonic() + 60
            while not env_file.exists() and serve.poll() is None and time.monotonic() < deadline:
                time.sleep(0.1)
            assert env_file.exists(), f"lakecdc serve did not start: {serve.stderr.read() if serve.poll() else ''}"
            exports = dict(re.findall(r'export (\w+)="([^"]*)"', env_file.read_text()))
            assert exports["SPARK_REMOTE"].startswith("sc://") and exports["LAKECDC_WAREHOUSE"] == str(self.warehouse)
            dbt = shutil.which("dbt", path=str(Path(sys.executable).parent))
            assert dbt, "dbt executable missing from the virtual environment"
            yield lambda: self.run(dbt, "build", "--profiles-dir", str(self.dir), env=exports)
        finally:
            serve.send_signal(signal.SIGINT)  # Ctrl-C: `lakecdc serve` stops its server and exits
            serve.wait(timeout=30)

    def dbt_log(self) -> Path:
        return self.dir / "logs" / "dbt.log"

    def silver_tables(self) -> set[str]:
        """The source's current-state silver tables (not the histories), by source table name."""
        prefix = f"{self.source}__"
        return {p.name[len(prefix):] for p in (self.warehouse / "silver").iterdir()
                if p.name.startswith(prefix) and not p.name.endswith("_history")}

    def read_silver(self, name: str) -> list[dict[str, Any]]:
        from deltalake import DeltaTable

        path = self.warehouse / "silver" / f"{self.source}__{name}"
        assert (path / "_delta_log").is_dir(), f"no silver table {path.name}"
        return DeltaTable(str(path)).to_pyarrow_table().to_pylist()

    def bronze_events(self) -> list[dict[str, Any]]:
        return self.bronze_rows("events", ["seq", "table_id", "op", "key", "value"])

    def bronze_rows(self, kind: str, columns: list[str] | None = None) -> list[dict[str, Any]]:
        from deltalake import DeltaTable

        return DeltaTable(str(self.warehouse / "bronze" / f"{self.source}_{kind}")).to_pyarrow_table(
            columns=columns).to_pylist()


def normalise(value: Any) -> Any:
    """One comparable form per value (see the module docstring)."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, memoryview | bytearray):
        return bytes(value)
    if isinstance(value, dt.datetime):
        if value.tzinfo is not None:
            value = value.astimezone(dt.UTC).replace(tzinfo=None)
        return value
    if isinstance(value, uuid.UUID):
        return str(value)
    return value


def normalise_row(row: dict[str, Any], json_columns: set[str]) -> dict[str, Any]:
    out = {}
    for name, value in row.items():
        if name in json_columns and value is not None:
            value = json.loads(value) if isinstance(value, str | bytes) else value
        out[name] = normalise(value)
    return out


def assert_rows_equal(silver: list[dict[str, Any]], source: list[dict[str, Any]] | None, key: tuple[str, ...],
                      json_columns: set[str], what: str, drop: tuple[str, ...] = META_COLUMNS) -> None:
    """Same keys, same columns, same values (after `normalise`); `drop`: silver's own columns. A source table
    that was dropped (None) leaves no row in silver."""
    if source is None:
        assert silver == [], f"{what}: the table was dropped in the source, silver still has {len(silver)} rows"
        return
    silver = [{k: v for k, v in row.items() if k not in drop} for row in silver]
    got = {tuple(r[k] for k in key): normalise_row(r, json_columns) for r in silver}
    want = {tuple(r[k] for k in key): normalise_row(r, json_columns) for r in source}
    assert len(got) == len(silver), f"{what}: duplicate keys in silver"
    assert source, f"{what}: the source table is empty (the workload is wrong)"
    src_cols, silver_cols = sorted(source[0]), sorted(silver[0]) if silver else []
    assert silver_cols == src_cols, f"{what}: columns differ: silver {silver_cols}, source {src_cols}"
    missing, extra = sorted(set(want) - set(got)), sorted(set(got) - set(want))
    assert not missing and not extra, f"{what}: keys missing from silver {missing[:10]}, extra in silver {extra[:10]}"
    diffs = []
    for k in sorted(want):
        for column, value in want[k].items():
            if got[k][column] != value:
                diffs.append(f"{k} {column}: silver {got[k][column]!r:.120} != source {value!r:.120}")
    assert not diffs, f"{what}: {len(diffs)} values differ:\n" + "\n".join(diffs[:20])


def compare_source(project: Project, tables: dict[str, tuple[str, ...]], json_columns: dict[str, set[str]],
                   source_rows: Callable[[str], list[dict[str, Any]] | None], stage: str) -> None:
    """Every source table has a silver table equal to it; the history's current versions equal it too."""
    assert project.silver_tables() == set(tables), f"{stage}: silver tables {sorted(project.silver_tables())}"
    for table, key in tables.items():
        rows = source_rows(table)
        what = f"{stage} {project.source}.{table}"
        assert_rows_equal(project.read_silver(table), rows, key, json_columns[table], what)
        current = [r for r in project.read_silver(f"{table}_history") if r["is_current"]]
        assert_rows_equal(current, rows, key, json_columns[table], f"{what} (history, current versions)",
                          drop=HISTORY_COLUMNS)


def run_pipeline(project: Project, dbt_build: Callable[[], str], workload_1: Callable[[], None],
                 workload_2: Callable[[], None], compare: Callable[[str], None],
                 between: Callable[[], None] = lambda: None) -> None:
    """snapshot -> workload 1 -> stream -> schema rebuild, generate, dbt build -> compare; then workload 2 ->
    stream -> the same again (the incremental path)."""
    project.ingest()
    workload_1()
    project.ingest()
    project.prepare_models()
    dbt_build()
    compare("after workload 1:")
    built = project.silver_tables()
    between()
    workload_2()
    project.ingest()
    project.prepare_models()
    log_size = project.dbt_log().stat().st_size
    dbt_build()
    compare("after workload 2 (incremental):")
    second = project.dbt_log().read_text(errors="replace")[log_size:]
    for table in built:  # the second build wrote the changes into the tables the first one made (no rebuild)
        assert wrote_incrementally(second, project.source, table), f"no MERGE or INSERT OVERWRITE for {table}"


def wrote_incrementally(dbt_log: str, source: str, table: str) -> bool:
    """dbt's log shows the changes written into silver table <source>__<table> as it was (MERGE, or INSERT
    OVERWRITE from a join with it: var lakecdc_merge_strategy), not a rebuild from all of bronze."""
    return re.search(rf"(merge into|insert overwrite table) \S*{source}__{table}\b", dbt_log, re.IGNORECASE) is not None


MARIA_DB = "e2e_maria"


MARIA_SOURCE = "e2e_maria"


MARIA_TABLES = {"customers": ("id",), "orders": ("order_id",), "documents": ("doc_id",)}


MARIA_JSON = {"customers": {"profile"}, "orders": set(), "documents": {"meta"}}


def maria_connect(params: dict, db: str | None = None):
    import pymysql

    return pymysql.connect(**params, database=db, autocommit=True, charset="utf8mb4",
                           init_command="SET time_zone = '+00:00'")


def maria_execute(params: dict, *statements: str) -> None:
    """Statements on the MariaDB test database, autocommitted one by one."""
    conn = maria_connect(params, MARIA_DB)
    with conn.cursor() as cur:
        for statement in statements:
            cur.execute(statement)
    conn.close()


def maria_setup(params: dict) -> None:
    conn = maria_connect(params)
    with conn.cursor() as cur:
        cur.execute(f"DROP DATABASE IF EXISTS {MARIA_DB}")
        cur.execute(f"CREATE DATABASE {MARIA_DB} CHARACTER SET utf8mb4")
        cur.execute(f"USE {MARIA_DB}")
        cur.execute("""CREATE TABLE customers (
            id INT PRIMARY KEY, name VARCHAR(100) NOT NULL, email VARCHAR(200), balance DECIMAL(12, 2),
            visits BIGINT, vip BOOLEAN, tier ENUM('bronze', 'silver', 'gold'), profile JSON,
            born DATE, created DATETIME(3), touched TIMESTAMP(6) NULL)""")
        cur.execute("""CREATE TABLE orders (
            order_id BIGINT PRIMARY KEY, customer_id INT NOT NULL, amount DECIMAL(10, 4) NOT NULL,
            quantity SMALLINT, note TEXT, placed DATETIME(3), shipped TINYINT(1) NOT NULL DEFAULT 0)""")
        cur.execute("""CREATE TABLE documents (
            doc_id VARCHAR(36) PRIMARY KEY, title VARCHAR(200), body MEDIUMTEXT, data BLOB, meta JSON,
            created DATETIME(3), flags TINYINT)""")
        rng = random.Random(11)
        for i in range(1, 41):
            cur.execute("INSERT INTO customers VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
                        (i, f"customer {i} é✓", f"c{i}@example.com" if i % 5 else None,
                         Decimal(rng.randint(-100000, 10000000)) / 100, rng.randint(0, 2**40),
                         i % 2, ("bronze", "silver", "gold", None)[i % 4],
                         json.dumps({"n": i, "tags": ["a", "b"], "nested": {"x": i * 1.5}}) if i % 3 else None,
                         dt.date(1950 + i, 1 + i % 12, 1 + i % 28),
                         dt.datetime(2024, 1, 1, 12, 0, 0, 123000) + dt.timedelta(hours=i),
                         dt.datetime(2024, 6, 1, 8, 30, 15, 654321) + dt.timedelta(minutes=i)))
        for i in range(1, 61):
            cur.execute("INSERT INTO orders VALUES (%s, %s, %s, %s, %s, %s, %s)",
                        (10_000_000_000 + i, 1 + i % 40, Decimal(rng.randint(1, 99999999)) / 10000,
                         rng.randint(-5, 300), ("note " * (i % 7)) or None,
                         dt.datetime(2025, 2, 28, 23, 59, 59, 999000) - dt.timedelta(days=i), i % 2))
        for i in range(1, 11):
            cur.execute("INSERT INTO documents VALUES (%s, %s, %s, %s, %s, %s, %s)",
                        (str(uuid.UUID(int=rng.getrandbits(128))), f"doc {i}", "lorem ipsum " * (i * 50),
                         bytes(rng.getrandbits(8) for _ in range(i * 7)), json.dumps({"v": i, "s": "é"}),
                         dt.datetime(2023, 3, 4, 5, 6, 7, 8000 * i), i - 5))
    conn.close()


def maria_workload_1(params: dict) -> None:
    """Updates, deletes, primary-key changes, added columns (nullable, no default: existing rows stay NULL in
    the source too, as in silver), more inserts."""
    conn = maria_connect(params, MARIA_DB)
    with conn.cursor() as cur:
        cur.execute("UPDATE customers SET balance = balance + 1.25, visits = visits + 1, tier = 'gold', "
                    "touched = '2025-01-02 03:04:05.000006' WHERE id % 3 = 0")
        cur.execute("UPDATE customers SET profile = JSON_SET(profile, '$.n', 999) WHERE id = 1")
        cur.execute("DELETE FROM customers WHERE id IN (4, 8, 15)")
        cur.execute("UPDATE customers SET id = 1000 WHERE id = 7")  # primary-key change
        cur.execute("UPDATE orders SET shipped = 1, note = CONCAT(COALESCE(note, ''), ' shipped') "
                    "WHERE order_id % 4 = 0")
        cur.execute("DELETE FROM orders WHERE order_id % 10 = 3")
        cur.execute("UPDATE orders SET order_id = order_id + 500 WHERE order_id = 10000000005")
        cur.execute("ALTER TABLE customers ADD COLUMN loyalty_points INT")
        cur.execute("UPDATE customers SET loyalty_points = id * 10 WHERE id < 20")
        cur.execute("INSERT INTO customers (id, name, vip, tier, profile, created, loyalty_points) VALUES "
                    "(41, 'late joiner', 1, 'silver', '{\"new\": true}', '2025-05-05 05:05:05.555', 7)")
        cur.execute("ALTER TABLE documents ADD COLUMN reviewed BOOLEAN")  # boolean: created while streaming
        cur.execute("UPDATE documents SET data = x'00ff00ff', flags = 127, reviewed = TRUE WHERE flags = 0")
        cur.execute("UPDATE documents SET reviewed = FALSE WHERE flags = 1")
        cur.execute("DELETE FROM documents WHERE flags = -5")
        cur.execute("INSERT INTO orders VALUES (20000000001, 41, 12.3456, 1, 'new', '2025-06-01 00:00:00.001', 0)")
    conn.close()


def maria_workload_2(params: dict) -> None:
    """The incremental path: changes to rows silver already holds, a second key change, a renamed column,
    inserts, deletes."""
    conn = maria_connect(params, MARIA_DB)
    with conn.cursor() as cur:
        cur.execute("UPDATE customers SET name = CONCAT(name, ' (2)'), loyalty_points = 5 WHERE id % 2 = 1")
        cur.execute("UPDATE customers SET id = 2000 WHERE id = 1000")
        cur.execute("DELETE FROM customers WHERE id = 2")
        cur.execute("INSERT INTO customers (id, name, balance, created) VALUES (42, 'second', -0.01, NOW(3))")
        cur.execute("ALTER TABLE orders RENAME COLUMN note TO remark")  # silver keeps the data under the new name
        cur.execute("UPDATE orders SET amount = amount * 2, remark = 'renamed' WHERE customer_id = 41")
        cur.execute("DELETE FROM orders WHERE order_id = 10000000006")
        cur.execute("UPDATE documents SET meta = JSON_OBJECT('v', 2, 'list', JSON_ARRAY(1, 2)) LIMIT 2")
    conn.close()


def maria_source_rows(params: dict, table: str) -> list[dict[str, Any]] | None:
    import pymysql

    conn = maria_connect(params, MARIA_DB)
    with conn.cursor(pymysql.cursors.DictCursor) as cur:
        cur.execute("SELECT count(*) AS n FROM information_schema.tables WHERE table_schema = %s AND table_name = %s",
                    (MARIA_DB, table))
        if not cur.fetchone()["n"]:   # a dropped table
            conn.close()
            return None
        cur.execute(f"SELECT * FROM `{table}`")
        rows = list(cur.fetchall())
    conn.close()
    return rows


def maria_server_id() -> int:
    return 700_000 + (os.getpid() % 50_000) * 10


PG_DB = "e2e_pg"


PG_SOURCE = "e2e_pg"


PG_SLOT = "e2e_silver"


PG_SCHEMA = "shop"


PG_TABLES = {"accounts": ("id",), "notes": ("id",)}


PG_JSON = {"accounts": {"attrs"}, "notes": set()}


PLACEHOLDER = "__debezium_unavailable_value"


_rng = random.Random(5)


BIG_TEXT = "".join(_rng.choice("abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(20_000))


def pg_dsn_for(pg_dsn: str, dbname: str) -> str:
    parts = [p for p in pg_dsn.split() if not p.startswith("dbname=")]
    return " ".join([*parts, f"dbname={dbname}"])


def pg_execute(dsn: str, *statements: str, params: list[tuple] | None = None) -> None:
    import psycopg2

    conn = psycopg2.connect(dsn)
    conn.autocommit = True
    with conn.cursor() as cur:
        for i, statement in enumerate(statements):
            cur.execute(statement, params[i] if params else None)
    conn.close()


def pg_drop_slot(pg_dsn: str) -> None:
    """The slot keeps WAL on the shared server until dropped: terminate its reader, then drop it."""
    import psycopg2

    conn = psycopg2.connect(pg_dsn_for(pg_dsn, "postgres"))
    conn.autocommit = True
    with conn.cursor() as cur:
        for _ in range(100):
            cur.execute("SELECT active_pid FROM pg_replication_slots WHERE slot_name = %s", (PG_SLOT,))
            row = cur.fetchone()
            if row is None:
                break
            if row[0] is None:
                cur.execute("SELECT pg_drop_replication_slot(%s)", (PG_SLOT,))
                break
            cur.execute("SELECT pg_terminate_backend(%s)", (row[0],))
            time.sleep(0.1)
    conn.close()


def pg_setup(pg_dsn: str) -> str:
    """A fresh database e2e_pg with two tables: accounts (REPLICA IDENTITY FULL) and notes (default identity);
    notes 1-3 and account 1 hold a 20,000-character text stored out of line without compression (TOASTed)."""
    pg_drop_slot(pg_dsn)
    pg_execute(pg_dsn_for(pg_dsn, "postgres"), f"DROP DATABASE IF EXISTS {PG_DB} WITH (FORCE)",
               f"CREATE DATABASE {PG_DB}")
    dsn = pg_dsn_for(pg_dsn, PG_DB)
    pg_execute(dsn, f"CREATE SCHEMA {PG_SCHEMA}", f"SET search_path = {PG_SCHEMA}", """CREATE TABLE accounts (
        id integer PRIMARY KEY, big bigint, amount numeric(10, 2), name text, code varchar(20), created timestamp,
        updated timestamptz, born date, active boolean, attrs jsonb, ext_id uuid, blob bytea)""",
               "ALTER TABLE accounts REPLICA IDENTITY FULL",
               "ALTER TABLE accounts ALTER COLUMN name SET STORAGE EXTERNAL",
               """CREATE TABLE notes (
        id bigint PRIMARY KEY, title varchar(200) NOT NULL, body text, n integer, changed timestamptz)""",
               "ALTER TABLE notes ALTER COLUMN body SET STORAGE EXTERNAL")
    rng = random.Random(23)
    rows = []
    for i in range(1, 31):
        rows.append((i, rng.randint(-2**62, 2**62), Decimal(rng.randint(-99999999, 99999999)) / 100,
                     BIG_TEXT[::-1] if i == 1 else f"name {i} ü", f"C{i:04d}" if i % 4 else None,
                     dt.datetime(2024, 2, 29, 1, 2, 3, 456789) + dt.timedelta(days=i),
                     dt.datetime(2024, 7, 1, 10, 0, tzinfo=dt.timezone(dt.timedelta(hours=2))) + dt.timedelta(hours=i),
                     dt.date(2000, 1, 1) + dt.timedelta(days=100 * i), (True, False, None)[i % 3],
                     json.dumps({"i": i, "list": [1, "two", None], "deep": {"ok": i % 2 == 0}}) if i % 5 else None,
                     str(uuid.UUID(int=rng.getrandbits(128))), bytes(rng.getrandbits(8) for _ in range(i))))
    insert = "INSERT INTO shop.accounts VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
    pg_execute(dsn, *[insert] * len(rows), params=rows)
    notes = [(i, f"note {i}", (BIG_TEXT if i <= 3 else f"short body {i}"), i,
              dt.datetime(2025, 1, 1, tzinfo=dt.UTC) + dt.timedelta(seconds=i)) for i in range(1, 11)]
    pg_execute(dsn, *["INSERT INTO shop.notes VALUES (%s, %s, %s, %s, %s)"] * len(notes), params=notes)
    return dsn


def pg_workload_1(dsn: str) -> None:
    """Updates (the TOASTed bodies of notes 1-3 unchanged: pgoutput sends them as 'unchanged toast', the
    connector as the placeholder, silver must keep the previous value), deletes, primary-key changes on both
    tables, an added column (nullable, no default), inserts.

    Not here: a key change of a row whose TOASTed value stays unchanged. Under REPLICA IDENTITY DEFAULT the
    value is in no WAL record (Debezium, too, emits the placeholder for the new key; silver cannot know it);
    under FULL it is (see test_postgresql_full_identity_sends_toasted_value)."""
    pg_execute(
        dsn,
        "UPDATE shop.notes SET n = n + 100, changed = now() WHERE id <= 5",
        "UPDATE shop.accounts SET amount = amount + 0.01, attrs = jsonb_set(coalesce(attrs, '{}'), '{x}', '1'), "
        "updated = '2025-03-04 05:06:07.123456+05:30' WHERE id % 3 = 0",
        "DELETE FROM shop.accounts WHERE id IN (2, 11)",
        "DELETE FROM shop.notes WHERE id = 9",
        "UPDATE shop.accounts SET id = 500 WHERE id = 5",
        "UPDATE shop.notes SET id = 600 WHERE id = 6",
        "ALTER TABLE shop.accounts ADD COLUMN score integer",
        "UPDATE shop.accounts SET score = id * 2 WHERE id < 10",
        "INSERT INTO shop.accounts (id, name, active, attrs, ext_id, blob, created) VALUES "
        "(31, 'new one', true, '[1, 2, {\"a\": null}]', gen_random_uuid(), '\\x00ff', '2025-12-31 23:59:59.999999')",
        "INSERT INTO shop.notes (id, title, body, n) VALUES (11, 'eleven', repeat('xy', 6000), 11)",
    )


def pg_workload_2(dsn: str) -> None:
    pg_execute(
        dsn,
        "UPDATE shop.notes SET title = title || ' (2)' WHERE id IN (1, 2, 3, 11)",  # TOASTed bodies again
        "UPDATE shop.accounts SET score = 0, big = -1 WHERE id % 2 = 0",
        "UPDATE shop.accounts SET code = 'toast' WHERE id = 1",  # its TOASTed name unchanged (identity FULL)
        "UPDATE shop.accounts SET id = 600 WHERE id = 500",
        "DELETE FROM shop.notes WHERE id = 4",
        "INSERT INTO shop.accounts (id, amount, born, score) VALUES (32, -12.34, '1999-12-31', 3)",
        "UPDATE shop.notes SET body = 'now short' WHERE id = 2",
        "ALTER TABLE shop.notes RENAME COLUMN n TO counter",  # silver keeps the data under the new name
        "UPDATE shop.notes SET counter = counter + 1 WHERE id = 1",
    )


def placeholder_events(project: Project) -> dict[str, int]:
    """Bronze events per table whose value holds the unavailable-value placeholder (unchanged TOAST)."""
    counts: dict[str, int] = {}
    for row in project.bronze_events():
        if row["value"] and PLACEHOLDER in row["value"]:
            counts[row["table_id"]] = counts.get(row["table_id"], 0) + 1
    return counts


def pg_source_rows(dsn: str, table: str) -> list[dict[str, Any]]:
    import psycopg2
    import psycopg2.extras

    conn = psycopg2.connect(dsn)
    with conn.cursor(cursor_factory=psycopg2.extras.RealDictCursor) as cur:
        cur.execute(f"SELECT * FROM {PG_SCHEMA}.{table}")
        rows = [dict(r) for r in cur.fetchall()]
    conn.close()
    return rows


def pg_properties(pg_dsn: str) -> dict[str, Any]:
    params = dict(p.split("=", 1) for p in pg_dsn.split())
    return {"database.hostname": params.get("host", "127.0.0.1"), "database.port": int(params.get("port", 5432)),
            "database.user": params.get("user", "postgres"), "database.password": params.get("password", ""),
            "database.dbname": PG_DB, "topic.prefix": PG_SOURCE, "slot.name": PG_SLOT, "publication.name": PG_SLOT,
            "publication.autocreate.mode": "filtered", "table.include.list": f"{PG_SCHEMA}\\..*",
            "poll.interval.ms": 100}


def pg_debezium_properties(pg_dsn: str) -> dict[str, Any]:
    """pg_properties for Debezium's own postgres connector in the embedded engine (`connector: debezium`)."""
    return {**pg_properties(pg_dsn), "connector.class": "io.debezium.connector.postgresql.PostgresConnector",
            "plugin.name": "pgoutput"}


def pg_pipeline(project: Project, dsn: str, dbt_build: Callable[[], str]) -> None:
    def compare(stage: str) -> None:
        compare_source(project, PG_TABLES, PG_JSON, lambda t: pg_source_rows(dsn, t), stage)

    def toast_path_taken() -> None:  # updates of notes 1-2 arrived with the placeholder; silver kept the bodies
        assert placeholder_events(project).get(f"{PG_DB}.{PG_SCHEMA}.notes", 0) >= 2, placeholder_events(project)

    run_pipeline(project, dbt_build, lambda: pg_workload_1(dsn), lambda: pg_workload_2(dsn), compare,
                 between=toast_path_taken)


def events_of(project: Project, table: str, key: dict[str, Any]) -> list[tuple[str, dict]]:
    """(op, value) of the bronze events of one key of a table of e2e_pg, in seq order."""
    key_json = json.dumps(key, separators=(",", ":"))
    rows = sorted((r for r in project.bronze_events()
                   if r["table_id"] == f"{PG_DB}.{PG_SCHEMA}.{table}" and r["key"] == key_json and r["op"]),
                  key=lambda r: r["seq"])
    return [(r["op"], json.loads(r["value"])) for r in rows]
