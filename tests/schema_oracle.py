"""Helpers for the oracle tests: read a DDL corpus file, normalize catalog values for comparison."""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
from pathlib import Path

CORPUS = Path(__file__).resolve().parent / "ddl_corpus"


def read_corpus(name: str) -> list[str]:
    """Statements of a corpus file: blocks separated by a line holding only ';', '--' comment lines dropped."""
    text = (CORPUS / name).read_text()
    lines = [line for line in text.splitlines() if not line.startswith("--")]
    blocks = "\n".join(lines).split("\n;\n")
    return [b.strip() for b in blocks if b.strip()]


_NUMERIC_FAMILIES = ("int", "decimal", "float", "bool")


def _unquote(text: str) -> str:
    if len(text) >= 2 and text[0] == "'" and text[-1] == "'":
        return text[1:-1].replace("''", "'").replace("\\'", "'")
    return text


def norm_default(value: str | None, numeric: bool) -> str | None:
    """Comparable form of a default: None for no default / NULL, numbers numerically, functions lower-cased."""
    if value is None:
        return None
    text = value.strip()
    while text.startswith("(") and text.endswith(")") and text.count("(") == text.count(")"):
        text = text[1:-1].strip()
    text = re.sub(r"::[a-z ]+(\(\d+(,\d+)?\))?(\[\])?", "", text)  # PostgreSQL casts
    while text.startswith("(") and text.endswith(")") and text.count("(") == text.count(")"):
        text = text[1:-1].strip()
    if text.upper() == "NULL":
        return None
    quoted = text.startswith("'")
    text = _unquote(text)
    lowered = text.lower()
    if lowered in ("true", "false"):
        text = "1" if lowered == "true" else "0"
        lowered = text
    if lowered in ("now()", "current_timestamp", "current_timestamp()", "localtimestamp", "localtimestamp()"):
        return "current_timestamp()"
    m = re.fullmatch(r"(?:current_timestamp|now|localtimestamp)\((\d)\)", lowered)
    if m:
        return f"current_timestamp({m.group(1)})"
    if numeric:
        try:
            return str(Decimal(text).normalize())
        except InvalidOperation:
            pass
    if not quoted and re.search(r"[-+*/(]", text):  # an expression: compare without spacing
        return re.sub(r"[\s`\"]", "", text).lower()
    if re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.0+", text):
        text = text.split(".")[0]
    return text


def table_diff(server: dict, parsed: dict) -> str:
    """What differs between the server's tables and the parsed ones: {table: (columns, primary key)}."""
    out = []
    for key in sorted(set(server) | set(parsed)):
        s_t, p_t = server.get(key), parsed.get(key)
        if s_t is None or p_t is None:
            out.append(f"{key}: server={s_t is not None} parsed={p_t is not None}")
        elif s_t != p_t:
            cols = [f"server {a} parsed {b}" for a, b in zip(s_t[0], p_t[0], strict=False) if a != b]
            if len(s_t[0]) != len(p_t[0]) or s_t[1] != p_t[1]:
                cols.append(f"columns {[c[0] for c in s_t[0]]}/{[c[0] for c in p_t[0]]} pk {s_t[1]}/{p_t[1]}")
            out.append(f"{key}: " + "; ".join(cols))
    return "; ".join(out)[:2000]
