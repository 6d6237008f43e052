"""A fresh PostgreSQL database for a benchmark run (shared by the benches that need one)."""

from __future__ import annotations

import psycopg2


def dsn_for(dsn: str, db: str) -> str:
    """`dsn` (key=value form) pointed at database `db`."""
    return " ".join(p for p in dsn.split() if not p.startswith("dbname=")) + f" dbname={db}"


def fresh_database(dsn: str, db: str, slot: str) -> str:
    """Drop `db` (and the inactive replication slot `slot` of an earlier run), create it empty; returns its DSN."""
    admin = psycopg2.connect(dsn_for(dsn, "postgres"))
    admin.autocommit = True
    with admin.cursor() as cur:
        cur.execute("SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots "
                    "WHERE slot_name = %s AND NOT active", (slot,))
        cur.execute(f'DROP DATABASE IF EXISTS "{db}" WITH (FORCE)')
        cur.execute(f'CREATE DATABASE "{db}"')
    admin.close()
    return dsn_for(dsn, db)
