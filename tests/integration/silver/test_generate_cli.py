"""`lakecdc generate` as a user runs it: a fresh process, the engine re-registering the warehouse's bronze
tables, model files written once and left alone on the second run."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import run_lakecdc
from tests.support.silver import INT32, STRING, Bronze

pytestmark = pytest.mark.integration


def test_generate_cli_writes_models_once(engine, warehouse: Path, tmp_path: Path):
    cols = [("id", INT32), ("name", STRING)]
    bronze = Bronze(engine.spark, warehouse)
    bronze.land([bronze.event("shop.public.items", "c", {"id": 1}, None, {"id": 1, "name": "a"},
                              [("id", INT32)], cols)])
    engine.stop()
    (tmp_path / "lakecdc.yml").write_text("sources:\n  inv:\n    connector: postgresql\n")
    env = {"LAKECDC_WAREHOUSE": str(warehouse)}
    models = tmp_path / "models"
    first = run_lakecdc("generate", "--source", "inv", "--models-dir", str(models), cwd=tmp_path, env=env)
    assert first.returncode == 0, first.stderr
    assert "5 written, 0 unchanged, 0 kept" in first.stdout
    model = models / "silver" / "inv" / "inv__items.sql"
    assert "lakecdc_table_id='shop.public.items'" in model.read_text()
    second = run_lakecdc("generate", "--models-dir", str(models), cwd=tmp_path, env=env)
    assert second.returncode == 0, second.stderr
    assert "0 written, 5 unchanged, 0 kept" in second.stdout
    unknown = run_lakecdc("generate", "--source", "nope", cwd=tmp_path, env=env)
    assert unknown.returncode == 2 and "unknown source 'nope'" in unknown.stderr
