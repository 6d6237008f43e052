"""An analyst opens the quality report in a real browser (headless Debian chromium + chromedriver): the
index lists the suites with their results, a failing suite's page shows the offending rows, the history
page shows more than the last run, and the great-expectations Data Docs list the same suites."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from ingest.quality.api import run_quality
from tests.test_quality_checks import config_for, seed_lakehouse, write_project

pytestmark = pytest.mark.integration

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--window-size=1400,1000")


@pytest.fixture()
def browser(tmp_path: Path):
    import os

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


def test_analyst_reads_the_report_in_chromium(engine, warehouse: Path, tmp_path: Path, browser):
    from selenium.webdriver.common.by import By

    spark = engine.spark
    schemas = seed_lakehouse(spark, warehouse)
    exp_dir, reports = tmp_path / "expectations", tmp_path / "reports"
    write_project(exp_dir, schemas)
    config = config_for(warehouse)
    first = run_quality(config, generate=True, output=reports, expectations_dir=exp_dir, spark=spark)
    assert first.result.exit_code == 0
    # a duplicate current key lands in silver; the next run must fail and keep the first run in its history
    spark.sql("INSERT INTO silver.inv_customers VALUES (2, 'grace h.', 'active', NULL, '0009', current_timestamp(), 'u')")
    second = run_quality(config, output=reports, expectations_dir=exp_dir, spark=spark)
    assert second.result.exit_code == 1

    browser.get(second.index.as_uri())
    shot = tmp_path / "quality-index.png"
    assert browser.save_screenshot(str(shot))
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 10_000
    rows = browser.find_elements(By.CSS_SELECTOR, "#suites tr")[1:]
    shown = {r.find_elements(By.TAG_NAME, "td")[1].text: r.find_elements(By.TAG_NAME, "td")[0].text for r in rows}
    assert shown == {"cdc.inv": "PASS", "gold.customers_by_status": "PASS", "silver.inv_customers": "FAIL",
                     "silver.inv_customers_history": "PASS"}
    assert "Data quality FAIL" in browser.find_element(By.TAG_NAME, "h1").text

    browser.find_element(By.LINK_TEXT, "silver.inv_customers").click()
    browser.save_screenshot(str(tmp_path / "quality-suite.png"))
    assert browser.find_element(By.TAG_NAME, "h1").text == "silver.inv_customers FAIL"
    failed = [r.text for r in browser.find_elements(By.CSS_SELECTOR, "#expectations tr.fail-row")]
    assert len(failed) == 1 and "expect_column_values_to_be_unique" in failed[0]
    sample = browser.find_element(By.CSS_SELECTOR, "table.sample")
    cells = [[td.text for td in tr.find_elements(By.TAG_NAME, "td")] for tr in sample.find_elements(By.TAG_NAME, "tr")]
    header = [th.text for th in sample.find_elements(By.TAG_NAME, "th")]
    ids = [row[header.index("id")] for row in cells if row]
    seqs = sorted(row[header.index("_seq")] for row in cells if row)
    assert ids == ["2", "2"] and seqs == ["0002", "0009"]

    browser.find_element(By.LINK_TEXT, "Run history").click()
    history = browser.find_element(By.ID, "history").text
    assert "silver.inv_customers" in history and "cdc.inv" in history
    header_cells = browser.find_elements(By.CSS_SELECTOR, "#history tr:first-child th")
    assert len(header_cells) == 3  # the suite column plus both runs
    overall = [td.text for td in browser.find_elements(By.CSS_SELECTOR, "#history tr:nth-child(2) td")]
    assert overall == ["FAIL", "PASS"]  # newest first

    # great-expectations' own Data Docs: the validation page of the failing suite (static HTML) ...
    browser.find_element(By.LINK_TEXT, "Suites").click()
    browser.find_element(By.LINK_TEXT, "silver.inv_customers").click()
    browser.find_element(By.PARTIAL_LINK_TEXT, "GX Data Docs: unique_id").click()
    browser.save_screenshot(str(tmp_path / "gx-validation.png"))
    text = browser.find_element(By.TAG_NAME, "body").text
    assert "Expectation Suite: silver.inv_customers.unique_id" in text and "Status: Failed" in text
    assert "(id) is unique: no key occurs in more than one row" in text
    browser.back()
    browser.find_element(By.PARTIAL_LINK_TEXT, "GX Data Docs: table").click()
    text = browser.find_element(By.TAG_NAME, "body").text
    assert "Expectation Suite: silver.inv_customers" in text and "Status: Succeeded" in text
    assert "values must belong to this set: active closed" in text
    # ... and its index, whose table bootstrap-table draws from a CDN script (offline: check the page data)
    browser.get((reports / "data_docs" / "index.html").as_uri())
    source = browser.page_source
    for suite in ("silver.inv_customers", "silver.inv_customers.reconciliation", "cdc.inv.freshness"):
        assert suite in source
