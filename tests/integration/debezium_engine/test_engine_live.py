"""Live capture from SQL Server, Oracle and MongoDB, for wherever such a server runs (none runs where lakecdc is
developed: these tests have not been run there). Each needs a URL of a server it may change:

  LAKECDC_SQLSERVER_URL  sqlserver://USER:PASSWORD@HOST:PORT/DATABASE  (a login that may enable CDC; SQL Server
                         Agent running; an ODBC driver for SQL Server for pyodbc)
  LAKECDC_ORACLE_URL     oracle://USER:PASSWORD@HOST:PORT/SERVICE  (the connector user of Debezium's LogMiner
                         set-up, ARCHIVELOG and supplemental logging on; it creates table LAKECDC_LIVE)
  LAKECDC_MONGODB_URL    mongodb://USER:PASSWORD@HOST:PORT/?replicaSet=rs0  (a replica set)

Each creates a table (a collection), lets `lakecdc run` take the snapshot, changes rows, lets it stream, and
checks that bronze replayed in seq order equals the source, and that `lakecdc doctor` passes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from urllib.parse import unquote, urlparse

import pytest
import yaml

pytestmark = [pytest.mark.integration, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[3]


def _url(var: str, what: str) -> str:
    url = os.environ.get(var)
    if not url:
        pytest.skip(f"needs a live {what}: set {var} (see this module's docstring)")
    return url


def _lakecdc(config: Path, *args: str) -> str:
    result = subprocess.run([sys.executable, "-m", "ingest.cli", "--config", str(config), *args], cwd=ROOT,
                            capture_output=True, text=True, timeout=900, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert result.returncode == 0, result.stdout + result.stderr[-4000:]
    return result.stdout


def _capture(tmp_path: Path, connector: str, properties: dict, change: Callable[[], None]) -> dict[str, dict]:
    """Snapshot, `change()`, stream; bronze replayed in seq order as key JSON -> after image."""
    from deltalake import DeltaTable

    config = tmp_path / "lakecdc.yml"
    config.write_text(yaml.safe_dump({"engine": {"profile": "local", "warehouse": str(tmp_path / "warehouse")},
                                      "sources": {"live": {"connector": connector, **properties}}}))
    _lakecdc(config, "doctor")
    _lakecdc(config, "run", "--source", "live", "--until-caught-up", "--quiet")
    change()
    _lakecdc(config, "run", "--source", "live", "--until-caught-up", "--quiet")
    rows = DeltaTable(str(tmp_path / "warehouse" / "bronze" / "live_events")).to_pyarrow_table(
        columns=["seq", "op", "key", "value"]).to_pylist()
    state: dict[str, dict] = {}
    for row in sorted(rows, key=lambda r: r["seq"]):
        if row["op"] in ("r", "c", "u"):
            state[row["key"]] = json.loads(row["value"])["after"]
        elif row["op"] == "d":
            state.pop(row["key"], None)
    return state


def test_live_sqlserver(tmp_path: Path) -> None:
    import pyodbc

    u = urlparse(_url("LAKECDC_SQLSERVER_URL", "SQL Server"))
    database = u.path.strip("/")
    drivers = [d for d in pyodbc.drivers() if "SQL Server" in d]
    assert drivers, "no ODBC driver for SQL Server installed"
    conn = pyodbc.connect(f"DRIVER={{{drivers[-1]}}};SERVER={u.hostname},{u.port or 1433};DATABASE={database};"
                          f"UID={unquote(u.username)};PWD={unquote(u.password or '')};TrustServerCertificate=yes",
                          autocommit=True)
    cur = conn.cursor()
    cur.execute("IF OBJECT_ID('dbo.lakecdc_live') IS NOT NULL DROP TABLE dbo.lakecdc_live")
    cur.execute("IF (SELECT is_cdc_enabled FROM sys.databases WHERE name = DB_NAME()) = 0 EXEC sys.sp_cdc_enable_db")
    cur.execute("CREATE TABLE dbo.lakecdc_live (id int PRIMARY KEY, v nvarchar(50), n decimal(10, 2))")
    cur.execute("EXEC sys.sp_cdc_enable_table @source_schema = 'dbo', @source_name = 'lakecdc_live', "
                "@role_name = NULL, @supports_net_changes = 0")
    cur.execute("INSERT INTO dbo.lakecdc_live VALUES (1, 'a', 1.5), (2, 'b', 2.5), (3, 'c', 3.5)")

    def change() -> None:
        cur.execute("UPDATE dbo.lakecdc_live SET v = 'bb' WHERE id = 2")
        cur.execute("DELETE FROM dbo.lakecdc_live WHERE id = 3")
        cur.execute("INSERT INTO dbo.lakecdc_live VALUES (4, 'd', 4.5)")

    state = _capture(tmp_path, "sqlserver", {
        "database.hostname": u.hostname, "database.port": u.port or 1433, "database.user": unquote(u.username),
        "database.password": unquote(u.password or ""), "database.names": database, "topic.prefix": "live",
        "table.include.list": "dbo.lakecdc_live", "database.encrypt": False}, change)
    assert sorted((a["id"], a["v"]) for a in state.values()) == [(1, "a"), (2, "bb"), (4, "d")]


def test_live_oracle(tmp_path: Path) -> None:
    import oracledb

    u = urlparse(_url("LAKECDC_ORACLE_URL", "Oracle database"))
    service = u.path.strip("/")
    conn = oracledb.connect(user=unquote(u.username), password=unquote(u.password or ""),
                            dsn=f"{u.hostname}:{u.port or 1521}/{service}")
    conn.autocommit = True
    cur = conn.cursor()
    cur.execute("BEGIN EXECUTE IMMEDIATE 'DROP TABLE LAKECDC_LIVE'; EXCEPTION WHEN OTHERS THEN NULL; END;")
    cur.execute("CREATE TABLE LAKECDC_LIVE (ID NUMBER(9) PRIMARY KEY, V VARCHAR2(50))")
    cur.execute("ALTER TABLE LAKECDC_LIVE ADD SUPPLEMENTAL LOG DATA (ALL) COLUMNS")
    cur.executemany("INSERT INTO LAKECDC_LIVE VALUES (:1, :2)", [(1, "a"), (2, "b"), (3, "c")])
    owner = unquote(u.username).upper()

    def change() -> None:
        cur.execute("UPDATE LAKECDC_LIVE SET V = 'bb' WHERE ID = 2")
        cur.execute("DELETE FROM LAKECDC_LIVE WHERE ID = 3")
        cur.execute("INSERT INTO LAKECDC_LIVE VALUES (4, 'd')")

    state = _capture(tmp_path, "oracle", {
        "database.hostname": u.hostname, "database.port": u.port or 1521, "database.user": unquote(u.username),
        "database.password": unquote(u.password or ""), "database.dbname": service, "topic.prefix": "live",
        "table.include.list": f"{owner}.LAKECDC_LIVE"}, change)
    assert sorted((a["ID"], a["V"]) for a in state.values()) == [(1, "a"), (2, "bb"), (4, "d")]


def test_live_mongodb(tmp_path: Path) -> None:
    import pymongo

    url = _url("LAKECDC_MONGODB_URL", "MongoDB replica set")
    collection = pymongo.MongoClient(url)["lakecdc_live"]["docs"]
    collection.drop()
    collection.insert_many([{"_id": 1, "v": "a"}, {"_id": 2, "v": "b"}, {"_id": 3, "v": "c"}])

    def change() -> None:
        collection.update_one({"_id": 2}, {"$set": {"v": "bb"}})
        collection.delete_one({"_id": 3})
        collection.insert_one({"_id": 4, "v": "d"})

    state = _capture(tmp_path, "mongodb", {"mongodb.connection.string": url, "topic.prefix": "live",
                                           "collection.include.list": "lakecdc_live.docs"}, change)
    documents = [json.loads(after) for after in state.values()]   # `after`: the document, extended JSON text

    def number(value: object) -> int:   # relaxed (1) or canonical ({"$numberInt": "1"}) extended JSON
        return int(next(iter(value.values()))) if isinstance(value, dict) else int(value)

    assert sorted((number(d["_id"]), d["v"]) for d in documents) == [(1, "a"), (2, "bb"), (4, "d")]
