"""Run dbt in-process against the configured engine (dbt-spark, `method: session`).

dbt-spark's session method asks PySpark for `SparkSession.builder.getOrCreate()`; with `SPARK_REMOTE`
pointing at the engine's URL (which carries the engine's session id) dbt joins the very session that
holds the re-registered warehouse tables.
"""

from __future__ import annotations

import contextlib
import gc
import io
import os
import signal
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ingest.config import ProjectConfig
from ingest.engine import start_engine

PROJECT_ROOT_MARKER = "dbt_project.yml"
# lakecdc's dbt package (macros, materializations, generic tests), shipped inside the wheel; projects made by
# `lakecdc init` install it with packages.yml, the repository's own project uses its macros in place
DBT_PACKAGE_DIR = Path(__file__).resolve().parent / "dbt_package"
DBT_PACKAGE_MACROS = DBT_PACKAGE_DIR / "macros"


def find_project_dir(start: Path | None = None) -> Path | None:
    """The dbt project directory: the nearest folder upwards holding dbt_project.yml."""
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / PROJECT_ROOT_MARKER).exists():
            return folder
    return None


def dbt_environment(config: ProjectConfig, remote_url: str | None) -> dict[str, str]:
    """Environment variables dbt needs to reach the engine and place tables."""
    env = {"LAKECDC_WAREHOUSE": str(config.engine.warehouse)}
    if remote_url:
        env["SPARK_REMOTE"] = remote_url
    return env


def install_dbt_packages(project_dir: Path) -> None:
    """`dbt deps` in `project_dir` (lakecdc's package is a local one: no network); raises with dbt's last line."""
    from dbt.cli.main import dbtRunner

    from ingest.errors import LakecdcError

    output = io.StringIO()
    with contextlib.redirect_stdout(output), contextlib.redirect_stderr(output):
        result = dbtRunner().invoke(["deps", "--project-dir", str(project_dir), "--profiles-dir", str(project_dir),
                                     "--log-path", str(project_dir / "logs")])
    if not result.success:
        lines = [line for line in output.getvalue().splitlines() if line.strip()]
        raise LakecdcError(f"dbt deps failed in {project_dir}: {lines[-1] if lines else result.exception}")


def _packages_missing(project_dir: Path) -> bool:
    """packages.yml names lakecdc's package but `dbt deps` has not installed it yet."""
    packages = project_dir / "packages.yml"
    return packages.is_file() and "local:" in packages.read_text() and not (project_dir / "dbt_packages").is_dir()


# Full garbage collections during `lakecdc dbt`: one in ten times as often as Python's default (every 100th
# collection of the middle generation, not every 10th). See run_dbt.
DBT_FULL_COLLECTION_THRESHOLD = 100


MACRO_COMPILE_LOCK = threading.Lock()


def compile_each_macro_once() -> None:
    """dbt compiles a macro's Jinja template on the macro's first call and keeps it for the process, but without a
    lock: at the start of a build dbt's threads call the same macros at once, and each thread compiled each of them
    (lakecdc_read_table_spec alone takes 0.1 s), one after the other under the interpreter lock they share. In a
    20-table build the 81 macros' compiling took 5.1 s (summed over the threads), 1.2 s with the lock: a macro is
    compiled once and the other threads take it from dbt's cache. Idempotent (a process may run dbt again)."""
    from dbt_common.clients.jinja import TemplateCache

    compile_once = TemplateCache.get_node_template
    if getattr(compile_once, "lakecdc_locked", False):
        return

    def get_node_template(self: TemplateCache, node: Any) -> Any:
        template = self.file_cache.get(node.macro_sql)
        if template is not None:
            return template
        with MACRO_COMPILE_LOCK:
            return compile_once(self, node)  # looks in the cache again: another thread may have compiled it

    get_node_template.lakecdc_locked = True  # type: ignore[attr-defined]
    TemplateCache.get_node_template = get_node_template  # type: ignore[method-assign]


def run_dbt(config: ProjectConfig, args: list[str]) -> int:
    """Invoke dbt with `args` in this process; returns dbt's exit code (0 ok, 1 failures, 2 error).

    Python's full garbage collections walk every object the process holds (dbt's modules and manifest, about a
    million), under the interpreter lock that dbt's threads share: a 20-table build spent 1.3-1.8 s in the 7 it ran.
    So the objects that live as long as the process (imports, the engine's client) are frozen out of the
    collector's walks once loaded, and full collections come rarely; the young generations still collect
    as usual, so a build's memory stays the same (peak 519-565 MB before, 528-536 MB after). Both are undone on return,
    for callers that go on in the same process."""
    with _rare_full_collections():
        return _run_dbt(config, args)


@contextlib.contextmanager
def _rare_full_collections() -> Iterator[None]:
    young, middle, oldest = gc.get_threshold()
    gc.set_threshold(young, middle, DBT_FULL_COLLECTION_THRESHOLD)
    try:
        yield
    finally:
        gc.unfreeze()
        gc.set_threshold(young, middle, oldest)


def _run_dbt(config: ProjectConfig, args: list[str]) -> int:
    from dbt.cli.main import dbtRunner

    engine = start_engine(config.engine)
    compile_each_macro_once()
    gc.freeze()  # dbt's and the engine client's modules, loaded by now
    os.environ.update(dbt_environment(config, engine.remote_url))
    project_dir = find_project_dir()
    if project_dir is not None and args[:1] not in (["deps"], ["clean"]) and _packages_missing(project_dir):
        print("lakecdc: installing dbt packages (dbt deps)", flush=True)
        install_dbt_packages(project_dir)
    if project_dir is not None:
        if "--project-dir" not in args and "DBT_PROJECT_DIR" not in os.environ:
            args = [*args, "--project-dir", str(project_dir)]
        if "--profiles-dir" not in args and "DBT_PROFILES_DIR" not in os.environ:
            if (project_dir / "profiles.yml").exists():
                args = [*args, "--profiles-dir", str(project_dir)]
    with interrupt_engine_on_ctrl_c(engine.spark):
        result = dbtRunner().invoke(args)
    if isinstance(result.exception, KeyboardInterrupt):
        return 130  # the shell's code for Ctrl-C
    if result.exception is not None:
        return 2
    return 0 if result.success else 1


@contextlib.contextmanager
def interrupt_engine_on_ctrl_c(spark: Any) -> Iterator[None]:
    """Ctrl-C during dbt: dbt gets its KeyboardInterrupt and cancels, and the engine's queries are interrupted
    (Spark Connect interruptAll) until dbt has returned: dbt-spark's session method cannot cancel a query, so
    dbt would wait for the running model to finish, and a model whose query starts just after the signal would
    run to its end.

    The kernel may hand SIGINT to any thread of the process. Python's handler runs in the main thread, which
    sleeps in dbt's queue join until the running model returns: when another thread took the signal, nothing
    woke it and dbt waited for the model (a hang in about one Ctrl-C in five given right as a model starts).
    So a thread reads the signal's byte from a wakeup fd (signal.set_wakeup_fd) and, unless the handler has
    run by then, sends SIGINT on to the main thread, whose wait it interrupts."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.getsignal(signal.SIGINT)
    stopping = threading.Event()
    done = threading.Event()

    def keep_interrupting() -> None:
        while not done.is_set():
            try:
                spark.interruptAll()
            except Exception:  # noqa: BLE001 - the engine may be gone already; dbt still has to stop
                pass
            done.wait(0.5)

    def interrupt(signum: int, frame: Any) -> None:
        if not stopping.is_set():
            stopping.set()
            threading.Thread(target=keep_interrupting, name="lakecdc-interrupt", daemon=True).start()
        if callable(previous):
            previous(signum, frame)   # Python's default handler: KeyboardInterrupt
        else:
            raise KeyboardInterrupt

    read_end, write_end = os.pipe()
    os.set_blocking(write_end, False)

    main = threading.main_thread().ident

    def watch_wakeups() -> None:
        try:
            while data := os.read(read_end, 64):
                # the handler normally runs at once; waiting a moment for it keeps one Ctrl-C one interrupt
                if signal.SIGINT in data and not stopping.wait(0.2) and main is not None:
                    signal.pthread_kill(main, signal.SIGINT)
        finally:
            os.close(read_end)

    signal.signal(signal.SIGINT, interrupt)
    previous_wakeup = signal.set_wakeup_fd(write_end, warn_on_full_buffer=False)
    threading.Thread(target=watch_wakeups, name="lakecdc-sigint-wakeup", daemon=True).start()
    try:
        yield
    finally:
        done.set()
        signal.set_wakeup_fd(previous_wakeup)
        signal.signal(signal.SIGINT, previous)
        os.close(write_end)   # the watcher reads EOF, closes its end and ends
