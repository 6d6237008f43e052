"""`lakecdc generate` file rendering: one staging, current and history model per table plus YAML;
idempotent re-runs; files edited by hand are never overwritten."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from ingest.generate.catalog import CapturedColumn, CapturedTable, mongodb_table
from ingest.generate.mongodb import MongoEvent, infer_fields
from ingest.generate.render import WriteResult, is_unedited, render_source, write_files

pytestmark = pytest.mark.unit


def _tables() -> list[CapturedTable]:
    cols = [CapturedColumn("id", "INT"), CapturedColumn("name", "VARCHAR(255)")]
    return [CapturedTable("inventory", "inventory.public.customers", ["id"], cols),
            CapturedTable("inventory", "inventory.public.orders", ["id"], cols),
            CapturedTable("inventory", "inventory.other.orders", ["id"], cols)]


def test_renders_models_and_yaml(tmp_path: Path):
    files = render_source("inventory", _tables(), tmp_path)
    names = sorted(p.relative_to(tmp_path).as_posix() for p in files)
    assert "silver/inventory/inventory__customers.sql" in names
    assert "silver/inventory/inventory__customers_history.sql" in names
    assert "staging/inventory/stg_inventory__customers.sql" in names
    # two tables named orders in different schemas get the full id in their model name
    assert "silver/inventory/inventory__inventory_public_orders.sql" in names
    assert "silver/inventory/inventory__inventory_other_orders.sql" in names
    stg = files[tmp_path / "staging/inventory/stg_inventory__customers.sql"]
    assert "lakecdc.lakecdc_staging('inventory', 'inventory.public.customers')" in stg
    doc = yaml.safe_load(files[tmp_path / "silver/inventory/_inventory__models.yml"])
    current = next(m for m in doc["models"] if m["name"] == "inventory__customers")
    assert current["columns"][0] == {"name": "id", "description": "primary key column"}
    assert {"lakecdc.lakecdc_unique_current": {"arguments": {"keys": ["id"]}}} in current["data_tests"]
    history = next(m for m in doc["models"] if m["name"] == "inventory__customers_history")
    assert history["data_tests"] == [{"lakecdc.lakecdc_history_no_overlap": {"arguments": {"keys": ["id"]}}}]
    # plain YAML: the key list repeated in every model, no anchors (&id001) or aliases (issue 20 item 8)
    for path, text in files.items():
        if path.suffix == ".yml":
            assert "&id" not in text and "*id" not in text, path
    sources = yaml.safe_load(next(t for p, t in files.items() if p.name.endswith("_sources.yml")))
    events = sources["sources"][0]["tables"][0]
    assert events["config"]["loaded_at_field"] == "ingested_at" and events["config"]["freshness"]["error_after"]


def test_a_table_without_a_key_is_a_changelog(tmp_path: Path):
    table = CapturedTable("inventory", "inventory.public.log", [], [CapturedColumn("at", "TIMESTAMP"),
                                                                   CapturedColumn("what", "TEXT")])
    files = render_source("inventory", [table], tmp_path)
    names = sorted(p.relative_to(tmp_path).as_posix() for p in files)
    assert "silver/inventory/inventory__log_changelog.sql" in names
    assert "silver/inventory/inventory__log.sql" not in names and "silver/inventory/inventory__log_history.sql" \
        not in names
    sql = files[tmp_path / "silver/inventory/inventory__log_changelog.sql"]
    assert "select `at`, `what`, _op, _seq, _source_ts, _batch_id" in sql and "ref('stg_inventory__log')" in sql
    doc = yaml.safe_load(files[tmp_path / "silver/inventory/_inventory__models.yml"])
    assert [m["name"] for m in doc["models"]] == ["stg_inventory__log", "inventory__log_changelog"]


def test_rerun_is_idempotent_and_keeps_edits(tmp_path: Path):
    first = WriteResult([], [], [])
    write_files(render_source("inventory", _tables(), tmp_path), first)
    assert len(first.written) == 11 and not first.kept
    edited = tmp_path / "silver/inventory/inventory__customers.sql"
    edited.write_text(edited.read_text() + "-- my change\n")
    assert not is_unedited(edited.read_text())
    second = WriteResult([], [], [])
    write_files(render_source("inventory", _tables(), tmp_path), second)
    assert second.written == [] and second.kept == [edited] and len(second.unchanged) == 10
    assert edited.read_text().endswith("-- my change\n")
    # a generated, unedited file is refreshed when the catalog changes (a new column)
    tables = _tables()
    tables[0].columns.append(CapturedColumn("email", "TEXT"))
    third = WriteResult([], [], [])
    write_files(render_source("inventory", tables, tmp_path), third)
    assert third.written == [tmp_path / "silver/inventory/_inventory__models.yml"]
    assert "email" in third.written[0].read_text()


def test_a_mongodb_collection_carries_its_fields(tmp_path: Path):
    """The inferred fields and types go into the staging and both silver models (each builds its columns from
    them), in order; the YAML documents the columns and tests the documents against them."""
    fields = infer_fields([MongoEvent("1", json.dumps({"_id": 1, "name": "a", "tags": ["x"], "a b": 2}))])
    table = mongodb_table("mongo", "inventory.customers", fields)
    assert table.keys == ["_id"] and [c.name for c in table.columns] == ["_id", "_id_value", "name", "tags",
                                                                          "_document"]
    assert [c.spark_type for c in table.columns] == ["string", "int", "string", "string", "string"]
    assert table.notes == ["inventory.customers: the field 'a b' has no silver column (its name holds ' ', which a "
                           "silver column name cannot); it stays in _document"]
    files = render_source("mongo", [table], tmp_path)
    mapping = "[\n    ['_id', 'int'],\n    ['name', 'string'],\n    ['tags', 'json']]"
    stg = files[tmp_path / "staging/mongo/stg_mongo__customers.sql"]
    assert f"lakecdc.lakecdc_staging('mongo', 'inventory.customers', mongodb_fields={mapping}) }}}}" in stg
    for name in ("mongo__customers.sql", "mongo__customers_history.sql"):
        assert f"lakecdc_mongodb_fields={mapping}) }}}}" in files[tmp_path / "silver/mongo" / name]
    doc = yaml.safe_load(files[tmp_path / "silver/mongo/_mongo__models.yml"])
    current = next(m for m in doc["models"] if m["name"] == "mongo__customers")
    assert current["columns"][0]["name"] == "_id" and "data_tests" not in current["columns"][0]
    assert current["data_tests"] == [
        {"lakecdc.lakecdc_unique_current": {"arguments": {"keys": ["_id"]}}},
        {"lakecdc.lakecdc_mongodb_fields": {"arguments": {"ignored": ["a b"]}, "config": {"severity": "warn"}}}]
