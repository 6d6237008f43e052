"""The docs' property tables, generated from the connectors' declarations (`connectors/properties.py`).

A table goes between the lines `<!-- properties: CONNECTOR -->` and `<!-- end properties -->` in any Markdown
file under docs/. `python -m ingest.connectors.property_docs` rewrites them; with `--check` it only reports the files
that are out of date (exit 1), as tests/unit/test_properties.py does.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable
from pathlib import Path

from ingest.connectors.properties import Field, FieldSet
from ingest.connectors.registry import property_fields

DOCS = Path(__file__).resolve().parents[2] / "docs"
# a block: the marker lines alone on their lines
_BLOCK = re.compile(r"^(<!-- properties: (?P<connector>\S+) -->\n)(?P<body>.*?)^(<!-- end properties -->)$",
                    re.DOTALL | re.MULTILINE)


def _code(values: Iterable[str]) -> str:
    return ", ".join(f"`{value}`" for value in values)


def _notes(spec: Field) -> str:
    notes = [spec.doc] if spec.doc else []
    if spec.kind == "choice":
        older = ", ".join(f"`{old}` = `{new}`" for old, new in spec.value_aliases.items())
        notes.append(f"one of {_code(spec.allowed)}" + (f" (older values: {older})" if older else ""))
    elif spec.kind == "choice-list":
        notes.append(f"any of {_code(spec.allowed)}, or `none`")
    elif spec.kind == "regex-list":
        notes.append("comma-separated regular expressions")
    elif spec.kind == "list":
        notes.append("comma-separated")
    elif spec.kind == "int" and (spec.minimum or spec.maximum is not None):
        notes.append(f"at least {spec.minimum}" + (f", at most {spec.maximum}" if spec.maximum is not None else ""))
    elif spec.pattern_meaning:
        notes.append(spec.pattern_meaning)
    if spec.exclusive_with:
        notes.append(f"not with `{spec.exclusive_with}`")
    if spec.aliases:
        notes.append(f"older name: {_code(spec.aliases)}")
    return "; ".join(notes)


def table(fields: FieldSet) -> str:
    """A Markdown table of the declared properties, then the names accepted and ignored and those refused."""
    lines = ["| property | default | notes |", "|---|---|---|"]
    for spec in fields.used():
        default = "required" if spec.required else f"`{spec.show(spec.default)}`" if spec.show(spec.default) else ""
        lines.append(f"| `{spec.name}` | {default} | {_notes(spec)} |")
    ignored = [spec.name for spec in fields if spec.ignored]
    refused_fields = [spec for spec in fields if spec.unsupported]
    refused = [spec.name for spec in refused_fields]
    if ignored:
        lines += ["", f"Accepted and ignored (Kafka Connect's own settings, or without effect here): {_code(ignored)}."]
    if refused:
        # a declared property is accepted even where a refused pattern covers it (signal.data.collection, signal.*)
        covered = any(refusal.covers(spec.name) for spec in fields.used() for refusal in refused_fields)
        apart = " apart from the properties declared above" if covered else ""
        lines += ["", f"Refused{apart} (Debezium features lakecdc does not support yet): {_code(refused)}."]
    return "\n".join(lines) + "\n"


def render(text: str) -> str:
    """`text` with every property table block filled from the declarations."""
    return _BLOCK.sub(lambda m: m.group(1) + table(property_fields(m.group("connector"))) + m.group(4), text)


def documented_connectors(docs: Path = DOCS) -> set[str]:
    """The connectors whose property tables the docs hold."""
    return {m.group("connector") for path in docs.rglob("*.md") for m in _BLOCK.finditer(path.read_text())}


def out_of_date(docs: Path = DOCS) -> list[Path]:
    return [path for path in sorted(docs.rglob("*.md")) if render(path.read_text()) != path.read_text()]


def main(argv: list[str]) -> int:
    stale = out_of_date()
    if "--check" in argv:
        for path in stale:
            print(f"{path}: property table out of date (python -m ingest.connectors.property_docs)")
        return 1 if stale else 0
    for path in stale:
        path.write_text(render(path.read_text()))
        print(f"rewrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
