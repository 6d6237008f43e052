"""Exactly once from Kafka under kill -9: a producer keeps writing Debezium JSON records (the generated
inventory workload, Kafka Connect's JsonConverter form, tombstones included; one slice per run, so the stream
goes on through every kill whatever the machine's speed) into four-partition topics while
`lakecdc run` is killed with SIGKILL at least 10 times, each soon after a bronze commit; then the producer stops
and a last run catches up. Bronze must hold every produced record exactly once (compared by topic and payload),
and each run resumed from bronze's offsets, not the consumer group's."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter
from pathlib import Path

import orjson
import pytest

from ingest.connectors.debezium_json.sample import InventoryEvents
from tests.conftest import ROOT

pytestmark = [pytest.mark.integration, pytest.mark.slow]

KILLS = 10
EVENTS = 20_000


class Producing(threading.Thread):
    """Produces the generated records in slices until all are out or it is told to stop."""

    def __init__(self, bootstrap: str, prefix: str) -> None:
        super().__init__(daemon=True)
        from confluent_kafka import Producer

        self.producer = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True, "linger.ms": 20})
        self.records = list(InventoryEvents(seed=15, prefix=prefix).events(EVENTS))
        self.sent = 0
        self.error: BaseException | None = None
        self.go = threading.Semaphore(0)   # one slice per release: the test paces the stream by its kills
        self.slice = -(-len(self.records) // (2 * KILLS))

    def run(self) -> None:
        try:
            for start in range(0, len(self.records), self.slice):
                self.go.acquire()
                for topic, key, value in self.records[start:start + self.slice]:
                    self.producer.produce(topic, key=None if key is None else key.encode(),
                                          value=None if value is None else value.encode())
                    self.producer.poll(0)
                assert self.producer.flush(60) == 0
                self.sent = start + len(self.records[start:start + self.slice])
        except BaseException as exc:  # reported by the test
            self.error = exc


def landed_commits(warehouse: Path, source: str) -> int:
    log = warehouse / "bronze" / f"{source}_events" / "_delta_log"
    return len(list(log.glob("*.json"))) if log.is_dir() else 0


def test_kill_minus_nine_while_producers_write_lands_every_record_once(kafka_bootstrap: str, tmp_path: Path) -> None:
    prefix = f"crash_{uuid.uuid4().hex[:8]}"   # new topics: the broker outlives a test
    producing = Producing(kafka_bootstrap, prefix)
    warehouse = tmp_path / "warehouse"
    config = tmp_path / "lakecdc.yml"
    config.write_text(f"engine:\n  warehouse: {warehouse}\nsources:\n  kc:\n    connector: kafka\n"
                      f"    bootstrap.servers: {kafka_bootstrap}\n    topics.regex: '{prefix}\\..*'\n"
                      f"    topic.prefix: {prefix}\n    poll.interval.ms: 200\n")
    command = [sys.executable, "-m", "ingest.cli", "--config", str(config), "run", "--batch-size", "300", "--quiet"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    rng = random.Random(29)
    producing.start()
    kills = kills_while_producing = 0
    began = time.monotonic()
    while kills < KILLS:
        producing.go.release()   # a slice is written while this run lands: half of them are out after the kills
        proc = subprocess.Popen(command, cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        before = landed_commits(warehouse, "kc")
        deadline = time.monotonic() + 120
        while proc.poll() is None and time.monotonic() < deadline and landed_commits(warehouse, "kc") <= before:
            time.sleep(0.01)
        time.sleep(rng.uniform(0.0, 0.4))   # mid-write, between tables, while reading
        assert proc.poll() is None, f"lakecdc run exited by itself: {proc.communicate()[1].decode()[-3000:]}"
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        kills += 1
        kills_while_producing += producing.is_alive()
    assert kills_while_producing == KILLS, f"only {kills_while_producing} kills while the producer wrote"
    for _ in range(KILLS):
        producing.go.release()
    producing.join(timeout=300)
    assert producing.error is None, producing.error
    assert producing.sent == len(producing.records)
    for _ in range(2):   # catch up; the second run finds nothing new
        final = subprocess.run([*command, "--until-caught-up"], cwd=tmp_path, env=env, capture_output=True,
                               text=True, timeout=600)
        assert final.returncode == 0, final.stderr[-3000:]

    from deltalake import DeltaTable

    events = DeltaTable(str(warehouse / "bronze" / "kc_events")).to_pyarrow_table(
        columns=["topic", "value"]).to_pylist()
    landed = Counter((e["topic"], e["value"]) for e in events)
    produced = Counter((topic, None if value is None else orjson.dumps(orjson.loads(value)["payload"]).decode())
                       for topic, _, value in producing.records)
    duplicated = {k: n for k, n in landed.items() if n > produced.get(k, 0)}
    missing = {k: n for k, n in produced.items() if landed.get(k, 0) < n}
    assert not duplicated, f"{len(duplicated)} records landed more than once, e.g. {list(duplicated)[:3]}"
    assert not missing, f"{len(missing)} records never landed, e.g. {list(missing)[:3]}"
    print(f"{kills} kills ({kills_while_producing} while producing), {len(events):,} records landed once each "
          f"in {time.monotonic() - began:.0f}s")
