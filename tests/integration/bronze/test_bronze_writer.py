"""BronzeWriter on the real engine (embedded Sail, Delta tables in a temporary warehouse)."""

from __future__ import annotations

import dataclasses
import json
import time
from pathlib import Path

import pyarrow as pa
import pytest

from ingest.bronze.contract import (
    EVENT_BLOCK_COLUMNS,
    EVENTS_COLUMNS,
    REJECTS_COLUMNS,
    Batch,
    BronzeEvent,
    BronzeEventBlock,
    BronzeReject,
    BronzeSchemaChange,
    ResumeState,
)
from ingest.bronze.writer import (
    BRONZE_PROPERTIES,
    BronzeWriter,
    create_table_sql,
    remove_expired_log,
    schema_id,
)
from ingest.config import EngineSettings
from ingest.delta_log import delta_configuration

pytestmark = pytest.mark.integration

KEY = '{"fields":[{"field":"id","optional":false,"type":"int32"}],"name":"k","optional":false,"type":"struct"}'
VALUE_1 = '{"name":"v1","type":"struct"}'
VALUE_2 = '{"name":"v2","type":"struct"}'


def event(n: int, table: str = "db.public.t", value_schema: str = VALUE_1, op: str = "c") -> BronzeEvent:
    return BronzeEvent(topic=f"p.{table}", table_id=table, op=op, seq=f"{n:016x}", key=f'{{"id":{n}}}',
                       value=f'{{"op":"{op}","after":{{"id":{n}}}}}', key_schema=KEY, value_schema=value_schema,
                       ts_ms=1000 + n, source_ts_ms=900 + n, txn_id=str(n // 2), snapshot="false",
                       position=json.dumps({"file": "f", "offset": n}))


def change(n: int) -> BronzeSchemaChange:
    return BronzeSchemaChange(seq=f"{n:016x}", ts_ms=n, database_name="db", schema_name=None,
                              ddl=f"ALTER TABLE t ADD c{n} INT", table_changes="[]", event="{}",
                              position=json.dumps({"file": "f", "offset": n}))


def reject(n: int) -> BronzeReject:
    return BronzeReject(seq=f"input:f:{n:016x}", stage="decode", error="not JSON", raw=b"\xff{bad",
                        position=json.dumps({"file": "f", "offset": n}))


def rows(spark, sql: str) -> list[tuple]:
    return [tuple(r) for r in spark.sql(sql).collect()]


def test_create_table_sql_local_and_databricks(tmp_path: Path):
    local = create_table_sql(EngineSettings(warehouse=tmp_path), "`bronze`.`s_events`", EVENTS_COLUMNS,
                             tmp_path / "bronze" / "s_events", "table_id")
    assert local.endswith(f"USING delta PARTITIONED BY (`table_id`) LOCATION '{tmp_path}/bronze/s_events'")
    with_properties = create_table_sql(EngineSettings(warehouse=tmp_path), "`bronze`.`s_events`", EVENTS_COLUMNS,
                                       tmp_path, None, {"delta.checkpointInterval": "100"})
    assert with_properties.endswith(" TBLPROPERTIES ('delta.checkpointInterval' = '100')")
    assert "`seq` STRING" in local and "`ingested_at` TIMESTAMP" in local
    databricks = create_table_sql(EngineSettings(profile="databricks"), "`main`.`bronze`.`s_rejects`",
                                  REJECTS_COLUMNS, tmp_path)
    assert "LOCATION" not in databricks and "`raw` BINARY" in databricks


def test_tables_schemas_and_resume(engine, engine_settings: EngineSettings):
    spark = engine.spark
    writer = BronzeWriter(spark, engine_settings, "inv")
    assert writer.resume_state() == ResumeState()
    for kind in ("events", "schemas", "schema_changes", "rejects"):
        assert (engine_settings.warehouse / "bronze" / f"inv_{kind}" / "_delta_log").is_dir()
    columns = [(f.name, f.dataType.simpleString()) for f in spark.table("bronze.inv_events").schema.fields]
    assert [c for c, _ in columns] == [c for c, _ in EVENTS_COLUMNS]

    first = writer.write(Batch(events=[event(1), event(2, "db.public.u")], schema_changes=[change(1)],
                               rejects=[reject(3)]))
    second = writer.write(Batch(events=[event(5, value_schema=VALUE_2), event(4)]))
    assert (first, second) == (1, 2)
    assert writer.write(Batch()) is None

    assert rows(spark, "SELECT schema_id, schema, first_seq, batch_id FROM bronze.inv_schemas ORDER BY batch_id, "
                       "schema_id") == sorted([(schema_id(KEY), KEY, f"{1:016x}", 1),
                                               (schema_id(VALUE_1), VALUE_1, f"{1:016x}", 1)]) + \
        [(schema_id(VALUE_2), VALUE_2, f"{5:016x}", 2)]
    assert rows(spark, "SELECT seq, table_id, op, key_schema_id, value_schema_id, batch_id, source, txn_id "
                       "FROM bronze.inv_events ORDER BY seq") == [
        (f"{1:016x}", "db.public.t", "c", schema_id(KEY), schema_id(VALUE_1), 1, "inv", "0"),
        (f"{2:016x}", "db.public.u", "c", schema_id(KEY), schema_id(VALUE_1), 1, "inv", "1"),
        (f"{4:016x}", "db.public.t", "c", schema_id(KEY), schema_id(VALUE_1), 2, "inv", "2"),
        (f"{5:016x}", "db.public.t", "c", schema_id(KEY), schema_id(VALUE_2), 2, "inv", "2")]
    assert sorted(p.name for p in (engine_settings.warehouse / "bronze" / "inv_events").iterdir()) == [
        "_delta_log", "table_id=db.public.t", "table_id=db.public.u"]
    assert rows(spark, "SELECT raw, raw_text, stage FROM bronze.inv_rejects") == [
        (bytearray(b"\xff{bad"), "\ufffd{bad", "decode")]
    assert rows(spark, "SELECT ddl, batch_id FROM bronze.inv_schema_changes") == [("ALTER TABLE t ADD c1 INT", 1)]

    # resume: the position of the highest batch (its highest seq), the highest committed seq
    restarted = BronzeWriter(spark, engine_settings, "inv")
    assert restarted.resume_state() == ResumeState(last_seq=f"{5:016x}", position={"file": "f", "offset": 5})
    assert restarted.next_batch_id == 3


def test_crash_between_side_tables_and_events_is_replayed_once(engine, engine_settings: EngineSettings,
                                                               monkeypatch: pytest.MonkeyPatch):
    spark = engine.spark
    writer = BronzeWriter(spark, engine_settings, "crash")
    writer.write(Batch(events=[event(1)]))
    batch = Batch(events=[event(2, value_schema=VALUE_2), event(3)], schema_changes=[change(2), change(2)],
                  rejects=[reject(4)])
    original = BronzeWriter._write

    def crash_on_events(self, kind, table):
        if kind == "events":
            raise RuntimeError("killed")
        original(self, kind, table)

    monkeypatch.setattr(BronzeWriter, "_write", crash_on_events)
    with pytest.raises(RuntimeError):
        writer.write(batch)
    monkeypatch.setattr(BronzeWriter, "_write", original)
    # the side tables hold the batch, S_events does not: a restart resumes before it and reads it again
    restarted = BronzeWriter(spark, engine_settings, "crash")
    assert restarted.resume_state().position == {"file": "f", "offset": 1}
    restarted.write(batch)
    # the input's next batch repeats the schema change (a duplicated delivery): it lands again
    restarted.write(Batch(events=[event(6)], schema_changes=[change(2)]))
    assert rows(spark, "SELECT count(*), count(DISTINCT seq) FROM bronze.crash_events") == [(4, 4)]
    assert rows(spark, "SELECT count(*) FROM bronze.crash_rejects") == [(1,)]
    assert rows(spark, "SELECT count(*) FROM bronze.crash_schema_changes") == [(3,)]
    assert rows(spark, "SELECT count(*), count(DISTINCT schema_id) FROM bronze.crash_schemas") == [(3, 3)]


def test_invalid_source_name(engine, engine_settings: EngineSettings):
    from ingest.errors import ConfigError

    with pytest.raises(ConfigError, match="not valid"):
        BronzeWriter(engine.spark, engine_settings, "bad-name; DROP")


def block_of(events: list[BronzeEvent]) -> BronzeEventBlock:
    """The same events in columnar form (every event of a block shares its schemas)."""
    import pyarrow as pa

    from ingest.bronze.writer import arrow_schema

    schema = arrow_schema(EVENT_BLOCK_COLUMNS)
    table = pa.Table.from_pylist([{name: getattr(e, name) for name, _ in EVENT_BLOCK_COLUMNS} for e in events],
                                 schema=schema)
    return BronzeEventBlock(table, events[0].key_schema, events[0].value_schema)


def test_event_block_lands_like_event_objects(engine, engine_settings: EngineSettings):
    spark = engine.spark
    as_objects = BronzeWriter(spark, engine_settings, "objs")
    as_blocks = BronzeWriter(spark, engine_settings, "blks")
    first, second = [event(n) for n in (1, 2, 3)], [event(n, value_schema=VALUE_2) for n in (4, 5)]
    as_objects.write(Batch(events=first + second, schema_changes=[change(1)]))
    batch = Batch(events=[], blocks=[block_of(first), block_of(second)], schema_changes=[change(1)])
    assert len(batch) == 6 and batch.event_count == 5 and batch.max_seq() == f"{5:016x}"
    assert [e.seq for e in batch.all_events()] == [e.seq for e in first + second]
    assert batch.all_events() == first + second
    as_blocks.write(batch)
    columns = ", ".join(name for name, _ in EVENTS_COLUMNS if name not in ("source", "ingested_at"))
    assert rows(spark, f"SELECT {columns} FROM bronze.blks_events ORDER BY seq") == \
        rows(spark, f"SELECT {columns} FROM bronze.objs_events ORDER BY seq")
    assert rows(spark, "SELECT schema_id, schema, first_seq FROM bronze.blks_schemas ORDER BY schema_id") == \
        rows(spark, "SELECT schema_id, schema, first_seq FROM bronze.objs_schemas ORDER BY schema_id")
    assert as_blocks.resume_state() == as_objects.resume_state() != ResumeState()


def test_block_rows_without_a_position_land_with_the_batchs(engine, engine_settings: EngineSettings):
    """As events without a position of their own (Batch.position): the embedded engine's blocks carry none."""
    spark = engine.spark
    writer = BronzeWriter(spark, engine_settings, "nopos")
    events = [dataclasses.replace(event(n), position=None) for n in (1, 2)] + [event(3)]
    batch_position = json.dumps({"offsets": [{"partition": {"server": "x"}, "offset": {"lsn": 7}}]})
    writer.write(Batch(blocks=[block_of(events)], position=batch_position))
    assert rows(spark, "SELECT seq, position FROM bronze.nopos_events ORDER BY seq") == [
        (f"{1:016x}", batch_position), (f"{2:016x}", batch_position), (f"{3:016x}", events[2].position)]


def test_delta_log_properties_and_expired_log_removal(engine, engine_settings: EngineSettings):
    """Issue 17: bronze's _delta_log grew to 1.7 GB in 10 minutes (a checkpoint every 10 commits, each add action
    with JSON stats of every column). Bronze tables carry the properties that keep the log small, tables made
    before them get them, and log files older than the retention go once a newer checkpoint exists."""
    from deltalake import DeltaTable

    spark = engine.spark
    location = engine_settings.warehouse / "bronze" / "old_events"
    # a table created by an earlier version, without the properties
    spark.sql("CREATE SCHEMA IF NOT EXISTS bronze")
    spark.sql(create_table_sql(engine_settings, "bronze.old_events", EVENTS_COLUMNS, location, "table_id"))
    assert delta_configuration(location) == {}
    writer = BronzeWriter(spark, engine_settings, "old")
    for kind in ("events", "schemas", "schema_changes", "rejects"):
        config = delta_configuration(engine_settings.warehouse / "bronze" / f"old_{kind}")
        assert config is not None and BRONZE_PROPERTIES.items() <= config.items(), (kind, config)
    assert delta_configuration(location)["delta.dataSkippingStatsColumns"] == "batch_id,seq"

    spark.sql("ALTER TABLE bronze.old_events SET TBLPROPERTIES ('delta.checkpointInterval' = '3')")
    for n in range(8):
        writer.write(Batch(events=[event(n)]))
    log_dir = location / "_delta_log"
    checkpoints = sorted(int(p.name[:20]) for p in log_dir.glob("*.checkpoint.parquet"))
    assert checkpoints == [3, 6, 9]
    adds = pa.table(DeltaTable(str(location)).get_add_actions(flatten=True)).to_pylist()
    assert adds and all(set(a) >= {"min.batch_id", "min.seq"} and "min.value" not in a for a in adds)
    assert remove_expired_log(location, retention_seconds=7 * 86_400) == 0  # nothing is a week old
    removed = remove_expired_log(location, retention_seconds=0, now=time.time() + 1)
    assert removed > 0
    assert min(int(p.name[:20]) for p in log_dir.iterdir() if p.name[:20].isdigit()) == 9
    assert sorted(r[0] for r in rows(spark, "SELECT seq FROM bronze.old_events")) == [f"{n:016x}" for n in range(8)]
    assert DeltaTable(str(location)).to_pyarrow_table().num_rows == 8
    writer.write(Batch(events=[event(8)]))  # the engine goes on writing after the removal
    assert rows(spark, "SELECT count(*) FROM bronze.old_events") == [(9,)]
