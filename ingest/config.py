"""Project configuration: `lakecdc.yml` with `${ENV}` interpolation.

Layout of the file::

    engine:
      profile: local            # local | remote | databricks | spark
      warehouse: ./warehouse    # local/spark: where Delta tables live (<warehouse>/<schema>/<table>)
      remote: sc://host:15002   # remote: Spark Connect URL
    sources:
      inventory:                # source name S -> bronze.S_events, ...
        connector: postgresql
        database.hostname: ${PGHOST}
        ...

Secrets come only from the environment through `${NAME}` or `${NAME:-default}`; they are never logged.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ingest.errors import ConfigError

DEFAULT_CONFIG_FILE = "lakecdc.yml"
ENGINE_PROFILES = ("local", "remote", "databricks", "spark")
_ENGINE_KEYS = {"profile", "warehouse", "remote", "catalog", "register_tables", "spark_conf", "host", "port"}
_INTERPOLATION = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
_SOURCE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def interpolate(value: Any, where: str = "config") -> Any:
    """Replace `${NAME}` / `${NAME:-default}` in every string of a YAML tree with environment values, keys
    included (a Debezium property name can hold a secret: column.mask.hash.SHA-256.with.salt.${SALT})."""
    if isinstance(value, dict):
        return {interpolate(k, f"{where}.{k}"): interpolate(v, f"{where}.{k}") for k, v in value.items()}
    if isinstance(value, list):
        return [interpolate(v, f"{where}[{i}]") for i, v in enumerate(value)]
    if not isinstance(value, str):
        return value

    def substitute(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        if name in os.environ:
            return os.environ[name]
        if default is not None:
            return default
        raise ConfigError(f"{where}: environment variable {name} is not set")

    return _INTERPOLATION.sub(substitute, value)


@dataclass(frozen=True)
class EngineSettings:
    profile: str = "local"
    warehouse: Path = Path("warehouse")
    remote: str | None = None
    catalog: str | None = None
    register_tables: bool | None = None  # None: on for local, off elsewhere
    spark_conf: dict[str, str] = field(default_factory=dict)
    host: str = "127.0.0.1"
    port: int = 0  # 0: any free port (embedded engine); `lakecdc serve` defaults to 15002

    # What the rest of lakecdc asks of an engine, so that only this class knows the profiles' differences.
    @property
    def warehouse_on_this_machine(self) -> bool:
        """The warehouse is a folder this process can read and lock (an embedded or classic local engine)."""
        return self.profile in ("local", "spark")

    @property
    def writes_delta_itself(self) -> bool:
        """The embedded engine, on this machine's disk: bronze's rows reach it as staged Parquet files (INSERT from
        them), and lakecdc reads the tables' properties from their Delta logs and removes expired log files."""
        return self.profile == "local"

    @property
    def tables_at_warehouse_paths(self) -> bool:
        """Tables live at <warehouse>/<schema>/<table> (Databricks manages where its tables live)."""
        return self.profile != "databricks"

    @property
    def runs_in_process(self) -> bool:
        """lakecdc started this session and stops it (the embedded engine or a Spark Connect client)."""
        return self.profile in ("local", "remote")

    @property
    def can_persist_dataframes(self) -> bool:
        """DataFrame.persist works (Sail has none: each call only logs a warning)."""
        return self.profile in ("databricks", "spark")

    @property
    def misreads_decimal_statistics(self) -> bool:
        """A Delta file's DECIMAL column whose statistics give one value is read from them, through a double
        (Sail 0.7: docs/engine.md); lakecdc's tables keep no decimal statistics there."""
        return self.profile == "local"

    @property
    def should_register_tables(self) -> bool:
        if self.register_tables is None:
            return self.warehouse_on_this_machine
        return self.register_tables


@dataclass(frozen=True)
class SourceSettings:
    name: str
    connector: str
    properties: dict[str, Any]


@dataclass(frozen=True)
class ProjectConfig:
    engine: EngineSettings
    sources: dict[str, SourceSettings]
    path: Path | None = None

    def source(self, name: str) -> SourceSettings:
        if name not in self.sources:
            known = ", ".join(sorted(self.sources)) or "none"
            raise ConfigError(f"unknown source {name!r} (configured: {known})")
        return self.sources[name]


def parse_engine(raw: dict[str, Any] | None, base_dir: Path) -> EngineSettings:
    raw = dict(raw or {})
    # Environment overrides let CI, Databricks tasks and `lakecdc serve` clients switch engines.
    if os.environ.get("LAKECDC_PROFILE"):
        raw["profile"] = os.environ["LAKECDC_PROFILE"]
    if os.environ.get("LAKECDC_WAREHOUSE"):
        raw["warehouse"] = os.environ["LAKECDC_WAREHOUSE"]
    if os.environ.get("LAKECDC_REMOTE"):
        raw["remote"] = os.environ["LAKECDC_REMOTE"]
    unknown = sorted(set(raw) - _ENGINE_KEYS)
    if unknown:
        allowed = ", ".join(sorted(_ENGINE_KEYS))
        raise ConfigError(f"engine: unknown setting(s) {', '.join(unknown)} (allowed: {allowed})")
    profile = str(raw.get("profile", "local"))
    if profile not in ENGINE_PROFILES:
        raise ConfigError(f"engine.profile: unknown profile {profile!r} (choose one of {', '.join(ENGINE_PROFILES)})")
    remote = raw.get("remote")
    if profile == "remote":
        remote = remote or os.environ.get("SPARK_REMOTE")
        if not remote or not str(remote).startswith("sc://"):
            raise ConfigError("engine.remote: the remote profile needs a Spark Connect URL like sc://host:15002")
    warehouse = Path(str(raw.get("warehouse", "warehouse"))).expanduser()
    if not warehouse.is_absolute():
        warehouse = (base_dir / warehouse).resolve()
    spark_conf = raw.get("spark_conf") or {}
    if not isinstance(spark_conf, dict):
        raise ConfigError("engine.spark_conf must be a mapping of Spark settings")
    try:
        port = int(raw.get("port", 0))
    except (TypeError, ValueError):
        raise ConfigError(f"engine.port: not a port number: {raw.get('port')!r}") from None
    return EngineSettings(
        profile=profile,
        warehouse=warehouse,
        remote=str(remote) if remote else None,
        catalog=raw.get("catalog"),
        register_tables=raw.get("register_tables"),
        spark_conf={str(k): str(v) for k, v in spark_conf.items()},
        host=str(raw.get("host", "127.0.0.1")),
        port=port,
    )


def parse_sources(raw: Any) -> dict[str, SourceSettings]:
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise ConfigError("sources must be a mapping of source name to its settings")
    sources: dict[str, SourceSettings] = {}
    for name, settings in raw.items():
        if not _SOURCE_NAME.match(str(name)):
            raise ConfigError(f"sources: {name!r} is not a valid source name (letters, digits, underscore)")
        if not isinstance(settings, dict) or "connector" not in settings:
            raise ConfigError(f"sources.{name}: needs a 'connector' setting")
        props = {str(k): v for k, v in settings.items() if k != "connector"}
        sources[str(name)] = SourceSettings(name=str(name), connector=str(settings["connector"]), properties=props)
    return sources


class _StrictLoader(yaml.SafeLoader):
    """PyYAML's safe loader, refusing a key given twice in one mapping (it would keep the last silently: a
    source defined twice, a property overridden by a copy further down)."""


def _mapping_without_duplicates(loader: _StrictLoader, node: yaml.MappingNode, deep: bool = False) -> dict:
    first: dict[Any, yaml.Mark] = {}
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=True)
        if key in first and key != "<<":
            raise yaml.constructor.ConstructorError(
                None, None, f"key {key!r} given twice (first on line {first[key].line + 1})", key_node.start_mark)
        first.setdefault(key, key_node.start_mark)
    return loader.construct_mapping(node, deep=deep)


_StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _mapping_without_duplicates)


def load_config(path: str | os.PathLike[str] | None = None) -> ProjectConfig:
    """Load the project configuration; with no file, the defaults (local engine, ./warehouse)."""
    explicit = path is not None or bool(os.environ.get("LAKECDC_CONFIG"))
    config_path = Path(path or os.environ.get("LAKECDC_CONFIG") or DEFAULT_CONFIG_FILE)
    if not config_path.exists():
        if explicit:
            raise ConfigError(f"configuration file not found: {config_path}")
        return ProjectConfig(engine=parse_engine(None, Path.cwd()), sources={}, path=None)
    try:
        raw = yaml.load(config_path.read_text(), Loader=_StrictLoader) or {}  # noqa: S506 - a SafeLoader
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        where = f"{config_path}:{mark.line + 1}:{mark.column + 1}" if mark is not None else str(config_path)
        raise ConfigError(f"{where}: not valid YAML ({exc.problem or exc.context})") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{config_path}: not valid YAML ({str(exc).splitlines()[0]})") from None
    if not isinstance(raw, dict):
        raise ConfigError(f"{config_path}: expected a mapping with 'engine' and 'sources'")
    unknown = sorted(set(raw) - {"engine", "sources"})
    if unknown:
        raise ConfigError(f"{config_path}: unknown top-level key(s) {', '.join(unknown)} (allowed: engine, sources)")
    raw = interpolate(raw, where=config_path.name)
    base_dir = config_path.resolve().parent
    return ProjectConfig(
        engine=parse_engine(raw.get("engine"), base_dir),
        sources=parse_sources(raw.get("sources")),
        path=config_path,
    )
