"""The `lakecdc` command line."""

from __future__ import annotations

import argparse
import atexit
import dataclasses
import importlib
import os
import signal
import sys
import threading
from collections.abc import Sequence
from pathlib import Path

from ingest import __version__
from ingest.config import ProjectConfig, load_config
from ingest.errors import LakecdcError

# Modules that add subcommands: each defines `add_commands(subparsers)`, and every parser it adds calls
# `set_defaults(func=...)` with a function (args, config) -> exit code. One line per module.
COMMAND_MODULES: tuple[str, ...] = (
    "ingest.ingest_cli",
    "ingest.schema.commands",
    "ingest.generate.commands",
    "ingest.quality.commands",
    "ingest.demo.commands",
    "ingest.project_init",
)


def cmd_serve(args: argparse.Namespace, config: ProjectConfig) -> int:
    from ingest.engine import start_engine

    settings = dataclasses.replace(config.engine, profile="local", host=args.host, port=args.port)
    engine = start_engine(settings)
    exports = {"SPARK_REMOTE": engine.remote_url, "LAKECDC_WAREHOUSE": str(settings.warehouse)}
    if args.env_file:  # written atomically: scripts wait for the file to appear
        env_file = Path(args.env_file)
        partial = env_file.with_name(env_file.name + ".partial")
        partial.write_text("".join(f'export {key}="{value}"\n' for key, value in exports.items()))
        partial.replace(env_file)
    print("lakecdc serve: Spark Connect endpoint ready. In another shell:", flush=True)
    for key, value in exports.items():
        print(f"  export {key}='{value}'", flush=True)
    print("  dbt build        # or any Spark Connect client; Ctrl-C stops the server", flush=True)
    stop = threading.Event()
    # set after the server started: Sail's own Ctrl-C handler would stop the server but not this loop
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stop.set())
    try:
        # keep the shared session alive (and notice a dead server) every 30 s; react to Ctrl-C/SIGTERM at once
        while not stop.wait(30):
            engine.spark.sql("SELECT 1").collect()
    finally:
        engine.stop()
    return 0


def cmd_dbt(args: argparse.Namespace, config: ProjectConfig) -> int:
    from ingest.dbt_runner import run_dbt

    dbt_args = list(args.dbt_args)
    if dbt_args and dbt_args[0] == "--":
        dbt_args = dbt_args[1:]
    if not dbt_args:
        raise LakecdcError("lakecdc dbt needs dbt arguments, e.g. `lakecdc dbt build`")
    return run_dbt(config, dbt_args)


def cmd_doctor(args: argparse.Namespace, config: ProjectConfig) -> int:
    from ingest.doctor import run_doctor

    results = run_doctor(config)
    for result in results:
        mark = "ok  " if result.ok else "FAIL"
        print(f"{mark} {result.name}: {result.detail}", flush=True)
        if result.properties:
            print(f"     properties: {result.properties}", flush=True)
    return 0 if all(r.ok for r in results) else 1


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="lakecdc",
        description="Change data capture into Delta bronze tables, dbt silver/gold and quality reports.",
    )
    parser.add_argument("--version", action="version", version=f"lakecdc {__version__}")
    parser.add_argument("--config", help="project configuration file (default: ./lakecdc.yml or $LAKECDC_CONFIG)")
    chatter = parser.add_mutually_exclusive_group()
    chatter.add_argument("-v", "--verbose", action="store_true",
                         help="also log what lakecdc does step by step (each table of a snapshot, each batch)")
    chatter.add_argument("-q", "--quiet", action="store_true",
                         help="no progress display and no warnings; errors and each command's result still print")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    serve = sub.add_parser("serve", help="run a long-lived local Spark Connect endpoint for dbt and other clients",
                           description="Start the embedded Sail engine on a fixed port, register the warehouse "
                                       "tables and print the SPARK_REMOTE value other processes use.")
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    serve.add_argument("--port", type=int, default=15002, help="port to listen on (default 15002; 0 = any)")
    serve.add_argument("--env-file", help="also write the export lines to this file")
    serve.set_defaults(func=cmd_serve)

    dbt = sub.add_parser("dbt", help="run dbt in-process against the configured engine",
                         description="Run dbt (e.g. `lakecdc dbt build --select silver`) against the engine.")
    dbt.add_argument("dbt_args", nargs=argparse.REMAINDER, help="arguments passed to dbt")
    dbt.set_defaults(func=cmd_dbt)

    doctor = sub.add_parser("doctor", help="check engine, warehouse, dbt project and source databases",
                            description="Exit non-zero with one line per failed check.")
    doctor.set_defaults(func=cmd_doctor)

    for module in COMMAND_MODULES:
        importlib.import_module(module).add_commands(sub)
    # `lakecdc run --config F` as well as `lakecdc --config F run` (dbt's arguments all go to dbt)
    for name, command in sub.choices.items():
        if name != "dbt":
            command.add_argument("--config", default=argparse.SUPPRESS,
                                 help="project configuration file (as before the command)")
            command.add_argument("-v", "--verbose", action="store_true", default=argparse.SUPPRESS,
                                 help="as before the command")
            command.add_argument("-q", "--quiet", action="store_true", default=argparse.SUPPRESS,
                                 help="as before the command")
    return parser


def configure_logging(verbose: bool, quiet: bool) -> None:
    """lakecdc's log lines on stderr: warnings and errors by default; --verbose adds the step-by-step INFO lines
    with the time, --quiet leaves errors only."""
    import logging

    logger = logging.getLogger("ingest")
    for old in [h for h in logger.handlers if getattr(h, "lakecdc_cli", False)]:
        logger.removeHandler(old)  # main() called again in one process (tests): one handler
    handler = logging.StreamHandler(sys.stderr)
    handler.lakecdc_cli = True  # type: ignore[attr-defined]
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s" if verbose
                                           else "lakecdc: %(levelname)s: %(message)s", datefmt="%H:%M:%S"))
    logger.addHandler(handler)
    logger.setLevel(logging.INFO if verbose else logging.ERROR if quiet else logging.WARNING)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.verbose and args.quiet:
        parser.error("--verbose and --quiet exclude each other")
    configure_logging(args.verbose, args.quiet)
    try:
        config = load_config(args.config)
        return int(args.func(args, config) or 0)
    except LakecdcError as exc:
        print(f"lakecdc: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # a full disk, a read-only or missing folder: what and where, in one line
        where = f": {exc.filename}" if exc.filename else ""
        print(f"lakecdc: error: {exc.strerror or exc}{where}", file=sys.stderr)
        return 2
    except Exception as exc:
        # the engine's own errors (a full disk under the warehouse arrives as one): its first line, not the
        # client's 40-line traceback; anything else is a bug and keeps its traceback
        if not type(exc).__module__.startswith("pyspark."):
            raise
        lines = [line for line in str(exc).splitlines() if line.strip()]
        print(f"lakecdc: error: the engine failed: {lines[0] if lines else type(exc).__name__}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("lakecdc: interrupted", file=sys.stderr)
        return 130


def console_main() -> None:
    """Entry point `lakecdc`. After dbt ran in this process (`lakecdc dbt ...`), the process ends without Python's
    teardown, which frees dbt's million objects one by one: 1.2-1.4 s at the end of every build, for nothing.
    The exit handlers still run first (dbt's log files are flushed and closed, the engine's client closes), and
    only daemon threads are left by then."""
    code = main()
    if "dbt.cli.main" in sys.modules:
        atexit._run_exitfuncs()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    sys.exit(code)


def job_main() -> None:
    """Entry point `lakecdc-job` for Databricks python_wheel_task: the job runner calls the function and
    ignores its return value, so a failure must raise; success returns normally (see docs/databricks.md)."""
    code = main()
    if code:
        raise SystemExit(code)


if __name__ == "__main__":
    console_main()
