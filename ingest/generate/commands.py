"""`lakecdc generate [--source S] [--models-dir DIR]`."""

from __future__ import annotations

import argparse
from pathlib import Path

from ingest.config import ProjectConfig
from ingest.errors import LakecdcError


def generate(config: ProjectConfig, sources: list[str], models_dir: Path):
    from ingest.engine import start_engine
    from ingest.generate.catalog import captured_tables
    from ingest.generate.render import WriteResult, keyless_note, model_names, render_source, write_files

    spark = start_engine(config.engine).spark
    result = WriteResult([], [], [])
    for source in sources:
        captured = captured_tables(spark, source)
        if not captured:
            raise LakecdcError(f"generate: source {source!r} has no captured tables in bronze yet (run ingest first)")
        tables = [t for t in captured if t.has_schema]
        if tables:
            write_files(render_source(source, tables, models_dir), result)
        result.notes += [keyless_note(t, base) for t, base in model_names(tables) if not t.keys]
        result.notes += [note for t in captured for note in t.notes]
    return result


def cmd_generate(args: argparse.Namespace, config: ProjectConfig) -> int:
    if args.source:
        config.source(args.source)  # unknown source: a clear error
        sources = [args.source]
    else:
        sources = sorted(config.sources)
    if not sources:
        raise LakecdcError("generate: no sources configured in lakecdc.yml")
    result = generate(config, sources, Path(args.models_dir))
    for path in result.written:
        print(f"wrote     {path}")
    for path in result.kept:
        print(f"kept      {path} (edited by hand; delete it to regenerate)")
    for note in result.notes:
        print(f"note      {note}")
    print(f"{len(result.written)} written, {len(result.unchanged)} unchanged, {len(result.kept)} kept")
    return 0


def add_commands(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("generate", help="write dbt staging/silver/history models for every captured table",
                            description="Write model files and YAML from bronze (schema registry and history). "
                                        "Re-running is idempotent; files edited by hand are never overwritten.")
    parser.add_argument("--source", help="only this source (default: every configured source)")
    parser.add_argument("--models-dir", default="models", help="dbt models folder (default: models)")
    parser.set_defaults(func=cmd_generate)
