"""Default suites per silver/gold table: keys unique and not null, column types, nullability and enum
domains, taken from the table's Spark schema and the bronze schema history of the source table it holds."""

from __future__ import annotations

from pathlib import Path

from ingest.quality.discover import Lakehouse, SourceTable, match_source_table, source_tables, table_kind
from ingest.quality.suites import ExpectationSpec, SuiteSpec, save_suite, suite_path

CDC_OPS = ["c", "u", "d", "r", "t"]


def _expect(expectation_type: str, severity: str = "fail", **kwargs: object) -> ExpectationSpec:
    return ExpectationSpec(type=expectation_type, kwargs=kwargs, severity=severity)


def default_suite(lake: Lakehouse, table: str, sources: list[SourceTable]) -> SuiteSpec:
    schema = lake.read(table).schema
    columns = [f.name for f in schema.fields]
    kind = table_kind(columns)
    is_silver = table.partition(".")[0] == lake.schemas["silver"]
    found = match_source_table(table.partition(".")[2], sources) if is_silver else None
    key = [k for k in (found.key if found else []) if k in columns]
    exps: list[ExpectationSpec] = []

    if key:
        lowered = {c.lower(): c for c in columns}
        version_col = lowered.get("valid_from_seq", lowered.get("valid_from"))  # seq: unique even within a tick
        unique_cols = key + [version_col] if kind == "history" and version_col else key
        if len(unique_cols) == 1:
            exps.append(_expect("expect_column_values_to_be_unique", column=unique_cols[0]))
        else:
            exps.append(_expect("expect_compound_columns_to_be_unique", column_list=unique_cols))
        exps.extend(_expect("expect_column_values_to_not_be_null", column=k) for k in key)

    source_cols = {c["name"]: c for c in (found.columns if found else []) if c.get("name")}
    for f in schema.fields:
        exps.append(_expect("expect_column_values_to_be_of_type", "warn", column=f.name,
                            type_=type(f.dataType).__name__))
        src = source_cols.get(f.name)
        if f.name not in key and ((src and not src["nullable"]) or not f.nullable):
            exps.append(_expect("expect_column_values_to_not_be_null", column=f.name))
        if src and src.get("enum_values"):
            exps.append(_expect("expect_column_values_to_be_in_set", column=f.name, value_set=src["enum_values"]))

    lowered = {c.lower(): c for c in columns}
    if kind == "current":
        exps.append(_expect("expect_column_values_to_not_be_null", column=lowered["_seq"]))
        if "_op" in lowered:
            exps.append(_expect("expect_column_values_to_be_in_set", column=lowered["_op"], value_set=CDC_OPS))
    if kind == "history":
        exps.append(_expect("expect_column_values_to_not_be_null", column=lowered["valid_from"]))
        exps.append(_expect("expect_column_values_to_not_be_null", column=lowered["is_current"]))

    return SuiteSpec(name=table, table=table, kind=kind, key=key, source=found.source if found else None,
                     table_id=found.table_id if found else None, expectations=_dedupe(exps))


def _dedupe(exps: list[ExpectationSpec]) -> list[ExpectationSpec]:
    seen, out = set(), []
    for e in exps:
        marker = (e.type, repr(sorted(e.kwargs.items())))
        if marker not in seen:
            seen.add(marker)
            out.append(e)
    return out


def default_suites(lake: Lakehouse, existing: list[SuiteSpec]) -> list[SuiteSpec]:
    """Default (unsaved) suites for every silver/gold table that has no suite file yet."""
    covered = {s.table for s in existing}
    missing = [t for t in lake.model_tables() if t not in covered]
    if not missing:
        return []
    sources = source_tables(lake)
    return [default_suite(lake, t, sources) for t in missing]


def write_defaults(suites: list[SuiteSpec], directory: Path) -> list[Path]:
    """Save generated suites that have no file yet; never overwrites a file."""
    written = []
    for suite in suites:
        path = suite_path(directory, suite.table)
        if suite.path is None and not path.exists():
            save_suite(suite, path)
            written.append(path)
    return written
