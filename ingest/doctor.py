"""`lakecdc doctor`: check that the engine starts, the warehouse is writable, dbt parses the project and
every configured source database is reachable. One readable line per check."""

from __future__ import annotations

import socket
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ingest.config import ProjectConfig, SourceSettings
from ingest.engine import check_warehouse_writable, start_engine
from ingest.errors import LakecdcError


@dataclass(frozen=True)
class CheckResult:
    name: str
    ok: bool
    detail: str


def _check(name: str, fn: Callable[[], str]) -> CheckResult:
    try:
        return CheckResult(name, True, fn())
    except LakecdcError as exc:
        return CheckResult(name, False, str(exc))
    except Exception as exc:  # a doctor reports, it does not crash
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        return CheckResult(name, False, f"{type(exc).__name__}: {first[:300]}")


def check_engine(config: ProjectConfig) -> str:
    began = time.perf_counter()
    engine = start_engine(config.engine)
    engine.spark.sql("SELECT 1").collect()
    return f"{config.engine.profile} engine answered in {time.perf_counter() - began:.2f}s"


def check_warehouse(config: ProjectConfig) -> str:
    check_warehouse_writable(config.engine.warehouse)
    return f"{config.engine.warehouse} is writable"


def check_dbt_parse(config: ProjectConfig) -> str:
    from ingest.dbt_runner import find_project_dir, run_dbt

    if find_project_dir() is None:
        raise LakecdcError("no dbt_project.yml in this folder or above")
    code = run_dbt(config, ["--quiet", "parse"])
    if code != 0:
        raise LakecdcError(f"dbt parse failed (exit {code}); run `lakecdc dbt parse` to see why")
    return "dbt project parses"


def _tcp(host: str, port: int) -> None:
    try:
        with socket.create_connection((host, port), timeout=5):
            pass
    except OSError as exc:
        raise LakecdcError(f"{host}:{port} is unreachable: {exc.strerror or exc}") from None


def check_source(source: SourceSettings) -> str:
    """Reach the source: a real login for PostgreSQL and MySQL/MariaDB, a TCP connect otherwise."""
    props = source.properties
    if source.connector == "debezium-json":
        path = Path(str(props.get("path", "")))
        if not path.exists():
            raise LakecdcError(f"input path {path} does not exist")
        return f"input path {path} exists"
    host = str(props.get("database.hostname", "localhost"))
    default_ports = {"postgresql": 5432, "mysql": 3306, "mariadb": 3306, "sqlserver": 1433, "oracle": 1521,
                     "mongodb": 27017}
    port = int(props.get("database.port", default_ports.get(source.connector, 0)))
    user = props.get("database.user")
    password = props.get("database.password")
    _tcp(host, port)
    if source.connector == "postgresql":
        import psycopg2

        try:
            psycopg2.connect(host=host, port=port, user=user, password=password,
                             dbname=props.get("database.dbname", "postgres"), connect_timeout=5).close()
        except psycopg2.Error as exc:
            raise LakecdcError(f"PostgreSQL login failed: {str(exc).strip().splitlines()[0]}") from None
        return f"PostgreSQL at {host}:{port} accepts the login"
    if source.connector in ("mysql", "mariadb"):
        import pymysql

        try:
            pymysql.connect(host=host, port=port, user=user, password=password or "", connect_timeout=5).close()
        except pymysql.MySQLError as exc:
            raise LakecdcError(f"{source.connector} login failed: {exc.args[-1] if exc.args else exc}") from None
        return f"{source.connector} at {host}:{port} accepts the login"
    return f"{source.connector} at {host}:{port} accepts TCP connections (login not checked)"


def run_doctor(config: ProjectConfig) -> list[CheckResult]:
    results = []
    if config.engine.profile in ("local", "spark"):
        results.append(_check("warehouse", lambda: check_warehouse(config)))
    results.append(_check("engine", lambda: check_engine(config)))
    if results[-1].ok:
        results.append(_check("dbt", lambda: check_dbt_parse(config)))
    for source in config.sources.values():
        results.append(_check(f"source {source.name}", lambda s=source: check_source(s)))
    return results
