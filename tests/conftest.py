"""Shared fixtures. Tests needing PostgreSQL or MariaDB fail (not skip) when CI is set and the
servers are missing; `make test` starts them through scripts/services.sh."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# The Debezium engine's converter (ConnectJson.java) checks each value it writes against Kafka Connect's
# JsonConverter in every test that runs the engine (in this process or in a `lakecdc run` it starts)
os.environ["LAKECDC_VERIFY_CONNECT_JSON"] = "1"


SERVICE_VARS = ("LAKECDC_PG_DSN", "LAKECDC_MARIADB_URL", "LAKECDC_MARIADB_DBZ_URL", "LAKECDC_KAFKA_BOOTSTRAP")


def pytest_configure(config: pytest.Config) -> None:
    """Parallel workers (pytest-xdist, `make test`) each get servers of their own: worker gwK uses service set K
    of scripts/services.sh (LAKECDC_SERVICE_SETS of them), so tests sharing database names, slots or topics never
    meet. Before collection, so that subprocesses and module-level reads see the worker's servers."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    if not worker.startswith("gw") or not os.environ.get("LAKECDC_PG_DSN"):
        return  # not a worker, or no servers at all (tests needing them fail or skip as without workers)
    k, sets = int(worker[2:]), int(os.environ.get("LAKECDC_SERVICE_SETS") or 1)
    if k >= sets:
        raise pytest.UsageError(f"worker {worker} has no servers of its own: start LAKECDC_SERVICE_SETS > {k} "
                                "sets (scripts/services.sh) or run fewer workers")
    if k == 0:
        return
    for var in SERVICE_VARS:
        value = os.environ.get(f"{var}_{k}")
        if value is None:
            raise pytest.UsageError(f"{var}_{k} is not set: run the tests through `make test` "
                                    f"(scripts/services.sh env with LAKECDC_SERVICE_SETS={sets})")
        os.environ[var] = value


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log):  # noqa: ANN001, ANN201 (pytest-xdist's types)
    """Parallel workers take whole test files, longest first (tests/support/scheduling.py)."""
    from tests.support.scheduling import make_scheduler

    return make_scheduler(config, log)


def _service_or_fail(var: str, what: str) -> str:
    value = os.environ.get(var)
    if value:
        return value
    message = f"{what} is not configured ({var} unset); run the tests through `make test`"
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


@pytest.fixture(scope="session")
def pg_dsn() -> str:
    return _service_or_fail("LAKECDC_PG_DSN", "PostgreSQL")


@pytest.fixture()
def db(pg_dsn: str, request: pytest.FixtureRequest):
    """PostgreSQL connector tests: a fresh schema pgconn_<test> in pgconn_test (tests.support.pg); slot and
    publication pgconn_<test> dropped after. Returns (dsn, name, schema)."""
    from tests.support.pg import drop_slot_and_publication, ensure_database, execute

    dsn = ensure_database(pg_dsn)
    name = request.node.name.replace("test_", "")[:40].lower()
    schema = f"pgconn_{name}"
    drop_slot_and_publication(dsn, f"pgconn_{name}", f"pgconn_{name}")
    execute(dsn, f"DROP SCHEMA IF EXISTS {schema} CASCADE", f"CREATE SCHEMA {schema}")
    yield dsn, name, schema
    drop_slot_and_publication(dsn, f"pgconn_{name}", f"pgconn_{name}")
    execute(dsn, f"DROP SCHEMA IF EXISTS {schema} CASCADE")


@pytest.fixture(scope="session")
def mariadb_url() -> str:
    return _service_or_fail("LAKECDC_MARIADB_URL", "MariaDB")


@pytest.fixture(scope="session")
def mariadb_dbz_url() -> str:
    """The second MariaDB, started as `5.7.19-MariaDB-log` so that Debezium's MySQL connector accepts it."""
    return _service_or_fail("LAKECDC_MARIADB_DBZ_URL", "the MariaDB for Debezium")


@pytest.fixture(scope="session")
def kafka_bootstrap() -> str:
    """The Kafka-protocol broker (tansu) scripts/services.sh starts: host:port."""
    return _service_or_fail("LAKECDC_KAFKA_BOOTSTRAP", "the Kafka broker (tansu)")


@pytest.fixture(scope="session")
def mariadb_params(mariadb_url: str) -> dict:
    """pymysql connect() keyword arguments from LAKECDC_MARIADB_URL (mysql://user:pw@host:port/)."""
    from urllib.parse import urlparse

    url = urlparse(mariadb_url)
    return {"host": url.hostname or "127.0.0.1", "port": url.port or 3306, "user": url.username or "root",
            "password": url.password or ""}


@pytest.fixture()
def warehouse(tmp_path: Path) -> Path:
    path = tmp_path / "warehouse"
    path.mkdir()
    return path


@pytest.fixture()
def engine_settings(warehouse: Path):
    from ingest.config import EngineSettings

    return EngineSettings(profile="local", warehouse=warehouse)


@pytest.fixture()
def engine(engine_settings):
    from ingest.engine import start_engine

    eng = start_engine(engine_settings, reuse=False)
    yield eng
    eng.stop()


def run_lakecdc(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None,
                timeout: float = 600) -> subprocess.CompletedProcess[str]:
    """Run the CLI in a fresh process, as a user would."""
    full_env = {**os.environ, **(env or {})}
    return subprocess.run([sys.executable, "-m", "ingest.cli", *args], cwd=cwd or ROOT, env=full_env,
                          capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="session")
def apache_spark(tmp_path_factory: pytest.TempPathFactory):
    """Apache Spark (pyspark's own jars, a Spark Connect server in local mode) for the engine-differential lane
    (tests/support/apache_spark.py); one JVM for the whole run, started when a test first asks for it."""
    from tests.support.apache_spark import ApacheSpark

    spark = ApacheSpark(tmp_path_factory.mktemp("apache-spark"))
    try:
        yield spark
    finally:
        spark.stop()


CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--window-size=1400,1000")


@pytest.fixture()
def browser(tmp_path: Path):
    """Headless Debian chromium through chromedriver (selenium), a 1400 x 1000 window, a fresh profile."""

    if not (Path(CHROMIUM).exists() and Path(CHROMEDRIVER).exists()):
        message = "chromium and chromium-driver are missing: `scripts/services.sh install` installs them"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in FLAGS:
        options.add_argument(flag)
    profile = tmp_path / "chromium-profile"  # a fresh profile: no state from earlier runs
    options.add_argument(f"--user-data-dir={profile}")
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(30)
    yield driver
    driver.quit()
    shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture()
def maria_project(tmp_path: Path, mariadb_params: dict):
    """The e2e MariaDB project (tests.support.e2e): database e2e_maria set up, a project made by `lakecdc init`."""
    from tests.support.e2e import MARIA_DB, MARIA_SOURCE, Project, maria_server_id, maria_setup

    maria_setup(mariadb_params)
    props = {"database.hostname": mariadb_params["host"], "database.port": mariadb_params["port"],
             "database.user": mariadb_params["user"], "database.password": mariadb_params["password"],
             "database.server.id": maria_server_id(), "topic.prefix": MARIA_SOURCE,
             "database.include.list": MARIA_DB}
    return Project(tmp_path, MARIA_SOURCE, "mariadb", props)


@pytest.fixture()
def pg_project(tmp_path: Path, pg_dsn: str):
    """The e2e PostgreSQL project (tests.support.e2e) and the dsn of its database; the slot is dropped after."""
    from tests.support.e2e import PG_SOURCE, Project, pg_drop_slot, pg_properties, pg_setup

    dsn = pg_setup(pg_dsn)
    try:
        yield Project(tmp_path, PG_SOURCE, "postgresql", pg_properties(pg_dsn)), dsn
    finally:
        pg_drop_slot(pg_dsn)
