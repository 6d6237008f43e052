"""The MariaDB/MySQL connector's event dispatcher (Debezium's EventDispatcher): source blocks of the flavor's
layout, data change events, schema change events and transaction markers, built with the shared emitter
(ingest.events) and turned into bronze rows by ingest.events.to_bronze. One helper that ingest.events lacks
lives here: the envelope text around the row of a bulk path (the columnar snapshot)."""

from __future__ import annotations

import time
from typing import Any

from ingest.bronze.contract import BronzeEvent, BronzeSchemaChange
from ingest.connectors.mysql.codec import TableCodec
from ingest.events import envelope as ev
from ingest.events.json_converter import canonical_schema_json, dumps_str
from ingest.events.source_info import VERSION, mysql_source
from ingest.events.to_bronze import (
    change_to_bronze,
    heartbeat_to_bronze,
    notification_to_bronze,
    relational_change_to_bronze,
    schema_change_to_bronze,
)

_MAX_TEMPLATES = 4096   # streamed_source's templates kept (cleared when full)
_ROW_MARK = "\x00row\x00"   # stands for the row JSON while the envelope text around it is built


class MySqlEventDispatcher:
    """Builds the events of one source: `flavor` (mariadb | mysql) picks the source block's layout,
    `topic_prefix` is Debezium's topic.prefix (the source block's `name`)."""

    def __init__(self, flavor: str, topic_prefix: str) -> None:
        self.flavor = flavor
        self.topic_prefix = topic_prefix
        self._connector = "mariadb" if flavor == "mariadb" else "mysql"   # the source block's `connector`
        self._streamed: dict[tuple[str, str, str, int], dict[str, Any]] = {}   # streamed_source's templates

    def source(self, *, ts_ms: int, db: str, table: str | None, file: str, pos: int, row: int = 0,
               snapshot: bool | str = False, server_id: int = 0, gtid: str | None = None,
               thread: int | None = None, query: str | None = None) -> dict[str, Any]:
        """The `source` block of the flavor's layout (io.debezium.connector.mysql/mariadb.Source)."""
        return mysql_source(connector=self._connector, version=VERSION, name=self.topic_prefix, ts_ms=ts_ms, db=db,
                            table=table, server_id=server_id, gtid=gtid, file=file, pos=pos, row=row,
                            snapshot=snapshot, thread=thread, query=query)

    def streamed_source(self, ts_ms: int, db: str, table: str, file: str, pos: int, server_id: int,
                        gtid: str | None, query: str | None) -> dict[str, Any]:
        """source(...) of a streamed rows event (row 0, not a snapshot): the same dict, copied from a template per
        table, binlog file and server, so that its fixed fields are not built again for every event."""
        key = (db, table, file, server_id)
        template = self._streamed.get(key)
        if template is None:
            if len(self._streamed) >= _MAX_TEMPLATES:
                self._streamed.clear()
            template = self._streamed[key] = self.source(ts_ms=0, db=db, table=table, file=file, pos=0,
                                                         server_id=server_id)
        source = template.copy()   # keeps the key order, so the JSON is the same
        source["ts_ms"], source["ts_us"], source["ts_ns"] = ts_ms, ts_ms * 1000, ts_ms * 1_000_000
        source["pos"], source["gtid"], source["query"] = pos, gtid, query
        return source

    def data_event(self, codec: TableCodec, op: str | None, before: dict | None, after: dict | None,
                   source: dict[str, Any], seq: str, position: str, txn: dict | None = None,
                   key_row: dict | None = None) -> BronzeEvent:
        """A data change event (op c/u/d/r/t) or, op None, the tombstone of the delete of `key_row`."""
        if op is None:
            # ev.tombstone's event (null value, the delete's key; null for a keyless table), built from the key
            event = ev.ChangeEvent(codec.schemas, None, codec.key(key_row or {}))
            return change_to_bronze(event, seq=seq, position=position, txn_id=source.get("gtid"))
        return relational_change_to_bronze(codec.schemas, op, before=before, after=after, source=source, seq=seq,
                                           position=position, txn_id=source.get("gtid"), transaction=txn,
                                           key=codec.key(key_row) if key_row is not None else None)

    def schema_change(self, *, db: str, ddl: str, table_changes: list[dict], source: dict[str, Any], seq: str,
                      position: str) -> BronzeSchemaChange:
        event = ev.SchemaChangeEvent(self.flavor, self.topic_prefix, source, db, None, ddl,
                                     [ev.TableChange.from_payload(entry) for entry in table_changes])
        return schema_change_to_bronze(event, seq=seq, position=position)

    def heartbeat(self, heartbeat_prefix: str, seq: str, position: str) -> BronzeEvent:
        """A heartbeat on <topic.heartbeat.prefix>.<topic.prefix>: key serverName, value ts_ms."""
        event = ev.HeartbeatEvent(self.topic_prefix, int(time.time() * 1000), heartbeat_prefix)
        return heartbeat_to_bronze(event, seq=seq, position=position)

    def notification(self, topic: str, notification_id: str, kind: str, data: dict[str, str], seq: str,
                     position: str, aggregate: str) -> BronzeEvent:
        """A snapshot notification (aggregate type `aggregate`) on notification.sink.topic.name (op NULL, like a
        heartbeat)."""
        event = ev.NotificationEvent(topic, notification_id, aggregate, kind,
                                     ev.notification_data(data, self.topic_prefix), int(time.time() * 1000))
        return notification_to_bronze(event, seq=seq, position=position)

    def transaction_event(self, event: ev.TransactionEvent, seq: str, position: str) -> BronzeEvent:
        """A BEGIN or END marker on the <prefix>.transaction topic (op NULL, table_id = the topic)."""
        value = event.value()
        return BronzeEvent(
            topic=event.topic, table_id=event.topic, op=None, seq=seq, key=dumps_str(event.key),
            value=dumps_str(value), key_schema=canonical_schema_json(event.key_schema),
            value_schema=canonical_schema_json(event.value_schema), ts_ms=value.get("ts_ms"),
            source_ts_ms=event.ts_ms, txn_id=event.id, snapshot="false", position=position)


def envelope_texts(table: ev.TableSchemas, op: str, source: dict[str, Any], ts_ns: int,
                   before_null: bool = True) -> tuple[str, str]:
    """(head, tail) of the JSON of an envelope whose `after` is a row written elsewhere (the columnar snapshot
    builds the row texts in Arrow): head + row JSON + tail is the text ev.change(...).value() serializes to."""
    ts_ms, ts_us = ts_ns // 1_000_000, ts_ns // 1000
    event = ev.change(table, op, source=source, before=None if before_null else {}, after=_ROW_MARK,  # type: ignore[arg-type]
                      ts_ms=ts_ms, ts_us=ts_us, ts_ns=ts_ns, key={})
    text = dumps_str(event.value())
    mark = dumps_str(_ROW_MARK)
    head, tail = text.split(mark)
    return head, tail
