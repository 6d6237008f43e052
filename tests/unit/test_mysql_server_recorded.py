"""MySQL-only paths on recorded server responses (Oracle's MySQL cannot run here): SHOW BINARY LOG STATUS
(8.4) with its fallback to SHOW MASTER STATUS (8.0), uuid:interval GTID sets, settings validation.
MariaDB GTID sets are exercised here too; the live MariaDB paths are in test_mysql_live.py."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pymysql
import pytest

from ingest.connectors.mysql import rowdecode, server
from ingest.connectors.mysql.gtid import MariaDbGtidSet, MySqlGtidSet, gtid_set
from ingest.errors import LakecdcError

pytestmark = pytest.mark.unit
RECORDED = Path(__file__).resolve().parents[1] / "recorded" / "mysql"


def recorded(name: str):
    responses = json.loads((RECORDED / name).read_text())
    asked: list[str] = []

    def query(sql: str):
        asked.append(sql)
        answer = responses[sql]
        if "error" in answer:
            raise pymysql.err.ProgrammingError(*answer["error"])
        return answer["rows"]

    return query, asked


def test_mysql84_binary_log_status_and_gtid_set():
    query, asked = recorded("mysql84_status.json")
    assert server.detect_flavor(query) == "mysql"
    pos = server.binlog_status(query, "mysql")
    assert (pos.file, pos.pos, pos.file_number) == ("mysql-bin.000003", 1573, 3)
    assert asked[-1] == "SHOW BINARY LOG STATUS"                # no fallback needed on 8.4
    gtids = MySqlGtidSet(pos.gtids)
    assert str(gtids) == ("3e11fa47-71ca-11e1-9e33-c80aa9429562:1-5,"
                          "4c0a1c66-71ca-11e1-9e33-c80aa9429562:1-3:7-9")
    assert server.binlog_files(query) == ["mysql-bin.000002", "mysql-bin.000003"]
    assert server.settings_problems(query, "mysql") == []


def test_mysql80_falls_back_to_show_master_status_and_reports_every_bad_setting():
    query, asked = recorded("mysql80_status.json")
    pos = server.binlog_status(query, "mysql")
    assert asked == ["SHOW BINARY LOG STATUS", "SHOW MASTER STATUS"]
    assert (pos.file, pos.pos, pos.gtids) == ("binlog.000012", 157, "")
    problems = server.settings_problems(query, "mysql")
    assert [p.split(" ")[0] for p in problems] == ["log_bin", "binlog_format", "binlog_row_image",
                                                   "binlog_row_metadata", "binlog_row_value_options", "gtid_mode"]
    with pytest.raises(LakecdcError, match="binlog_format is 'MIXED'"):
        server.validate_settings(query, "mysql")


def test_mysql_gtid_set_arithmetic():
    s = MySqlGtidSet("3E11FA47-71CA-11E1-9E33-C80AA9429562:1-5")
    s.add("3e11fa47-71ca-11e1-9e33-c80aa9429562:6")
    s.add("3e11fa47-71ca-11e1-9e33-c80aa9429562:9")
    assert str(s) == "3e11fa47-71ca-11e1-9e33-c80aa9429562:1-6:9"
    assert s.contains(MySqlGtidSet("3e11fa47-71ca-11e1-9e33-c80aa9429562:2-4"))
    assert not s.contains(MySqlGtidSet("3e11fa47-71ca-11e1-9e33-c80aa9429562:7"))
    with pytest.raises(LakecdcError):
        MySqlGtidSet("3e11fa47:abc")


@pytest.mark.parametrize("seed", range(20))
def test_mariadb_gtid_set_text_after_each_add_is_the_whole_sets(seed: int) -> None:
    """str() after add() formats only the entry that moves, between the text around it: after every add of a
    random run (one server mostly, sometimes another, a new domain, str() skipped) it equals the set's text
    built from scratch, sorted by domain and server. The hot path's add_numbers() (the GTID as its numbers) and
    add() (its text) are mixed."""
    rng = random.Random(seed)
    keys = [(rng.randrange(3), rng.randrange(1, 4)) for _ in range(rng.randrange(1, 5))]
    start = ",".join(f"{d}-{s}-{rng.randrange(100)}" for d, s in dict.fromkeys(keys))
    gtids = MariaDbGtidSet(start)
    seqs = dict(gtids.entries)
    moving = keys[0]
    for _ in range(300):
        if rng.random() < 0.1:
            moving = (rng.randrange(4), rng.randrange(1, 5))
        seqs[moving] = seqs.get(moving, 0) + rng.randrange(1, 3)
        if rng.random() < 0.5:
            gtids.add(f"{moving[0]}-{moving[1]}-{seqs[moving]}")
        else:
            gtids.add_numbers(moving[0], moving[1], seqs[moving])
        if rng.random() < 0.8:
            assert str(gtids) == ",".join(f"{d}-{s}-{n}" for (d, s), n in sorted(seqs.items()))


@pytest.mark.parametrize("encoding, compatible", [
    ("cp1252", True), ("cp1251", True), ("koi8-r", True), ("shift_jis", True), ("gbk", True), ("big5", True),
    ("euc_kr", True), ("utf-16", False), ("utf-16-be", False), ("utf-32", False), ("utf-7", False),
    ("iso2022_jp", False), ("cp037", False),
])
def test_row_decoder_reads_ascii_bytes_as_ascii_only_where_the_charset_agrees(encoding: str, compatible: bool) -> None:
    """The generated row reader decodes an all-ASCII string column value with the ASCII codec (C code) where
    every byte below 0x80 is that ASCII character in the column's charset; UTF-16/32 pair bytes, UTF-7's + and
    ISO-2022's ESC start sequences, EBCDIC (cp037) maps them elsewhere."""
    assert rowdecode._ascii_compatible(encoding) is compatible


def test_mariadb_gtid_set():
    s = MariaDbGtidSet("0-1-42,1-2-7")
    s.add("0-1-43")
    assert str(s) == "0-1-43,1-2-7"
    assert s.contains(MariaDbGtidSet("0-1-40")) and not s.contains(MariaDbGtidSet("1-2-8"))
    assert isinstance(gtid_set("mariadb", ""), MariaDbGtidSet) and isinstance(gtid_set("mysql", ""), MySqlGtidSet)
    with pytest.raises(LakecdcError):
        MariaDbGtidSet("0-1")
    s.add("1-2-8")   # the text is rebuilt after every add
    assert str(s) == "0-1-43,1-2-8"
    for bad in ("0-1", "0-1-x", "a-1-2", "0-1-2-3", "", "0--1-2"):
        with pytest.raises(LakecdcError, match="not a MariaDB GTID"):
            s.add(bad)
    assert str(s) == "0-1-43,1-2-8"


@pytest.mark.parametrize(("mode", "required", "verify", "hostname"), [
    ("preferred", False, "CERT_NONE", False),
    ("required", True, "CERT_NONE", False),
    ("verify_ca", True, "CERT_REQUIRED", False),
    ("verify_identity", True, "CERT_REQUIRED", True),
])
def test_database_ssl_mode_gives_the_connection_its_tls_context(mode, required, verify, hostname):
    """Each database.ssl.mode's TLS: one context per mode shared by every connection (pymysql builds a new default
    one, loading the system CA certificates, for each connection); preferred falls back to plain text, the others
    fail without TLS; verify_ca checks the certificate, verify_identity the host name too."""
    import ssl

    from ingest.connectors.mysql.properties import MySqlProperties

    def connection() -> server.MySqlConnection:
        props = MySqlProperties(flavor="mariadb", hostname="db.example", port=3306, user="u", password="p",
                                ssl_mode=mode)
        return server.MySqlConnection(**props.connect_kwargs(), defer_connect=True)

    first, second = connection(), connection()
    assert first.ssl and first.ctx is second.ctx is server.tls_context(mode)
    assert first._ssl_required is required
    assert first.ctx.verify_mode == getattr(ssl, verify) and first.ctx.check_hostname is hostname


def test_database_ssl_mode_disabled_turns_tls_off():
    from ingest.connectors.mysql.properties import MySqlProperties

    props = MySqlProperties(flavor="mariadb", hostname="db.example", port=3306, user="u", ssl_mode="disabled")
    conn = server.MySqlConnection(**props.connect_kwargs(), defer_connect=True)
    assert not conn.ssl and not hasattr(conn, "ctx")


def test_binlog_file_number():
    assert server.binlog_file_number("mariadb-bin.000123") == 123
    with pytest.raises(LakecdcError):
        server.binlog_file_number("nonumber")


# SHOW GRANTS FOR CURRENT_USER() lines as MariaDB 10.11 and MySQL 8 print them
@pytest.mark.parametrize(("flavor", "grants", "missing"), [
    ("mariadb", ["GRANT ALL PRIVILEGES ON *.* TO `root`@`localhost` WITH GRANT OPTION"], []),
    ("mariadb", ["GRANT SELECT, RELOAD, SHOW DATABASES, REPLICATION SLAVE, BINLOG MONITOR ON *.* TO `cdc`@`%`"], []),
    ("mariadb", ["GRANT SELECT, RELOAD ON *.* TO `cdc`@`%` IDENTIFIED BY PASSWORD '*AB'"],
     ["REPLICATION SLAVE", "BINLOG MONITOR"]),
    ("mariadb", ["GRANT SELECT, REPLICATION SLAVE ON *.* TO `cdc`@`%`",
                 "GRANT BINLOG MONITOR ON `inventory`.* TO `cdc`@`%`"], ["BINLOG MONITOR"]),   # not global
    ("mariadb", ["GRANT SUPER, REPLICATION REPLICA ON *.* TO `cdc`@`%`"], []),
    ("mariadb", ["GRANT SELECT ON *.* TO `cdc`@`%`", "GRANT `cdc_role` TO `cdc`@`%`"], []),   # role: not judged
    ("mysql", ["GRANT SELECT, RELOAD, SHOW DATABASES, REPLICATION SLAVE, REPLICATION CLIENT ON *.* TO `cdc`@`%`"],
     []),
    ("mysql", ["GRANT USAGE ON *.* TO `cdc`@`%`", "GRANT SELECT ON `inventory`.* TO `cdc`@`%`"],
     ["REPLICATION SLAVE", "REPLICATION CLIENT"]),
    ("mysql", ["GRANT REPLICATION SLAVE ON *.* TO `cdc`@`%`", "GRANT `reader`@`%` TO `cdc`@`%`"], []),
])
def test_missing_privileges_read_from_show_grants(flavor: str, grants: list[str], missing: list[str]) -> None:
    column = "Grants for cdc@%"

    def query(sql: str):
        assert sql == "SHOW GRANTS FOR CURRENT_USER()"
        return [{column: g} for g in grants]

    assert server.missing_privileges(query, flavor) == missing
    if missing:
        with pytest.raises(LakecdcError, match="cannot read the binary log: it lacks " + ", ".join(missing)):
            server.validate_privileges(query, flavor, "cdc")
