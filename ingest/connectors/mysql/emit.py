"""The MySQL/MariaDB connector's events through the shared emitter (ingest.events): source blocks from the
typed builders, data events as `ChangeEvent`s, schema change events as `SchemaChangeEvent`s, all turned into
bronze rows by ingest.events.to_bronze. One helper that ingest.events lacks lives here: the envelope text
around the row of a bulk path."""

from __future__ import annotations

from typing import Any

from ingest.events import envelope as ev
from ingest.events.json_converter import dumps_str
from ingest.events.source_info import VERSION, mariadb_source, mysql_source

_ROW_MARK = "\x00row\x00"   # stands for the row JSON while the envelope text around it is built


def source_block(flavor: str, *, name: str, ts_ms: int, db: str, table: str | None, file: str, pos: int,
                 row: int = 0, snapshot: bool | str = False, server_id: int = 0, gtid: str | None = None,
                 thread: int | None = None, query: str | None = None) -> dict[str, Any]:
    """The `source` block of the flavor's layout (io.debezium.connector.mysql/mariadb.Source)."""
    build = mariadb_source if flavor == "mariadb" else mysql_source
    return build(version=VERSION, name=name, ts_ms=ts_ms, db=db, table=table, server_id=server_id, gtid=gtid,
                 file=file, pos=pos, row=row, snapshot=snapshot, thread=thread, query=query)


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
