"""DecodedRecords (debezium_engine/decoding.py): a hand-over's rows split at its cut and grouped into blocks per
(key schema, value schema), every row landing exactly once with its own schemas."""

from __future__ import annotations

import pyarrow as pa

from ingest.bronze.contract import BronzeEvent, BronzeSchemaChange
from ingest.connectors.debezium_engine.decoding import INT_COLUMNS, DecodedRecords

SCHEMAS = {-1: None, 0: '{"k":0}', 1: '{"v":1}', 2: '{"k":2}', 3: '{"v":3}'}


def decoded(pairs: list[tuple[int, int]], at: list[int], others: list[tuple[int, object]] | None = None,
            ) -> DecodedRecords:
    n = len(pairs)
    rows = pa.table({
        "topic": [f"t{a}" for a in at], "table_id": ["d.t"] * n,
        "op": [None if value == -1 else "c" for _, value in pairs], "seq": [f"{a:04d}" for a in at],
        "key": [f'{{"id":{a}}}' for a in at],
        "value": [None if v == -1 else f"v{a}" for (_, v), a in zip(pairs, at, strict=True)],
        "ts_ms": pa.array([1] * n, pa.int64()), "source_ts_ms": pa.array([2] * n, pa.int64()),
        "txn_id": [None] * n, "snapshot": [None] * n,
        INT_COLUMNS[0]: pa.array(at, pa.int32()), INT_COLUMNS[1]: pa.array([k for k, _ in pairs], pa.int32()),
        INT_COLUMNS[2]: pa.array([v for _, v in pairs], pa.int32())})
    return DecodedRecords(rows, others or [], SCHEMAS)


def test_blocks_group_rows_by_their_schemas_in_order_of_first_appearance() -> None:
    records = decoded([(0, 1), (0, -1), (2, 3), (0, 1), (0, -1)], at=[0, 1, 2, 4, 5])
    blocks = records.blocks()
    assert [(b.key_schema, b.value_schema) for b in blocks] == [('{"k":0}', '{"v":1}'), ('{"k":0}', None),
                                                               ('{"k":2}', '{"v":3}')]
    assert [b.columns.column("seq").to_pylist() for b in blocks] == [["0000", "0004"], ["0001", "0005"], ["0002"]]
    for block in blocks:
        assert block.columns.column("position").null_count == len(block)   # the batch's position, when it lands
        assert all(type(event) is BronzeEvent for event in block.events())
    tombstones = blocks[1].events()
    assert [(e.value, e.value_schema, e.key_schema) for e in tombstones] == [(None, None, '{"k":0}')] * 2


def test_split_at_the_cut_keeps_every_record_once_on_its_side() -> None:
    change = BronzeSchemaChange("0003", None, None, None, "ALTER", None, "{}", None)
    records = decoded([(0, 1), (0, 1), (0, -1), (0, 1)], at=[0, 1, 2, 4], others=[(3, change)])
    assert len(records) == 5
    before, after = records.split(3)
    assert before.rows.column("at").to_pylist() == [0, 1, 2] and before.outputs() == []
    assert after.rows.column("at").to_pylist() == [4] and after.outputs() == [change]
    assert before.data_events() == 2 and after.data_events() == 1
    everything, nothing = records.split(5)
    assert len(everything) == 5 and len(nothing) == 0 and nothing.blocks() == []
