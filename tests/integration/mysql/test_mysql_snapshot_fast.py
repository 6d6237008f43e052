"""The columnar snapshot path (ingest.connectors.mysql.snapshot_block) against the row path, on the real
MariaDB of `make test`: every type row of tests/unit/test_mysql_types.py and
tests/integration/mysql/test_mysql_live.py, in every handling mode, with NULLs, zero dates, awkward text and
every kind of primary key, must give byte-identical events (and the same batch boundaries); resuming after a
chunk must continue exactly; chunks too long for one GROUP_CONCAT are split, and a row too long even alone is
read by the row path. Databases: mysqlsnap_*."""

from __future__ import annotations

import itertools
import json
import os
import time

import pyarrow as pa
import pymysql
import pytest

from ingest.bronze.contract import BatchLimits, ResumeState
from ingest.config import SourceSettings
from ingest.connectors.mysql import MySqlConnector, snapshot

pytestmark = pytest.mark.integration
_ids = itertools.count(1)
DB = "mysqlsnap_fast"

# (column definition, SQL values of the rows; every column also gets a NULL row unless NOT NULL)
TYPES = [
    ("bo BOOLEAN", ["1", "0"]),
    ("b1 BIT(1)", ["b'1'", "b'0'"]),
    ("b10 BIT(10)", ["b'1000000101'", "b'0'"]),
    ("ti TINYINT(1)", ["1", "-128"]),
    ("tu TINYINT UNSIGNED", ["255", "0"]),
    ("si SMALLINT", ["-3", "32767"]),
    ("su SMALLINT UNSIGNED", ["65535", "1"]),
    ("mi MEDIUMINT", ["7", "-8388608"]),
    ("i INT", ["7", "-2147483648"]),
    ("iu INT UNSIGNED", ["4294967295", "0"]),
    ("iz INT(5) ZEROFILL", ["42", "123456"]),
    ("bi BIGINT", ["-9", "9223372036854775807"]),
    ("bu BIGINT UNSIGNED", ["18446744073709551615", "9223372036854775808"]),
    ("f FLOAT(10)", ["1.5", "-3.4e38"]),
    ("f30 FLOAT(30)", ["1.5", "0.1"]),
    ("f102 FLOAT(10,2)", ["1.5", "-12345.67"]),
    ("dd DOUBLE", ["2.25", "1e300"]),
    ("d1 DOUBLE", ["0.1", "-1.7976931348623157e308"]),
    ("d2 DOUBLE", ["1e16", "123456789.125"]),
    ("de DECIMAL(10,2)", ["12.34", "-0.01"]),
    ("de2 DECIMAL(18,4)", ["-99999999999999.9999", "0.0128"]),
    ("de3 DECIMAL(30,5)", ["-1234567890123456789012.12345", "0"]),
    ("de4 DECIMAL(5,0)", ["-128", "127"]),
    ("vc VARCHAR(40)", ["'héllo'", "'q\"uo\\\\te, comma\\nline\\ttab\\r\\0\\Z\x01€😀'"]),
    ("ch CHAR(3)", ["'abc'", "''"]),
    ("lt LONGTEXT", ["'t'", "REPEAT('x,\"', 300)"]),
    ("l1 VARCHAR(10) CHARACTER SET latin1", ["'café'", "'a\"b'"]),
    ("vb VARBINARY(8)", ["x'fbff'", "''"]),
    ("bl BLOB", ["x'0001'", "x'2c220a'"]),
    ("bn BINARY(3)", ["x'01'", "'abc'"]),
    ("js JSON", ["'{\"a\": 1}'", "'[\"x\\\\n\"]'"]),
    ("y YEAR", ["2024", "0"]),
    ("da DATE", ["'2018-06-20'", "'1969-12-31'"]),
    ("dz DATE", ["'0000-00-00'", "'0001-01-01'"]),
    ("dn DATE NOT NULL DEFAULT '2000-01-01'", ["'0000-00-00'", "'9999-12-31'"]),
    ("dt DATETIME", ["'2018-06-20 06:37:03'", "'0000-00-00 00:00:00'"]),
    ("dt3 DATETIME(3)", ["'2018-06-20 06:37:03.123'", "'1969-12-31 23:59:59.999'"]),
    ("dt6 DATETIME(6)", ["'2018-06-20 06:37:03.000005'", "'1969-12-31 23:59:59.999999'"]),
    ("dtn DATETIME NOT NULL DEFAULT '2000-01-01'", ["'0000-00-00 00:00:00'", "'1000-01-01 00:00:00'"]),
    ("tm TIME(3)", ["'10:15:30.123'", "'-838:59:59.000'"]),
    ("t0 TIME", ["'00:00:01'", "'-00:00:01'"]),
    ("ts TIMESTAMP NULL", ["'2018-06-20 13:37:03'", "'1970-01-01 00:00:01'"]),
    ("ts3 TIMESTAMP(3) NULL", ["'2018-06-20 13:37:03.120'", "'2038-01-19 03:14:07.999'"]),
    ("ts6 TIMESTAMP(6) NULL", ["'2018-06-20 13:37:03.120000'", "'0000-00-00 00:00:00'"]),
    ("tsn TIMESTAMP(2) NOT NULL DEFAULT '2000-01-01'", ["'0000-00-00 00:00:00'", "'2001-02-03 04:05:06.07'"]),
    ("e ENUM('a','b','it''s')", ["'b'", "'it''s'"]),
    ("s SET('x','y','z')", ["'z,x'", "''"]),
    ("pt POINT", ["ST_GeomFromText('POINT(1.5 -2)', 4326)", "ST_GeomFromText('POINT(0 0)')"]),
    ("pg POLYGON", ["ST_GeomFromText('POLYGON((0 0,1 0,1 1,0 0))')", "NULL"]),
    ("u UUID", ["'123e4567-e89b-12d3-a456-426614174000'", "NULL"]),
]
MODES = [
    {},
    {"decimal.handling.mode": "string", "bigint.unsigned.handling.mode": "precise", "binary.handling.mode": "hex",
     "time.precision.mode": "connect"},
    {"decimal.handling.mode": "double", "binary.handling.mode": "base64-url-safe", "time.precision.mode": "adaptive"},
    {"binary.handling.mode": "base64", "bigint.unsigned.handling.mode": "long"},
]
# (primary key definition, key columns, SQL values of 7 keys)
KEYS = [
    ("k INT", ["k"], [str(i) for i in (-5, 0, 1, 2, 10, 11, 2147483647)]),
    ("k BIGINT UNSIGNED", ["k"], ["0", "1", "9223372036854775807", "9223372036854775808", "18446744073709551613",
                                  "18446744073709551614", "18446744073709551615"]),
    ("k VARCHAR(20)", ["k"], ["''", "'a'", "'a\"b'", "'B'", "'c,d'", "'é'", "'z\\\\'"]),
    ("k VARCHAR(10), k2 INT", ["k", "k2"], [f"'{a}', {b}" for a, b in
                                             [("a", 1), ("a", 2), ("a", 3), ("b", -1), ("b", 0), ("c", 5), ("d", 0)]]),
    ("k DECIMAL(10,3)", ["k"], ["-1.5", "-0.001", "0", "0.5", "12.25", "100", "9999999.999"]),
    ("k DATE", ["k"], ["'0000-00-00'", "'1969-12-31'", "'1970-01-01'", "'2000-02-29'", "'2024-01-01'",
                       "'2024-01-02'", "'9999-12-31'"]),
    ("k DATETIME(3)", ["k"], ["'1969-12-31 23:59:59.999'", "'1970-01-01 00:00:00'", "'2024-01-01 00:00:00.500'",
                              "'2024-01-01 00:00:01'", "'2024-01-01 00:00:01.001'", "'2030-01-01 10:00:00'",
                              "'9999-12-31 23:59:59.999'"]),
    ("k VARBINARY(4)", ["k"], ["x''", "x'00'", "x'0001'", "x'2c'", "x'7f'", "x'80'", "x'ffff'"]),
    ("k TIME", ["k"], ["'-838:59:59'", "'-00:00:01'", "'00:00:00'", "'00:00:01'", "'24:00:00'", "'100:00:00'",
                       "'838:59:59'"]),
    ("k DOUBLE", ["k"], ["-1e300", "-0.5", "0", "0.1", "1e16", "123.456", "1.7976931348623157e308"]),
]


def server_id() -> int:
    return 300_000 + (os.getpid() % 50_000) * 10 + next(_ids) % 10


def run_sql(params, *statements, args=None):
    conn = pymysql.connect(**params, autocommit=True)
    try:
        with conn.cursor() as cur:
            for statement in statements:
                cur.execute(statement, args)
    finally:
        conn.close()


def connector(params, db, **props) -> MySqlConnector:
    properties = {"database.hostname": params["host"], "database.port": params["port"], "database.user": params["user"],
                  "database.password": params["password"], "database.server.id": server_id(), "topic.prefix": "fast",
                  "database.include.list": db, "snapshot.chunk.size": 3, "snapshot.mode": "initial_only", **props}
    return MySqlConnector(SourceSettings(name="src", connector="mariadb", properties=properties))


def rows_of(batch):
    return [(e.topic, e.table_id, e.op, e.seq, e.key, e.value, e.key_schema, e.value_schema, e.ts_ms,
             e.source_ts_ms, e.txn_id, e.snapshot, e.position) for e in batch.all_events()]


def normalized(rows):
    """Other tests write to the same server between two snapshots: the snapshot's binlog position P (in seq,
    source and position) is replaced by a placeholder; everything else is compared as is."""
    if not rows:
        return rows
    p = json.loads(rows[0][12])
    seq_p = rows[0][3][:-8]
    source_p = f'"file":"{p["file"]}","pos":{p["pos"]},'
    position_p = f'{{"file":"{p["file"]}","pos":{p["pos"]},"gtids":"{p["gtids"]}",'
    out = []
    for r in rows:
        assert r[3].startswith(seq_p) and source_p in r[5] and r[12].startswith(position_p)
        out.append((*r[:3], "P-" + r[3][len(seq_p):], r[4], r[5].replace(source_p, '"P":0,'), *r[6:12],
                    "{P," + r[12][len(position_p):]))
    return out


def snapshot_batches(params, db, columnar: bool, monkeypatch, resume=None, max_events=4, **props):
    """(event count of each batch, event rows); time frozen so both paths stamp the same ts_ms."""
    monkeypatch.setattr(snapshot.MySqlSnapshotSource, "columnar", columnar)
    monkeypatch.setattr(time, "time_ns", lambda: 1_700_000_000_123_456_789)
    c = connector(params, db, **props)
    try:
        batches = list(c.batches(resume or ResumeState(), BatchLimits(max_events=max_events, max_seconds=60)))
    finally:
        c.close()
        monkeypatch.undo()
    return [b.event_count for b in batches], normalized([r for b in batches for r in rows_of(b)]), batches


@pytest.fixture(scope="module")
def typed_db(mariadb_params):
    db = DB + "_types"
    columns = ", ".join(d for d, _ in TYPES)
    rows = []
    for r in range(2):
        rows.append("(" + ", ".join([str(r + 1)] + [v[r] for _, v in TYPES]) + ")")
    nulls = ["NULL" if "NOT NULL" not in d else "DEFAULT" for d, _ in TYPES]
    rows.append("(3, " + ", ".join(nulls) + ")")
    run_sql(mariadb_params, f"DROP DATABASE IF EXISTS {db}", f"CREATE DATABASE {db} CHARACTER SET utf8mb4",
            "SET SESSION sql_mode = ''",
            f"CREATE TABLE {db}.ty (id INT NOT NULL, {columns}, PRIMARY KEY (id))",
            f"INSERT INTO {db}.ty VALUES " + ", ".join(rows),
            f"CREATE TABLE {db}.nopk (a INT, b VARCHAR(5))", f"INSERT INTO {db}.nopk VALUES (1, 'x'), (NULL, NULL)")
    return db


@pytest.mark.parametrize("mode", MODES, ids=["default", "string-precise-hex-connect", "double-urlsafe-adaptive",
                                        "base64"])
def test_every_type_row_is_byte_identical(mariadb_params, typed_db, monkeypatch, mode):
    sizes_row, rows_row, _ = snapshot_batches(mariadb_params, typed_db, False, monkeypatch, **mode)
    sizes_col, rows_col, batches = snapshot_batches(mariadb_params, typed_db, True, monkeypatch, **mode)
    assert sum(len(b.blocks) for b in batches) > 0 and len(rows_row) == 5
    assert sizes_col == sizes_row
    for a, b in zip(rows_col, rows_row, strict=True):
        assert a == b
    typed = [r for r in rows_col if r[1].endswith(".ty")]
    after = json.loads(typed[0][5])["after"]
    assert len(after) == len(TYPES) + 1            # every column went through the comparison
    nulls = json.loads(typed[2][5])["after"]
    assert nulls["vc"] is None and nulls["dn"] == 10957 and nulls["bo"] is None and nulls["pt"] is None
    assert rows_col[-1][-1].endswith(',"snapshot_completed":true}')


def test_default_mode_values(mariadb_params, typed_db, monkeypatch):
    """A few payloads by value too, so both paths being wrong the same way would show."""
    _, rows, _ = snapshot_batches(mariadb_params, typed_db, True, monkeypatch)
    rows = [r for r in rows if r[1].endswith(".ty")]
    first = json.loads(rows[0][5])["after"]
    second = json.loads(rows[1][5])["after"]
    assert first["bu"] == -1 and first["iz"] == 42 and first["de"] == "BNI=" and second["de"] == "/w=="
    assert first["vc"] == "héllo" and second["vc"] == "q\"uo\\te, comma\nline\ttab\r\x00\x1a\x01€😀"
    # a snapshot TIMESTAMP is written in its shortest ISO form (.12, not .120), as Debezium writes it
    assert first["dt3"] == 1529476623123 and second["dt6"] == -1 and first["ts3"] == "2018-06-20T13:37:03.12Z"
    # a zero date in a NOT NULL column with a DEFAULT is that default, as Debezium writes it (tests/conformance)
    assert first["dz"] is None and second["dn"] == 2932896 and first["dn"] == 10957 and first["y"] == 2024
    assert first["d2"] == 1e16 and first["e"] == "b" and first["s"] == "x,z" and second["l1"] == 'a"b'


@pytest.mark.parametrize("key", KEYS, ids=[k[0].split(",")[0].replace(" ", "-") for k in KEYS])
def test_keys_chunks_and_resume(mariadb_params, monkeypatch, key):
    definition, names, values = key
    db = DB + "_keys"
    run_sql(mariadb_params, f"DROP DATABASE IF EXISTS {db}", f"CREATE DATABASE {db}",
            f"CREATE TABLE {db}.k ({definition}, v VARCHAR(5), PRIMARY KEY ({', '.join(names)}))",
            "SET SESSION sql_mode = ''",
            f"INSERT INTO {db}.k VALUES " + ", ".join(f"({v}, 'v{i}')" for i, v in enumerate(values)))
    sizes_row, rows_row, _ = snapshot_batches(mariadb_params, db, False, monkeypatch)
    sizes_col, rows_col, _ = snapshot_batches(mariadb_params, db, True, monkeypatch)
    assert len(rows_row) == 7 and sizes_col == sizes_row
    assert rows_col == rows_row
    # resume after the 4th event (mid-table, chunks of 3): the rest comes again, identical
    _, _, batches = snapshot_batches(mariadb_params, db, True, monkeypatch)
    fourth = [e for b in batches for e in b.all_events()][3]
    resume = ResumeState(fourth.seq, json.loads(fourth.position))
    _, rest_row, _ = snapshot_batches(mariadb_params, db, False, monkeypatch, resume=resume)
    _, rest_col, _ = snapshot_batches(mariadb_params, db, True, monkeypatch, resume=resume)
    assert rest_col == rest_row
    assert [r[4] for r in rest_col] == [r[4] for r in rows_row[4:]] and [r[3] for r in rest_col] == [
        r[3] for r in rows_row[4:]]


def test_table_without_key_and_batches_spanning_chunks(mariadb_params, typed_db, monkeypatch):
    _, rows_row, _ = snapshot_batches(mariadb_params, typed_db, False, monkeypatch, max_events=2)
    sizes, rows_col, batches = snapshot_batches(mariadb_params, typed_db, True, monkeypatch, max_events=2)
    assert sizes == [2, 2, 1] and rows_col == rows_row
    nopk = [r for r in rows_col if r[1].endswith(".nopk")]
    assert [r[4] for r in nopk] == [None, None] and len(batches[0].schema_changes) == 2


def test_long_chunks_are_split_and_a_huge_row_read_alone(mariadb_params, monkeypatch):
    """max_allowed_packet is 16 MiB on the test server: 3 rows of 3 MB (6 MB of HEX each) do not fit in one
    GROUP_CONCAT; a 9 MB row (18 MB of HEX) does not fit alone and goes through the row path."""
    db = DB + "_long"
    run_sql(mariadb_params, f"DROP DATABASE IF EXISTS {db}", f"CREATE DATABASE {db}",
            f"CREATE TABLE {db}.l (id INT NOT NULL, b LONGBLOB, PRIMARY KEY (id))")
    for i, size in enumerate((9_000_000, 3_000_000, 3_000_000, 3_000_000, 1), start=1):
        run_sql(mariadb_params, f"INSERT INTO {db}.l VALUES ({i}, REPEAT(x'{i:02x}', {size}))")
    sizes_row, rows_row, _ = snapshot_batches(mariadb_params, db, False, monkeypatch, max_events=100)
    sizes_col, rows_col, batches = snapshot_batches(mariadb_params, db, True, monkeypatch, max_events=100)
    assert rows_col == rows_row and sizes_col == sizes_row == [5]
    assert len(batches[0].events) == 1 and json.loads(batches[0].events[0].key) == {"id": 1}


def test_a_chunk_arrow_cannot_convert_is_read_by_the_row_path(mariadb_params, typed_db, monkeypatch):
    """A conversion error in a chunk (here: every DATE conversion) sends that chunk to the row path."""
    from ingest.connectors.mysql import snapshot_block

    _, rows_row, _ = snapshot_batches(mariadb_params, typed_db, False, monkeypatch)

    def refuse(_a):
        raise pa.ArrowInvalid("refused")

    monkeypatch.setattr(snapshot_block, "_days", refuse)
    sizes, rows_col, batches = snapshot_batches(mariadb_params, typed_db, True, monkeypatch)
    assert rows_col == rows_row
    assert sum(b.event_count for b in batches) == 5 and not any(b.blocks for b in batches)


def test_random_values_are_byte_identical(mariadb_params, monkeypatch):
    """Seeded random values over the vectorized conversions: float parsing and printing, DECIMAL sizes and
    signs (1 to 8 bytes), every control character, utf8mb4, dates and fractional seconds around the epoch."""
    import random

    rnd = random.Random(20261121)
    db = DB + "_random"
    rows = []
    for i in range(400):
        dbl = rnd.choice([rnd.uniform(-1, 1) * 10 ** rnd.randint(-30, 30), rnd.randint(-10**15, 10**15) / 7, 0.0])
        flt = round(rnd.uniform(-1e6, 1e6), rnd.randint(0, 4))
        dec = rnd.choice([0, 1, -1, 127, 128, -128, -129, 32767, 32768]) if i < 50 else rnd.randint(-10**18 + 1,
                                                                                                       10**18 - 1)
        dec_text = f"{'-' if dec < 0 else ''}{abs(dec) // 10**4}.{abs(dec) % 10**4:04d}"
        text = "".join(rnd.choice(["a", ",", '"', "\\", "é", "😀", "\n", chr(rnd.randint(0, 31)), " "])
                       for _ in range(rnd.randint(0, 12)))
        seconds = rnd.randint(-10**9, 2 * 10**9)
        micro = rnd.randint(0, 999_999)
        rows.append((i, dbl, flt, dec_text, text, seconds, micro))
    run_sql(mariadb_params, f"DROP DATABASE IF EXISTS {db}", f"CREATE DATABASE {db} CHARACTER SET utf8mb4",
            f"CREATE TABLE {db}.r (id INT NOT NULL, d DOUBLE, f FLOAT, de DECIMAL(18,4), s VARCHAR(40),"
            " dt DATETIME(6), dt3 DATETIME(3), da DATE, PRIMARY KEY (id))")
    conn = pymysql.connect(**mariadb_params, autocommit=True)
    try:
        with conn.cursor() as cur:
            cur.executemany(f"INSERT INTO {db}.r VALUES (%s, %s, %s, %s, %s, FROM_UNIXTIME(0) + INTERVAL %s SECOND "
                            "+ INTERVAL %s MICROSECOND, FROM_UNIXTIME(0) + INTERVAL %s SECOND, "
                            "FROM_UNIXTIME(0) + INTERVAL %s SECOND)",
                            [(i, d, f, de, s, sec, mic, sec, sec) for i, d, f, de, s, sec, mic in rows])
    finally:
        conn.close()
    for mode in MODES:
        _, rows_row, _ = snapshot_batches(mariadb_params, db, False, monkeypatch, max_events=1000,
                                          **{**mode, "snapshot.chunk.size": 64})
        _, rows_col, _ = snapshot_batches(mariadb_params, db, True, monkeypatch, max_events=1000,
                                          **{**mode, "snapshot.chunk.size": 64})
        assert len(rows_col) == 400 and rows_col == rows_row


@pytest.mark.parametrize("columnar", [True, False], ids=["columnar", "rows"])
def test_snapshot_progress(mariadb_params, columnar, monkeypatch):
    """The progress display's line as each table begins: table n of N, rows read of the server's estimate."""
    db = DB + "_progress"
    run_sql(mariadb_params, f"DROP DATABASE IF EXISTS {db}", f"CREATE DATABASE {db}",
            f"CREATE TABLE {db}.a (id INT PRIMARY KEY, v INT)", f"CREATE TABLE {db}.b (v INT)",
            f"INSERT INTO {db}.a VALUES " + ", ".join(f"({i}, {i})" for i in range(1, 41)),
            f"INSERT INTO {db}.b VALUES (1), (2), (3)", f"ANALYZE TABLE {db}.a, {db}.b")
    monkeypatch.setattr(snapshot.MySqlSnapshotSource, "columnar", columnar)
    c = connector(mariadb_params, db)
    lines: list[str] = []
    c.snapshot_table_hook = lambda table_id: lines.append(c.snapshot_progress.describe().split(", ETA")[0])
    try:
        events = sum(b.event_count for b in c.batches(ResumeState(), BatchLimits(max_events=16, max_seconds=60)))
    finally:
        c.close()
    assert events == 43
    assert lines == [f"snapshot table 1/2 {db}.a: 0 rows read of ~43 (0%)",
                     f"snapshot table 2/2 {db}.b: 40 rows read of ~43 (93%)"]
    assert c.snapshot_progress.finished and c.snapshot_progress.rows_read == 43
