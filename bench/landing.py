"""Landing benchmark: Debezium JSON (kcat -J lines, JsonConverter with schemas) into bronze.

    .venv/bin/python bench/landing.py [--events 1000000] [--runs 3] [--batch-size 10000]

Generates an inventory-like event mix once (snapshot rows, then inserts, updates, deletes with tombstones;
ingest.connectors.debezium_json.sample), streamed to files of 100,000 lines. Each run lands it into a fresh
warehouse with `lakecdc run --until-caught-up` semantics in a fresh process (ingest.runner.run_source) and
reports events/s (landing time, engine start excluded, reported separately) and the process's peak RSS.
A last run on a quarter of the input shows whether memory depends on the input size (it should not: the
input is streamed and memory is bounded by the batch size).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

RUN_ONE = textwrap.dedent("""
    import json, sys, time
    began = time.perf_counter()
    from pathlib import Path
    from ingest.config import load_config
    from ingest.bronze.contract import BatchLimits
    from ingest.runner import run_source
    config = load_config(sys.argv[1])
    result = run_source(config, "bench", until_caught_up=True, progress=False,
                        limits=BatchLimits(max_events=int(sys.argv[2]), max_seconds=30))
    total = time.perf_counter() - began
    print(json.dumps({"events": result.events, "rejects": result.rejects, "seconds": result.seconds,
                      "total_seconds": total}))
""")


def generate(folder: Path, events: int, lines_per_file: int = 100_000) -> int:
    from ingest.connectors.debezium_json.sample import kcat_lines

    folder.mkdir(parents=True, exist_ok=True)
    count = 0
    out = None
    for line in kcat_lines(events, seed=11):
        if count % lines_per_file == 0:
            if out:
                out.close()
            out = open(folder / f"events-{count // lines_per_file:05d}.jsonl", "wb")  # noqa: SIM115
        out.write(line)
        count += 1
    if out:
        out.close()
    return count


def run_once(input_dir: Path, batch_size: int, limit_files: int | None = None) -> dict:
    with tempfile.TemporaryDirectory(prefix="lakecdc-bench-") as tmp:
        config = Path(tmp) / "lakecdc.yml"
        glob = "*" if limit_files is None else "events-00[0-9][0-9][0-9].jsonl"
        extra = ""
        if limit_files is not None:  # only the first files: a smaller input, same batches
            view = Path(tmp) / "input"
            view.mkdir()
            for path in sorted(input_dir.iterdir())[:limit_files]:
                os.symlink(path, view / path.name)
            input_dir = view
        config.write_text(f"engine:\n  warehouse: {Path(tmp) / 'warehouse'}\nsources:\n  bench:\n"
                          f"    connector: debezium-json\n    path: {input_dir}\n    file.glob: '{glob}'\n{extra}")
        proc = subprocess.Popen([sys.executable, "-c", RUN_ONE, str(config), str(batch_size)], cwd=ROOT,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env={**os.environ, "PYTHONPATH": str(ROOT)})
        _, status, usage = os.wait4(proc.pid, 0)
        out, err = proc.stdout.read(), proc.stderr.read()
        if status != 0:
            raise SystemExit(f"run failed:\n{err[-3000:]}")
        result = json.loads(out.strip().splitlines()[-1])
        result["peak_rss_mb"] = usage.ru_maxrss / 1024
        result["cpu_seconds"] = usage.ru_utime + usage.ru_stime
        return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=10_000)
    parser.add_argument("--input", type=Path, help="reuse (or create) the generated input in this folder")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="lakecdc-bench-input-") as tmp:
        input_dir = args.input or Path(tmp) / "input"
        if not (input_dir.is_dir() and any(input_dir.iterdir())):
            began = time.perf_counter()
            lines = generate(input_dir, args.events)
            size = sum(p.stat().st_size for p in input_dir.iterdir())
            print(f"generated {lines:,} kcat -J lines ({size / 1e9:.2f} GB) in {time.perf_counter() - began:.0f}s")
        print(f"cores: {os.cpu_count()}, load average before: {os.getloadavg()[0]:.2f}")
        results = []
        for run in range(args.runs):
            result = run_once(input_dir, args.batch_size)
            results.append(result)
            print(f"run {run + 1}: {result['events']:,} events in {result['seconds']:.1f}s = "
                  f"{result['events'] / result['seconds']:,.0f} events/s (process {result['total_seconds']:.1f}s "
                  f"incl. engine start; CPU {result['cpu_seconds']:.0f}s); peak RSS {result['peak_rss_mb']:,.0f} MB",
                  flush=True)
        rate = statistics.median(r["events"] / r["seconds"] for r in results)
        rss = max(r["peak_rss_mb"] for r in results)
        print(f"median landing rate: {rate:,.0f} events/s (target >= 50,000), batch size {args.batch_size:,}")
        cpu = statistics.median(r["events"] / r["cpu_seconds"] for r in results)
        print(f"CPU cost: {cpu:,.0f} events per CPU-second (whole process: decoding, Arrow, embedded engine); "
              f"load average after: {os.getloadavg()[0]:.2f}")
        print(f"peak RSS for {results[0]['events']:,} events: {rss:,.0f} MB")
        files = len(list(input_dir.iterdir()))
        if files >= 4:
            small = run_once(input_dir, args.batch_size, limit_files=max(1, files // 4))
            print(f"peak RSS for {small['events']:,} events (a quarter of the input): {small['peak_rss_mb']:,.0f} MB "
                  f"({small['events'] / small['seconds']:,.0f} events/s)")


if __name__ == "__main__":
    main()
