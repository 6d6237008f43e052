"""Suite files and project settings: parsing, validation through great-expectations, one-line errors,
and the name/enum helpers the default-suite generator relies on."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from ingest.errors import ConfigError
from ingest.quality.discover import SourceTable, enum_values, match_source_table, table_kind
from ingest.quality.plan import selected
from ingest.quality.suites import ExpectationSpec, SuiteSpec, load_settings, load_suites, save_suite

pytestmark = pytest.mark.unit


def _write(path: Path, data: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(data) if not isinstance(data, str) else data)
    return path


def test_suite_file_round_trip_and_gx_objects(tmp_path: Path):
    suite = SuiteSpec(name="silver.orders", table="silver.orders", kind="current", key=["id"], source="shop",
                      table_id="shop.public.orders", expectations=[
                          ExpectationSpec("expect_column_values_to_be_unique", {"column": "id"}, "fail"),
                          ExpectationSpec("expect_column_values_to_be_in_set",
                                          {"column": "state", "value_set": ["new", "paid"]}, "warn")])
    save_suite(suite, tmp_path / "silver" / "orders.yml")
    (loaded,) = load_suites(tmp_path)
    assert loaded.to_yaml() == suite.to_yaml()
    gx_obj = loaded.expectations[1].to_gx()
    assert type(gx_obj).__name__ == "ExpectColumnValuesToBeInSet"
    assert gx_obj.severity.value == "warning" and gx_obj.meta["severity"] == "warn"
    assert loaded.expectations[0].to_gx().severity.value == "critical"


@pytest.mark.parametrize(("expectation", "needle"), [
    ({"type": "expect_nothing_at_all", "kwargs": {}}, "invalid expectation expect_nothing_at_all"),
    ({"type": "expect_column_values_to_be_in_set", "kwargs": {"column": "x"}}, "value_set"),
    ({"type": "expect_column_values_to_be_unique", "kwargs": {"column": "x"}, "severity": "panic"},
     "severity must be warn or fail"),
    ({"type": "expect_column_values_to_be_unique", "kwargs": {"column": "x"}, "level": 1}, "unknown key(s) level"),
])
def test_bad_expectations_are_one_line_errors(tmp_path: Path, expectation: dict, needle: str):
    _write(tmp_path / "silver" / "t.yml", {"table": "silver.t", "expectations": [expectation]})
    with pytest.raises(ConfigError) as err:
        load_suites(tmp_path)
    message = str(err.value)
    assert needle in message and "\n" not in message and "t.yml expectation 1" in message


def test_duplicate_suite_names_and_bad_kind(tmp_path: Path):
    _write(tmp_path / "a" / "t.yml", {"suite": "s", "table": "silver.t", "expectations": []})
    _write(tmp_path / "b" / "t.yml", {"suite": "s", "table": "silver.u", "expectations": []})
    with pytest.raises(ConfigError, match="also defined in"):
        load_suites(tmp_path)
    _write(tmp_path / "b" / "t.yml", {"table": "silver.u", "kind": "scd7"})
    with pytest.raises(ConfigError, match="kind must be one of current, history, table"):
        load_suites(tmp_path)


def test_settings_merge_over_defaults_and_reject_unknown(tmp_path: Path):
    assert load_settings(tmp_path)["checks"]["rejects"] == {"enabled": True, "severity": "fail", "max_count": 0}
    _write(tmp_path / "project.yml", {"report": {"directory": "out/q"}, "checks": {"freshness": {"severity": "fail"}}})
    settings = load_settings(tmp_path)
    assert settings["report"] == {"directory": "out/q", "history_runs": 50, "sample_rows": 20}
    assert settings["checks"]["freshness"] == {"enabled": True, "severity": "fail", "max_age_seconds": 86400}
    assert load_suites(tmp_path) == []  # the project file is not a suite
    _write(tmp_path / "project.yml", {"checks": {"freshnes": {}}})
    with pytest.raises(ConfigError, match="unknown setting 'freshnes'"):
        load_settings(tmp_path)
    _write(tmp_path / "project.yml", {"checks": {"lag": {"severity": "error"}}})
    with pytest.raises(ConfigError, match="checks.lag.severity must be warn or fail"):
        load_settings(tmp_path)


def test_enum_domains_and_table_matching():
    assert enum_values("enum('a','it''s','b c')") == ["a", "it's", "b c"]
    assert enum_values("ENUM('x')") == ["x"]
    assert enum_values("set('a','b')") is None and enum_values("varchar(10)") is None and enum_values(None) is None
    customers = SourceTable("inventory", "inventory.public.customers", ["id"], [])
    orders = SourceTable("shop", "shop.orders", ["order_id"], [])
    candidates = [customers, orders]
    assert match_source_table("inventory_customers", candidates) is customers
    assert match_source_table("customers_history", candidates) is customers
    assert match_source_table("public_customers", candidates) is customers
    assert match_source_table("shop_orders", candidates) is orders
    assert match_source_table("invoices", candidates) is None
    # ambiguous: two sources with a `customers` table and an unprefixed silver name
    assert match_source_table("customers", [customers, SourceTable("crm", "crm.customers", ["id"], [])]) is None


def test_table_kind_and_select_patterns():
    assert table_kind(["id", "_seq", "_op"]) == "current"
    assert table_kind(["id", "valid_from", "valid_to", "is_current", "_seq"]) == "history"
    assert table_kind(["status", "n"]) == "table"
    assert selected("silver.customers", ["silver.*"]) and selected("silver.customers", ["customers"])
    assert selected("cdc.inventory", ["cdc.*"]) and not selected("silver.customers", ["gold.*", "cdc.*"])
    assert selected("anything", None)


def test_shipped_project_file_documents_the_defaults():
    from ingest.quality.suites import DEFAULT_SETTINGS

    shipped = Path(__file__).resolve().parents[2] / "expectations"
    assert load_settings(shipped) == DEFAULT_SETTINGS


def test_key_json_paths():
    from ingest.quality.cdc import json_path

    assert json_path("id") == "$.id" and json_path("_k2") == "$._k2"
    assert json_path("odd.name") == "$['odd.name']" and json_path("Order Id") == "$['Order Id']"
