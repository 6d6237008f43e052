"""`lakecdc quality` on real Delta tables through the engine: a clean lakehouse passes, and each seeded
defect fails exactly the expectation that guards against it, with the offending rows in the report. Each
scenario also runs on Apache Spark (the engine-differential lane, tests/support/apache_spark.py) with the same
outcomes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from ingest.config import EngineSettings, ProjectConfig
from ingest.quality.api import run_quality
from ingest.quality.runner import Outcome, QualityRunResult
from tests.support.quality import config_for, create_table, seed_lakehouse, write_project

pytestmark = pytest.mark.integration

DEFECTS = ("duplicate_key", "placeholder", "stale_source", "parse_error", "rejects", "scd2_overlap",
           "reconciliation", "type_change")
WARNINGS = ("stale_source", "type_change")  # defects whose check is a warning by default


def failures(run: QualityRunResult) -> dict[tuple[str, str], Outcome]:
    return {(o.suite, o.description): o for s in run.suites for o in s.outcomes if not o.success}


def column_of(sample: dict, name: str) -> list:
    i = sample["columns"].index(name)
    return [row[i] for row in sample["rows"]]


@pytest.fixture(scope="module")
def lake(tmp_path_factory):
    """One engine for the module; every scenario uses its own schemas (bronze_x, silver_x, gold_x)."""
    from ingest.engine import start_engine

    warehouse = tmp_path_factory.mktemp("quality") / "warehouse"
    warehouse.mkdir()
    engine = start_engine(EngineSettings(profile="local", warehouse=warehouse), reuse=False)
    yield engine, warehouse
    engine.stop()


def without_age(observed: Any) -> Any:
    """Freshness's age_seconds is measured against the clock when the check runs: not compared."""
    if isinstance(observed, dict) and "age_seconds" in observed.get("columns", []):
        i = observed["columns"].index("age_seconds")
        return {**observed, "rows": [[*row[:i], None, *row[i + 1:]] for row in observed["rows"]]}
    return observed


def outcome_facts(result: QualityRunResult) -> dict[tuple, tuple]:
    """What a quality run found, per expectation: success, counts, observed value, error, offending rows."""
    facts = {}
    for suite in result.suites:
        for o in suite.outcomes:
            sample = None if o.sample is None else without_age(o.sample)
            sample = None if sample is None else (sample["columns"], sorted(map(repr, sample["rows"])))
            key = (o.suite, o.batch, o.type, json.dumps(o.kwargs, sort_keys=True, default=str))
            facts[key] = (o.success, o.element_count, o.unexpected_count, o.unexpected_percent,
                          repr(without_age(o.observed)), o.error, sample)
    return facts


def scenario(lake, tmp_path: Path, defect: str | None, apache_spark=None) -> tuple[QualityRunResult, Path]:
    """One seeded lakehouse checked on the embedded engine; with `apache_spark`, also checked there from the
    Parquet files of the same tables (the engine-differential lane): the same outcomes, counts and offending
    rows, or the test fails."""
    engine, warehouse = lake
    suffix = f"_{defect or 'clean'}"
    schemas = seed_lakehouse(engine.spark, warehouse, suffix, defect)
    exp_dir = tmp_path / "expectations"
    write_project(exp_dir, schemas)
    run = run_quality(config_for(warehouse), generate=True, output=tmp_path / "reports",
                      expectations_dir=exp_dir, spark=engine.spark)
    if apache_spark is not None:
        for schema in schemas.values():
            apache_spark.hand_over_schema(warehouse, schema)
        other = run_quality(config_for(warehouse), output=tmp_path / "reports-spark", expectations_dir=exp_dir,
                            spark=apache_spark.spark).result
        want, got = outcome_facts(run.result), outcome_facts(other)
        assert set(got) == set(want), f"expectations differ between the engines: {set(got) ^ set(want)}"
        diffs = [f"{k}: embedded {want[k]} != Apache Spark {got[k]}" for k in want if want[k] != got[k]]
        assert not diffs, "the engines' quality outcomes differ:\n" + "\n".join(diffs)
    return run.result, tmp_path / "reports"


@pytest.mark.slow
def test_clean_lakehouse_passes_and_suites_are_generated(lake, tmp_path: Path, apache_spark):
    result, reports = scenario(lake, tmp_path, None, apache_spark)
    assert failures(result) == {}
    assert result.exit_code == 0
    names = [s.name for s in result.suites]
    assert names == ["gold_clean.customers_by_status", "silver_clean.inv_customers",
                     "silver_clean.inv_customers_history", "cdc.inv"]
    # generated defaults: key from the schema history, enum domain, nullability, types
    suite = yaml.safe_load((tmp_path / "expectations/silver_clean/inv_customers.yml").read_text())
    assert suite["key"] == ["id"] and suite["kind"] == "current" and suite["table_id"] == "inv.public.customers"
    types = {(e["type"], json.dumps(e["kwargs"], sort_keys=True)) for e in suite["expectations"]}
    assert ("expect_column_values_to_be_unique", '{"column": "id"}') in types
    assert ("expect_column_values_to_be_in_set", '{"column": "status", "value_set": ["active", "closed"]}') in types
    assert ("expect_column_values_to_not_be_null", '{"column": "status"}') in types
    assert ("expect_column_values_to_be_of_type", '{"column": "name", "type_": "StringType"}') in types
    history = yaml.safe_load((tmp_path / "expectations/silver_clean/inv_customers_history.yml").read_text())
    assert history["kind"] == "history"
    assert {"type": "expect_compound_columns_to_be_unique", "kwargs": {"column_list": ["id", "valid_from"]},
            "severity": "fail"} in history["expectations"]
    # every CDC check ran and passed, with its observation
    outcomes = {o.description: o for s in result.suites for o in s.outcomes}
    recon = next(o for d, o in outcomes.items() if d.startswith("live keys in silver_clean.inv_customers"))
    assert recon.success and recon.observed["rows"] == [[3, 3]]
    summary = json.loads((reports / "summary.json").read_text())
    assert summary["status"] == "pass" and len(summary["suites"]) == 4


@pytest.mark.slow
@pytest.mark.parametrize("defect", DEFECTS)
def test_seeded_defect_fails_the_right_expectation(lake, tmp_path: Path, defect: str, apache_spark):
    result, reports = scenario(lake, tmp_path, defect, apache_spark)
    failed = failures(result)
    suite = {"duplicate_key": "silver_duplicate_key.inv_customers", "placeholder": "silver_placeholder.inv_customers",
             "scd2_overlap": "silver_scd2_overlap.inv_customers_history",
             "reconciliation": "silver_reconciliation.inv_customers"}.get(defect, "cdc.inv")
    assert {s for s, _ in failed} == {suite}, failed.keys()
    assert len(failed) == 1, [d for _, d in failed]
    outcome = next(iter(failed.values()))
    sample = outcome.sample
    assert sample and sample["rows"], outcome
    if defect == "duplicate_key":
        assert outcome.type == "expect_column_values_to_be_unique" and outcome.kwargs == {"column": "id"}
        assert column_of(sample, "id") == [2, 2] and sorted(column_of(sample, "_seq")) == ["0002", "0003"]
    elif defect == "placeholder":
        assert outcome.description.startswith("no Debezium placeholder values")
        assert column_of(sample, "id") == [4] and column_of(sample, "columns with a placeholder") == ["name,photo"]
        assert not [c for c in sample["columns"] if c.startswith("_lakecdc_")], sample["columns"]
    elif defect == "stale_source":
        assert "latest change at most 86400 s old" in outcome.description and outcome.severity == "warn"
        assert column_of(sample, "table_id") == ["inv.public.customers"]
        assert column_of(sample, "age_seconds")[0] > 3 * 86400 - 60
    elif defect == "parse_error":
        assert "parsed into the schema history" in outcome.description
        assert column_of(sample, "version") == [2]
        assert column_of(sample, "parse problem") == [
            "unsupported statement: ALTER TABLE customers FROBNICATE x"]
    elif defect == "rejects":
        assert outcome.type == "expect_table_row_count_to_be_between" and outcome.observed == 2
        assert sorted(column_of(sample, "error")) == [
            "cannot decode event 0: bad JSON", "cannot decode event 1: bad JSON"]
    elif defect == "scd2_overlap":
        assert outcome.description.startswith("SCD2 versions")
        assert column_of(sample, "id") == [1]
        assert column_of(sample, "history problem")[0].startswith("overlaps the next version starting 2024-01-05")
    elif defect == "type_change":
        assert "changed type in a way that converts stored values" in outcome.description
        assert outcome.severity == "warn" and outcome.observed == 1
        assert (column_of(sample, "column_name"), column_of(sample, "old_type"), column_of(sample, "new_type")) == (
            ["name"], ["varchar(255)"], ["integer"])
    elif defect == "reconciliation":
        assert outcome.type == "expect_column_pair_values_to_be_equal"
        assert outcome.observed["rows"] == [[3, 2]]
        assert column_of(sample, "id") == ["4"]
        assert column_of(sample, "problem") == ["live in bronze, missing in silver"]
    # severity decides the exit code: freshness and type changes are warnings by default, the rest fails the run
    assert result.exit_code == (0 if defect in WARNINGS else 1)
    page = (reports / "suites" / f"{suite}.html").read_text()
    assert "Offending rows" in page and "FAIL" in (reports / "index.html").read_text() or defect in WARNINGS


def test_user_edited_suite_and_history_retention(lake, tmp_path: Path):
    """A user adds an expectation lakecdc has no row filter for (the sample then comes from
    great-expectations' own unexpected values); history keeps only `history_runs` runs, in the report
    and in the GX store."""
    engine, warehouse = lake
    schemas = seed_lakehouse(engine.spark, warehouse, "_edited")
    exp_dir, reports = tmp_path / "expectations", tmp_path / "reports"
    write_project(exp_dir, schemas)
    (exp_dir / "project.yml").write_text(yaml.safe_dump({"schemas": schemas, "report": {"history_runs": 2}}))
    config = config_for(warehouse)
    run_quality(config, generate=True, output=reports, expectations_dir=exp_dir, spark=engine.spark)
    path = exp_dir / "silver_edited" / "inv_customers.yml"
    suite = yaml.safe_load(path.read_text())
    suite["expectations"].append({"type": "expect_column_value_lengths_to_be_between",
                                  "kwargs": {"column": "name", "max_value": 4}, "severity": "warn"})
    path.write_text(yaml.safe_dump(suite, sort_keys=False))
    (exp_dir / "silver_edited" / "gone.yml").write_text(yaml.safe_dump({"table": "silver_edited.gone", "expectations": [
        {"type": "expect_table_row_count_to_be_between", "kwargs": {"min_value": 1}, "severity": "warn"}]}))
    for _ in range(2):
        run = run_quality(config, output=reports, expectations_dir=exp_dir, spark=engine.spark)
    assert run.result.exit_code == 0  # warnings only
    gone = failures(run.result).pop(("silver_edited.gone", "table row count to be between (min_value=1)"))
    assert "gone" in gone.error and gone.severity == "warn"  # a missing table is a reported error
    (outcome,) = [o for o in failures(run.result).values() if o.suite != "silver_edited.gone"]
    assert outcome.type == "expect_column_value_lengths_to_be_between" and outcome.severity == "warn"
    assert outcome.unexpected_count == 2 and sorted(column_of(outcome.sample, "value")) == ["edsger", "grace"]
    history = [json.loads(line) for line in (reports / "history.jsonl").read_text().splitlines()]
    assert len(history) == 2 and history[-1]["run_id"] == run.result.run_id
    assert sorted(p.stem for p in (reports / "runs").glob("*.json")) == sorted(h["run_id"] for h in history)
    stored = {p.name for p in (reports / "_gx").rglob("lakecdc-*") if p.is_dir() and "validations" in p.parts}
    assert stored == {h["run_id"] for h in history}


def _pg_properties(dsn: str) -> dict:
    params = dict(p.split("=", 1) for p in dsn.split())
    return {"database.hostname": params.get("host", "127.0.0.1"), "database.port": int(params.get("port", 5432)),
            "database.user": params.get("user", "postgres"), "database.password": params.get("password", ""),
            "database.dbname": params.get("dbname", "postgres"), "topic.prefix": "pg"}


def test_source_values_compares_silver_with_the_source(lake, tmp_path: Path, pg_dsn: str):
    """The opt-in source_values check: a real PostgreSQL table against a silver table holding the same rows,
    except one value (a rewrite no change event carried) and one row; every other type compares equal."""
    import psycopg2

    from ingest.config import SourceSettings

    engine, warehouse = lake
    conn = psycopg2.connect(pg_dsn)
    conn.autocommit = True
    with conn.cursor() as cur:
        cur.execute("DROP SCHEMA IF EXISTS qsv CASCADE; CREATE SCHEMA qsv; CREATE TABLE qsv.items (id int PRIMARY KEY, "
                    "name varchar(20), qty integer, price numeric(10,2), ratio double precision, born date, "
                    "seen timestamptz, naive timestamp, raw bytea, doc jsonb, flag boolean, f4 real)")
        cur.execute("INSERT INTO qsv.items VALUES (1, 'ada', 5, 1.50, 0.1, '2024-02-29', '2024-01-01 10:00:00.5+02', "
                    "'2024-01-01 10:00:00.25', '\\xff00', '{\"b\": [1, 2], \"a\": null}', true, 0.1), "
                    "(2, 'grace', 4, NULL, 1e300, NULL, NULL, NULL, NULL, NULL, false, NULL), "
                    "(3, 'alan', 1, 2.00, -0.0, '1900-01-01', NULL, NULL, NULL, '[]', NULL, NULL)")
    conn.close()
    silver, bronze = "silver_sv", "bronze_sv"
    t = "postgres.qsv.items"
    create_table(engine.spark, warehouse, f"{silver}.pg__items",
                 "id INT, name STRING, qty INT, price DECIMAL(10,2), ratio DOUBLE, born DATE, seen TIMESTAMP, "
                 "naive TIMESTAMP, raw BINARY, doc STRING, flag BOOLEAN, f4 FLOAT, _op STRING, _seq STRING",
                 [(1, "ada", 5, ("sql", "1.50BD"), ("sql", "CAST(0.1 AS DOUBLE)"), ("sql", "DATE'2024-02-29'"),
                   ("sql", "timestamp_micros(1704096000500000)"), ("sql", "timestamp_micros(1704103200250000)"),
                   ("sql", "X'FF00'"), '{"a":null,"b":[1,2]}', True, ("sql", "CAST(0.1 AS FLOAT)"), "r", "0001"),
                  (2, "grace", 9, None, ("sql", "CAST('1e300' AS DOUBLE)"), None, None, None, None, None, False, None,
                   "r", "0002")])
    columns = json.dumps([{"name": "name", "source_type": "character varying(20)"},
                          {"name": "doc", "source_type": "jsonb"}])
    create_table(engine.spark, warehouse, f"{bronze}.pg_schema_history",
                 "table_id STRING, version INT, valid_from_seq STRING, change_kind STRING, columns STRING",
                 [(t, 1, "0001", "CREATE", columns)])
    exp_dir = tmp_path / "expectations"
    write_project(exp_dir, {"bronze": bronze, "silver": silver, "gold": "gold_sv"},
                  source_values={"enabled": True})
    (exp_dir / silver).mkdir()
    (exp_dir / silver / "pg__items.yml").write_text(yaml.safe_dump(
        {"suite": f"{silver}.pg__items", "table": f"{silver}.pg__items", "kind": "current", "key": ["id"],
         "source": "pg", "table_id": t, "expectations": []}))
    config = ProjectConfig(engine=EngineSettings(profile="local", warehouse=warehouse), path=None,
                           sources={"pg": SourceSettings("pg", "postgresql", _pg_properties(pg_dsn))})
    # a silver table without a key (a changelog): quality says it cannot check it per key
    create_table(engine.spark, warehouse, f"{silver}.pg__nokey_changelog", "v INT, _op STRING, _seq STRING",
                 [(1, "c", "0001")])
    run = run_quality(config, output=tmp_path / "reports", expectations_dir=exp_dir, spark=engine.spark)
    assert run.keyless == [f"{silver}.pg__nokey_changelog"]
    result = run.result
    failed = failures(result)
    assert len(failed) == 1, failed.keys()
    outcome = next(iter(failed.values()))
    assert outcome.description == f"{silver}.pg__items equals {t} in source pg, key by key and value by value"
    assert outcome.observed["rows"] == [[3, 2, "f4"]], outcome.observed  # compared, differing, not compared
    sample = outcome.sample
    assert sorted(zip(column_of(sample, "key"), column_of(sample, "column_name"), column_of(sample, "silver"),
                      column_of(sample, "source"), strict=True)) == [
        ("[2]", "qty", "9", "4"), ("[3]", "(row)", "'missing'", "'present'")]


def test_source_values_against_mariadb(lake, tmp_path: Path, mariadb_params: dict):
    """The same check over a MariaDB connection: DATETIME and TIMESTAMP as UTC instants, JSON parsed, TINYINT(1)
    as a number; one value differs."""
    import pymysql

    from ingest.config import SourceSettings

    engine, warehouse = lake
    conn = pymysql.connect(**mariadb_params, autocommit=True)
    with conn.cursor() as cur:
        for statement in ("DROP DATABASE IF EXISTS qsv", "CREATE DATABASE qsv",
                          "CREATE TABLE qsv.items (id INT PRIMARY KEY, name VARCHAR(20), price DECIMAL(10,2), "
                          "at DATETIME(3), ts TIMESTAMP(6) NULL, doc JSON, flag TINYINT(1))",
                          "SET time_zone = '+00:00'",
                          "INSERT INTO qsv.items VALUES (1, 'ada', 1.50, '2024-01-01 10:00:00.125', "
                          "'2024-01-01 10:00:00.000001', '{\"b\": 1, \"a\": [true]}', 1), "
                          "(2, 'grace', 2.00, NULL, NULL, NULL, 0)"):
            cur.execute(statement)
    conn.close()
    silver, bronze, t = "silver_svm", "bronze_svm", "qsv.items"
    create_table(engine.spark, warehouse, f"{silver}.my__items",
                 "id INT, name STRING, price DECIMAL(10,2), at TIMESTAMP, ts TIMESTAMP, doc STRING, flag SMALLINT, "
                 "_op STRING, _seq STRING",
                 [(1, "ada", ("sql", "1.50BD"), ("sql", "timestamp_micros(1704103200125000)"),
                   ("sql", "timestamp_micros(1704103200000001)"), '{"a":[true],"b":1}', 1, "r", "0001"),
                  (2, "grace", ("sql", "2.01BD"), None, None, None, 0, "r", "0002")])
    columns = json.dumps([{"name": "name", "source_type": "VARCHAR(20)"}, {"name": "doc", "source_type": "JSON"}])
    create_table(engine.spark, warehouse, f"{bronze}.my_schema_history",
                 "table_id STRING, version INT, valid_from_seq STRING, change_kind STRING, columns STRING",
                 [(t, 1, "0001", "CREATE", columns)])
    exp_dir = tmp_path / "expectations"
    write_project(exp_dir, {"bronze": bronze, "silver": silver, "gold": "gold_svm"}, source_values={"enabled": True})
    (exp_dir / silver).mkdir()
    (exp_dir / silver / "my__items.yml").write_text(yaml.safe_dump(
        {"suite": f"{silver}.my__items", "table": f"{silver}.my__items", "kind": "current", "key": ["id"],
         "source": "my", "table_id": t, "expectations": []}))
    properties = {"database.hostname": mariadb_params["host"], "database.port": mariadb_params["port"],
                  "database.user": mariadb_params["user"], "database.password": mariadb_params["password"],
                  "database.server.id": 4242, "topic.prefix": "my"}
    config = ProjectConfig(engine=EngineSettings(profile="local", warehouse=warehouse), path=None,
                           sources={"my": SourceSettings("my", "mariadb", properties)})
    result = run_quality(config, output=tmp_path / "reports", expectations_dir=exp_dir, spark=engine.spark).result
    (outcome,) = failures(result).values()
    assert outcome.observed["rows"] == [[2, 1, None]], outcome.observed
    assert list(zip(column_of(outcome.sample, "column_name"), column_of(outcome.sample, "silver"),
                    column_of(outcome.sample, "source"), strict=True)) == [("price", "Decimal('2.01')",
                                                                           "Decimal('2.00')")]
