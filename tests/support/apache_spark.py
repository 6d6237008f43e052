"""Apache Spark as the second engine of the engine-differential lane (issue 21, docs/engine.md).

A Spark Connect server in local mode, started from pyspark's own jars (no download), with an in-memory catalog
and no Delta (Delta's jars come only from Maven). The lane hands it the Parquet files of the current version
of each Delta table (bronze, and the embedded engine's silver for comparing), runs the same dbt models on it
with `lakecdc_table_format: parquet`, and compares every table with the embedded engine's value for value.

Its session time zone is not UTC on purpose: silver must not depend on the session's zone.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterable
from decimal import Decimal
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import pyspark

SESSION_TIME_ZONE = "America/New_York"
STARTED = "Spark Connect server started"
LANE_VARS = {"lakecdc_table_format": "parquet", "lakecdc_engine": "spark", "lakecdc_managed_tables": True}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class ApacheSpark:
    """One Spark Connect server (a JVM child process) and a client session on it."""

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        workdir.mkdir(parents=True, exist_ok=True)
        self.port = _free_port()
        self.url = f"sc://127.0.0.1:{self.port}"
        home = Path(pyspark.__file__).parent
        env = {k: v for k, v in os.environ.items() if not k.startswith(("SPARK_", "PYSPARK_"))}
        env["SPARK_HOME"] = str(home)
        self.log = workdir / "spark-connect.log"
        conf = {
            "spark.connect.grpc.binding.address": "127.0.0.1",
            "spark.connect.grpc.binding.port": str(self.port),
            "spark.sql.catalogImplementation": "in-memory",
            "spark.sql.warehouse.dir": str(workdir / "spark-warehouse"),
            "spark.sql.session.timeZone": SESSION_TIME_ZONE,
            "spark.sql.sources.partitionColumnTypeInference.enabled": "false",  # table_id stays a string
            "spark.ui.enabled": "false",
            "spark.sql.shuffle.partitions": "2",
            "spark.driver.memory": "2g",
        }
        args = [str(home / "bin" / "spark-submit"), "--master", "local[2]",
                "--class", "org.apache.spark.sql.connect.service.SparkConnectServer"]
        for key, value in conf.items():
            args += ["--conf", f"{key}={value}"]
        with self.log.open("wb") as out:
            self.process = subprocess.Popen([*args, "spark-internal"], stdout=out, stderr=subprocess.STDOUT,
                                            env=env, cwd=workdir, start_new_session=True)
        self._wait_started()
        self._spark = None

    @property
    def spark(self):
        """A client session on this server. It never becomes pyspark's default or active session: the engine
        under test and dbt-spark (`getOrCreate()`) in this process must keep theirs."""
        if self._spark is None:
            from pyspark.sql.connect.session import SparkSession

            default, active = SparkSession._default_session, getattr(SparkSession._active_session, "session", None)
            self._spark = SparkSession.builder.remote(self.url).create()
            SparkSession._default_session, SparkSession._active_session.session = default, active
        return self._spark

    def _wait_started(self, limit: float = 600) -> None:
        deadline = time.monotonic() + limit  # a generous bound: a busy machine is slow, not wrong
        while time.monotonic() < deadline:
            if STARTED in self.log.read_text(errors="replace"):
                return
            if self.process.poll() is not None:
                break
            time.sleep(0.2)
        self.stop()
        raise AssertionError(f"Apache Spark Connect server did not start:\n{self.log.read_text()[-4000:]}")

    def stop(self) -> None:
        if getattr(self, "_spark", None) is not None:  # before the server: pyspark's exit hook talks to it
            self._spark.stop()
            self._spark = None
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def reset(self) -> None:
        """Drop every schema but default (each test starts from an empty catalog)."""
        for row in self.spark.sql("show databases").collect():
            if row[0] != "default":
                self.spark.sql(f"drop database `{row[0]}` cascade")

    # -- Delta tables handed over as Parquet ------------------------------------------------------------------

    def hand_over(self, delta_path: Path, table: str) -> None:
        """Register the Parquet files of the current version of the Delta table at `delta_path` as `table`
        (schema.name): hard links in a folder of their own, the partition folders kept."""
        from deltalake import DeltaTable

        schema = table.split(".")[0]
        target = self.workdir / "handed" / table
        shutil.rmtree(target, ignore_errors=True)
        # the log's paths are URL-encoded and relative to the table (Hive-style partition folders)
        files = [unquote(path) for path in DeltaTable(str(delta_path)).get_add_actions().column("path").to_pylist()]
        for rel in files:
            dest = target / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            os.link(delta_path / rel, dest)
        self.spark.sql(f"create schema if not exists `{schema}`")
        self.spark.sql(f"drop table if exists {table}")
        if files:
            self.spark.sql(f"create table {table} using parquet location '{target}'")
            if any("=" in rel.split("/")[0] for rel in files):
                # a partitioned table lists only the partitions its catalog knows: none yet
                self.spark.sql(f"alter table {table} recover partitions")
        else:  # an empty table has no files to take the schema from
            sail_schema = _delta_schema_ddl(delta_path)
            self.spark.sql(f"create table {table} ({sail_schema}) using parquet location '{target}'")

    def hand_over_schema(self, warehouse: Path, schema: str, as_schema: str | None = None) -> list[str]:
        """Every Delta table in <warehouse>/<schema>, as <as_schema>.<name>; returns the names."""
        names = []
        for path in sorted((warehouse / schema).iterdir()) if (warehouse / schema).is_dir() else []:
            if (path / "_delta_log").is_dir():
                self.hand_over(path, f"{as_schema or schema}.{path.name}")
                names.append(path.name)
        return names

    # -- dbt on Apache Spark ----------------------------------------------------------------------------------

    def dbt(self, project: Path, *args: str, extra_vars: dict[str, Any] | None = None) -> str:
        """`dbt <args>` in a fresh process against this server, the lane's vars set; raises with its output."""
        dbt = Path(sys.executable).parent / "dbt"
        env = {k: v for k, v in os.environ.items() if not k.startswith(("SPARK_", "PYSPARK_"))}
        env["SPARK_REMOTE"] = self.url
        env.setdefault("LAKECDC_WAREHOUSE", str(self.workdir / "spark-warehouse"))
        result = subprocess.run(
            [str(dbt), *args, "--project-dir", str(project), "--profiles-dir", str(project),
             "--target-path", str(project / "target-spark"), "--log-path", str(project / "logs-spark"),
             "--vars", json.dumps({**LANE_VARS, **(extra_vars or {})})],
            cwd=project, env=env, capture_output=True, text=True, timeout=1800)
        output = result.stdout + result.stderr
        assert result.returncode == 0, f"dbt {' '.join(args)} on Apache Spark failed:\n{output[-8000:]}"
        return output


def _delta_schema_ddl(delta_path: Path) -> str:
    from deltalake import DeltaTable

    fields = json.loads(DeltaTable(str(delta_path)).schema().to_json())["fields"]
    names = {"long": "bigint", "integer": "int", "short": "smallint", "byte": "tinyint"}
    out = []
    for f in fields:
        t = f["type"]
        if not isinstance(t, str):
            raise AssertionError(f"empty Delta table {delta_path} with a nested column {f['name']}: not handled")
        out.append(f"`{f['name']}` {names.get(t, t)}")
    return ", ".join(out)


# -- comparison -------------------------------------------------------------------------------------------------

def canonical(value: Any) -> Any:
    """An exact, hashable, orderable form: floats by their bits (NaN as one value, -0.0 apart from 0.0)."""
    if isinstance(value, float):
        return ("f", "nan" if math.isnan(value) else value.hex())
    if isinstance(value, Decimal):
        return ("d", str(value))
    if isinstance(value, bytes | bytearray | memoryview):
        return ("b", bytes(value).hex())
    if isinstance(value, dict):
        return ("m", tuple(sorted((repr(canonical(k)), repr(canonical(v))) for k, v in value.items())))
    if isinstance(value, list | tuple):
        if hasattr(value, "asDict"):  # a struct Row
            return ("s", tuple((k, canonical(v)) for k, v in value.asDict(recursive=False).items()))
        return ("l", tuple(canonical(v) for v in value))
    if value is None:
        return ("n",)
    return (type(value).__name__, value)


def _comparable(field) -> str:
    """A column as Python can hold it exactly: instants and dates as numbers (year 1 in a western session time
    zone is year 0, which Python's datetime refuses), nested values holding them as JSON text."""
    name = "`" + field.name.replace("`", "``") + "`"
    kind = field.dataType.simpleString()
    if kind == "timestamp":
        return f"unix_micros({name})"
    if kind == "timestamp_ntz":
        return f"unix_micros(to_utc_timestamp({name}, 'UTC'))"
    if kind == "date":
        return f"unix_date({name})"
    if ("timestamp" in kind or "date" in kind) and kind.startswith(("array", "struct", "map")):
        return f"to_json({name})"
    return name


def _rows(spark, table: str, order: list[str]) -> list[tuple]:
    fields = {f.name.lower(): f for f in spark.table(table).schema.fields}
    select = ", ".join(_comparable(fields[name.lower()]) for name in order)
    rows = [tuple(canonical(v) for v in row) for row in spark.sql(f"select {select} from {table}").collect()]
    return sorted(rows, key=repr)


def table_differences(spark, left: str, right: str, limit: int = 10) -> list[str]:
    """Where table `left` differs from `right` (column names and types, then rows, as multisets)."""
    ls, rs = spark.table(left).schema, spark.table(right).schema
    # by name: schema evolution appends a new column to an existing table, a full build puts it in source order
    lcols = sorted((f.name.lower(), f.dataType.simpleString()) for f in ls.fields)
    rcols = sorted((f.name.lower(), f.dataType.simpleString()) for f in rs.fields)
    if lcols != rcols:
        return [f"columns differ: {left} {lcols} != {right} {rcols}"]
    order = [f.name for f in ls.fields]
    lrows, rrows = _rows(spark, left, order), _rows(spark, right, order)
    lcols = [(n.lower(), "") for n in order]
    if lrows == rrows:
        return []
    names = [c for c, _ in lcols]
    only_left = _multiset_minus(lrows, rrows)
    only_right = _multiset_minus(rrows, lrows)
    out = [f"{left} vs {right}: {len(lrows)} and {len(rrows)} rows, {len(only_left)} and {len(only_right)} unmatched"]
    # rows that differ in some columns only, paired by their first column (the key of most tables)
    by_first = {row[0]: row for row in only_right}
    paired = [(row, by_first[row[0]]) for row in only_left if row[0] in by_first]
    if len(paired) == len(only_left) == len(only_right) == len(by_first):
        for lrow, rrow in paired[:limit]:
            cols = [f"{n}: {_show(a)} != {_show(b)}" for n, a, b in zip(names, lrow, rrow, strict=True) if a != b]
            out.append(f"  {names[0]}={_show(lrow[0])}: " + "; ".join(cols))
        return out
    for side, rows in ((left, only_left), (right, only_right)):
        for row in rows[:limit]:
            out.append(f"  only in {side}: " + ", ".join(f"{n}={_show(v)}" for n, v in zip(names, row, strict=True)))
    return out


def _multiset_minus(a: list[tuple], b: list[tuple]) -> list[tuple]:
    from collections import Counter

    rest = Counter(a) - Counter(b)
    return sorted(rest.elements(), key=repr)


def _show(value: Any) -> str:
    return repr(value)[:160]


def assert_same_tables(spark, pairs: Iterable[tuple[str, str]]) -> int:
    """Every (left, right) pair of tables equal; returns how many rows were compared."""
    problems, compared = [], 0
    for left, right in pairs:
        diff = table_differences(spark, left, right)
        if diff:
            problems.append("\n".join(diff))
        compared += spark.table(left).count()
    assert not problems, "engines differ:\n" + "\n".join(problems)
    return compared
