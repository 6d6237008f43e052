"""The kafka source: Debezium JSON records (Kafka Connect's JsonConverter with schemas, the generated inventory
event mix) from a Kafka-protocol broker into bronze (figures for the issue's closing note; not a test).

    .venv/bin/python bench/kafka.py [--events 200000] [--runs 3]

Needs LAKECDC_KAFKA_BOOTSTRAP (`scripts/services.sh up` starts tansu and prints it). Produces EVENTS records into
fresh four-partition topics once, then per run: a bare confluent-kafka consume loop over the same topics (assign
from the beginning, every record's value touched: the peer, what the client alone reaches here) and
`lakecdc run --until-caught-up` into a new source's bronze tables (the product: decode, seq, schemas, Delta commits).
Prints records/s of both, the ratio (target: >= 100,000 records/s for the product), peak RSS, medians over runs,
for each run how busy the machine was, how much of one core the main thread used and the CPU microseconds per
record of this process and of the rest of the machine (the broker) (bench/cpu.py), the
decoder's time per record alone (in memory, no broker, no writer), and, with the `debezium` extra installed (a
JVM), the time per record of Kafka Connect's own JsonConverter reading the same values in Java (a JVM reader's
floor for these records).
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from confluent_kafka import Consumer, Producer, TopicPartition  # noqa: E402
from cpu import cpu_use  # noqa: E402

from ingest.bronze.contract import BatchLimits  # noqa: E402
from ingest.config import EngineSettings, ProjectConfig, SourceSettings  # noqa: E402
from ingest.connectors.debezium_json.sample import InventoryEvents  # noqa: E402


def produce(bootstrap: str, prefix: str, events: int) -> int:
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 50, "batch.num.messages": 10_000,
                         "queue.buffering.max.messages": 1_000_000})
    n = 0
    for topic, key, value in InventoryEvents(seed=3, prefix=prefix).events(events):
        while True:
            try:
                producer.produce(topic, key=None if key is None else key.encode(),
                                 value=None if value is None else value.encode())
                break
            except BufferError:
                producer.poll(0.1)
        n += 1
    assert producer.flush(300) == 0
    return n


def bare_consume(bootstrap: str, prefix: str, expected: int) -> tuple[int, float]:
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"bench-{uuid.uuid4().hex[:6]}",
                         "enable.auto.commit": False})
    topics = [t for t in consumer.list_topics(timeout=10).topics if t.startswith(prefix + ".")]
    metadata = consumer.list_topics(timeout=10).topics
    consumer.assign([TopicPartition(t, p, -2) for t in topics for p in metadata[t].partitions])
    began, seen, size = time.perf_counter(), 0, 0
    while seen < expected:
        for message in consumer.consume(10_000, 1.0):
            value = message.value()
            size += 0 if value is None else len(value)
            seen += 1
    elapsed = time.perf_counter() - began
    consumer.close()
    return seen, elapsed


def decode_alone(prefix: str, events: int) -> float:
    """Microseconds per record of the decoder alone (debezium-json's Decoder, as the kafka source calls it) over the
    same records, in memory: the part of the product's per-record work that is the decode."""
    from ingest.bronze.contract import BronzeEvent
    from ingest.connectors.debezium_json.records import Decoder
    from ingest.connectors.debezium_json.schema_resolver import SchemaResolver

    records = list(InventoryEvents(seed=3, prefix=prefix).events(events))
    decoder = Decoder(prefix, None, event_type=BronzeEvent, resolver=SchemaResolver(prefix, {}, [], "bench"))
    began = time.perf_counter()
    for topic, key, value in records:
        decoder.decode_record(topic, key, value)
    return (time.perf_counter() - began) / len(records) * 1e6


# Kafka Connect's JsonConverter reading each record (schemas enabled), in a Java loop: what a JVM reader pays
CONVERTER_LOOP = r"""
package bench;
import java.nio.ByteBuffer;
import java.util.HashMap;
import org.apache.kafka.connect.json.JsonConverter;
public class ConverterLoop {
    public static int read(String topic, byte[] values, byte[] lengths) {
        JsonConverter converter = new JsonConverter();
        HashMap config = new HashMap();
        config.put("schemas.enable", "true");
        converter.configure(config, false);
        ByteBuffer sizes = ByteBuffer.wrap(lengths);
        int read = 0;
        for (int at = 0; sizes.hasRemaining(); read++) {
            int size = sizes.getInt();
            byte[] value = new byte[size];
            System.arraycopy(values, at, value, 0, size);
            at += size;
            converter.toConnectData(topic, value);
        }
        return read;
    }
}
"""


def converter_alone(prefix: str, events: int) -> float | None:
    """Microseconds per record of Kafka Connect's own JsonConverter (toConnectData, as a Kafka Connect sink reads
    a record) over the same records' values, in a Java loop (the JVM of the `debezium` extra; compiled with Janino
    as lakecdc compiles its engine decoder); None without that extra."""
    try:
        import jpype

        from ingest.connectors.debezium_engine import jvm
        from ingest.connectors.debezium_engine.decoding import compile_java
        jvm.start_jvm()
    except Exception:  # noqa: BLE001 (no debezium extra or no Java: the figure is left out)
        return None
    loop = compile_java(CONVERTER_LOOP, "bench.ConverterLoop")
    values = [value.encode() for _, _, value in InventoryEvents(seed=3, prefix=prefix).events(events) if value]
    blob = jpype.JArray(jpype.JByte)(b"".join(values))
    lengths = jpype.JArray(jpype.JByte)(b"".join(len(v).to_bytes(4, "big") for v in values))
    timings = []
    for _ in range(4):   # the first pass warms the JVM up: not counted
        began = time.perf_counter()
        read = loop.read(f"{prefix}.records", blob, lengths)
        timings.append((time.perf_counter() - began) / read * 1e6)
    return statistics.median(timings[1:])


def product(bootstrap: str, prefix: str, warehouse: Path, source: str) -> tuple[int, float]:
    """One run into a new source's bronze tables (one warehouse, so every run uses the same engine)."""
    from ingest.runner import run_source

    config = ProjectConfig(engine=EngineSettings(profile="local", warehouse=warehouse),
                           sources={source: SourceSettings(source, "kafka", {
                               "bootstrap.servers": bootstrap, "topics.regex": prefix + r"\..*",
                               "topic.prefix": prefix, "poll.interval.ms": 200})})
    began = time.perf_counter()
    result = run_source(config, source, until_caught_up=True,
                        limits=BatchLimits(max_events=50_000, max_seconds=10), progress=False)
    return result.events, time.perf_counter() - began


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--events", type=int, default=200_000)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    bootstrap = os.environ.get("LAKECDC_KAFKA_BOOTSTRAP")
    if not bootstrap:
        raise SystemExit("set LAKECDC_KAFKA_BOOTSTRAP (scripts/services.sh up; eval \"$(scripts/services.sh env)\")")
    print(f"load average {open('/proc/loadavg').read().split()[:3]}; events {args.events:,}")
    prefix = f"bench_{uuid.uuid4().hex[:8]}"
    began = time.perf_counter()
    n = produce(bootstrap, prefix, args.events)
    print(f"produced {n:,} records in {time.perf_counter() - began:.1f}s")
    bare, ours = [], []
    work = tempfile.TemporaryDirectory()
    for run in range(args.runs):
        with cpu_use() as bare_cpu:
            seen, bare_seconds = bare_consume(bootstrap, prefix, n)
        bare.append(seen / bare_seconds)
        with cpu_use() as our_cpu:   # the run's decoding happens on this (the main) thread
            landed, seconds = product(bootstrap, prefix, Path(work.name) / "warehouse", f"kb{run}")
        assert landed == n, f"landed {landed:,} of {n:,}"
        ours.append(landed / seconds)
        print(f"run {run + 1}: bare consume {bare[-1]:,.0f} records/s ({bare_cpu.text(bare_seconds)}; "
              f"{bare_cpu.per_event(seen)}); lakecdc run -> bronze {ours[-1]:,.0f} records/s "
              f"({our_cpu.text(seconds)}; {our_cpu.per_event(landed)})")
    decode = statistics.median(decode_alone(prefix, min(n, 100_000)) for _ in range(3))
    print(f"the decoder alone over the same records, in memory: {decode:.1f} us per record (median of 3)")
    converter = converter_alone(prefix, min(n, 100_000))
    if converter is not None:
        print(f"Kafka Connect's JsonConverter alone (Java, toConnectData) over the same records' values: "
              f"{converter:.1f} us per record (median of 3 passes after one that warms the JVM up)")
    p, b = statistics.median(ours), statistics.median(bare)
    print(f"kafka -> bronze: lakecdc {p:,.0f} records/s; bare confluent-kafka consume loop {b:,.0f} records/s; "
          f"ratio {p / b:.2f} (medians of {args.runs}); target >= 100,000 records/s")
    print(f"peak RSS of this process {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:,.0f} MB")
    work.cleanup()


if __name__ == "__main__":
    main()
