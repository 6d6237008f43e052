"""DDL interpreter throughput: statements/s over the MariaDB corpus, and a 10,000-table snapshot schema build
from SHOW CREATE TABLE text (target < 60 s). Run: .venv/bin/python bench/ddl.py

The long form of the random DDL oracle (tests/support/ddl_fuzz.py; needs the servers of `scripts/services.sh env`):
    .venv/bin/python bench/ddl.py --fuzz mariadb postgres --seeds 1 2 3 --statements 2000
prints the exact share of the accepted statements per dialect and seed (exit code 1 below 99.5%)."""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ingest.schema import SchemaState  # noqa: E402
from tests.support.schema_oracle import read_corpus  # noqa: E402

SHOW_CREATE = """CREATE TABLE `orders_{n}` (
  `id` bigint(20) unsigned NOT NULL AUTO_INCREMENT,
  `customer_id` int(11) NOT NULL,
  `status` enum('new','paid','shipped') NOT NULL DEFAULT 'new',
  `amount` decimal(12,2) NOT NULL DEFAULT 0.00,
  `note` varchar(255) DEFAULT NULL,
  `payload` longtext CHARACTER SET utf8mb4 COLLATE utf8mb4_bin DEFAULT NULL,
  `created_at` datetime(6) NOT NULL DEFAULT current_timestamp(6),
  `updated_at` timestamp NULL DEFAULT NULL ON UPDATE current_timestamp(),
  PRIMARY KEY (`id`),
  KEY `ix_customer` (`customer_id`)
) ENGINE=InnoDB AUTO_INCREMENT=1001 DEFAULT CHARSET=latin1 COLLATE=latin1_swedish_ci"""


def fuzz(dialects: list[str], seeds: list[int], statements: int, verbose: bool) -> bool:
    from tests.support.ddl_fuzz import run_fuzz
    from tests.support.schema_oracle import MariaOracle, PgOracle, mariadb_params_from_url

    ok = True
    database = f"ddl_fuzz_bench_{os.getpid()}"
    for dialect in dialects:
        for seed in seeds:
            if dialect == "mariadb":
                oracle = MariaOracle(mariadb_params_from_url(os.environ["LAKECDC_MARIADB_URL"]), database)
            else:
                oracle = PgOracle(os.environ["LAKECDC_PG_DSN"], database)
            start = time.perf_counter()
            try:
                result = run_fuzz(oracle, dialect, seed, statements)
            finally:
                oracle.close()
            text = result.report() if verbose else result.report().splitlines()[0]
            print(text, f"[{time.perf_counter() - start:.0f} s]", flush=True)
            ok = ok and result.exact_share >= 0.995
    return ok


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--fuzz", nargs="+", choices=["mariadb", "postgres"], help="run the random DDL oracle")
    parser.add_argument("--seeds", nargs="+", type=int, default=[1, 2, 3])
    parser.add_argument("--statements", type=int, default=2000, help="accepted statements per dialect and seed")
    parser.add_argument("-v", "--verbose", action="store_true", help="list every miss")
    args = parser.parse_args()
    if args.fuzz:
        sys.exit(0 if fuzz(args.fuzz, args.seeds, args.statements, args.verbose) else 1)
    statements = read_corpus("mariadb_handwritten.sql") + read_corpus("mariadb_type_matrix.sql")
    rounds = 5
    start = time.perf_counter()
    for _ in range(rounds):
        state = SchemaState(server_charset="latin1")
        for stmt in statements:
            state.apply(stmt, "mariadb", "bench")
    elapsed = time.perf_counter() - start
    print(f"corpus: {len(statements) * rounds} statements in {elapsed:.2f} s = "
          f"{len(statements) * rounds / elapsed:.0f} statements/s")

    state = SchemaState(server_charset="latin1")
    start = time.perf_counter()
    for n in range(10_000):
        state.apply(SHOW_CREATE.format(n=n), "mariadb", "snap")
    elapsed = time.perf_counter() - start
    print(f"snapshot: 10000 SHOW CREATE TABLE statements -> {len(state.tables)} tables in {elapsed:.1f} s "
          f"(target < 60 s)")


if __name__ == "__main__":
    main()
