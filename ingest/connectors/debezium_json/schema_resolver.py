"""Schemas for change events that arrive without one (Kafka Connect's JsonConverter with schemas.enable=false).

Silver decodes a row by its value schema (the Connect types say how each column is encoded), so an event that
came without a schema is given one of its table's schemas whose row fields are exactly the event's, when its
batch closes (so the order in which partitions were fetched within a batch does not matter). Where they come from:
  1. the table's events that carried a schema (in this run, or landed before: producers that switched converters,
     a first load from files with schemas);
  2. the schema change events' tableChanges, for Debezium's MySQL and MariaDB connectors: the schemas lakecdc's
     own binlog capture builds for that table (the same Debezium type mapping), with the producing connector's
     type settings declared on the source (common_properties.producer_type_modes).
Of the matching schemas the newest not after the event (by seq) wins, else the oldest (a snapshot's schema change
and its rows share a source position). An event no schema matches lands without one, as it came; each such table
is logged once per run, and `generate` says which tables have no schema.
"""

from __future__ import annotations

import logging
import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import orjson

log = logging.getLogger(__name__)

DERIVED_CONNECTORS = ("mysql", "mariadb")   # whose tableChanges lakecdc can turn into the connector's schemas
_MAX_CANDIDATES = 1_000   # per table: schema transitions kept (out-of-order partitions could alternate)

# (table_id, seq, key schema JSON, value schema JSON) of landed events; (seq, event JSON) of landed schema changes
LandedSchemas = tuple[list[tuple[str, str, str | None, str]], list[tuple[str, str]]]


@dataclass(frozen=True, slots=True)
class _Candidate:
    seq: str
    key_schema: str | None
    value_schema: str
    fields: frozenset[str]


def row_field_names(value_schema: str) -> frozenset[str]:
    """The field names of an envelope schema's `after` struct; empty when it has none (not an envelope, or a
    MongoDB event whose rows are JSON text)."""
    for field in orjson.loads(value_schema).get("fields") or []:
        if field.get("field") == "after" and field.get("type") == "struct":
            return frozenset(f["field"] for f in field.get("fields") or [])
    return frozenset()


_EPOCH_EQUIVALENT_TIMESTAMP = re.compile(r"(\d{4}-\d{2}-00|\d{4}-00-\d{2}|0000-\d{2}-\d{2}) 00:00:00(\.\d{1,6})?|0|"
                                         r"1970-01-01 00:00:00")
_UNESCAPES = {"''": "'", "\\\\": "\\", "\\0": "\0", "\\n": "\n", "\\r": "\r", "\\Z": "\x1a"}
_ESCAPED = re.compile("|".join(re.escape(k) for k in _UNESCAPES))


def _as_ddl_reads_it(column: Any) -> None:
    """A tableChanges column (Debezium's values) in the form lakecdc's DDL reader gives the MySQL type mapping:
    enum/set options unquoted; a string default's text unescaped (the mapping escapes it as SHOW CREATE TABLE
    writes it, which is what Debezium's defaultValueExpression already holds); CURRENT_TIMESTAMP, which Debezium's
    history writes as the epoch, no default on a nullable TIMESTAMP (BinlogDefaultValueConverter)."""
    if column.enum_values:
        column.enum_values = [_ESCAPED.sub(lambda m: _UNESCAPES[m.group(0)], v[1:-1])
                              if len(v) >= 2 and v[0] == v[-1] == "'" else v for v in column.enum_values]
    if column.default is None:
        return
    base = str(column.type_name).split()[0].upper() if column.type_name else ""
    if base == "TIMESTAMP" and column.nullable and _EPOCH_EQUIVALENT_TIMESTAMP.fullmatch(column.default):
        column.has_default, column.default = False, None
    elif isinstance(column.default, str):
        column.default = _ESCAPED.sub(lambda m: _UNESCAPES[m.group(0)], column.default)


def _canonical(schema_json: str | None) -> str | None:
    """The decoder's canonical form of a schema (sorted keys): equal schemas are equal texts."""
    if schema_json is None:
        return None
    return orjson.dumps(orjson.loads(schema_json), option=orjson.OPT_SORT_KEYS).decode()


def row_fields_of(value: dict[str, Any]) -> frozenset[str] | None:
    """The field names of a change event's row (after, else before); None when its rows are not JSON objects."""
    row = value.get("after")
    if type(row) is not dict:
        row = value.get("before")
    return frozenset(row) if type(row) is dict else None


class SchemaResolver:
    """What the decoder knows of each table's schemas, and the events waiting for one (see the module's doc).
    `landed`: reads what bronze holds (ResumeState.landed_schemas), called at most once, when an event needs it."""

    def __init__(self, topic_prefix: str | None, type_modes: dict[str, str] | None = None,
                 landed: Callable[[], LandedSchemas] | None = None, source_name: str = "") -> None:
        self.topic_prefix = topic_prefix or "lakecdc"
        self.type_modes = type_modes or {}
        self.source_name = source_name
        self._landed = landed
        self._tables: dict[str, list[_Candidate]] = {}
        self._fields: dict[str, frozenset[str]] = {}   # value schema -> its row's field names
        self._pending: list[tuple[Any, frozenset[str]]] = []   # (event, its row's fields)
        self._logged: set[str] = set()
        self.unresolved: Counter[str] = Counter()   # table_id -> events landed without a schema in this run

    # -- what is known -------------------------------------------------------------------------------------------
    def row_fields(self, value_schema: str) -> frozenset[str]:
        fields = self._fields.get(value_schema)
        if fields is None:
            fields = self._fields[value_schema] = row_field_names(value_schema)
        return fields

    def note_event(self, table_id: str, seq: str, key_schema: str | None, value_schema: str) -> None:
        """An event that carried its schemas (called for every such event: the common case returns at once)."""
        known = self._tables.get(table_id)
        if known and known[-1].value_schema == value_schema and known[-1].key_schema == key_schema:
            return
        fields = self.row_fields(value_schema)
        if fields:
            self._add(table_id, _Candidate(seq, key_schema, value_schema, fields))

    def note_schema_change(self, seq: str, value: dict[str, Any]) -> None:
        """A schema change event: its tableChanges give the tables' schemas (for the connectors in
        DERIVED_CONNECTORS; others' column types have no mapping here)."""
        source = value.get("source")
        connector = source.get("connector") if isinstance(source, dict) else None
        changes = value.get("tableChanges")
        if connector not in DERIVED_CONNECTORS or not isinstance(changes, list):
            return
        for change in changes:
            if not isinstance(change, dict) or change.get("type") not in ("CREATE", "ALTER"):
                continue
            table = change.get("table")
            if not isinstance(table, dict):
                continue
            try:
                table_id, key_schema, value_schema = self._derive(connector, str(change.get("id")), table)
            except (ValueError, KeyError, TypeError) as exc:
                log.warning("sources.%s: no schema derived from the schema change of %s: %s", self.source_name,
                            change.get("id"), exc)
                continue
            self._add(table_id, _Candidate(seq, key_schema, value_schema, self.row_fields(value_schema)))

    def _derive(self, connector: str, quoted_id: str, table: dict[str, Any]) -> tuple[str, str | None, str]:
        """(table_id, key schema JSON, envelope schema JSON) the connector sends for this tableChanges table."""
        from ingest.connectors.mysql.codec import build_codec
        from ingest.connectors.mysql.filters import Filters
        from ingest.connectors.mysql.types import TypeOptions
        from ingest.schema.interpreter import table_from_debezium
        from ingest.schema.model import TableId

        modes = self.type_modes
        options = TypeOptions(modes.get("time.precision.mode", "adaptive_time_microseconds"),
                              modes.get("decimal.handling.mode", "precise"),
                              modes.get("bigint.unsigned.handling.mode", "long"),
                              modes.get("binary.handling.mode", "bytes"))
        model = table_from_debezium(TableId.parse(quoted_id, "mysql"), table, "mysql")
        for column in model.columns:
            _as_ddl_reads_it(column)
        schemas = build_codec(connector, self.topic_prefix, model, Filters(), options).schemas
        return schemas.table_id, _canonical(schemas.key_schema_json), _canonical(schemas.envelope_schema_json)

    def _add(self, table_id: str, candidate: _Candidate) -> None:
        known = self._tables.setdefault(table_id, [])
        known.append(candidate)
        if len(known) > _MAX_CANDIDATES:
            del known[0]

    # -- events without a schema ---------------------------------------------------------------------------------
    def defer(self, event: Any, fields: frozenset[str]) -> None:
        """An event without a schema (a BronzeEvent, filled in by resolve())."""
        self._pending.append((event, fields))

    def resolve(self) -> None:
        """Give every deferred event the schemas of its table that match its row (see the module's doc)."""
        pending, self._pending = self._pending, []
        if not pending:
            return
        missed = []
        for event, fields in pending:
            if not self._fill(event, fields):
                missed.append((event, fields))
        if missed and self._landed is not None:   # once per run: what bronze had before this run
            landed, self._landed = self._landed, None
            self._learn_landed(*landed())
            missed = [(event, fields) for event, fields in missed if not self._fill(event, fields)]
        for event, _ in missed:
            self.unresolved[event.table_id] += 1
            if event.table_id not in self._logged:
                self._logged.add(event.table_id)
                log.warning("sources.%s: events of %s carry no schema and none of the table's known schemas has "
                            "their columns: they land without one (silver needs one: docs/connectors/kafka.md, "
                            "Records without schemas)", self.source_name, event.table_id)

    def _fill(self, event: Any, fields: frozenset[str]) -> bool:
        best: _Candidate | None = None
        oldest: _Candidate | None = None
        for candidate in self._tables.get(event.table_id, ()):
            if candidate.fields != fields:
                continue
            if candidate.seq <= event.seq and (best is None or candidate.seq >= best.seq):
                best = candidate
            if oldest is None or candidate.seq < oldest.seq:
                oldest = candidate
        chosen = best or oldest
        if chosen is None:
            return False
        event.key_schema, event.value_schema = chosen.key_schema, chosen.value_schema
        return True

    def _learn_landed(self, events: Iterable[tuple[str, str, str | None, str]],
                      schema_changes: Iterable[tuple[str, str]]) -> None:
        learned: dict[str, list[_Candidate]] = {}
        current, self._tables = self._tables, learned
        for seq, event_json in schema_changes:
            value = orjson.loads(event_json)
            if isinstance(value, dict):
                self.note_schema_change(seq, value)
        for table_id, seq, key_schema, value_schema in events:
            self.note_event(table_id, seq, key_schema, value_schema)
        for table_id, candidates in current.items():   # this run's after bronze's
            learned.setdefault(table_id, []).extend(candidates)
        for candidates in learned.values():
            candidates.sort(key=lambda c: c.seq)
