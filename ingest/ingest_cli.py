"""`lakecdc run` (ingest sources into bronze) and `lakecdc status` (what bronze holds per source)."""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from typing import Any

from ingest.bronze.contract import BatchLimits, ResumeState
from ingest.config import ProjectConfig
from ingest.errors import LakecdcError


def _positive(kind: type):
    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
        if value <= 0:
            raise argparse.ArgumentTypeError(f"must be positive: {text!r}")
        return value
    return parse


def _port(text: str) -> int:
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port number: {text!r}") from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"not a port number (0-65535): {text!r}")
    return port


def _sources(args: argparse.Namespace, config: ProjectConfig) -> list[str]:
    if args.source:
        config.source(args.source)  # unknown name -> ConfigError listing the configured ones
        return [args.source]
    if not config.sources:
        where = config.path or "lakecdc.yml (not found)"
        raise LakecdcError(f"no sources configured in {where}")
    return sorted(config.sources)


def _one_source(args: argparse.Namespace, config: ProjectConfig) -> str:
    """The source an action on one source's server side is for (`source drop-slot`, `source reset`)."""
    names = _sources(args, config)
    if len(names) > 1:
        raise LakecdcError(f"several sources are configured ({', '.join(names)}): choose one with --source")
    return names[0]


def cmd_run(args: argparse.Namespace, config: ProjectConfig) -> int:
    from ingest.runner import run_source

    names = _sources(args, config)
    if len(names) > 1 and not (args.until_caught_up or args.max_events):
        raise LakecdcError("several sources are configured: choose one with --source, or use --until-caught-up "
                           "or --max-events to ingest them one after the other")
    defaults = BatchLimits()
    limits = BatchLimits(max_events=args.batch_size or defaults.max_events,
                         max_seconds=args.batch_seconds or defaults.max_seconds)
    for name in names:
        result = run_source(config, name, until_caught_up=args.until_caught_up, max_events=args.max_events,
                            limits=limits, progress=not args.quiet, metrics_port=args.metrics_port,
                            metrics_host=args.metrics_host)
        if args.json:
            print(json.dumps({"source": name, "events": result.events, "schema_changes": result.schema_changes,
                              "rejects": result.rejects, "batches": result.batches,
                              "seconds": round(result.seconds, 3),
                              "events_per_second": round(result.events_per_second, 1),
                              "last_seq": result.last_seq, "stopped_by": result.stopped_by}), flush=True)
        else:
            print(f"{name}: landed {result.events:,} events, {result.schema_changes:,} schema changes, "
                  f"{result.rejects:,} rejects in {result.batches:,} batches, {result.seconds:.1f}s "
                  f"({result.events_per_second:,.0f} events/s); stopped: {result.stopped_by}", flush=True)
    return 0


def _lag(ms: int | None) -> str:
    if ms is None:
        return "-"
    seconds = ms / 1000
    if abs(seconds) < 120:
        return f"{seconds:.1f}s"
    if abs(seconds) < 7200:
        return f"{seconds / 60:.1f}m"
    if abs(seconds) < 172800:
        return f"{seconds / 3600:.1f}h"
    return f"{seconds / 86400:.1f}d"


def cmd_drop_slot(args: argparse.Namespace, config: ProjectConfig) -> int:
    """`lakecdc source drop-slot`: what everyone needs who deletes the warehouse to start over while the old
    slot still holds WAL on the server (or whose slot belongs to another plugin)."""
    from ingest.connectors import registry

    name = _one_source(args, config)
    base_dir = config.path.resolve().parent if config.path else None
    connector = registry.create(config.source(name), base_dir=base_dir)
    try:
        print(f"{name}: {connector.release()}")
    finally:
        connector.close()
    return 0


def cmd_signal(args: argparse.Namespace, config: ProjectConfig) -> int:
    """`lakecdc signal ACTION`: write a Debezium signal into the source's signalling table (or its signal file, the
    file channel); the running `lakecdc run` acts on it when it streams past it (docs/signals.md)."""
    from ingest.connectors import registry

    name = _one_source(args, config)
    data: dict[str, object] = {}
    if args.action == "execute-snapshot":
        if not args.tables:
            raise LakecdcError("execute-snapshot needs --tables (schema.table names or regular expressions)")
        data = {"data-collections": args.tables, "type": args.type}
        conditions = []
        for item in args.condition or []:
            table, sep, condition = item.partition("=")
            if not (sep and table and condition):
                raise LakecdcError(f"--condition {item!r}: expected TABLE=FILTER, e.g. "
                                   "public.orders=\"status = 'open'\"")
            conditions.append({"data-collection": table, "filter": condition})
        if conditions:
            data["additional-conditions"] = conditions
        if args.surrogate_key:
            data["surrogate-key"] = args.surrogate_key
    elif args.action == "stop-snapshot":
        data = {"type": "incremental", **({"data-collections": args.tables} if args.tables else {})}
    elif args.action == "log":
        data = {"message": args.message or ""}
    base_dir = config.path.resolve().parent if config.path else None
    connector = registry.create(config.source(name), base_dir=base_dir)
    try:
        signal_id = connector.send_signal(args.action, data)
    finally:
        connector.close()
    print(f"{name}: signal {args.action} written (id {signal_id}); `lakecdc run` acts on it as it streams past it")
    return 0


def cmd_reset(args: argparse.Namespace, config: ProjectConfig) -> int:
    """`lakecdc source reset`: start a source over. Its slot (PostgreSQL) and its bronze tables go; the next
    `lakecdc run` takes a new snapshot and silver is rebuilt with `dbt build --full-refresh`."""
    import shutil

    from ingest.bronze.contract import BRONZE_SCHEMA, table_name
    from ingest.bronze.writer import OPTIONAL_TABLES, TABLES
    from ingest.connectors import registry
    from ingest.runner import source_lock

    name = _one_source(args, config)
    if not config.engine.warehouse_on_this_machine:
        raise LakecdcError(f"source reset removes a local warehouse's folders; on the {config.engine.profile} "
                           f"engine drop the tables bronze.{name}_* yourself, then `lakecdc source drop-slot`")
    folders = [config.engine.warehouse / BRONZE_SCHEMA / table_name(name, kind)
               for kind in (*TABLES, "schema_history", *OPTIONAL_TABLES)]
    present = [f for f in folders if f.exists()]
    if not args.yes:
        raise LakecdcError(f"source reset deletes what {name} has landed ({len(present)} bronze tables under "
                           f"{config.engine.warehouse / BRONZE_SCHEMA}) and its replication slot: add --yes")
    base_dir = config.path.resolve().parent if config.path else None
    with source_lock(config, name):  # not while this source is being ingested
        connector = registry.create(config.source(name), base_dir=base_dir)
        try:
            print(f"{name}: {connector.release(missing_ok=True)}", flush=True)
        finally:
            connector.close()
        for folder in present:
            shutil.rmtree(folder)
    print(f"{name}: removed {len(present)} bronze tables ({', '.join(f.name for f in present) or 'none'}); next: "
          f"`lakecdc run` takes a new snapshot, then `lakecdc dbt build --full-refresh` rebuilds silver", flush=True)
    return 0


def cmd_status(args: argparse.Namespace, config: ProjectConfig) -> int:
    """Exit 0 when every source is landed, reachable (unless --no-source) and, with --max-lag, within it;
    1 otherwise (for monitoring), with the problems named."""
    from ingest.bronze.status import landed_resume_state, source_status
    from ingest.engine import start_engine

    names = _sources(args, config)
    spark = start_engine(config.engine).spark
    reports = []
    for name in names:
        st = source_status(spark, name, config.engine.catalog)
        report: dict[str, Any] = {"source": name, **dataclasses.asdict(st), "source_lag": None, "problems": []}
        if not st.landed:
            report["problems"].append("not landed yet")
        elif args.max_lag is not None and st.lag_ms is not None and st.lag_ms > args.max_lag * 1000:
            report["problems"].append(f"lag {_lag(st.lag_ms)} is over --max-lag {args.max_lag:g}s")
        if st.landed and not args.no_source:
            text, reachable = _source_lag(config, name, landed_resume_state(spark, name, config.engine.catalog))
            report["source_lag"] = text
            if not reachable:
                report["problems"].append(text)
        reports.append(report)
    if args.json:
        print(json.dumps(reports, indent=2))
    else:
        print(f"{'source':<20} {'events':>12} {'batches':>8} {'rejects':>8} {'schema chg':>10} {'lag':>8}  last seq")
        for r in reports:
            if not r["landed"]:
                print(f"{r['source']:<20} {'not landed yet':>12}")
                continue
            print(f"{r['source']:<20} {r['events']:>12,} {r['batches']:>8,} {r['rejects']:>8,} "
                  f"{r['schema_changes']:>10,} {_lag(r['lag_ms']):>8}  {r['last_seq'] or '-'}")
            if r["source_lag"]:
                print(f"  {r['source_lag']}")
        for r in reports:
            for problem in r["problems"]:
                print(f"problem: {r['source']}: {problem}", file=sys.stderr)
    return 1 if any(r["problems"] for r in reports) else 0


def _source_lag(config: ProjectConfig, name: str, landed: ResumeState) -> tuple[str | None, bool]:
    """(the connector's own view of its lag (PostgreSQL: the replication slot), or why it is unavailable, or
    None when the connector reports none; whether the source answered)."""
    from ingest.connectors import registry

    base_dir = config.path.resolve().parent if config.path else None
    connector = None
    try:
        connector = registry.create(config.source(name), base_dir=base_dir)
        return connector.source_lag(landed), True
    except Exception as exc:  # status must still print the other sources
        text = str(exc).strip().splitlines()
        return f"source not reachable: {text[0] if text else type(exc).__name__}", False
    finally:
        if connector is not None:
            connector.close()


def add_commands(sub: argparse._SubParsersAction) -> None:
    run = sub.add_parser("run", help="ingest a source into its bronze tables (exactly once)",
                         description="Read change events from a configured source and land them in bronze "
                                     "(bronze.S_events, S_schemas, S_schema_changes, S_rejects), resuming where "
                                     "the last run committed. Runs until stopped (SIGTERM/Ctrl-C stop after the "
                                     "current batch) unless --until-caught-up or --max-events is given.")
    run.add_argument("--source", help="source name from the configuration (default: the only one)")
    stop = run.add_mutually_exclusive_group()
    stop.add_argument("--until-caught-up", action="store_true",
                      help="stop once the source has nothing more to give")
    stop.add_argument("--max-events", type=_positive(int), metavar="N",
                      help="stop after the batch in which N events were landed")
    run.add_argument("--batch-size", type=_positive(int), metavar="N",
                     help=f"events per micro-batch (default {BatchLimits().max_events})")
    run.add_argument("--batch-seconds", type=_positive(float), metavar="S",
                     help=f"close a micro-batch after S seconds (default {BatchLimits().max_seconds:g})")
    run.add_argument("--json", action="store_true",
                     help="print each source's summary as one JSON object (events, batches, seconds, stopped_by...)")
    run.add_argument("--metrics-port", type=_port, metavar="PORT",
                     help="serve Debezium's connector metrics of the run in Prometheus' format at "
                          "http://HOST:PORT/metrics (docs/metrics.md)")
    run.add_argument("--metrics-host", default="127.0.0.1", metavar="HOST",
                     help="the address the metrics are served on (default 127.0.0.1; 0.0.0.0: every interface)")
    run.set_defaults(func=cmd_run)

    source = sub.add_parser("source", help="act on a source's server side (drop-slot, reset)",
                            description="Operations on what a source holds on its server.")
    source_sub = source.add_subparsers(dest="source_command", metavar="ACTION", required=True)
    drop = source_sub.add_parser("drop-slot", help="drop the source's PostgreSQL replication slot (not in use)",
                                 description="Drop the replication slot of a PostgreSQL source, e.g. after deleting "
                                             "the warehouse to start over. A slot in use is refused.")
    drop.add_argument("--source", help="source name from the configuration (default: the only one)")
    drop.add_argument("--config", default=argparse.SUPPRESS, help="project configuration file")
    drop.set_defaults(func=cmd_drop_slot)
    reset = source_sub.add_parser("reset", help="start a source over: drop its slot and its bronze tables",
                                  description="Delete a source's bronze tables (S_events, S_schemas, "
                                              "S_schema_changes, S_rejects, S_schema_history, S_metrics) and "
                                              "drop its PostgreSQL replication slot, so that the next `lakecdc "
                                              "run` takes a new snapshot; rebuild silver afterwards with `lakecdc "
                                              "dbt build --full-refresh`. Refused while the source is being "
                                              "ingested.")
    reset.add_argument("--source", help="source name from the configuration (default: the only one)")
    reset.add_argument("--yes", action="store_true", help="really delete (without it: say what would go)")
    reset.add_argument("--config", default=argparse.SUPPRESS, help="project configuration file")
    reset.set_defaults(func=cmd_reset)

    signal = sub.add_parser("signal", help="send a Debezium signal to a source (incremental snapshots, log)",
                            description="Insert a signal into the source's signalling table "
                                        "(signal.data.collection), or append it to its signal file (signal.file, "
                                        "when the file channel is on and no table is set); the running `lakecdc "
                                        "run` carries it out when it "
                                        "streams past it: execute-snapshot (an incremental or --type blocking "
                                        "snapshot of --tables, optionally with --condition), stop-snapshot, "
                                        "pause-snapshot, resume-snapshot, log. Progress: the run's log and "
                                        "notification rows in bronze (docs/signals.md).")
    signal.add_argument("action", choices=("execute-snapshot", "stop-snapshot", "pause-snapshot", "resume-snapshot",
                                           "log"))
    signal.add_argument("--source", help="source name from the configuration (default: the only one)")
    signal.add_argument("--tables", nargs="+", metavar="TABLE",
                        help="schema.table names or regular expressions (execute-snapshot; stop-snapshot: "
                             "default all)")
    signal.add_argument("--condition", action="append", metavar="TABLE=FILTER",
                        help="an additional condition for one table's rows: a SQL boolean expression or a whole "
                             "SELECT over the table (repeatable)")
    signal.add_argument("--type", choices=("incremental", "blocking"), default="incremental",
                        help="snapshot type: incremental (chunks interleaved with streaming) or blocking "
                             "(streaming pauses while the tables are read)")
    signal.add_argument("--surrogate-key", metavar="COLUMN",
                        help="read the tables' chunks in the order of this column instead of the primary key (a "
                             "NOT NULL column with a unique index of its own; e.g. for a table without primary key)")
    signal.add_argument("--message", help="the text of a log signal")
    signal.set_defaults(func=cmd_signal)

    status = sub.add_parser("status", help="per source: events landed, last seq, rejects, lag",
                            description="Print, per configured source, what its bronze tables hold: events, "
                                        "batches, rejects, schema changes, lag (now - newest source ts_ms) "
                                        "and the last seq; below it, the source's own lag where the connector "
                                        "reports one (PostgreSQL: WAL behind the slot's confirmed position). "
                                        "Exits 1 when a source is not landed yet, does not answer, or lags past "
                                        "--max-lag, naming the problem on stderr.")
    status.add_argument("--source", help="only this source")
    status.add_argument("--json", action="store_true", help="print the figures as JSON (one object per source)")
    status.add_argument("--max-lag", type=_positive(float), metavar="SECONDS",
                        help="exit 1 when a source's newest landed change is older than this (a quiet source "
                             "lags too: choose it above its quietest hour)")
    status.add_argument("--no-source", action="store_true",
                        help="do not connect to the sources (by default, connectors that can report their own lag, "
                             "such as PostgreSQL's replication slot, are asked)")
    status.set_defaults(func=cmd_status)
