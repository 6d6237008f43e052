"""Delivery faults on top of the in-order record stream: late records and duplicated deliveries, then
Kafka coordinates (partition, offset) in delivery order.

- late: a data record is delivered after a later change of the same key (as a sink reading several
  partitions, or a connector re-sending after a restart, would deliver it). Consumers must order by the
  source position, not by arrival.
- redelivered: an exact copy of an earlier record (same key, value and source position) at a new offset,
  as Kafka Connect re-sends after a crash before its offsets were flushed (at-least-once).
- reread: the same Kafka record (same topic, partition and offset) appearing twice, as a consumer that
  re-reads after a crash writes it.
Schema change records are never moved or copied: the schema topic keeps its order.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field, replace
from typing import Any

import orjson


@dataclass(frozen=True)
class KafkaRecord:
    topic: str
    key: bytes | None                     # JsonConverter bytes: {"schema":..., "payload":...}
    value: bytes | None                   # None: a tombstone
    timestamp: int
    op: str | None = None                 # the envelope's op (None: tombstone or schema change)
    headers: tuple[tuple[str, str], ...] = ()
    key_id: str = ""                      # topic + key payload text, to find later changes of the same row
    is_data: bool = True                  # False for schema change records
    partition: int = 0
    offset: int = -1
    fault: str | None = None              # None | late | redelivered | reread

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"topic": self.topic, "partition": self.partition, "offset": self.offset,
                               "timestamp": self.timestamp}
        if self.headers:
            out["headers"] = [{"key": k, "value": v} for k, v in self.headers]
        out["key"] = None if self.key is None else orjson.Fragment(self.key)
        out["value"] = None if self.value is None else orjson.Fragment(self.value)
        return out


@dataclass
class DeliveryStats:
    late: int = 0
    redelivered: int = 0
    reread: int = 0
    by_topic: dict[str, int] = field(default_factory=dict)


def deliver(records: list[KafkaRecord], rng: random.Random, *, first_streamed: int, late: int = 12,
            redelivered: int = 25, reread: int = 10) -> tuple[list[KafkaRecord], DeliveryStats]:
    """Apply the faults to the records after index `first_streamed` (the snapshot is delivered cleanly),
    then number offsets per topic (one partition each, as Debezium recommends) in delivery order."""
    stats = DeliveryStats()
    ordered = list(records)
    _make_late(ordered, rng, first_streamed, late, stats)
    _redeliver(ordered, rng, first_streamed, redelivered, stats)
    offsets: dict[str, int] = {}
    numbered: list[KafkaRecord] = []
    for record in ordered:
        offset = offsets.get(record.topic, 0)
        offsets[record.topic] = offset + 1
        numbered.append(replace(record, offset=offset))
    _reread(numbered, rng, first_streamed, reread, stats)
    for record in numbered:
        stats.by_topic[record.topic] = stats.by_topic.get(record.topic, 0) + 1
    return numbered, stats


def _is_delete(record: KafkaRecord) -> bool:
    return record.op == "d"


def _insert_point(records: list[KafkaRecord], index: int) -> int:
    """`index`, moved forward so that nothing lands between a delete and its tombstone."""
    index = min(index, len(records))
    while 0 < index < len(records) and _is_delete(records[index - 1]):
        index += 1
    return index


def _run(records: list[KafkaRecord], index: int, length: int) -> list[KafkaRecord]:
    """Records index..index+length-1, extended to keep a delete with its tombstone."""
    end = min(len(records), index + length)
    if end < len(records) and _is_delete(records[end - 1]):
        end += 1
    return records[index:end]


def _later_change(records: list[KafkaRecord], index: int, window: int) -> int | None:
    """Index of the next record of the same key within `window` records after `index`."""
    key_id = records[index].key_id
    for j in range(index + 1, min(len(records), index + 1 + window)):
        if records[j].key_id == key_id and records[j].value is not None:
            return j
    return None


def _make_late(records: list[KafkaRecord], rng: random.Random, start: int, count: int,
               stats: DeliveryStats) -> None:
    candidates = [i for i in range(start, len(records))
                  if records[i].op == "u" and _later_change(records, i, 400) is not None]
    for index in sorted(rng.sample(candidates, k=min(count, len(candidates))), reverse=True):
        target = _later_change(records, index, 400)
        if target is None:
            continue
        record = records.pop(index)
        target = _insert_point(records, target + rng.randint(0, 3))  # after the newer change (shifted by the pop)
        records.insert(target, replace(record, fault="late"))
        stats.late += 1


def _redeliver(records: list[KafkaRecord], rng: random.Random, start: int, count: int,
               stats: DeliveryStats) -> None:
    # Kafka Connect re-sends a run of records whose offsets were not flushed; the run arrives again later
    candidates = [i for i in range(start, len(records))
                  if records[i].is_data and records[i].fault is None and records[i].value is not None]
    for index in sorted(rng.sample(candidates, k=min(count, len(candidates))), reverse=True):
        run = [replace(r, fault="redelivered") for r in _run(records, index, rng.randint(1, 3)) if r.is_data]
        at = _insert_point(records, index + len(run) + rng.randint(0, 200))
        records[at:at] = run
        stats.redelivered += len(run)


def _reread(records: list[KafkaRecord], rng: random.Random, start: int, count: int, stats: DeliveryStats) -> None:
    candidates = [i for i in range(start, len(records))
                  if records[i].is_data and records[i].fault is None and records[i].value is not None]
    for index in sorted(rng.sample(candidates, k=min(count, len(candidates))), reverse=True):
        # the consumer re-reads a short run of its partition after a crash: the copies follow right after
        run = [replace(r, fault="reread") for r in _run(records, index, rng.randint(1, 3)) if r.is_data]
        at = _insert_point(records, index + len(run))
        records[at:at] = run
        stats.reread += len(run)
