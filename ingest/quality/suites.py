"""The declarative quality files under `expectations/` (version controlled, user-editable).

One YAML file per table suite, `expectations/<schema>/<table>.yml`::

    suite: silver.customers
    table: silver.customers
    kind: current                  # current (SCD1, has _seq) | history (SCD2) | table (anything else)
    key: [id]                      # business key; empty when unknown
    source: inventory              # bronze source and table_id, for reconciliation (optional)
    table_id: inventory.public.customers
    expectations:
      - type: expect_column_values_to_be_unique      # any great-expectations 1.x expectation type
        kwargs: {column: id}
        severity: fail                               # fail: a failure makes `lakecdc quality` exit 1
      - type: expect_column_values_to_be_in_set
        kwargs: {column: status, value_set: [active, closed]}
        severity: warn                               # warn: reported, exit code unaffected

and one project file, `expectations/project.yml`, with the report settings and the project-wide CDC
checks (see `DEFAULT_SETTINGS`).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ingest.errors import ConfigError

SEVERITIES = ("warn", "fail")
GX_SEVERITY = {"warn": "warning", "fail": "critical"}  # great-expectations' own FailureSeverity values
KINDS = ("current", "history", "table")
PROJECT_FILE = "project.yml"
PLACEHOLDER = "__debezium_unavailable_value"  # Debezium's default unavailable.value.placeholder

DEFAULT_SETTINGS: dict[str, Any] = {
    "report": {"directory": "reports/quality", "history_runs": 50, "sample_rows": 20},
    "schemas": {"bronze": "bronze", "silver": "silver", "gold": "gold"},
    "checks": {
        "placeholders": {"enabled": True, "severity": "fail", "values": [PLACEHOLDER]},
        "scd2_intervals": {"enabled": True, "severity": "fail"},
        "reconciliation": {"enabled": True, "severity": "fail"},
        "freshness": {"enabled": True, "severity": "warn", "max_age_seconds": 86400},
        "lag": {"enabled": True, "severity": "warn", "max_lag_seconds": 3600},
        "rejects": {"enabled": True, "severity": "fail", "max_count": 0},
        "schema_parse_errors": {"enabled": True, "severity": "fail"},
        "type_changes": {"enabled": True, "severity": "warn"},
        "source_values": {"enabled": False, "severity": "fail"},
    },
}


@dataclass
class ExpectationSpec:
    type: str
    kwargs: dict[str, Any]
    severity: str = "fail"
    description: str | None = None
    origin: str = "suite"  # suite: from the suite file; cdc: a project-wide CDC check

    def to_gx(self) -> Any:
        """The great-expectations Expectation object (validates type and arguments)."""
        from great_expectations.expectations.expectation_configuration import ExpectationConfiguration

        config = ExpectationConfiguration(
            type=self.type, kwargs=dict(self.kwargs), severity=GX_SEVERITY[self.severity],
            meta={"severity": self.severity, "origin": self.origin}, description=self.description)
        return config.to_domain_obj()

    def to_yaml(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.type, "kwargs": self.kwargs, "severity": self.severity}
        if self.description:
            out["description"] = self.description
        return out


@dataclass
class SuiteSpec:
    name: str
    table: str
    kind: str = "table"
    key: list[str] = field(default_factory=list)
    source: str | None = None
    table_id: str | None = None
    expectations: list[ExpectationSpec] = field(default_factory=list)
    path: Path | None = None  # None: generated defaults, not saved

    def to_yaml(self) -> dict[str, Any]:
        out: dict[str, Any] = {"suite": self.name, "table": self.table, "kind": self.kind, "key": self.key}
        if self.source:
            out["source"] = self.source
        if self.table_id:
            out["table_id"] = self.table_id
        out["expectations"] = [e.to_yaml() for e in self.expectations]
        return out


def _parse_expectation(raw: Any, where: str) -> ExpectationSpec:
    if not isinstance(raw, dict) or "type" not in raw:
        raise ConfigError(f"{where}: each expectation needs a 'type' (a great-expectations expectation type)")
    unknown = sorted(set(raw) - {"type", "kwargs", "severity", "description"})
    if unknown:
        allowed = "type, kwargs, severity, description"
        raise ConfigError(f"{where}: unknown key(s) {', '.join(unknown)} (allowed: {allowed})")
    severity = str(raw.get("severity", "fail"))
    if severity not in SEVERITIES:
        raise ConfigError(f"{where}: severity must be warn or fail, not {severity!r}")
    kwargs = raw.get("kwargs") or {}
    if not isinstance(kwargs, dict):
        raise ConfigError(f"{where}: kwargs must be a mapping")
    spec = ExpectationSpec(type=str(raw["type"]), kwargs=kwargs, severity=severity, description=raw.get("description"))
    try:
        spec.to_gx()
    except Exception as exc:  # GX raises pydantic errors and its own ExpectationNotFoundError
        reason = " ".join(str(exc).split())[:300]
        raise ConfigError(f"{where}: invalid expectation {spec.type}: {reason}") from None
    return spec


def load_suite(path: Path) -> SuiteSpec:
    try:
        raw = yaml.safe_load(path.read_text()) or {}
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: not valid YAML ({str(exc).splitlines()[0]})") from None
    if not isinstance(raw, dict) or "table" not in raw:
        raise ConfigError(f"{path}: a suite file needs at least 'table' and 'expectations'")
    unknown = sorted(set(raw) - {"suite", "table", "kind", "key", "source", "table_id", "expectations"})
    if unknown:
        raise ConfigError(f"{path}: unknown key(s) {', '.join(unknown)}")
    kind = str(raw.get("kind", "table"))
    if kind not in KINDS:
        raise ConfigError(f"{path}: kind must be one of {', '.join(KINDS)}, not {kind!r}")
    key = raw.get("key") or []
    if isinstance(key, str):
        key = [key]
    expectations = raw.get("expectations") or []
    if not isinstance(expectations, list):
        raise ConfigError(f"{path}: expectations must be a list")
    return SuiteSpec(
        name=str(raw.get("suite") or raw["table"]), table=str(raw["table"]), kind=kind, key=[str(k) for k in key],
        source=raw.get("source"), table_id=raw.get("table_id"),
        expectations=[_parse_expectation(e, f"{path} expectation {i + 1}") for i, e in enumerate(expectations)],
        path=path)


def load_suites(directory: Path) -> list[SuiteSpec]:
    """Every suite file under `directory` (the project file excluded); suite names must be unique."""
    suites: list[SuiteSpec] = []
    if not directory.is_dir():
        return suites
    seen: dict[str, Path] = {}
    for path in sorted([*directory.rglob("*.yml"), *directory.rglob("*.yaml")]):
        if path.parent == directory and path.name == PROJECT_FILE:
            continue
        suite = load_suite(path)
        if suite.name in seen:
            raise ConfigError(f"{path}: suite {suite.name!r} is also defined in {seen[suite.name]}")
        seen[suite.name] = path
        suites.append(suite)
    return suites


def suite_path(directory: Path, table: str) -> Path:
    schema, _, name = table.partition(".")
    return directory / schema / f"{name}.yml"


_HEADER = ("# lakecdc quality suite: generated from the table schema and the bronze schema history.\n"
           "# Edit freely (great-expectations 1.x expectation types; severity warn | fail); "
           "`lakecdc quality --generate` never overwrites an existing file.\n")


def save_suite(suite: SuiteSpec, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(_HEADER + yaml.safe_dump(suite.to_yaml(), sort_keys=False, allow_unicode=True))
    suite.path = path


def _merge(base: dict[str, Any], override: dict[str, Any], where: str) -> dict[str, Any]:
    out = copy.deepcopy(base)
    for key, value in override.items():
        if key not in base:
            raise ConfigError(f"{where}: unknown setting {key!r} (allowed: {', '.join(sorted(base))})")
        if isinstance(base[key], dict):
            if not isinstance(value, dict):
                raise ConfigError(f"{where}.{key} must be a mapping")
            out[key] = _merge(base[key], value, f"{where}.{key}")
        else:
            out[key] = value
    return out


def load_settings(directory: Path) -> dict[str, Any]:
    """The project file merged over the defaults; unknown keys and bad severities are one-line errors."""
    path = directory / PROJECT_FILE
    raw: dict[str, Any] = {}
    if path.exists():
        try:
            raw = yaml.safe_load(path.read_text()) or {}
        except yaml.YAMLError as exc:
            raise ConfigError(f"{path}: not valid YAML ({str(exc).splitlines()[0]})") from None
        if not isinstance(raw, dict):
            raise ConfigError(f"{path}: expected a mapping with report, schemas and checks")
    settings = _merge(DEFAULT_SETTINGS, raw, str(path))
    for name, check in settings["checks"].items():
        if check["severity"] not in SEVERITIES:
            raise ConfigError(f"{path}: checks.{name}.severity must be warn or fail, not {check['severity']!r}")
    return settings
