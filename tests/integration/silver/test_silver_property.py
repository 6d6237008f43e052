"""Property-based test: random change streams over two tables -> bronze in random batches (duplicated and
out-of-order deliveries) -> `dbt run` at random points -> silver current state and history equal a
Python reference model computed from the events in source order. The examples take turns with the two ways
changes reach an existing table (var lakecdc_merge_strategy: overwrite, Sail's default, and merge)."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from ingest.generate.catalog import captured_tables
from ingest.generate.render import WriteResult, render_source, write_files
from tests.support.silver import Bronze, make_project, run_dbt
from tests.support.silver_reference import (
    TABLES,
    Reference,
)

pytestmark = pytest.mark.integration


ids = st.integers(1, 4)
table = st.sampled_from(TABLES)
op = st.one_of(
    st.tuples(st.just("upsert"), table, ids, st.text("abc", max_size=3), st.integers(-5, 5)),
    st.tuples(st.just("delete"), table, ids),
    st.tuples(st.just("pk_change"), table, ids, ids),
    st.tuples(st.just("toast"), table, ids),
    st.tuples(st.just("truncate"), table),
    st.tuples(st.just("add_column"), table),
)


def _silver(spark, name: str) -> list[tuple]:
    cols = [f.name for f in spark.table(f"silver.{name}").schema.fields]
    extra = "extra" if "extra" in cols else "cast(null as string)"
    return sorted(tuple(r) for r in spark.sql(f"SELECT id, v, n, {extra} FROM silver.{name}").collect())


def _history(spark, name: str) -> list[tuple]:
    cols = [f.name for f in spark.table(f"silver.{name}").schema.fields]
    extra = "extra" if "extra" in cols else "cast(null as string)"
    return sorted(tuple(r) for r in spark.sql(
        f"SELECT id, v, n, {extra}, valid_from_seq, valid_to_seq FROM silver.{name}").collect())


_counter = itertools.count(1)


@settings(max_examples=6, deadline=None, derandomize=True, phases=[Phase.explicit, Phase.generate],
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(steps=st.lists(op, min_size=3, max_size=24), cuts=st.lists(st.integers(0, 40), max_size=4),
       runs=st.lists(st.integers(0, 5), max_size=2), dups=st.lists(st.integers(0, 40), max_size=3),
       swap=st.booleans())
@pytest.mark.slow
def test_silver_equals_reference(engine, warehouse: Path, tmp_path: Path, steps, cuts, runs, dups, swap):
    spark = engine.spark
    example = next(_counter)
    source = f"p{example}"
    strategy = ("overwrite", "merge")[example % 2]
    bronze = Bronze(spark, warehouse, source=source)
    ref = Reference(bronze)
    # both tables exist from the start (an insert each), so generate finds them
    ref.apply(("upsert", TABLES[0], 1, "a", 0))
    ref.apply(("upsert", TABLES[1], 1, "a", 0))
    for step in steps:
        ref.apply(step)
    events = ref.events
    # the first batch holds the first insert of each table, so that generate sees both tables
    bounds = sorted({0, 2, len(events), *(max(2, c % (len(events) + 1)) for c in cuts)})
    batches = [events[a:b] for a, b in itertools.pairwise(bounds) if b > a]
    if swap and len(batches) > 2:  # a late delivery: the second batch lands after the third
        batches[1], batches[2] = batches[2], batches[1]
    for d in dups:  # duplicated deliveries: an already delivered event again, in a later batch
        batches.append([events[d % len(events)]])
    project = make_project(tmp_path / source, warehouse)
    bronze.land(batches[0])
    write_files(render_source(source, captured_tables(spark, source), project / "models"), WriteResult([], [], []))
    run_points = {r % len(batches) for r in runs}
    for i, batch in enumerate(batches[1:], start=1):
        if i in run_points:
            run_dbt(engine, project, "run", "--quiet", "--vars", f"{{lakecdc_merge_strategy: {strategy}}}")
        bronze.land(batch)
    run_dbt(engine, project, "build", "--quiet", "--vars", f"{{lakecdc_merge_strategy: {strategy}}}")
    tables = {r["tableName"] for r in spark.sql("SHOW TABLES IN silver").collect()}
    for t in TABLES:
        name = f"{source}__{t.split('.')[-1]}"
        expected = sorted((k, r["v"], r["n"], r.get("extra")) for k, r in ref.rows[t].items())
        assert name in tables, f"{name} missing from {sorted(tables)}; batches {len(batches)} runs {run_points}"
        assert _silver(spark, name) == expected, f"silver {t} ({strategy}) after {steps}"
        assert _history(spark, f"{name}_history") == ref.expected_history(t), f"history {t} ({strategy}) after {steps}"
