"""Ctrl-C during `lakecdc dbt build` (ingest.dbt_runner.interrupt_engine_on_ctrl_c) when the kernel hands the
signal to a thread other than the main one. The end-to-end Ctrl-C of a running build is
tests/integration/bronze/test_ctrl_c.py. Also the garbage collector's settings for dbt's run (run_dbt)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.conftest import ROOT

pytestmark = pytest.mark.unit


_CTRL_C_ELSEWHERE = """
import queue, signal, sys, threading, time, types
from ingest.dbt_runner import interrupt_engine_on_ctrl_c

models = queue.Queue()
models.put("slow")
release = threading.Event()

def model():
    models.get()
    release.wait()
    models.task_done()

def watchdog():
    if not release.wait(60):
        print("released by the watchdog", flush=True)
        release.set()

def ctrl_c_elsewhere():   # once the main thread sleeps in the join, SIGINT to this thread
    main = threading.main_thread().ident
    while sys._current_frames()[main].f_code.co_name != "wait":
        time.sleep(0.01)
    time.sleep(0.2)   # into the lock's wait (sooner, the handler would still run on the way: no hang to see)
    signal.pthread_kill(threading.get_ident(), signal.SIGINT)

threading.Thread(target=watchdog, daemon=True).start()
engine = types.SimpleNamespace(interruptAll=lambda: [])   # only the signal's path is under test here
try:
    with interrupt_engine_on_ctrl_c(engine):
        threading.Thread(target=model, daemon=True).start()
        threading.Thread(target=ctrl_c_elsewhere).start()
        try:
            models.join()   # dbt's GraphQueue.join
        finally:
            release.set()
except KeyboardInterrupt:
    print("KeyboardInterrupt", flush=True)
"""


def test_ctrl_c_taken_by_another_thread_still_reaches_dbt() -> None:
    """The kernel may hand SIGINT to any thread of the process. When it is not the main thread, which sleeps in
    dbt's queue join until the running model returns, Python's handler cannot run until then (dbt waited for
    the model: a hang): the signal must be sent on to the main thread, which then gets its KeyboardInterrupt.
    Deterministic: the signal goes to a chosen thread (pthread_kill), and the model returns only when released,
    in a fresh interpreter (under pytest the main thread happens to wake up anyway)."""
    result = subprocess.run([sys.executable, "-c", _CTRL_C_ELSEWHERE], capture_output=True, text=True, timeout=300,
                            cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert result.stdout.strip() == "KeyboardInterrupt", result.stdout + result.stderr[-2000:]


def test_full_collections_are_rare_during_dbt_and_as_before_after_it() -> None:
    import gc

    from ingest.dbt_runner import DBT_FULL_COLLECTION_THRESHOLD, _rare_full_collections

    before = gc.get_threshold()
    with _rare_full_collections():
        assert gc.get_threshold() == (*before[:2], DBT_FULL_COLLECTION_THRESHOLD)
        gc.freeze()  # as _run_dbt does once dbt is loaded
        assert gc.get_freeze_count() > 0
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0


_MACRO_COMPILE = """
import threading, types
import dbt_common.clients.jinja as jinja
from ingest import dbt_runner

compiled = []
real = jinja.get_template

def counting(string, ctx, node=None, **kwargs):
    compiled.append(dbt_runner.MACRO_COMPILE_LOCK.locked())
    return real(string, ctx, node=node, **kwargs)

jinja.get_template = counting
dbt_runner.compile_each_macro_once()
dbt_runner.compile_each_macro_once()   # a second dbt run in the process: still one wrapper
cache = jinja.TemplateCache()
node = types.SimpleNamespace(macro_sql="{% macro m() %}x{% endmacro %}", name="m", unique_id="macro.t.m")
start = threading.Barrier(8)
templates = []

def call():
    start.wait()
    templates.append(cache.get_node_template(node))

threads = [threading.Thread(target=call) for _ in range(8)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print(compiled, len({id(t) for t in templates}))
"""


def test_threads_calling_a_new_macro_at_once_compile_it_once_under_the_lock():
    """compile_each_macro_once: eight threads asking dbt's template cache for the same new macro at once get one
    template, compiled once and under the lock (dbt's own cache has no lock: each thread that missed compiled it)."""
    result = subprocess.run([sys.executable, "-c", _MACRO_COMPILE], capture_output=True, text=True, cwd=ROOT,
                            timeout=120, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.split() == ["[True]", "1"]
