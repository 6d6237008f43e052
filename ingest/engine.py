"""The Spark engine: one function, `start_engine`, returns a Spark Connect-compatible session for the
configured profile.

Profiles (see docs/engine.md):
  local       embedded Sail Spark Connect server in this process, Delta tables under the warehouse
  remote      any Spark Connect URL (a `lakecdc serve` endpoint, Spark 4 Connect, Databricks Connect)
  databricks  the active session inside a Databricks job (or Databricks Connect when installed)
  spark       classic local PySpark with delta-spark (optional extra; fetches Delta jars from Maven)

Sail keeps its catalog in memory per Spark Connect session, so on start the engine re-registers every
Delta table found at `<warehouse>/<schema>/<table>`, and all clients of one engine share one session id
(carried in the Spark Connect URL) so that they see the same catalog.
"""

from __future__ import annotations

import os
import signal
import socket
import tempfile
import threading
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlparse

from ingest.config import EngineSettings
from ingest.errors import EngineError
from ingest.sqlutil import qualified, quote_literal

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


@dataclass
class Engine:
    """A running engine: the session, the URL other clients (dbt) use to join it, and how to stop it."""

    settings: EngineSettings
    spark: SparkSession
    remote_url: str | None = None
    _server: Any = field(default=None, repr=False)

    def stop(self) -> None:
        try:
            if self.settings.runs_in_process:
                self.spark.stop()
        finally:
            if self._server is not None:
                self._server.stop()
                self._server = None
            global _current
            if _current is self:
                _current = None


_current: Engine | None = None


def start_engine(settings: EngineSettings, *, reuse: bool = True) -> Engine:
    """Start (or reuse, within this process) the engine for `settings`."""
    global _current
    if reuse and _current is not None and _current.settings == settings:
        return _current
    starter = {
        "local": _start_local,
        "remote": _start_remote,
        "databricks": _start_databricks,
        "spark": _start_classic,
    }[settings.profile]
    engine = starter(settings)
    if settings.should_register_tables:
        register_warehouse_tables(engine.spark, settings.warehouse, settings.catalog)
    _current = engine
    return engine


def check_warehouse_writable(warehouse: Path) -> None:
    try:
        warehouse.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=warehouse, prefix=".lakecdc-write-check-"):
            pass
    except OSError as exc:
        raise EngineError(f"warehouse {warehouse} is not writable: {exc.strerror or exc}") from None


def _session_url(host: str, port: int, session_id: str) -> str:
    return f"sc://{host}:{port}/;session_id={session_id}"


def start_sail_server(host: str, port: int) -> tuple[Any, str, int]:
    """Start a Sail Spark Connect server in this process; returns (server, host, port)."""
    # Sail logs every session at INFO otherwise; its actor's "aborting N task(s)" warning at every exit is
    # the normal end of a session, not a problem
    os.environ.setdefault("RUST_LOG", "warn,sail_common::actor=error")
    try:
        from pysail.spark import SparkConnectServer
    except ImportError as exc:  # pragma: no cover - declared dependency
        raise EngineError(f"the local profile needs pysail: {exc}") from None
    try:
        server = SparkConnectServer(host, port)
        server.start(background=True)
    except Exception as exc:
        raise EngineError(f"cannot start the local Spark Connect server on {host}:{port}: {exc}") from None
    bound_host, bound_port = server.listening_address
    return server, bound_host, bound_port


def _keep_sigint_for_python() -> None:
    """The embedded Sail server listens for Ctrl-C itself and shuts down at once, under its client: a run
    then hangs in pyspark's retries, `dbt build` fails after minutes. Python's SIGINT handler, set again
    once the server answers (its listener is registered by then), takes the signal back from it, so Ctrl-C
    reaches lakecdc's own handling (a run stops after the batch being written; dbt cancels), and the engine
    stops when the process ends. Only the main thread can set handlers; elsewhere nothing changes."""
    handler = signal.getsignal(signal.SIGINT)
    if handler is not None and threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, handler)


def _connect(url: str, *, loopback: bool = False) -> SparkSession:
    """The Spark Connect session for `url` (the process's default one, which dbt-spark joins). `loopback`: the
    server runs in this process, so the client's network resilience only costs: gRPC's response streams are
    read on the calling thread (grpc starts a thread per streaming call otherwise) and pyspark's reattachable
    execution (a resumable stream, released by extra calls from a thread pool) is off. Together they halve a
    small statement's client time (bench/engine.py), which every dbt node and bronze commit pays."""
    import grpc
    from pyspark.sql.connect.client import DefaultChannelBuilder
    from pyspark.sql.connect.session import SparkSession as ConnectSession

    options = [(grpc.experimental.ChannelOptions.SingleThreadedUnaryStream, 1)] if loopback else []
    # what SparkSession.builder.remote() sets: pyspark's functions take their Spark Connect forms
    os.environ["SPARK_CONNECT_MODE_ENABLED"] = "1"
    try:
        spark = ConnectSession.builder.channelBuilder(DefaultChannelBuilder(url, channelOptions=options)).getOrCreate()
        if loopback:
            spark.client.disable_reattachable_execute()
        spark.sql("SELECT 1").collect()
    except Exception as exc:
        raise EngineError(f"cannot reach Spark Connect at {_redact(url)}: {_first_line(exc)}") from None
    return spark


def _start_local(settings: EngineSettings) -> Engine:
    check_warehouse_writable(settings.warehouse)
    server, host, port = start_sail_server(settings.host, settings.port)
    url = _session_url(host, port, str(uuid.uuid4()))
    spark = _connect(url, loopback=True)
    _keep_sigint_for_python()
    _apply_conf(spark, settings.spark_conf)
    return Engine(settings=settings, spark=spark, remote_url=url, _server=server)


def _start_remote(settings: EngineSettings) -> Engine:
    url = settings.remote or ""
    parsed = urlparse(url.replace("sc://", "http://", 1).split(";")[0])
    host, port = parsed.hostname or "localhost", parsed.port or 15002
    try:
        with socket.create_connection((host, port), timeout=5):
            pass
    except OSError as exc:
        raise EngineError(f"remote engine {host}:{port} is unreachable: {exc.strerror or exc}") from None
    spark = _connect(url)
    _apply_conf(spark, settings.spark_conf)
    return Engine(settings=settings, spark=spark, remote_url=url)


def _start_databricks(settings: EngineSettings) -> Engine:
    from pyspark.sql import SparkSession

    spark = SparkSession.getActiveSession()
    if spark is None:
        try:
            from databricks.connect import DatabricksSession  # type: ignore[import-not-found]
        except ImportError:
            raise EngineError(
                "databricks profile: no active Spark session (not inside a Databricks job) and "
                "databricks-connect is not installed"
            ) from None
        spark = DatabricksSession.builder.getOrCreate()
    # Unity Catalog: two-level names (bronze.t, silver.t) resolve in this catalog, so every table is
    # <catalog>.<schema>.<table>. A job sets it through LAKECDC_CATALOG when lakecdc.yml names none.
    catalog = settings.catalog or os.environ.get("LAKECDC_CATALOG")
    if catalog:
        spark.sql(f"USE CATALOG {qualified(catalog)}")
    return Engine(settings=settings, spark=spark)


def _start_classic(settings: EngineSettings) -> Engine:
    check_warehouse_writable(settings.warehouse)
    try:
        from delta import configure_spark_with_delta_pip  # type: ignore[import-not-found]
        from pyspark.sql import SparkSession
    except ImportError:
        raise EngineError("spark profile needs the optional extra: pip install 'lakecdc[spark]'") from None
    builder = (
        SparkSession.builder.master("local[*]")
        .config("spark.sql.extensions", "io.delta.sql.DeltaSparkSessionExtension")
        .config("spark.sql.catalog.spark_catalog", "org.apache.spark.sql.delta.catalog.DeltaCatalog")
        .config("spark.sql.warehouse.dir", str(settings.warehouse))
    )
    for key, value in settings.spark_conf.items():
        builder = builder.config(key, value)
    try:
        spark = configure_spark_with_delta_pip(builder).getOrCreate()
    except Exception as exc:
        reason = _first_line(exc)
        raise EngineError(f"classic Spark with Delta did not start (it needs Maven Central): {reason}") from None
    return Engine(settings=settings, spark=spark)


def _apply_conf(spark: SparkSession, conf: dict[str, str]) -> None:
    for key, value in conf.items():
        spark.conf.set(key, value)


def find_warehouse_tables(warehouse: Path) -> list[tuple[str, str, Path]]:
    """(schema, table, location) for every Delta table at <warehouse>/<schema>/<table>."""
    found = []
    if not warehouse.is_dir():
        return found
    for schema_dir in sorted(p for p in warehouse.iterdir() if p.is_dir() and not p.name.startswith(".")):
        for table_dir in sorted(p for p in schema_dir.iterdir() if p.is_dir()):
            if (table_dir / "_delta_log").is_dir() and any((table_dir / "_delta_log").glob("*.json")):
                found.append((schema_dir.name, table_dir.name, table_dir.resolve()))
    return found


def register_warehouse_tables(spark: SparkSession, warehouse: Path, catalog: str | None = None) -> int:
    """Make every Delta table of the warehouse known to the session's catalog by name."""
    tables = find_warehouse_tables(warehouse)
    schemas = sorted({schema for schema, _, _ in tables})
    for schema in schemas:
        spark.sql(f"CREATE SCHEMA IF NOT EXISTS {qualified(catalog, schema)}")
    for schema, table, location in tables:
        spark.sql(
            f"CREATE TABLE IF NOT EXISTS {qualified(catalog, schema, table)} "
            f"USING delta LOCATION {quote_literal(str(location))}"
        )
    return len(tables)


def table_location(settings: EngineSettings, schema: str, table: str) -> Path:
    """The deterministic location of a table: <warehouse>/<schema>/<table>."""
    return settings.warehouse / schema / table


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:300] if text else type(exc).__name__


def _redact(url: str) -> str:
    """Hide tokens in a Spark Connect URL (`;token=...`) before it reaches a message."""
    parts = url.split(";")
    return ";".join([parts[0]] + [p if not p.lower().startswith("token=") else "token=***" for p in parts[1:]])
