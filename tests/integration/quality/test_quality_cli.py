"""`lakecdc quality` as a user runs it: a fresh process, the warehouse from the environment, suites in
./expectations, the report in ./reports/quality, exit codes by severity, --select, one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from tests.conftest import run_lakecdc
from tests.support.quality import seed_lakehouse

pytestmark = pytest.mark.integration


@pytest.mark.slow
def test_cli_exit_codes_select_and_history(engine, warehouse: Path, tmp_path: Path):
    seed_lakehouse(engine.spark, warehouse, defect="duplicate_key")
    engine.stop()  # the CLI starts its own engine on the same warehouse
    project = tmp_path / "project"
    project.mkdir()
    env = {"LAKECDC_WAREHOUSE": str(warehouse), "LAKECDC_PROFILE": "local"}

    result = run_lakecdc("quality", "--generate", cwd=project, env=env)
    assert result.returncode == 1, result.stderr[-2000:]
    assert "generated " in result.stdout and (project / "expectations/silver/inv_customers.yml").exists()
    assert "FAIL silver.inv_customers:" in result.stdout
    assert "PASS cdc.inv:" in result.stdout
    summary = json.loads((project / "reports/quality/summary.json").read_text())
    assert summary["exit_code"] == 1
    assert {s["name"]: s["status"] for s in summary["suites"]}["silver.inv_customers"] == "fail"

    # the failing rule downgraded to a warning in the user-edited suite file: reported, exit 0
    path = project / "expectations/silver/inv_customers.yml"
    suite = yaml.safe_load(path.read_text())
    for exp in suite["expectations"]:
        if exp["type"] == "expect_column_values_to_be_unique":
            exp["severity"] = "warn"
    path.write_text(yaml.safe_dump(suite, sort_keys=False))
    result = run_lakecdc("quality", "--select", "silver.*", cwd=project, env=env)
    assert result.returncode == 0, result.stdout + result.stderr[-2000:]
    assert "WARN silver.inv_customers:" in result.stdout and "cdc.inv" not in result.stdout
    assert result.stdout.strip().splitlines()[-1].startswith("WARN: "), result.stdout
    # issue 20 item 7: no engine noise (Sail's "Persist operation" per batch, its "aborting N task(s)" at exit)
    assert "Persist" not in result.stderr and "aborting" not in result.stderr, result.stderr[-2000:]
    history = (project / "reports/quality/history.jsonl").read_text().splitlines()
    # the run with a warning says warn everywhere: summary.json, history, the index page (issue 20 item 9)
    assert [json.loads(h)["status"] for h in history] == ["fail", "warn"]
    assert json.loads((project / "reports/quality/summary.json").read_text())["status"] == "warn"
    assert 'class="status warn">WARN</span>' in (project / "reports/quality/index.html").read_text()

    result = run_lakecdc("quality", "--select", "nosuch*", cwd=project, env=env)
    assert result.returncode == 2 and "lakecdc: error: --select nosuch* matches no suite" in result.stderr

    path.write_text(path.read_text().replace("expect_column_values_to_be_unique", "expect_column_values_to_be_uniq"))
    result = run_lakecdc("quality", cwd=project, env=env)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    (line,) = [x for x in result.stderr.splitlines() if x.startswith("lakecdc: error:")]
    assert "invalid expectation expect_column_values_to_be_uniq" in line
