"""Decode one input line (a Kafka record as JSON) into what bronze lands.

Accepted lines (one JSON object per line):
  - a Kafka record: `topic`, `partition`, `offset`, `key`, `value` (kcat -J calls it `payload`),
    `headers`, `timestamp`/`ts`; key and value either embedded JSON or JSON text in a string, each with
    or without the JsonConverter envelope `{"schema": ..., "payload": ...}`;
  - a bare value (no `topic`): the Debezium value itself; the topic is derived from its source block.

What a value is:
  - null                        a tombstone (op NULL, value NULL)
  - has `op`                    a change event (c, u, d, r, t, m)
  - has `ddl` or `tableChanges` a schema change event -> S_schema_changes
  - any other JSON object       heartbeat or transaction metadata: landed with op NULL, table_id = topic
Anything else raises RecordError and becomes a reject.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import orjson

from ingest.connectors.debezium_json.schema_resolver import SchemaResolver, row_field_names, row_fields_of
from ingest.connectors.debezium_json.seq import START_MAIN, full_seq, main_seq, schema_change_tie, tiebreak

OPS = frozenset({"c", "u", "d", "r", "t", "m"})
_SCHEMA_PREFIX = '{"schema":'
_PAYLOAD_SEP = ',"payload":'
_SCHEMA_CACHE_LIMIT = 10_000


class RecordError(Exception):
    """The line cannot be landed as an event: `stage` is decode (not JSON) or parse (not Debezium)."""

    def __init__(self, stage: str, message: str) -> None:
        super().__init__(message)
        self.stage = stage


class DecodedEvent(NamedTuple):
    """The fields of a BronzeEvent, in order, without its position (set when the batch closes)."""

    topic: str
    table_id: str
    op: str | None
    seq: str
    key: str | None
    value: str | None
    key_schema: str | None
    value_schema: str | None
    ts_ms: int | None
    source_ts_ms: int | None
    txn_id: str | None
    snapshot: str | None


class DecodedSchemaChange(NamedTuple):
    """The fields of a BronzeSchemaChange, in order, without its position."""

    seq: str
    ts_ms: int | None
    database_name: str | None
    schema_name: str | None
    ddl: str | None
    table_changes: str | None
    event: str


def _opt_int(value: Any, what: str) -> int | None:
    if value is None or type(value) is int:
        return value
    try:
        return int(value)
    except (TypeError, ValueError):
        raise RecordError("parse", f"{what} is not a number: {str(value)[:80]}") from None


def _opt_str(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _dumps(value: Any) -> str:
    return orjson.dumps(value).decode()


class Decoder:
    """Stateful decoder: caches canonical schemas, remembers each topic's table_id (for tombstones) and
    the main seq of the last positioned event (inherited by events without a position)."""

    def __init__(self, topic_prefix: str | None = None, prev_main: str | None = None,
                 event_type: type = DecodedEvent, resolver: SchemaResolver | None = None) -> None:
        """`event_type` builds the events from the DecodedEvent fields, positionally: the connector passes
        BronzeEvent (its position defaults to None and is set when the batch closes), which saves building
        each row twice. `resolver`: change events without a schema get one when their batch closes
        (resolve_schemas(); needs a mutable `event_type`)."""
        self.topic_prefix = topic_prefix
        self.resolver = resolver
        self._event = event_type
        # The main seq of the last positioned event; the main seq of the last schema change and how many were
        # read at it (they take their arrival order there). `prev_main` carries all three across restarts.
        main, _, schema_change = (prev_main or START_MAIN).partition("#")
        ddl_main, _, count = schema_change.partition("#")
        self._main = main
        self._ddl_main, self._ddl_count = ddl_main, int(count or 0)
        self._ddl_ties: dict[str, str] = {}   # at _ddl_main: hash of a schema change -> its tiebreak
        self._schemas: dict[str, str] = {}  # schema JSON text as found -> canonical JSON (interned)
        self._topic_tables: dict[str, str] = {}
        self._table_ids: dict[tuple[Any, ...], str] = {}
        # topic -> (`{"schema":S,"payload":` text as found, canonical S) of its last key / value
        self._key_prefixes: dict[str, tuple[str, str | None]] = {}
        self._value_prefixes: dict[str, tuple[str, str | None]] = {}
        self._row_fields: dict[str, frozenset[str]] = {}   # canonical value schema -> its row's field names

    # -- key / value parts -------------------------------------------------------------------------
    def _canonical_schema(self, schema_text: str | None, schema_obj: Any = None) -> str | None:
        if schema_text is None:
            if schema_obj is None:
                return None
            schema_text = _dumps(schema_obj)
        canonical = self._schemas.get(schema_text)
        if canonical is None:
            obj = schema_obj if schema_obj is not None else orjson.loads(schema_text)
            if obj is None:
                return None
            canonical = orjson.dumps(obj, option=orjson.OPT_SORT_KEYS).decode()
            if len(self._schemas) >= _SCHEMA_CACHE_LIMIT:
                self._schemas.clear()
            # intern: equal canonical schemas share one str object (its hash is computed once)
            canonical = self._schemas.setdefault(canonical, canonical)
            self._schemas[schema_text] = canonical
        return canonical

    def _part(self, raw: Any, what: str, prefixes: dict[str, tuple[str, str | None]] | None = None,
              topic: str | None = None) -> tuple[str | None, str | None, Any]:
        """(canonical schema, payload JSON text, payload object) of a key or value.

        `prefixes` remembers, per topic, the text `{"schema":S,"payload":` of the last enveloped part and
        its canonical schema: the next part of the topic usually starts with the same text, which a
        startswith compares without searching, slicing or hashing the (large) schema text again."""
        if raw is None:
            return None, None, None
        if isinstance(raw, str):
            if prefixes is not None:
                known = prefixes.get(topic)  # type: ignore[arg-type]
                if known is not None and raw.startswith(known[0]) and raw.endswith("}"):
                    # Same split as the search below would find: the prefix ends with the first `,"payload":`.
                    payload_text = raw[len(known[0]):-1]
                    try:
                        payload = orjson.loads(payload_text)
                    except orjson.JSONDecodeError:
                        pass
                    else:
                        return known[1], (payload_text if payload is not None else None), payload
            # Fast path for JsonConverter text `{"schema":S,"payload":P}`: split without re-serializing.
            # If the split point were inside S, P would have unbalanced braces and fail to parse.
            if raw.startswith(_SCHEMA_PREFIX) and raw.endswith("}"):
                cut = raw.find(_PAYLOAD_SEP)
                if cut > 0:
                    payload_text = raw[cut + len(_PAYLOAD_SEP):-1]
                    try:
                        payload = orjson.loads(payload_text)
                    except orjson.JSONDecodeError:
                        pass
                    else:
                        schema = self._canonical_schema(raw[len(_SCHEMA_PREFIX):cut])
                        if prefixes is not None:
                            if len(prefixes) >= _SCHEMA_CACHE_LIMIT:
                                prefixes.clear()
                            prefixes[topic] = (raw[:cut + len(_PAYLOAD_SEP)], schema)  # type: ignore[index]
                        return schema, (payload_text if payload is not None else None), payload
            try:
                obj = orjson.loads(raw)
            except orjson.JSONDecodeError as exc:
                raise RecordError("decode", f"{what} is not JSON: {exc}") from None
            if not (isinstance(obj, dict) and len(obj) == 2 and "schema" in obj and "payload" in obj):
                return None, raw, obj
        else:
            obj = raw
        if isinstance(obj, dict) and len(obj) == 2 and "schema" in obj and "payload" in obj:
            payload = obj["payload"]
            schema = self._canonical_schema(None, obj["schema"])
            return schema, (_dumps(payload) if payload is not None else None), payload
        return None, _dumps(obj), obj

    # -- records -----------------------------------------------------------------------------------
    def decode(self, line: bytes) -> DecodedEvent | DecodedSchemaChange | None:
        """Decode one line (events as `event_type`, DecodedEvent by default); None for a blank line.
        Raises RecordError."""
        try:
            record = orjson.loads(line)
        except orjson.JSONDecodeError as exc:
            if not line.strip():
                return None
            raise RecordError("decode", f"not JSON: {exc}") from None
        if not isinstance(record, dict):
            raise RecordError("decode", f"a line must hold a JSON object, not {type(record).__name__}")
        if "topic" in record:
            topic = record["topic"]
            if not isinstance(topic, str) or not topic:
                raise RecordError("parse", "record topic is not a non-empty string")
            return self.decode_record(topic, record.get("key"),
                                      record["value"] if "value" in record else record.get("payload"))
        else:  # a bare Debezium value
            topic = None
            key_schema = key_text = None
            value_schema, value_text, value = self._part(record, "value")
        return self._classify(topic, key_schema, key_text, value_schema, value_text, value)

    def decode_record(self, topic: str, key: Any, value: Any) -> DecodedEvent | DecodedSchemaChange:
        """Decode one Kafka record's parts (JSON text, or JSON already parsed), e.g. as the real Debezium's
        JsonConverter wrote them. Raises RecordError."""
        key_schema, key_text, _ = self._part(key, "key", self._key_prefixes, topic)
        value_schema, value_text, parsed = self._part(value, "value", self._value_prefixes, topic)
        return self._classify(topic, key_schema, key_text, value_schema, value_text, parsed)

    def _schema_change_tie(self, main: str, digest: str) -> str:
        """The schema change's arrival index at its main seq (schema changes come in order, from one topic
        partition, whatever events of other positions come between); one delivered twice keeps its first."""
        if main != self._ddl_main:
            self._ddl_main, self._ddl_count = main, 0
            self._ddl_ties.clear()
        tie = self._ddl_ties.get(digest)
        if tie is None:
            tie = self._ddl_ties[digest] = schema_change_tie(self._ddl_count)
            self._ddl_count += 1
        return tie

    @property
    def prev_main(self) -> str:
        """Where the decoder is, for a restart to go on from (Decoder(prev_main=...)): the main seq of the last
        positioned event, then (when schema changes were read) `#<main seq of the last one>#<how many there>`."""
        return f"{self._main}#{self._ddl_main}#{self._ddl_count}" if self._ddl_count else self._main

    @property
    def main(self) -> str:
        """The main seq of the last positioned event (what events without a position inherit)."""
        return self._main

    @main.setter
    def main(self, main: str) -> None:
        """Go on after an event another decoder read (debezium_engine/decoding.py): its main seq."""
        self._main = main

    def note_topic_table(self, topic: str, table_id: str) -> None:
        """The topic's last data change event, read by another decoder, belongs to `table_id`."""
        self._topic_tables[topic] = table_id

    def canonical_schema(self, schema_text: str | None) -> str | None:
        """The canonical JSON of a schema (JsonConverter's `schema` part), interned."""
        return self._canonical_schema(schema_text)

    def resolve_schemas(self) -> None:
        """The batch closes: its events without a schema get one where the resolver finds one."""
        if self.resolver is not None:
            self.resolver.resolve()

    def part(self, text: str | None, what: str) -> tuple[str | None, str | None]:
        """(canonical schema JSON, payload JSON text) of one key or value JsonConverter wrote (the payload's
        text as written). Raises RecordError."""
        schema, payload_text, _ = self._part(text, what)
        return schema, payload_text

    def decode_payloads(self, topic: str, key_schema: str | None, key: str | None, value_schema: str | None,
                        value: str | None) -> DecodedEvent | DecodedSchemaChange:
        """Decode one record given as JSON texts: key and value as JsonConverter writes them without schemas,
        each with its schema's JSON (JsonConverter's `schema` part) apart, None when absent. The schema texts are
        expected to repeat as the same str objects (their hashes computed once). Raises RecordError."""
        try:
            parsed = orjson.loads(value) if value is not None else None
        except orjson.JSONDecodeError as exc:
            raise RecordError("decode", f"value is not JSON: {exc}") from None
        return self._classify(topic, self._canonical_schema(key_schema), key, self._canonical_schema(value_schema),
                              value if parsed is not None else None, parsed)

    def _check_rows(self, value_schema: str, value: dict[str, Any]) -> None:
        """The before/after rows hold exactly the fields their schema names (JsonConverter writes every field,
        nulls included); a payload that disagrees with its schema is a reject, not a row with missing columns."""
        fields = self._row_fields.get(value_schema)
        if fields is None:
            fields = self._row_fields[value_schema] = row_field_names(value_schema)
        if not fields:
            return
        for image in ("after", "before"):
            row = value.get(image)
            if type(row) is dict and row.keys() != fields:
                missing, extra = sorted(fields - row.keys()), sorted(row.keys() - fields)
                raise RecordError("parse", f"the payload's {image} row disagrees with its schema (missing "
                                           f"{missing[:5]}, not in the schema {extra[:5]})")

    def _classify(self, topic: str | None, key_schema: str | None, key_text: str | None,
                  value_schema: str | None, value_text: str | None, value: Any,
                  ) -> DecodedEvent | DecodedSchemaChange:
        if value is None:
            if topic is None:
                raise RecordError("parse", "a bare null value has no topic")
            return self._inherited(topic, self._topic_table(topic), None, key_text, None, key_schema, None,
                                   None, None)
        if not isinstance(value, dict):
            raise RecordError("parse", f"value payload is not a JSON object but {type(value).__name__}")
        source = value.get("source")
        if source is not None and not isinstance(source, dict):
            raise RecordError("parse", "source is not a JSON object")
        ts_ms = value.get("ts_ms")
        if ts_ms is not None and type(ts_ms) is not int:
            ts_ms = _opt_int(ts_ms, "ts_ms")
        source_ts_ms = source.get("ts_ms") if source else None
        if source_ts_ms is not None and type(source_ts_ms) is not int:
            source_ts_ms = _opt_int(source_ts_ms, "source.ts_ms")
        if topic is None:
            topic = self._derive_topic(source)
        if "op" in value:
            op = value["op"]
            if op not in OPS:
                raise RecordError("parse", f"unknown op {str(op)[:20]!r}")
            if value_schema is not None:
                self._check_rows(value_schema, value)
            table_id = self._source_table(source) or self._topic_table(topic)
            self._topic_tables[topic] = table_id
            try:
                main = main_seq(source, ts_ms)
            except (TypeError, ValueError) as exc:
                raise RecordError("parse", f"unusable source position: {exc}") from None
            self._main = main
            seq = full_seq(main, tiebreak(topic, key_text), False)
            snapshot = _opt_str(source.get("snapshot")) if source else None
            event = self._event(topic, table_id, op, seq, key_text, value_text, key_schema, value_schema, ts_ms,
                                source_ts_ms, _txn_id(value, source), snapshot)
            resolver = self.resolver
            if resolver is not None:
                if value_schema is not None:
                    resolver.note_event(table_id, seq, key_schema, value_schema)
                elif op != "t":
                    fields = row_fields_of(value)
                    if fields is not None:
                        resolver.defer(event, fields)
            return event
        if "ddl" in value or "tableChanges" in value:
            try:
                main = main_seq(source, ts_ms)
            except (TypeError, ValueError) as exc:
                raise RecordError("parse", f"unusable source position: {exc}") from None
            self._main = main
            changes = value.get("tableChanges")
            ddl = _opt_str(value.get("ddl"))
            seq = full_seq(main, self._schema_change_tie(main, tiebreak(topic, ddl, _dumps(changes))), False)
            if self.resolver is not None:
                self.resolver.note_schema_change(seq, value)
            return DecodedSchemaChange(
                seq=seq,
                ts_ms=ts_ms,
                database_name=_opt_str(value.get("databaseName")),
                schema_name=_opt_str(value.get("schemaName")),
                ddl=ddl,
                table_changes=_dumps(changes) if changes is not None else None,
                event=value_text or "null",
            )
        # heartbeat, transaction metadata (BEGIN/END) or another connector message: kept as it is
        txn = _opt_str(value.get("id")) if value.get("status") in ("BEGIN", "END") else None
        return self._inherited(topic, topic, None, key_text, value_text, key_schema, value_schema, ts_ms, txn)

    def _inherited(self, topic: str, table_id: str, op: str | None, key_text: str | None, value_text: str | None,
                   key_schema: str | None, value_schema: str | None, ts_ms: int | None, txn_id: str | None,
                   ) -> DecodedEvent:
        # a tombstone hashes like its delete (topic, key), so it sorts right after it
        tie = tiebreak(topic, key_text) if value_text is None else tiebreak(topic, key_text, value_text)
        seq = full_seq(self._main, tie, True)
        return self._event(topic, table_id, op, seq, key_text, value_text, key_schema, value_schema, ts_ms, None,
                           txn_id, None)

    # -- names -------------------------------------------------------------------------------------
    def _source_table(self, source: dict[str, Any] | None) -> str | None:
        """db.schema.table (PostgreSQL, SQL Server, Oracle), db.table (MySQL, MariaDB), db.collection."""
        if not source:
            return None
        table = source.get("table") or source.get("collection")
        if not table:
            return None
        parts = (source.get("db"), source.get("schema"), table)
        found = self._table_ids.get(parts)
        if found is None:
            found = ".".join(str(p) for p in parts if p)
            if len(self._table_ids) < _SCHEMA_CACHE_LIMIT:
                self._table_ids[parts] = found
        return found

    def _topic_table(self, topic: str) -> str:
        """table_id for an event without a source block: the last one seen on the topic, else the topic
        without `topic.prefix` (which lacks the database name for PostgreSQL, SQL Server and Oracle)."""
        known = self._topic_tables.get(topic)
        if known:
            return known
        prefix = self.topic_prefix
        if prefix and topic.startswith(prefix + "."):
            return topic[len(prefix) + 1:]
        return topic

    def _derive_topic(self, source: dict[str, Any] | None) -> str:
        """Debezium's topic name for a bare value: <prefix>.<schema or db>.<table>."""
        if not source:
            return self.topic_prefix or "unknown"
        prefix = self.topic_prefix or source.get("name") or "unknown"
        table = source.get("table") or source.get("collection")
        middle = source.get("schema") or source.get("db")
        return ".".join(str(p) for p in (prefix, middle, table) if p)


def _txn_id(value: dict[str, Any], source: dict[str, Any] | None) -> str | None:
    transaction = value.get("transaction")
    if isinstance(transaction, dict) and transaction.get("id") is not None:
        return str(transaction["id"])
    if source:
        for name in ("txId", "gtid", "txnNumber"):
            if source.get(name) is not None:
                return str(source[name])
    return None
