"""The embedded Debezium path (`connector: debezium` and the SQL Server, Oracle, MongoDB sources) on PostgreSQL
(figures for the closing note; not a test).

    .venv/bin/python bench/debezium_embedded.py [--rows 1000000] [--updates 100000] [--runs 1]

1. Snapshot of a ROWS-row, 8-column table (bench/postgres.py's table) by Debezium's postgres connector in the
   embedded engine: `run_source` into bronze (the product path: records cross to Python, decoded, landed in
   Delta), against the same connector delivering to a consumer that touches no record (no per-record crossing:
   the JVM's limit for this connector here) in the same run. Three such limits: records as JsonConverter writes
   them with a schema in each (Kafka Connect's and Debezium Server's usual format); as lakecdc takes them
   (JsonConverter without schemas; lakecdc numbers each schema once: the limit the target is stated against); and
   the records unconverted (Debezium's `Connect` format: nothing written, a floor no consumer of text reaches).
   And a fourth reference: the records handed over as lakecdc's engine takes them (unconverted), each batch
   converted and decoded as lakecdc does (JsonConverter's bytes by ConnectJson.java, in Java, into bronze's
   columns, handed over to Python as Arrow buffers: debezium_engine/decoding.py) but not landed: what the
   decoding costs.
   Each reference runs twice in one JVM: from a cold JVM (it compiles Debezium's code as it goes: a JIT compiler
   thread busy 10 s of a 30 s snapshot) and warm; lakecdc's run 1 is compared with the cold passes, its runs 2..
   (the same JVM) with the warm ones.
2. UPDATES single-row UPDATE transactions streamed the same ways.

Prints rows/s, the ratios product / JVM limit (target for the snapshot: 0.8), peak RSS, medians over --runs, and
per snapshot run how busy the machine was (and how much of one core the product's main thread used: bench/cpu.py).
For the snapshots also the same after the first 50,000 records (lakecdc: its first landed batch; the references:
the first batches they received) and when each got there: the records/s without the start (lakecdc's first run
starts the Spark engine and its decoder's compilation too), and how long the start took.
`--updates 0` measures the snapshot alone.
Each run of the engine-only consumer happens in a child process (JPype starts one JVM per process), timed from
before its JVM starts (lakecdc's first run starts one too) to its last record.
"""

from __future__ import annotations

import argparse
import json
import logging
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from cpu import cpu_use  # noqa: E402
from postgres import DB, SCHEMA, dsn_parts, prepare, sql  # noqa: E402

from ingest.bronze.contract import BatchLimits  # noqa: E402
from ingest.config import EngineSettings, ProjectConfig, SourceSettings  # noqa: E402

SLOT = "dbz_bench"
BATCH = 50_000   # lakecdc's batch size here (BatchLimits.max_events); the start of a run ends after its first one
SOURCE = "dbz_bench"


def properties(mode: str = "initial") -> dict[str, object]:
    p = dsn_parts()
    return {"connector.class": "io.debezium.connector.postgresql.PostgresConnector", "plugin.name": "pgoutput",
            "database.hostname": p["host"], "database.port": int(p["port"]), "database.user": p["user"],
            "database.password": p["password"], "database.dbname": DB, "topic.prefix": "bench",
            "slot.name": SLOT, "publication.name": SLOT, "publication.autocreate.mode": "filtered",
            "table.include.list": f"{SCHEMA}\\.t", "snapshot.mode": mode, "poll.interval.ms": 500}


def drop_slot() -> None:
    for (slot,) in sql(f"SELECT slot_name FROM pg_replication_slots WHERE slot_name = '{SLOT}'"):
        sql(f"SELECT pg_drop_replication_slot('{slot}')")
    sql(f"DROP PUBLICATION IF EXISTS {SLOT}")


@dataclass
class Run:
    """One run: records in `seconds`, and `marks` (seconds since its start, records so far) along the way: each
    landed batch for lakecdc, each batch the engine handed over for a reference consumer."""

    records: int
    seconds: float
    marks: list[tuple[float, int]] = field(default_factory=list)

    def rate_after(self, records: int) -> float:
        """Records/s from the first mark with at least `records` records to the end: the run without its start
        (lakecdc: the Spark engine's start, the bronze tables, the first batch; both: the JVM's start and its
        first compilations)."""
        for at, seen in self.marks:
            if seen >= records:
                return (self.records - seen) / (self.seconds - at) if self.seconds > at else 0.0
        return 0.0


class _Landings(logging.Handler):
    """When the runner said it landed a batch with events, and how many so far (its INFO line `batch N landed: E
    events`)."""

    def __init__(self, began: float) -> None:
        super().__init__(logging.INFO)
        self.began = began
        self.marks: list[tuple[float, int]] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.msg.startswith("%s: batch %d landed") and record.args and record.args[2]:   # type: ignore[index]
            landed = (self.marks[-1][1] if self.marks else 0) + record.args[2]  # type: ignore[index]
            self.marks.append((time.perf_counter() - self.began, landed))


def product(warehouse: Path, mode: str, source: str) -> Run:
    """run_source until caught up: its start (the source's validation, which starts the JVM in the first run, the
    Spark engine in the first run, the bronze tables) to the Delta commit of its last event. The run then waits
    for two quiet polls of the connector to know it caught up; not counted, as the references know how many records
    to wait for. One warehouse for every run (so every run uses the same engine: a second local engine in one
    process is not supported), a source per run."""
    from ingest.runner import run_source

    config = ProjectConfig(engine=EngineSettings(profile="local", warehouse=warehouse),
                           sources={source: SourceSettings(source, "debezium", properties(mode))})
    began = time.perf_counter()
    logger, landings = logging.getLogger("ingest.runner"), _Landings(began)
    level = logger.level
    logger.setLevel(logging.INFO)
    logger.addHandler(landings)
    try:
        result = run_source(config, source, until_caught_up=True,
                            limits=BatchLimits(max_events=BATCH, max_seconds=10), progress=False)
    finally:
        logger.removeHandler(landings)
        logger.setLevel(level)
    seconds = landings.marks[-1][0] if landings.marks else time.perf_counter() - began
    return Run(result.events, seconds, landings.marks)


ENGINE_ONLY = r'''
import json, sys, tempfile, time, threading
sys.path.insert(0, sys.argv[1])
from pathlib import Path
began = time.perf_counter()   # the JVM's start counts, as it does in lakecdc's first run
from ingest.connectors.debezium_engine import jvm
jvm.start_jvm()
import jpype
props, expected, schemas, mode = json.loads(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
hand_over = mode == "decode"   # json: JsonConverter's bytes; connect: unconverted; decode: as lakecdc does
passes = int(sys.argv[6])   # runs of the connector in this JVM, each from the beginning: the later ones warm
if hand_over:
    from ingest.connectors.debezium_engine.decoding import RecordDecoder
    from ingest.connectors.debezium_engine.offsets import EngineOffsets
    from ingest.bronze.contract import BronzeEvent
    from ingest.connectors.debezium_json.records import Decoder
    prefix = props["topic.prefix"]


@jpype.JImplements("io.debezium.engine.DebeziumEngine$ChangeConsumer")
class Count:
    def __init__(self):
        self.seen, self.done, self.marks = 0, threading.Event(), []
        self.decoder = (RecordDecoder(Decoder(prefix, event_type=BronzeEvent), prefix, prefix,
                                      {"schemas.enable": schemas}, EngineOffsets()) if hand_over else None)

    @jpype.JOverride
    def handleBatch(self, records, committer):
        self.seen += records.size()   # one crossing per batch: no record is read in Python
        self.marks.append((time.perf_counter() - began, self.seen))
        if self.decoder is not None:  # ... unless the batch is decoded as lakecdc does (decoding.RecordDecoder)
            self.decoder.decode(records, records.size(), {})
        committer.markBatchFinished()
        if self.seen >= expected:
            self.done.set()

    @jpype.JOverride
    def supportsTombstoneEvents(self):
        return True


for run in range(passes):
    if run:
        began = time.perf_counter()
    state = Path(tempfile.mkdtemp())
    p = jpype.JClass("java.util.Properties")()
    for k, v in {**props, "name": f"bench-engine-only-{run}", "offset.flush.interval.ms": "0",
                 "offset.storage": "org.apache.kafka.connect.storage.FileOffsetBackingStore",
                 "offset.storage.file.filename": str(state / "offsets.dat"),
                 "converter.schemas.enable": schemas}.items():
        p.setProperty(k, str(v))
    consumer = Count()
    # unconverted (lakecdc's engine hands them over so, jvm.py), or JsonConverter's bytes
    record_format = "io.debezium.engine.format.JsonByteArray" if mode == "json" else "io.debezium.embedded.Connect"
    engine = (jpype.JClass("io.debezium.engine.DebeziumEngine").create(
        jpype.JClass(record_format)).using(p).notifying(consumer).build())
    executor = jpype.JClass("java.util.concurrent.Executors").newSingleThreadExecutor()
    executor.execute(engine)
    consumer.done.wait(3600)
    print(json.dumps({"records": consumer.seen, "seconds": time.perf_counter() - began, "marks": consumer.marks}),
          flush=True)
    engine.close()
    executor.shutdown()
'''


# JVM limit -> (converter.schemas.enable, mode: "json" JsonConverter's bytes, "connect" unconverted records, "decode"
# unconverted records converted and decoded as lakecdc does)
LIMITS = {"with schemas": ("true", "json"), "as lakecdc takes them": ("false", "json"),
          "unconverted (nothing written)": ("false", "connect"),
          "as lakecdc takes them, decoded as lakecdc does": ("false", "decode")}


def engine_only(mode: str, expected: int, converter: tuple[str, str], passes: int = 1) -> list[Run]:
    """The same connector to a consumer that counts the batch sizes only (and decodes each batch as lakecdc does
    when asked), until `expected` records arrived; `passes` times in one JVM (the first from a cold one, which
    starts and compiles Debezium's code as it goes; the others warm), each pass from the beginning (fresh offsets,
    the same slot)."""
    schemas, delivery = converter
    out = subprocess.run([sys.executable, "-c", ENGINE_ONLY, str(ROOT), json.dumps(properties(mode)), str(expected),
                          schemas, delivery, str(passes)],
                         capture_output=True, text=True, timeout=7200)
    if out.returncode != 0:
        raise SystemExit(f"engine-only run failed: {out.stderr[-2000:]}")
    results = [json.loads(line) for line in out.stdout.strip().splitlines() if line.startswith("{")]
    return [Run(r["records"], r["seconds"], [(at, seen) for at, seen in r["marks"]]) for r in results]


def update_all(updates: int) -> None:
    """UPDATES single-row transactions (explicit BEGIN/COMMIT: a multi-statement string is one transaction
    otherwise), sent in chunks."""
    for start in range(1, updates + 1, 5_000):
        ids = range(start, min(start + 5_000, updates + 1))
        sql("".join(f"BEGIN; UPDATE {SCHEMA}.t SET a = a + 1 WHERE id = {i}; COMMIT;" for i in ids))


def rate(run: Run) -> str:
    return f"{run.records / run.seconds:,.0f} records/s" if run.seconds > 0 else "no time"


def median_rate(runs: list[Run]) -> float:
    return statistics.median(r.records / r.seconds for r in runs if r.seconds > 0)


def without_start(what: str, product_runs: list[Run], limit_runs: dict[str, list[Run]]) -> str:
    """The snapshot's records/s after its first BATCH records (lakecdc: landed, the references: received), and
    when each got there: what a record costs apart from the start (lakecdc's: the Spark engine, the bronze tables,
    the first batch gathered and committed; everyone's: the JVM's start and its first compilations)."""
    p = statistics.median(r.rate_after(BATCH) for r in product_runs)
    start = statistics.median(_reached(r, BATCH) for r in product_runs)
    parts = []
    for name, runs in limit_runs.items():
        q = statistics.median(r.rate_after(BATCH) for r in runs)
        reached = statistics.median(_reached(r, BATCH) for r in runs)
        parts.append(f"{name} {q:,.0f} records/s (reached after {reached:.1f}s), ratio {p / q:.2f}" if q
                     else f"{name}: none")
    return (f"{what}, after the first {BATCH:,} records: lakecdc {p:,.0f} records/s (reached after {start:.1f}s); "
            f"{'; '.join(parts)}")


def _reached(run: Run, records: int) -> float:
    return next((at for at, seen in run.marks if seen >= records), run.seconds)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--updates", type=int, default=100_000)
    ap.add_argument("--runs", type=int, default=1)
    args = ap.parse_args()
    print(f"load average {open('/proc/loadavg').read().split()[:3]}; rows {args.rows:,}, updates {args.updates:,}")
    prepare(args.rows)
    work = tempfile.TemporaryDirectory()
    warehouse = Path(work.name) / "warehouse"
    snap_product: list[Run] = []
    stream_product: list[Run] = []
    # the snapshot references: a cold JVM (its first pass) and a warm one (its second), as lakecdc's runs 1 and 2..
    snap_limit: dict[str, list[Run]] = {name: [] for name in LIMITS}
    snap_warm_limit: dict[str, list[Run]] = {name: [] for name in LIMITS}
    stream_limit: dict[str, list[Run]] = {name: [] for name in LIMITS}
    for run in range(args.runs):
        for name, converter in LIMITS.items():
            drop_slot()
            with cpu_use() as use:
                cold, warm = engine_only("initial", args.rows, converter, passes=2)
            snap_limit[name].append(cold)
            snap_warm_limit[name].append(warm)
            print(f"run {run + 1}: snapshot to a reference consumer ({name}): {rate(cold)} from a cold JVM, "
                  f"{rate(warm)} warm; machine {use.machine_busy:.0%} busy")
        drop_slot()
        with cpu_use() as use:   # the run's decoding happens on this (the main) thread
            snap_product.append(product(warehouse, "initial", f"{SOURCE}{run}"))
        print(f"run {run + 1}: snapshot into bronze: {rate(snap_product[-1])}, {use.text(snap_product[-1].seconds)}")
        if not args.updates:   # --updates 0: the snapshot alone
            drop_slot()
            continue
        update_all(args.updates)   # streamed by the next product run (the slot holds them)
        began = time.perf_counter()
        stream_product.append(product(warehouse, "initial", f"{SOURCE}{run}"))
        print(f"run {run + 1}: streaming run took {time.perf_counter() - began:.1f}s")
        drop_slot()
        # engine-only streaming: a slot created without a snapshot, then the updates
        for name, converter in LIMITS.items():
            sql(f"CREATE PUBLICATION {SLOT} FOR TABLE {SCHEMA}.t")   # before the updates: pgoutput decodes
            sql(f"SELECT pg_create_logical_replication_slot('{SLOT}', 'pgoutput')")   # with the catalog of then
            update_all(args.updates)
            stream_limit[name].append(engine_only("no_data", args.updates, converter)[0])
            drop_slot()
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    comparisons = [("snapshot, cold JVM (lakecdc's run 1, the references' first passes)", snap_product[:1],
                    {name: samples for name, samples in snap_limit.items()}),
                   (f"snapshot, warm JVM (lakecdc's runs 2-{args.runs}, the references' second passes)",
                    snap_product[1:], snap_warm_limit),
                   ("streaming (lakecdc's JVM warm, the references' cold)", stream_product, stream_limit)]
    for what, product_samples, limit_samples in comparisons:
        if not product_samples:
            continue
        p = median_rate(product_samples)
        limits = "; ".join(f"{name} {median_rate(samples):,.0f} records/s, ratio {p / median_rate(samples):.2f}"
                           for name, samples in limit_samples.items())
        print(f"{what}: lakecdc (embedded Debezium -> bronze) {p:,.0f} records/s (median of "
              f"{len(product_samples)}); Debezium to reference consumers (no record read unless decoded): {limits} "
              f"(medians of {args.runs})")
    for what, product_samples, limit_samples in comparisons[:2]:
        if product_samples:
            print(without_start(what, product_samples, limit_samples))
    print(f"peak RSS of this process (product runs) {rss:,.0f} MB")
    work.cleanup()


if __name__ == "__main__":
    main()
