"""`lakecdc doctor`: check that the engine starts, the warehouse is writable, dbt parses the project and
every configured source passes the checks `run` makes before reading (its connector's check()). One
readable line per check; under a source's line, its properties that differ from their defaults."""

from __future__ import annotations

import socket
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from ingest.config import ProjectConfig, SourceSettings
from ingest.delta_log import misread_decimal_columns
from ingest.engine import check_warehouse_writable, find_warehouse_tables, start_engine
from ingest.errors import LakecdcError


@dataclass(frozen=True)
class CheckResult:
    name: str
    ok: bool
    detail: str
    properties: str = ""   # a source's: what it sets (source_properties)


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


def check_warehouse_tables(config: ProjectConfig) -> str:
    """Tables whose decimal statistics the embedded engine misreads (ingest.delta_log.misread_decimal_columns)."""
    tables = find_warehouse_tables(config.engine.warehouse)
    misread = [f"{schema}.{table} ({', '.join(columns)})" for schema, table, location in tables
               if (columns := misread_decimal_columns(location))]
    if misread:
        raise LakecdcError(
            f"{len(misread)} table(s) hold decimal statistics that the embedded engine reads back rounded: "
            f"{'; '.join(misread[:5])}{' ...' if len(misread) > 5 else ''}. They were written by an earlier "
            "lakecdc; rebuild them once: `lakecdc dbt build --full-refresh` (docs/engine.md)")
    return f"{len(tables)} Delta tables, none with misread decimal statistics"


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


def check_source(source: SourceSettings, base_dir: Path) -> str:
    """The checks `run` makes before it reads anything (the connector's own check(): properties, then the
    server's prerequisites, with the same words), preceded by a TCP connect for a plain "unreachable"."""
    from ingest.connectors import registry

    connector = registry.create(source, base_dir=base_dir)   # invalid properties: the same ConfigError as run
    try:
        props = source.properties
        port = next((spec for spec in registry.property_fields(source.connector) if spec.name == "database.port"),
                    None)   # a connector with a server declares its port (and its default)
        if port is not None:
            host = str(props.get("database.hostname", "localhost"))
            _tcp(host, int(props.get("database.port") or port.default or 0))
        return connector.check()
    finally:
        connector.close()


def source_properties(source: SourceSettings) -> str:
    """The properties of a source that differ from their declared defaults, as the connector reads them
    (current names, older values translated; passwords hidden), and those given that have no effect.
    Empty when the properties are invalid: the source's check names the problems."""
    from ingest.connectors import registry

    try:
        parsed = registry.property_fields(source.connector).parse(source.properties, source.connector)
    except LakecdcError:
        return ""
    text = ", ".join(f"{name}={value}" for name, value in parsed.non_defaults()) or "all defaults"
    return text + (f"; ignored: {', '.join(parsed.ignored)}" if parsed.ignored else "")


def run_doctor(config: ProjectConfig) -> list[CheckResult]:
    base_dir = config.path.resolve().parent if config.path else Path.cwd()
    results = []
    if config.engine.warehouse_on_this_machine:
        results.append(_check("warehouse", lambda: check_warehouse(config)))
    if config.engine.warehouse_on_this_machine and config.engine.misreads_decimal_statistics:
        results.append(_check("warehouse tables", lambda: check_warehouse_tables(config)))
    results.append(_check("engine", lambda: check_engine(config)))
    if results[-1].ok:
        results.append(_check("dbt", lambda: check_dbt_parse(config)))
    for source in config.sources.values():
        result = _check(f"source {source.name}", lambda s=source: check_source(s, base_dir))
        results.append(replace(result, properties=source_properties(source)))
    return results
