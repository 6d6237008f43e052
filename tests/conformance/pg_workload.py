"""The PostgreSQL workload: every row of the seeds' PostgreSQL type tables (seed-003-inventory.md section
2.6: base, temporal and decimal mappings, plus the values issue 13 measured), and the behaviours around
them (TOAST, replica identity DEFAULT/FULL/USING INDEX, key changes, keyless tables, truncate, transactions,
logical messages).

Each run is one connector configuration (a set of handling modes) capturing its own schema; all runs see
the same tables, rows and statements. Rows go in before the connectors start (snapshot) and again while
they stream."""

from __future__ import annotations

from dataclasses import dataclass

# The handling modes, grouped so that four runs cover every value of every mode (the last run repeats
# modes covered elsewhere except base64-url-safe, so a configuration lakecdc refuses costs only that mode).
RUNS: dict[str, dict[str, str]] = {
    "pga": {"decimal.handling.mode": "precise", "time.precision.mode": "adaptive",
             "binary.handling.mode": "bytes", "hstore.handling.mode": "map", "interval.handling.mode": "numeric",
             # a truncated bytea in bytes mode (Debezium cuts the bytes), TOASTed and unchanged values included
             "column.truncate.to.3.chars": r".*\.toast_full\.bin",
             # custom message keys: a keyless table keyed, a key of a non-key column and the primary key
             "message.key.columns": r"pga\.keyless_full:a;.*\.pk_change:v,id"},
    "pgb": {"decimal.handling.mode": "double", "time.precision.mode": "adaptive_time_microseconds",
             "binary.handling.mode": "base64", "hstore.handling.mode": "json", "interval.handling.mode": "string",
             # every column's source type, length and scale in its field schema (the key column included)
             "column.propagate.source.type": r".*\.types\..*",
             "datatype.propagate.source.type": r".+\.defaults\.(numeric|bool|varchar)"},
    "pgc": {"decimal.handling.mode": "string", "time.precision.mode": "connect",
             "binary.handling.mode": "hex", "hstore.handling.mode": "map",
             "interval.handling.mode": "numeric",
             # the snapshot of `defaults` reads a SELECT of its own (a % in it, a changed value)
             "snapshot.select.statement.overrides": "pgc.defaults",
             "snapshot.select.statement.overrides.pgc.defaults":
                 "SELECT id, i % 5 AS i, t, n, b, d, r, v, n3 FROM pgc.defaults"},
    "pgd": {"decimal.handling.mode": "precise", "time.precision.mode": "adaptive",
             "binary.handling.mode": "base64-url-safe", "hstore.handling.mode": "json",
             "interval.handling.mode": "string",
             # column mappers, on columns whose types the other runs cover unmapped
             # (the all-NULL row of `types` shows that a mask replaces NULL too)
             "column.mask.with.5.chars": r".*\.types\.c_enum,.*\.types\.c_citext,.*\.types\.c_json,"
                                         r".*\.types\.c_integer",
             "column.truncate.to.3.chars": r".*\.types\.c_varchar,.*\.types\.c_char,.*\.types\.c_xml,"
                                           r".*\.types\.c_bytea,.*\.types\.c_timestamp",
             "column.mask.hash.SHA-256.with.salt.CzQMA0cB5K": r".*\.types\.c_character_varying,.*\.defaults\.v",
             "column.mask.hash.v2.MD5.with.salt.pepper": r".*\.types\.c_text"},
}
# The run that also carries the behaviour scenarios (they do not depend on handling modes).
SCENARIO_RUN = "pga"


@dataclass(frozen=True)
class TypeRow:
    """One row of a seed type table: a column of this SQL type holding each of these literals in turn."""

    name: str
    sql_type: str
    literals: tuple[str, ...]


TYPES: tuple[TypeRow, ...] = (
    TypeRow("boolean", "boolean", ("true", "false")),
    TypeRow("bit1", "bit(1)", ("B'1'", "B'0'")),
    TypeRow("bit3", "bit(3)", ("B'101'",)),
    TypeRow("bit8", "bit(8)", ("B'00000000'", "B'10100101'")),
    TypeRow("varbit", "bit varying(10)", ("B'1100000001'", "B''")),
    TypeRow("smallint", "smallint", ("-32768", "32767")),
    TypeRow("integer", "integer", ("-2147483648", "2147483647")),
    TypeRow("bigint", "bigint", ("-9223372036854775808", "9007199254740993")),
    TypeRow("real", "real", ("1.5", "-176229696", "'NaN'", "'Infinity'", "'-Infinity'", "3.4e38", "1e-7")),
    TypeRow("double", "double precision",
            ("2.25", "0.1", "'NaN'", "'Infinity'", "'-Infinity'", "1e300", "123456789012.5")),
    TypeRow("char", "char(3)", ("'ab'",)),
    TypeRow("varchar", "varchar(10)", ("'hi'", "''")),
    TypeRow("character_varying", "character varying", ("'hello'",)),
    TypeRow("text", "text", ("E'tab\\there'", "'héllo ✓'")),
    TypeRow("timestamptz", "timestamptz",
            ("'2018-06-20 15:13:16.945104+02'", "'2018-06-20 15:13:16+00'", "'2018-06-20 15:13:16.5+00'",
             "'0044-03-15 10:00:00+00 BC'")),
    TypeRow("timetz", "timetz", ("'15:13:16.5+02'", "'00:00:00+00'", "'23:59:59.999999-05'")),
    TypeRow("interval", "interval",
            ("'1 year 2 mons 3 days 04:05:06.78'", "'-1 years -2 mons +3 days -04:05:06'", "'0'",
             "'1 day 00:00:00.000001'")),
    TypeRow("bytea", "bytea", ("'\\x0102ff'::bytea", "''::bytea", "'\\xfbff'::bytea")),
    TypeRow("json", "json", ("'{\"a\": [1, 2]}'", "'[]'", "'\"s\"'")),
    TypeRow("jsonb", "jsonb", ("'{\"b\":1,\"a\":2}'", "'{\"x\": 1.50, \"y\": null}'")),
    TypeRow("xml", "xml", ("'<a>1</a>'",)),
    TypeRow("uuid", "uuid", ("'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'",)),
    TypeRow("point", "point", ("'(1,2.5)'", "'(-0.5,1e10)'")),
    TypeRow("ltree", "ltree", ("'a.b.c'",)),
    TypeRow("citext", "citext", ("'AbC'",)),
    TypeRow("inet", "inet", ("'192.168.0.1/24'", "'::1'")),
    TypeRow("cidr", "cidr", ("'10.0.0.0/8'",)),
    TypeRow("macaddr", "macaddr", ("'08:00:2b:01:02:03'",)),
    TypeRow("macaddr8", "macaddr8", ("'08:00:2b:01:02:03:04:05'",)),
    TypeRow("int4range", "int4range", ("'[1,5)'", "'empty'")),
    TypeRow("int8range", "int8range", ("'(1,5]'",)),
    TypeRow("numrange", "numrange", ("'[1.5,2.5]'",)),
    TypeRow("tsrange", "tsrange", ("'[2020-01-01 10:00,2020-01-02 00:00)'",)),
    TypeRow("tstzrange", "tstzrange", ("'[2020-01-01 10:00+02,2020-01-02 00:00+00)'",)),
    TypeRow("daterange", "daterange", ("'[2020-01-01,2020-01-05]'",)),
    TypeRow("hstore", "hstore", ("'a=>1, b=>NULL'", "''", "'\"k \\\"q\"=>\"v,w\"'")),
    TypeRow("geometry", "geometry", ("'SRID=4326;POINT(1 2)'", "'POLYGON((0 0, 4 0, 4 4, 0 0))'",
                                     "'POINT Z (1 2 3)'")),
    TypeRow("geography", "geography", ("'SRID=4326;POINT(13.4 52.5)'", "'LINESTRING(0 0, 1 1)'")),
    TypeRow("date", "date", ("'2018-06-20'", "'0044-03-15 BC'", "'1969-12-31'", "'0001-01-01'")),
    TypeRow("time", "time", ("'15:13:16.945104'", "'00:00:00'", "'24:00:00'")),
    TypeRow("time0", "time(0)", ("'15:13:16'",)),
    TypeRow("time3", "time(3)", ("'15:13:16.945'",)),
    TypeRow("time6", "time(6)", ("'15:13:16.945104'",)),
    TypeRow("timestamp", "timestamp", ("'2018-06-20 15:13:16.945104'", "'0044-03-15 10:00:00 BC'",
                                       "'1969-12-31 23:59:59.999999'")),
    TypeRow("timestamp0", "timestamp(0)", ("'2018-06-20 15:13:16'",)),
    TypeRow("timestamp3", "timestamp(3)", ("'2018-06-20 15:13:16.945'", "'0044-03-15 10:00:00.5 BC'")),
    TypeRow("timestamp6", "timestamp(6)", ("'2018-06-20 15:13:16.945104'",)),
    TypeRow("numeric_10_2", "numeric(10,2)", ("12.34", "-0.01", "-1.28", "0")),
    TypeRow("numeric_38_10", "numeric(38,10)", ("1234567890123456789012345678.0123456789", "-0.0000000001")),
    TypeRow("numeric", "numeric", ("12.345", "'NaN'", "1.50", "0", "-100",
                                   "12345678901234567890123456789012345678901234567890.123")),
    TypeRow("decimal_5_0", "decimal(5,0)", ("42", "-99999")),
    TypeRow("money", "money", ("12.34", "-1234.5", "0")),
    TypeRow("enum", "conformance_mood", ("'happy'", "'sad'")),
    TypeRow("domain", "conformance_positive", ("5",)),
    TypeRow("int_array", "integer[]", ("'{1,2,NULL}'", "'{}'")),
    TypeRow("text_array", "text[]", ("'{\"a b\",c,\"q\\\"x\"}'",)),
    TypeRow("numeric_array", "numeric(4,1)[]", ("'{1.5}'",)),
    TypeRow("uuid_array", "uuid[]", ("'{a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11}'",)),
    TypeRow("date_array", "date[]", ("'{2018-06-20,0044-03-15 BC}'",)),
)

DATABASE_SETUP = (
    "CREATE EXTENSION IF NOT EXISTS citext", "CREATE EXTENSION IF NOT EXISTS ltree",
    "CREATE EXTENSION IF NOT EXISTS hstore", "CREATE EXTENSION IF NOT EXISTS postgis",
    "CREATE TYPE conformance_mood AS ENUM ('sad', 'ok', 'happy')",
    "CREATE DOMAIN conformance_positive AS integer CHECK (VALUE > 0)",
)

SNAPSHOT_ID = 0     # type rows taken by the snapshot: ids 1..n
STREAM_ID = 100     # the same values inserted while streaming: ids 101..100+n


def _type_rows(base: int) -> list[str]:
    """One INSERT per variant: row i holds every type's i-th literal (NULL where a type has fewer)."""
    columns = ", ".join(f"c_{t.name}" for t in TYPES)
    width = max(len(t.literals) for t in TYPES)
    out = []
    for i in range(width):
        values = ", ".join(f"({t.literals[i]})::{t.sql_type}" if i < len(t.literals) else "NULL" for t in TYPES)
        out.append(f"INSERT INTO {{s}}.types (id, {columns}) VALUES ({base + i + 1}, {values})")
    out.append(f"INSERT INTO {{s}}.types (id) VALUES ({base + width + 1})")  # every column NULL
    return out


def _big(n: int) -> str:
    """A text of about 32 kB that does not compress below the TOAST threshold."""
    return f"(SELECT string_agg(md5(g::text || '{n}'), '') FROM generate_series(1, 1000) g)"


def schema_statements(run: str) -> list[str]:
    """Tables and snapshot rows of one run's schema (`{s}` is the schema name)."""
    columns = ", ".join(f"c_{t.name} {t.sql_type}" for t in TYPES)
    out = [f"CREATE TABLE {{s}}.types (id integer PRIMARY KEY, {columns})", *_type_rows(SNAPSHOT_ID),
           "CREATE TABLE {s}.defaults (id integer PRIMARY KEY, i integer NOT NULL DEFAULT 7, "
           "t text DEFAULT 'x', n numeric(6,2) DEFAULT 1.5, b boolean DEFAULT true, d date DEFAULT '2020-01-02', "
           "r real DEFAULT 1.25, v varchar(5) NOT NULL DEFAULT 'v', n3 numeric(8,3) DEFAULT 2)",
           "INSERT INTO {s}.defaults (id) VALUES (1)",
           "CREATE TABLE {s}.sentinel (id integer PRIMARY KEY)"]
    if run != SCENARIO_RUN:
        return out
    for table, identity in (("toast_default", "DEFAULT"), ("toast_full", "FULL")):
        out += [f"CREATE TABLE {{s}}.{table} (id integer PRIMARY KEY, small text, big text, bin bytea, doc jsonb)",
                f"ALTER TABLE {{s}}.{table} REPLICA IDENTITY {identity}",
                f"INSERT INTO {{s}}.{table} SELECT g, 's' || g, {_big(1)}, convert_to({_big(2)}, 'UTF8'), "
                f"jsonb_build_object('k', {_big(3)}) FROM generate_series(1, 3) g"]
    out += ["CREATE TABLE {s}.pk_change (id integer PRIMARY KEY, v text)",
            "INSERT INTO {s}.pk_change VALUES (1, 'one'), (2, 'two')",
            "CREATE TABLE {s}.keyless_full (a integer, b text)",
            "ALTER TABLE {s}.keyless_full REPLICA IDENTITY FULL",
            "INSERT INTO {s}.keyless_full VALUES (1, 'x'), (1, 'x'), (2, NULL)",
            "CREATE TABLE {s}.keyless_default (a integer, b text)",
            "INSERT INTO {s}.keyless_default VALUES (1, 'x')",
            "CREATE TABLE {s}.unique_key (u integer NOT NULL UNIQUE, v text)",
            "ALTER TABLE {s}.unique_key REPLICA IDENTITY USING INDEX unique_key_u_key",
            "INSERT INTO {s}.unique_key VALUES (1, 'u')",
            "CREATE TABLE {s}.trunc (id integer PRIMARY KEY, v text)",
            "INSERT INTO {s}.trunc VALUES (1, 'a'), (2, 'b')",
            "CREATE TABLE {s}.multi_a (id integer PRIMARY KEY, v text)",
            "CREATE TABLE {s}.multi_b (id integer PRIMARY KEY, v text)"]
    return out


def streaming_statements(run: str) -> list[str]:
    """The streaming workload of one run's schema, statement by statement (autocommit unless BEGIN)."""
    out = [*_type_rows(STREAM_ID),
           f"UPDATE {{s}}.types SET c_text = 'updated' WHERE id = {STREAM_ID + 1}",
           f"DELETE FROM {{s}}.types WHERE id = {STREAM_ID + 2}",
           "INSERT INTO {s}.defaults (id) VALUES (2)",
           "INSERT INTO {s}.defaults VALUES (3, 8, NULL, NULL, NULL, NULL, NULL, 'w', NULL)"]
    if run != SCENARIO_RUN:
        return out
    for table in ("toast_default", "toast_full"):
        out += [f"UPDATE {{s}}.{table} SET small = 'changed' WHERE id = 1",          # TOASTed columns unchanged
                f"UPDATE {{s}}.{table} SET big = {_big(4)}, small = 'both' WHERE id = 2",
                f"DELETE FROM {{s}}.{table} WHERE id = 3",
                f"INSERT INTO {{s}}.{table} VALUES (4, 'new', {_big(5)}, NULL, NULL)"]
    out += ["UPDATE {s}.pk_change SET id = 10 WHERE id = 1",
            "UPDATE {s}.pk_change SET id = 20, v = 'twenty' WHERE id = 2",
            "INSERT INTO {s}.keyless_full VALUES (3, 'y')",
            "UPDATE {s}.keyless_full SET b = 'z' WHERE a = 2",
            "DELETE FROM {s}.keyless_full WHERE a = 3",
            "INSERT INTO {s}.keyless_default VALUES (2, 'y')",
            "UPDATE {s}.unique_key SET v = 'v' WHERE u = 1",
            "UPDATE {s}.unique_key SET u = 2 WHERE u = 1",
            "DELETE FROM {s}.unique_key WHERE u = 2",
            "TRUNCATE {s}.trunc",
            "INSERT INTO {s}.trunc VALUES (3, 'c')",
            "BEGIN; INSERT INTO {s}.multi_a VALUES (1, 'a'); INSERT INTO {s}.multi_b VALUES (1, 'b'); "
            "UPDATE {s}.multi_a SET v = 'aa' WHERE id = 1; DELETE FROM {s}.multi_b WHERE id = 1; COMMIT",
            "SELECT pg_logical_emit_message(false, 'conformance-plain', 'not transactional')",
            "BEGIN; INSERT INTO {s}.multi_a VALUES (2, 'm'); "
            "SELECT pg_logical_emit_message(true, 'conformance-txn', convert_to('in a transaction', 'UTF8')); "
            "COMMIT"]
    return out


SENTINEL = "INSERT INTO {s}.sentinel VALUES (1)"
