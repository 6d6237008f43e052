"""Connector name (the `connector:` setting of a source) -> connector class, imported only when used."""

from __future__ import annotations

import importlib
from pathlib import Path

from ingest.config import SourceSettings
from ingest.connectors.base import SourceConnector
from ingest.errors import ConfigError, LakecdcError

CONNECTORS: dict[str, str] = {
    "debezium-json": "ingest.connectors.debezium_json:DebeziumJsonConnector",
    "postgresql": "ingest.connectors.postgres:PostgresConnector",
    "mariadb": "ingest.connectors.mysql:MySqlConnector",
    "mysql": "ingest.connectors.mysql:MySqlConnector",
}


def known_connectors() -> list[str]:
    return sorted(CONNECTORS)


def connector_class(name: str) -> type[SourceConnector]:
    target = CONNECTORS.get(name)
    if target is None:
        raise ConfigError(f"unknown connector {name!r} (known: {', '.join(known_connectors())})")
    module_name, _, class_name = target.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise LakecdcError(f"connector {name!r} is not available: cannot import {module_name} ({exc})") from None
    cls = getattr(module, class_name, None)
    if not (isinstance(cls, type) and issubclass(cls, SourceConnector)):
        raise LakecdcError(f"connector {name!r} is not available: {target} is not a SourceConnector class")
    return cls


def create(settings: SourceSettings, base_dir: Path | None = None) -> SourceConnector:
    """Instantiate (and so validate the properties of) the connector of a source; connects to nothing.
    `base_dir` (the configuration file's folder) is passed to connectors that resolve relative paths."""
    return connector_class(settings.connector)(settings, base_dir=base_dir)
