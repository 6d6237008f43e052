"""Soak run (`make soak`; not part of `make test`): for each real source, a random workload writes for
--minutes while `lakecdc run` is SIGKILLed at random moments (5-40 s apart) and restarted; then the run
catches up without interruption and bronze, replayed in seq order, must equal every source table.

    .venv/bin/python bench/soak.py [--minutes 10] [--only postgresql|mariadb] [--seed 1]
    .venv/bin/python bench/soak.py --silver [--minutes 30] [--seeds 1,2,3] [--scale 4] [--only ...]

PostgreSQL: inserts, updates, deletes, primary-key changes, TOASTed values, truncates and new tables
(the workload of tests/support/pg_e2e.py), through the `lakecdc run` CLI. MariaDB: DML plus
ADD/DROP/MODIFY/CHANGE/RENAME COLUMN, RENAME TABLE, CREATE/DROP TABLE (the workload of
tests/support/mysql_e2e.py), through the connector and BronzeWriter in a subprocess. Prints kills, events
landed and the result; exit status 1 when bronze differs from the source. Needs the services of
`make services-up` (scripts/services.sh env).

--silver (`make soak-silver`): issue 17's randomized end-to-end scenario (tests/support/e2e_workload.py:
random workload, SIGKILLs after bronze commits, catch-up, schema rebuild, generate, dbt build, a second
workload and an incremental build) with the sizes of tests/integration/project/test_e2e_random.py times
--scale, for each seed of --seeds on each source in turn, then further seeds until --minutes have passed;
every silver table must equal its source
exactly. Prints each case's kills, DDL and mismatches (table, column, count, examples).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def soak_postgres(minutes: float, seed: int, work: Path) -> bool:
    from tests.support import pg_e2e as e2e
    from tests.support.pg import drop_slot_and_publication

    dsn = e2e.prepare_source(os.environ["LAKECDC_PG_DSN"], 200_000)
    config = e2e.write_config(work, os.environ["LAKECDC_PG_DSN"])
    warehouse, log = work / "warehouse", work / "run.log"
    workload = e2e.Workload(dsn, seed=seed)
    workload.start()
    rng = random.Random(seed)
    kills, deadline = 0, time.monotonic() + minutes * 60
    try:
        while time.monotonic() < deadline:
            proc = e2e.start_run(config, log, until_caught_up=False)
            time.sleep(min(rng.uniform(5, 40), max(0.0, deadline - time.monotonic())))
            if proc.poll() is None:
                proc.send_signal(signal.SIGKILL)
                kills += 1
            proc.wait(timeout=60)
            print(f"  postgresql: {kills} kills, {workload.ops:,} workload transactions", flush=True)
    finally:
        workload.stop_flag.set()
        workload.join(timeout=60)
    if workload.error is not None:
        print(f"  postgresql: workload failed: {workload.error}")
        return False
    began = time.monotonic()
    if e2e.start_run(config, log).wait(timeout=1800) != 0:
        print(f"  postgresql: catch-up run failed; see {log}")
        return False
    events = e2e.bronze_events(warehouse)
    seqs = [e["seq"] for e in events]
    state, source = e2e.replay(events), e2e.source_rows(dsn)
    differing = [t for t, rows in source.items()
                 if {str(k): v for k, v in state.get(t, {}).items()} != {str(k): v for k, v in rows.items()}]
    print(f"  postgresql: {len(events):,} events in bronze, catch-up {time.monotonic() - began:.0f}s, "
          f"duplicated seqs {len(seqs) - len(set(seqs))}, tables differing from the source: {differing or 'none'}")
    drop_slot_and_publication(dsn, "pgconn_e2e", "pgconn_e2e")
    return not differing and len(seqs) == len(set(seqs))


def soak_mariadb(minutes: float, seed: int, work: Path) -> bool:
    from urllib.parse import urlparse

    import pymysql

    from tests.support import mysql_e2e as e2e

    url = urlparse(os.environ["LAKECDC_MARIADB_URL"])
    params = {"host": url.hostname or "127.0.0.1", "port": url.port or 3306, "user": url.username or "root",
              "password": url.password or ""}
    db = "mysqlconn_soak"
    conn = pymysql.connect(**params, autocommit=True)
    e2e.prepare(conn, db, 50_000)
    warehouse, journal = work / "mariadb_wh", work / "journal.txt"
    steps = int(minutes * 60 * 100)  # about 100 statements a second: the workload lasts the whole run
    workload = e2e.Workload(params, db, steps, seed=seed, pause=0.008)
    args = [sys.executable, e2e.__file__, str(warehouse), json.dumps(params), db, str(journal)]
    rng = random.Random(seed)
    kills, deadline = 0, time.monotonic() + minutes * 60
    workload.start()
    while time.monotonic() < deadline or workload.is_alive():
        proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(5, 40))
        if proc.poll() is None:
            proc.kill()
            kills += 1
        proc.wait()
        print(f"  mariadb: {kills} kills, workload {'running' if workload.is_alive() else 'done'}", flush=True)
        if time.monotonic() > deadline + 600:
            break
    workload.join(60)
    if workload.error is not None:
        print(f"  mariadb: workload failed: {workload.error}")
        return False
    done = subprocess.run(args + ["--until-caught-up"], capture_output=True, text=True, timeout=1800)
    if done.returncode != 0:
        print(f"  mariadb: catch-up run failed: {done.stderr[-2000:]}")
        return False
    try:
        landed = e2e.assert_bronze_equals_source(warehouse, conn, db)
    except AssertionError as exc:
        print(f"  mariadb: bronze differs from the source: {str(exc)[:2000]}")
        return False
    print(f"  mariadb: bronze equals the source ({landed:,} events compared)")
    return True


def soak_silver(minutes: float, seeds: list[int], scale: float, only: str | None, work: Path) -> bool:
    """Issue 17's scenario, case after case: the given seeds, then the next ones until `minutes` have passed."""
    from urllib.parse import urlparse

    from tests.support.e2e_workload import MariaSide, PostgresSide, Scenario, Sizes

    url = urlparse(os.environ["LAKECDC_MARIADB_URL"])
    params = {"host": url.hostname or "127.0.0.1", "port": url.port or 3306, "user": url.username or "root",
              "password": url.password or ""}
    dialects = [d for d in ("postgresql", "mariadb") if only in (None, d)]
    deadline, ok, case = time.monotonic() + minutes * 60, True, 0
    queue = list(seeds)
    while queue:
        seed = queue.pop(0)
        for dialect in dialects:
            case += 1
            side = PostgresSide(os.environ["LAKECDC_PG_DSN"]) if dialect == "postgresql" else MariaSide(params)
            (work / f"case{case}").mkdir()
            result = Scenario(side, seed, work / f"case{case}", Sizes().scaled(scale),
                              log=lambda line: print(line, flush=True)).run()
            print(result.report(), flush=True)
            ok &= not result.mismatches
        if not queue and time.monotonic() < deadline:
            queue.append(seed + 1)
    return ok


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--minutes", type=float, default=10.0, help="workload and kill phase per source")
    ap.add_argument("--only", choices=["postgresql", "mariadb"])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--silver", action="store_true", help="issue 17's randomized scenario, silver compared exactly")
    ap.add_argument("--seeds", default="1", help="with --silver: comma-separated seeds run first")
    ap.add_argument("--scale", type=float, default=4.0, help="with --silver: sizes of the make-test cases times this")
    args = ap.parse_args()
    for var in ("LAKECDC_PG_DSN", "LAKECDC_MARIADB_URL"):
        if var not in os.environ:
            print(f"soak: {var} is not set; run through `make soak` (it starts the services)")
            return 2
    ok = True
    with tempfile.TemporaryDirectory(prefix="lakecdc_soak_") as tmp:
        if args.silver:
            ok = soak_silver(args.minutes, [int(s) for s in args.seeds.split(",")], args.scale, args.only, Path(tmp))
            print("soak --silver: PASS" if ok else "soak --silver: FAIL")
            return 0 if ok else 1
        if args.only in (None, "postgresql"):
            print(f"postgresql: {args.minutes:g} minutes")
            (Path(tmp) / "pg").mkdir()
            ok &= soak_postgres(args.minutes, args.seed, Path(tmp) / "pg")
        if args.only in (None, "mariadb"):
            print(f"mariadb: {args.minutes:g} minutes")
            (Path(tmp) / "maria").mkdir()
            ok &= soak_mariadb(args.minutes, args.seed, Path(tmp) / "maria")
    print("soak: PASS" if ok else "soak: FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
