"""The layering of docs/architecture.md, enforced: no module of `ingest` imports a module of a later layer, and
no two modules import each other in a circle (function-level imports included)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

INGEST = Path(__file__).resolve().parents[2] / "ingest"
# in order; a module belongs to the longest prefix listed (module paths relative to `ingest`)
LAYERS: list[list[str]] = [
    ["errors", "config", "sqlutil", "__init__"],
    ["events"],
    ["bronze.contract", "events.to_bronze"],
    ["schema"],
    ["connectors"],
    ["engine", "delta_log"],
    ["bronze"],
    ["metrics", "runner"],
    ["schema.store", "schema.commands"],
    ["generate", "dbt_runner", "project_init"],
    ["quality"],
    ["cli", "ingest_cli", "doctor", "demo"],
]


def layer_of(module: str) -> int:
    best: tuple[int, int] | None = None
    for index, names in enumerate(LAYERS):
        for name in names:
            if (module == name or module.startswith(name + ".")) and (best is None or len(name) > best[1]):
                best = (index, len(name))
    assert best is not None, f"ingest.{module} is in no layer of LAYERS (docs/architecture.md)"
    return best[0]


def imports() -> dict[str, set[str]]:
    """module -> the ingest modules it imports (anywhere in the file)."""
    out: dict[str, set[str]] = {}
    for path in sorted(INGEST.rglob("*.py")):
        module = ".".join(path.relative_to(INGEST).with_suffix("").parts).removesuffix(".__init__")
        found = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("ingest."):
                base = node.module.removeprefix("ingest.")
                for alias in node.names:  # `from ingest.pkg import module` imports the module, not pkg
                    sub = f"{base}.{alias.name}"
                    found.add(sub if (INGEST / (sub.replace(".", "/") + ".py")).exists() else base)
            elif isinstance(node, ast.Import):
                found.update(a.name.removeprefix("ingest.") for a in node.names if a.name.startswith("ingest."))
        out[module] = found
    return out


def test_no_module_imports_a_later_layer() -> None:
    wrong = [f"ingest.{module} (layer {layer_of(module)}) imports ingest.{target} (layer {layer_of(target)})"
             for module, targets in imports().items() for target in sorted(targets)
             if layer_of(target) > layer_of(module)]
    assert not wrong, "\n".join(wrong)


def test_no_import_circles() -> None:
    graph = imports()
    known = set(graph)

    def resolve(name: str) -> str | None:
        while name and name not in known:
            name = name.rpartition(".")[0]
        return name or None

    edges = {m: {t for t in (resolve(x) for x in targets) if t and t != m} for m, targets in graph.items()}
    circles, state = [], {}

    def visit(node: str, path: list[str]) -> None:
        state[node] = "open"
        for nxt in sorted(edges[node]):
            if state.get(nxt) == "open":
                circles.append(" -> ".join(path[path.index(nxt):] + [node, nxt]) if nxt in path else f"{node} -> {nxt}")
            elif nxt not in state:
                visit(nxt, path + [node])
        state[node] = "done"

    for module in sorted(edges):
        if module not in state:
            visit(module, [])
    assert not circles, "import circles:\n" + "\n".join(circles)


def test_runner_writer_and_commands_name_no_connector() -> None:
    """Adding a connector touches its package and the registry only: the runner, the bronze writer and the
    commands reach connectors through the registry and the SourceConnector interface, never by name."""
    from ingest.connectors.registry import CONNECTORS

    named = re.compile("[\"'](" + "|".join(re.escape(name) for name in CONNECTORS) + ")[\"']")
    for module in ("runner.py", "bronze/writer.py", "bronze/status.py", "cli.py", "ingest_cli.py", "doctor.py"):
        found = named.findall((INGEST / module).read_text())
        assert not found, f"ingest/{module} names connectors {found}"
