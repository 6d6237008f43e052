"""`lakecdc demo`: the end-to-end demo, and `lakecdc demo generate` for the data alone."""

from __future__ import annotations

import argparse
from pathlib import Path

from ingest.config import ProjectConfig
from ingest.demo.generate import DEFAULT_CHANGES, DEFAULT_SEED, generate_demo
from ingest.errors import LakecdcError


def _size_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help=f"random seed (default {DEFAULT_SEED})")
    parser.add_argument("--changes", type=int, default=DEFAULT_CHANGES,
                        help=f"row changes after the snapshot, at least 100 (default {DEFAULT_CHANGES})")


def add_commands(subparsers: argparse._SubParsersAction) -> None:  # noqa: SLF001
    demo = subparsers.add_parser(
        "demo", help="end-to-end demo on generated Debezium inventory data",
        description="Generate Debezium's inventory example as Kafka records (snapshot, thousands of changes, "
                    "a key change, a column added and one renamed, late and duplicated deliveries), land them "
                    "in bronze, build the schema history, run dbt and the quality checks, and print a summary. "
                    "Steps whose parts are not installed yet are reported as pending.")
    demo.add_argument("--dir", default="demo", help="demo folder, rebuilt on every run (default ./demo)")
    _size_options(demo)
    demo.set_defaults(func=cmd_demo)
    sub = demo.add_subparsers(dest="demo_command", metavar="SUBCOMMAND")
    gen = sub.add_parser("generate", help="only write the records and the expected final state",
                         description="Write <out>/events/inventory.jsonl (Kafka records, Debezium MySQL "
                                     "connector, topic prefix inventory), <out>/expected/<table>.jsonl "
                                     "and <out>/manifest.json.")
    gen.add_argument("--out", required=True, help="output folder")
    _size_options(gen)
    gen.set_defaults(func=cmd_generate)


def cmd_generate(args: argparse.Namespace, config: ProjectConfig) -> int:
    data = generate_demo(Path(args.out), seed=args.seed, changes=args.changes)
    print(f"lakecdc demo generate: {data.records} records -> {data.events_file}")
    print(f"  expected final state: {data.expected_dir} "
          + ", ".join(f"{t} {n}" for t, n in data.expected_rows.items()))
    return 0


def cmd_demo(args: argparse.Namespace, config: ProjectConfig) -> int:
    from ingest.demo.pipeline import run_demo
    from ingest.demo.summary import render_summary

    if args.changes < 100:
        raise LakecdcError(f"demo: --changes must be at least 100 (got {args.changes})")
    run = run_demo(Path(args.dir), seed=args.seed, changes=args.changes)
    print(render_summary(run), flush=True)
    return 0 if run.ok else 1
