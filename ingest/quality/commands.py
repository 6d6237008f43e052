"""`lakecdc quality [--select PATTERN ...] [--generate] [--output DIR]`."""

from __future__ import annotations

import argparse
from pathlib import Path

from ingest.config import ProjectConfig


def cmd_quality(args: argparse.Namespace, config: ProjectConfig) -> int:
    from ingest.quality.api import run_quality

    run = run_quality(config, select=args.select, generate=args.generate,
                      output=Path(args.output) if args.output else None,
                      expectations_dir=Path(args.expectations) if args.expectations else None)
    for path in run.generated:
        print(f"generated {path}", flush=True)
    for suite in run.result.suites:
        failed = [o for o in suite.outcomes if not o.success]
        print(f"{suite.status.upper():4} {suite.name}: {len(suite.outcomes) - len(failed)}/{len(suite.outcomes)} "
              "expectations passed", flush=True)
        for o in failed:
            print(f"     {o.severity:4} {o.description}" + (f" [error: {o.error}]" if o.error else ""), flush=True)
    if run.keyless:
        print(f"note: {len(run.keyless)} silver tables have no key ({', '.join(run.keyless)}): uniqueness, "
              "reconciliation and source values are not checked for them (docs/silver.md: tables without a "
              "primary key)", flush=True)
    from ingest.quality.report import overall_status

    print(f"{overall_status(run.result).upper()}: {len(run.result.suites)} suites; report: {run.index}  "
          f"({run.result.duration_s:.1f} s)", flush=True)
    return run.result.exit_code


def add_commands(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "quality", help="run the great-expectations suites and CDC checks, write the quality report",
        description="Validate silver/gold tables (suites in expectations/) and the project-wide CDC checks on "
                    "the engine; write HTML + JSON under reports/quality/. Exit 1 when an expectation of "
                    "severity fail fails.")
    parser.add_argument("--select", nargs="+", metavar="PATTERN",
                        help="suites to run: names or glob patterns (silver.*, cdc.*, customers)")
    parser.add_argument("--generate", action="store_true",
                        help="write default suite files for tables that have none (never overwrites)")
    parser.add_argument("--output", help="report directory (default: report.directory of expectations/project.yml)")
    parser.add_argument("--expectations", help="suites directory (default: ./expectations)")
    parser.set_defaults(func=cmd_quality)
