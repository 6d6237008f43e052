"""An analyst opens the quality report in a real browser (headless Debian chromium + chromedriver): the
index lists the suites with their results, a failing suite's page shows the offending rows, the history
page shows more than the last run, and the great-expectations Data Docs list the same suites."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ingest.quality.api import run_quality
from tests.support.quality import config_for, seed_lakehouse, write_project

pytestmark = pytest.mark.integration

@pytest.mark.slow
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
    spark.sql("INSERT INTO silver.inv_customers VALUES "
              "(2, 'grace h.', 'active', NULL, '0009', current_timestamp(), 'u')")
    second = run_quality(config, output=reports, expectations_dir=exp_dir, spark=spark)
    assert second.result.exit_code == 1
    assert "No source has metrics in bronze yet" in (reports / "ingest.html").read_text()   # no run wrote any

    browser.get(second.index.as_uri())
    shot = tmp_path / "quality-index.png"
    assert browser.save_screenshot(str(shot))
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 10_000
    rows = browser.find_elements(By.CSS_SELECTOR, "#suites tr")[1:]
    shown = {r.find_elements(By.TAG_NAME, "td")[1].text: r.find_elements(By.TAG_NAME, "td")[0].text for r in rows}
    assert shown == {"cdc.inv": "PASS", "gold.customers_by_status": "PASS", "silver.inv_customers": "FAIL",
                     "silver.inv_customers_history": "PASS"}
    assert "Data quality FAIL" in browser.find_element(By.TAG_NAME, "h1").text
    # the headline: totals that add up to the table, the overall word summary.json has, what changed
    summary = json.loads((reports / "summary.json").read_text())
    assert summary["status"] == "fail" and f"Data quality {summary['status'].upper()}" in \
        browser.find_element(By.TAG_NAME, "h1").text
    headline = browser.find_element(By.ID, "headline").text
    statuses = list(shown.values())
    assert headline.startswith(f"{len(shown)} suites: {statuses.count('PASS')} pass, {statuses.count('WARN')} warn, "
                               f"{statuses.count('FAIL')} fail")
    counts = summary["counts"]
    expectations = sum(len(s["expectations"]) for s in summary["suites"])
    assert counts["expectations"] == expectations and f"{expectations} expectations:" in headline
    assert f"{counts['expectations_failed']} failures" in headline and counts["expectations_failed"] == 1
    trend = browser.find_element(By.ID, "trend").text
    assert trend.startswith(f"since run {first.result.run_id.removeprefix('lakecdc-')} (PASS)")
    assert "1 newly failing or warning (silver.inv_customers)" in trend
    # offline, GX's own index is an empty page (its table is drawn by CDN scripts): not linked
    assert not browser.find_elements(By.LINK_TEXT, "GX Data Docs")

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


@pytest.mark.slow
def test_ingest_page_charts_the_metrics_runs_wrote_to_bronze(engine, engine_settings, warehouse: Path,
                                                           tmp_path: Path, browser):
    """A source's runs wrote their metrics after each batch (what `lakecdc run --metrics-port` does: RunMetrics
    counted each batch, the bronze writer appended the figures); the report's ingest page charts the lag behind
    the source of every batch and the events/s between batches, and lists the newest figures."""
    from selenium.webdriver.common.by import By

    from ingest.bronze.contract import Batch, BronzeEvent
    from ingest.bronze.writer import BronzeWriter
    from ingest.metrics import RunMetrics

    spark = engine.spark
    schemas = seed_lakehouse(spark, warehouse)
    exp_dir, reports = tmp_path / "expectations", tmp_path / "reports"
    write_project(exp_dir, schemas)
    writer = BronzeWriter(spark, engine_settings, "shop")
    now = [1_800_000_000.0]
    metrics = RunMetrics("shop", "postgresql", clock=lambda: now[0])
    lags = []
    for batch_id in range(1, 6):   # five batches of 10 updates, the last change 1.5 s, 3 s, ... before landing
        lag_ms = 1500 * batch_id
        events = [BronzeEvent("shop.public.t", "shop.public.t", "u", f"{batch_id:04d}{i:04d}", "{}", "{}", None,
                              None, None, int(now[0] * 1000) - lag_ms, f"tx{batch_id}", None) for i in range(10)]
        metrics.landed(Batch(events=events))
        writer.write_metrics(batch_id, metrics.samples())
        lags.append(float(lag_ms))
        now[0] += 2.0

    run = run_quality(config_for(warehouse), output=reports, expectations_dir=exp_dir, spark=spark)
    page = run.report_dir / "ingest.html"
    browser.get(page.as_uri())
    assert browser.find_element(By.TAG_NAME, "h2").text == "shop"
    lag_points = browser.find_elements(By.CSS_SELECTOR, "#lag-shop circle.point")
    assert [float(p.get_attribute("data-value")) for p in lag_points] == lags
    rates = [float(p.get_attribute("data-value")) for p in browser.find_elements(By.CSS_SELECTOR, "#rate-shop circle")]
    assert len(rates) == 4 and all(rate > 0 for rate in rates), rates   # 10 events between each two batches
    browser.find_element(By.CSS_SELECTOR, "details summary").click()
    figures = {tuple(cell.text for cell in row.find_elements(By.TAG_NAME, "td")[:2]): row.find_elements(
        By.TAG_NAME, "td")[3].text for row in browser.find_elements(By.CSS_SELECTOR, "#latest-shop tr")[1:]}
    assert figures[("streaming", "TotalNumberOfEventsSeen")] == "50"
    assert figures[("streaming", "MilliSecondsBehindSource")] == "7,500"
    assert figures[("bronze", "batches_total")] == "5"
    # every page links the ingest page; a lakehouse without metrics says how to get them
    browser.get(run.index.as_uri())
    browser.find_element(By.LINK_TEXT, "Ingest").click()
    assert browser.find_element(By.TAG_NAME, "h1").text == "Ingest"
