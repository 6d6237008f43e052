"""`lakecdc doctor` tells the truth (issue 20, item 5): for every source it makes the checks `lakecdc run` makes
before reading anything, with the same words, on the real PostgreSQL and MariaDB. Before, doctor only tried a
login: invalid properties, a role without REPLICATION and the wrong connector for the server all said "ok",
and a debezium-json path relative to the configuration file was a false FAIL when run from another folder."""

from __future__ import annotations

from pathlib import Path

import psycopg2
import pytest
import yaml

from tests.conftest import run_lakecdc

ROLE = "lakecdc_doctor_nologin_repl"


@pytest.fixture()
def role_without_replication(pg_dsn: str):
    conn = psycopg2.connect(pg_dsn)
    conn.autocommit = True
    with conn.cursor() as cur:
        cur.execute(f"DROP ROLE IF EXISTS {ROLE}")
        cur.execute(f"CREATE ROLE {ROLE} LOGIN")   # no REPLICATION attribute
    yield ROLE
    with conn.cursor() as cur:
        cur.execute(f"DROP ROLE IF EXISTS {ROLE}")
    conn.close()


def _pg(pg_dsn: str) -> dict[str, str]:
    parts = dict(p.split("=", 1) for p in pg_dsn.split())
    return {"connector": "postgresql", "database.hostname": parts.get("host", "127.0.0.1"),
            "database.port": parts.get("port", "5432"), "database.user": parts.get("user", "postgres"),
            "database.dbname": parts.get("dbname", "postgres"), "slot.name": "lakecdc_doctor", "topic.prefix": "doc",
            "publication.name": "lakecdc_doctor"}


def _error_line(result) -> str:
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert result.returncode != 0 and lines, result.stdout + result.stderr
    return lines[-1]


def test_doctor_makes_the_checks_run_makes(tmp_path: Path, pg_dsn: str, mariadb_params: dict,
                                           role_without_replication: str) -> None:
    project = tmp_path / "project"
    (project / "inbox").mkdir(parents=True)
    maria = {"database.hostname": mariadb_params["host"], "database.port": str(mariadb_params["port"]),
             "database.user": mariadb_params["user"], "database.password": mariadb_params["password"],
             "database.server.id": "6401", "topic.prefix": "doc"}
    sources = {
        "good_pg": _pg(pg_dsn),
        "bad_property": {**_pg(pg_dsn), "snapshot.mode": "sometimes"},
        "no_replication": {**_pg(pg_dsn), "database.user": role_without_replication,
                           "database.password": "doctor-secret"},   # trust login: the password is not used
        "wrong_flavor": {"connector": "mysql", **maria},
        "files": {"connector": "debezium-json", "path": "inbox"},   # relative to lakecdc.yml's folder
    }
    config = project / "lakecdc.yml"
    config.write_text(yaml.safe_dump({"engine": {"warehouse": str(tmp_path / "warehouse")}, "sources": sources}))
    env = {"LAKECDC_CONFIG": str(config)}

    result = run_lakecdc("doctor", cwd=tmp_path, env=env)   # not the project folder
    lines = {line.split(":", 1)[0]: line for line in result.stdout.splitlines()}
    assert result.returncode == 1, result.stdout + result.stderr

    assert "wal_level=logical" in lines.get("ok   source good_pg", ""), result.stdout + result.stderr
    # under each source: what it sets, from the property declarations; never a password
    shown = result.stdout.splitlines()
    good = shown[shown.index(lines["ok   source good_pg"]) + 1]
    assert good.startswith("     properties: ") and "slot.name=lakecdc_doctor" in good, good
    assert "database.server.id=6401" in shown[shown.index(lines["FAIL source wrong_flavor"]) + 1]
    no_replication = shown[shown.index(lines["FAIL source no_replication"]) + 1]
    assert "database.password=(hidden)" in no_replication and "doctor-secret" not in result.stdout, no_replication
    assert "ok   source files" in lines, lines   # the path is found next to lakecdc.yml
    for name, words in [("bad_property", "snapshot.mode"), ("no_replication", "REPLICATION"),
                        ("wrong_flavor", "connector is 'mysql' but the server is mariadb")]:
        line = lines.get(f"FAIL source {name}")
        assert line is not None and words in line, (name, lines)
        # `run` refuses the same source with the same words
        refused = _error_line(run_lakecdc("run", "--source", name, "--until-caught-up", cwd=tmp_path, env=env))
        assert line.split(": ", 1)[1] in refused, (line, refused)
