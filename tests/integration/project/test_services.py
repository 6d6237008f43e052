"""The throwaway servers started by `make test` are fit for CDC."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.integration


def test_postgres_logical_replication_slot(pg_dsn: str):
    import psycopg2
    import psycopg2.extras

    conn = psycopg2.connect(pg_dsn)
    conn.autocommit = True
    with conn.cursor() as cur:
        cur.execute("SHOW wal_level")
        assert cur.fetchone()[0] == "logical"
    repl = psycopg2.connect(pg_dsn, connection_factory=psycopg2.extras.LogicalReplicationConnection)
    try:
        repl.cursor().create_replication_slot("lakecdc_services_check", output_plugin="pgoutput")
        with conn.cursor() as cur:
            cur.execute("SELECT plugin FROM pg_replication_slots WHERE slot_name = 'lakecdc_services_check'")
            assert cur.fetchone() == ("pgoutput",)
    finally:
        repl.close()
        with conn.cursor() as cur:
            cur.execute("SELECT pg_drop_replication_slot('lakecdc_services_check') FROM pg_replication_slots "
                        "WHERE slot_name = 'lakecdc_services_check'")
        conn.close()


def test_mariadb_binlog_is_row_based_with_full_metadata(mariadb_params: dict):
    import pymysql

    conn = pymysql.connect(**mariadb_params)
    try:
        with conn.cursor() as cur:
            cur.execute("SHOW GLOBAL VARIABLES WHERE Variable_name IN "
                        "('log_bin', 'binlog_format', 'binlog_row_image', 'binlog_row_metadata')")
            settings = dict(cur.fetchall())
            cur.execute("SELECT @@gtid_strict_mode")
            strict = cur.fetchone()[0]
    finally:
        conn.close()
    assert settings == {"log_bin": "ON", "binlog_format": "ROW", "binlog_row_image": "FULL",
                        "binlog_row_metadata": "FULL"}
    assert strict == 1
