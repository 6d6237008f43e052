"""Debezium's change-event model, shared by every connector (docs/events.md).

- connect_schema  Kafka Connect schemas as plain dicts in JsonConverter's JSON form and key order:
                  int8 .. float64, boolean, string, bytes_(optional, name=, version=, parameters=, default=),
                  struct(fields, optional, name=...), array, map_, field, with_optional, debezium_json/enum.
- source_info     the `source` block per connector (sqlserver, oracle, mysql, mariadb, postgresql, mongodb):
                  SOURCE_SCHEMAS, SOURCE_FIELDS, typed builders sqlserver_source(...) .. mongodb_source(...),
                  build_source(connector, **fields), snapshot_value / snapshot_text.
- topics          data_topic, table_id, schema_change_topic, transaction_topic, heartbeat_topic,
                  key/value/envelope schema names, adjust_schema_name (schema.name.adjustment.mode).
- envelope        table_schemas(...) / mongodb_table_schemas(...) -> TableSchemas (built once per table);
                  change(...) / mongodb_change(...) -> ChangeEvent (value() = envelope payload);
                  tombstone, with_tombstones (tombstones.on.delete); SchemaChangeEvent + TableChange + Column;
                  HeartbeatEvent; TransactionEvent + TransactionTracker (BEGIN/END, transaction blocks);
                  record(event, schemas_enable) -> (topic, key bytes, value bytes).
- json_converter  serialize(schema, payload, schemas_enable), deserialize, dumps/dumps_str,
                  canonical_schema_json (text the bronze writer hashes into schema ids), jsonconverter_order.
- to_bronze       change_to_bronze / schema_change_to_bronze / to_bronze -> ingest.bronze.contract rows.

Typical connector use::

    from ingest.events import connect_schema as cs, envelope as ev, source_info as si, to_bronze as tb

    t = ev.table_schemas("postgresql", "inventory", db="postgres", schema="public", table="customers",
                         columns=[("id", cs.int32()), ("email", cs.string())], key_columns=["id"])
    e = ev.change(t, "c", after={"id": 1, "email": "a@b"}, source=si.postgresql_source(...), ts_ms=...)
    rows = [tb.to_bronze(x, seq=seq, position=pos_json) for x in ev.with_tombstones([e])]
"""
