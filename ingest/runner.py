"""The ingest loop of one source: connector -> micro-batches -> bronze (exactly once) -> acknowledge.

    connector.validate(); resume = writer.resume_state()
    for batch in connector.batches(resume, limits):
        writer.write(batch)          # one Delta commit of S_events per batch
        connector.acknowledge(batch) # only after the commit
        stop when caught up (--until-caught-up), after --max-events, or on SIGTERM/SIGINT

Connectors hand over a batch whenever they reach the end of their input for the moment (the binlog reader
at its end, PostgreSQL after a quiet poll interval); `BatchCoalescer` merges those hand-overs so that a
busy source lands one Delta commit per --batch-size events or --batch-seconds, not one per hand-over
(docs/bronze.md, "Batch limits").

Writing batch N overlaps with the connector reading batch N+1 (one background writer thread; commits stay
in order, acknowledgements follow commits). SIGTERM or Ctrl-C stops after the batch being written; a
second signal stops at once, which is still safe: an uncommitted batch is read again on the next run.
"""

from __future__ import annotations

import dataclasses
import fcntl
import gc
import logging
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from ingest.bronze.contract import Batch, BatchLimits, ResumeState
from ingest.bronze.writer import BronzeWriter
from ingest.config import ProjectConfig
from ingest.connectors import registry
from ingest.connectors.base import SourceConnector
from ingest.errors import LakecdcError
from ingest.metrics import MetricsServer, RunMetrics

log = logging.getLogger(__name__)


@dataclass
class RunResult:
    source: str
    batches: int = 0
    events: int = 0
    schema_changes: int = 0
    rejects: int = 0
    seconds: float = 0.0
    last_seq: str | None = None
    stopped_by: str = ""  # caught-up | max-events | signal | end

    @property
    def events_per_second(self) -> float:
        return self.events / self.seconds if self.seconds > 0 else 0.0


class _Stop:
    """SIGTERM/SIGINT: the first asks for a graceful stop, the second interrupts."""

    def __init__(self) -> None:
        self.requested = False
        self._previous: dict[int, Any] = {}

    def _handle(self, signum: int, frame: Any) -> None:
        if self.requested:
            raise KeyboardInterrupt
        self.requested = True

    @contextmanager
    def installed(self) -> Iterator[_Stop]:
        if threading.current_thread() is not threading.main_thread():
            yield self
            return
        import pyarrow

        # pyarrow's long operations (the snapshot's CSV parse) would take a Ctrl-C for themselves and raise
        # ArrowCancelled, a traceback instead of the graceful stop: the signal goes to this handler only
        pyarrow.enable_signal_handlers(False)
        for sig in (signal.SIGTERM, signal.SIGINT):
            self._previous[sig] = signal.signal(sig, self._handle)
        try:
            yield self
        finally:
            for sig, handler in self._previous.items():
                signal.signal(sig, handler)
            pyarrow.enable_signal_handlers(True)


@contextmanager
def source_lock(config: ProjectConfig, source: str) -> Iterator[None]:
    """One ingest process per source and warehouse (local folders only; the OS drops the lock on kill)."""
    if not config.engine.warehouse_on_this_machine:
        yield
        return
    from ingest.engine import check_warehouse_writable

    check_warehouse_writable(config.engine.warehouse)  # one line, not a traceback (a path under a file, read-only)
    lock_dir = config.engine.warehouse / ".lakecdc" / "locks"
    lock_dir.mkdir(parents=True, exist_ok=True)
    with open(lock_dir / f"{source}.lock", "w") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise LakecdcError(f"source {source!r} is already being ingested by another process "
                               f"(lock {lock_dir / (source + '.lock')})") from None
        handle.write(str(os.getpid()))
        handle.flush()
        yield


class _Progress:
    """A live line on a terminal (rich), one line per ~5 s otherwise; while the initial snapshot runs, the
    connector's snapshot progress leads it (table n of N, rows read of the estimate, percent, ETA)."""

    def __init__(self, result: RunResult, enabled: bool, stream: TextIO, connector: SourceConnector) -> None:
        self.result = result
        self.connector = connector
        self.enabled = enabled
        self.began = time.monotonic()
        self._last_line = 0.0
        self._live = None
        if enabled and stream.isatty():
            from rich.console import Console
            from rich.live import Live

            console = Console(file=stream)
            # a terminal that cannot redraw a line (TERM=dumb: Emacs shells, some CI consoles) would show a
            # transient live display never: it gets the plain lines
            if console.is_interactive:
                self._live = Live(console=console, refresh_per_second=4, transient=True)
                self._live.start()
        self.stream = stream

    def text(self) -> str:
        r = self.result
        elapsed = time.monotonic() - self.began
        rate = r.events / elapsed if elapsed > 0 else 0.0
        snapshot = self.connector.snapshot_progress
        lead = f"{snapshot.describe()}; " if snapshot is not None and not snapshot.finished else ""
        return (f"{r.source}: {lead}{r.events:,} events, {r.schema_changes:,} schema changes, {r.rejects:,} rejects "
                f"in {r.batches:,} batches, {rate:,.0f} events/s, last seq {r.last_seq or '-'}")

    def update(self) -> None:
        if not self.enabled:
            return
        if self._live is not None:
            self._live.update(self.text())
        elif time.monotonic() - self._last_line >= 5:
            self._last_line = time.monotonic()
            print(self.text(), file=self.stream, flush=True)

    def stop(self) -> None:
        if self._live is not None:
            self._live.stop()


@contextmanager
def _fewer_gc_passes() -> Iterator[None]:
    """Batches create millions of short-lived acyclic objects (freed by reference counting); the default
    thresholds make the cyclic collector rescan them often (~20% of the CPU of landing)."""
    previous = gc.get_threshold()
    gc.set_threshold(50_000, 20, 1_000)
    try:
        yield
    finally:
        gc.set_threshold(*previous)


class BatchCoalescer:
    """Merges the connector's hand-overs into landed batches that respect the limits: a batch lands when
    it holds `max_events` events (one more hand-over would pass the limit), when its first event has been
    held `max_seconds`, when the source is caught up and the run ends there (`land_when_caught_up`), or on
    a stop request. A hand-over with nothing to land (a heartbeat of an idle connector, maybe carrying an
    acknowledgement) passes straight through when nothing is held, so the runner still sees stop requests
    and acknowledges. The clock is a parameter so the rules can be tested without waiting."""

    def __init__(self, limits: BatchLimits, land_when_caught_up: bool = False,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.limits = limits
        self.land_when_caught_up = land_when_caught_up
        self.clock = clock
        self.held: Batch | None = None
        self.held_since = 0.0  # clock() when the held batch got its first row

    def add(self, batch: Batch, stop: bool = False) -> list[Batch]:
        """Take one hand-over; returns the batches to land now, in order."""
        out: list[Batch] = []
        held = self.held
        if held is not None and len(held) and len(batch) and len(held) + len(batch) > self.limits.max_events:
            out.append(held)
            held = None
        if held is None or not len(held):
            if held is not None:  # an empty held batch only carries caught_up/ack: the newer one wins
                batch = _merge(held, batch)
            held, self.held_since = batch, self.clock()
        else:
            held = _merge(held, batch)
        size = len(held)
        if (not size or stop or size >= self.limits.max_events
                or self.clock() - self.held_since >= self.limits.max_seconds
                or (self.land_when_caught_up and held.caught_up)):
            out.append(held)
            held = None
        self.held = held
        return out

    def rest(self) -> list[Batch]:
        """What is still held when the connector's batches end."""
        held, self.held = self.held, None
        return [held] if held is not None else []


def _merge(first: Batch, second: Batch) -> Batch:
    """One batch holding `first` then `second` (in seq order); the newer caught-up state, ack and position win."""
    return Batch(events=first.events + second.events, schema_changes=first.schema_changes + second.schema_changes,
                 rejects=first.rejects + second.rejects, blocks=first.blocks + second.blocks,
                 caught_up=second.caught_up, ack=second.ack if second.ack is not None else first.ack,
                 position=second.position if second.position is not None else first.position)


def coalesced(batches: Iterator[Batch], coalescer: BatchCoalescer,
              stop_requested: Callable[[], bool] = lambda: False) -> Iterator[Batch]:
    """The batches to land, from the connector's hand-overs (see BatchCoalescer)."""
    try:
        for batch in batches:
            yield from coalescer.add(batch, stop=stop_requested())
        yield from coalescer.rest()
    finally:
        close = getattr(batches, "close", None)
        if callable(close):  # run the connector generator's own clean-up before connector.close()
            close()


def _land(writer: BronzeWriter, connector: SourceConnector, batch: Batch, result: RunResult,
          metrics: RunMetrics | None = None) -> None:
    batch_id = writer.write(batch)
    connector.acknowledge(batch)
    if metrics is not None:
        metrics.landed(batch, connector.snapshot_progress)
        if batch_id is not None:
            writer.write_metrics(batch_id, metrics.samples())
    result.batches += 1 if len(batch) else 0
    result.events += batch.event_count
    result.schema_changes += len(batch.schema_changes)
    result.rejects += len(batch.rejects)
    last = batch.max_seq()
    if last is not None:
        result.last_seq = max(result.last_seq or last, last)
    if len(batch):
        log.info("%s: batch %d landed: %d events, %d schema changes, %d rejects, up to seq %s", result.source,
                 result.batches, batch.event_count, len(batch.schema_changes), len(batch.rejects), last)


def _drive(connector: SourceConnector, writer: BronzeWriter, resume: ResumeState, limits: BatchLimits,
           until_caught_up: bool, max_events: int | None, stop: _Stop, result: RunResult, display: _Progress,
           metrics: RunMetrics | None = None) -> None:
    """The batch loop: batch N is written by one background thread while the connector reads batch N+1."""
    batches = coalesced(connector.batches(resume, limits), BatchCoalescer(limits, land_when_caught_up=until_caught_up),
                        lambda: stop.requested)
    pending: Future[None] | None = None
    queued = 0  # events handed to the writer thread
    try:
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="bronze-writer") as pool:
            for batch in batches:
                if pending is not None:
                    pending.result()  # commits in order; a failed write stops the run
                    display.update()
                pending = pool.submit(_land, writer, connector, batch, result, metrics)
                queued += batch.event_count
                if until_caught_up and batch.caught_up:
                    result.stopped_by = "caught-up"
                elif max_events is not None and queued >= max_events:
                    result.stopped_by = "max-events"
                elif stop.requested:
                    result.stopped_by = "signal"
                if result.stopped_by:
                    break
            else:
                result.stopped_by = "end"
            if pending is not None:
                pending.result()
    finally:
        display.stop()
        batches.close()  # runs the connector generator's own clean-up before connector.close()


def run_source(config: ProjectConfig, source_name: str, until_caught_up: bool = False,
               max_events: int | None = None, limits: BatchLimits | None = None, progress: bool = True,
               stream: TextIO | None = None, metrics_port: int | None = None,
               metrics_host: str = "127.0.0.1") -> RunResult:
    """Ingest one source into bronze until caught up, `max_events` landed, or a stop signal; with `metrics_port`,
    Debezium's metrics of the run are served in Prometheus' format there (ingest/metrics.py)."""
    from ingest.engine import start_engine

    settings = config.source(source_name)
    limits = limits or BatchLimits()
    if max_events is not None:
        if max_events <= 0:
            raise LakecdcError("--max-events must be positive")
        limits = dataclasses.replace(limits, max_events=min(limits.max_events, max_events))
    base_dir = config.path.resolve().parent if config.path else Path.cwd()
    connector = registry.create(settings, base_dir=base_dir)  # property errors before anything connects
    result = RunResult(source=source_name)
    stop = _Stop()
    with source_lock(config, source_name), stop.installed(), _fewer_gc_passes():
        try:
            connector.validate()
            engine = start_engine(config.engine)
            writer = BronzeWriter(engine.spark, config.engine, source_name)
            resume = writer.resume_state()
            log.info("%s: %s", source_name, f"resuming after seq {resume.last_seq}" if resume.last_seq
                     else "nothing landed yet: starting from the beginning")
            reason = connector.restart_from_scratch(resume)
            if reason:  # e.g. Debezium restarts an unfinished initial snapshot from its beginning
                log.warning("%s: %s: removing what bronze holds of this source (%s)", source_name, reason,
                            writer.discard_all())
                resume = writer.resume_state()
            if connector.keeps_schema_history:  # MySQL, MariaDB, Debezium's historized connectors
                connector.restore_schema_history(writer.schema_change_rows(connector.schema_history_positions))
            metrics = server = None
            if metrics_port is not None:
                metrics = RunMetrics(source_name, settings.connector)
                server = MetricsServer(metrics, metrics_port, metrics_host)
                log.info("%s: metrics at http://%s:%d/metrics", source_name, metrics_host, server.port)
            began = time.monotonic()
            try:
                _drive(connector, writer, resume, limits, until_caught_up, max_events, stop, result,
                       _Progress(result, progress, stream or sys.stderr, connector), metrics)
            finally:
                if server is not None:
                    metrics.stopped()   # type: ignore[union-attr]
                    server.close()
            result.seconds = time.monotonic() - began
        finally:
            connector.close()
    return result
