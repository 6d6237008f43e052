"""The MariaDB workload: every row of the seeds' MariaDB/MySQL type tables (seed-004-inventory.md section 5,
seed-003-inventory.md section 1.6) plus the values issue 13 measured, and key changes, keyless tables and
truncate. Each run (a set of handling modes) captures its own database; all see the same rows and
statements: the rows go in before the connectors start (snapshot) and again while they stream."""

from __future__ import annotations

from tests.conformance.pg_workload import TypeRow

# Four runs cover every value of every handling mode. Debezium 3.6.3's MySQL connector refuses
# time.precision.mode=adaptive ("no longer supported"): only adaptive_time_microseconds and connect exist.
RUNS: dict[str, dict[str, str]] = {
    "my_a": {"decimal.handling.mode": "precise", "time.precision.mode": "adaptive_time_microseconds",
             "binary.handling.mode": "bytes", "bigint.unsigned.handling.mode": "long",
             # binary values truncated in bytes mode (Debezium cuts the bytes)
             "column.truncate.to.1.chars": r".*\.types\.c_blob,.*\.types\.c_binary4",
             # custom message keys: a keyless table keyed, a key of a non-key column and the primary key
             "message.key.columns": r"my_a\.keyless:a,b;.*\.pk_change:v,id"},
    "my_b": {"decimal.handling.mode": "double", "time.precision.mode": "connect",
             "binary.handling.mode": "base64", "bigint.unsigned.handling.mode": "precise",
             # the snapshot reads SELECTs of their own: `defaults` filtered out (a % in it), `defs` changed
             "snapshot.select.statement.overrides": "my_b.defaults,my_b.defs",
             "snapshot.select.statement.overrides.my_b.defaults": "SELECT * FROM my_b.defaults WHERE id % 2 = 0",
             "snapshot.select.statement.overrides.my_b.defs": "SELECT * FROM my_b.defs ORDER BY id DESC"},
    "my_c": {"decimal.handling.mode": "string", "time.precision.mode": "adaptive_time_microseconds",
             "binary.handling.mode": "base64-url-safe", "bigint.unsigned.handling.mode": "long",
             # source types in the field schemas, the key column included (its key schema stays plain)
             "column.propagate.source.type": r".*\.types\.(id|c_decimal_10_2|c_varchar|c_enum|c_int_u|"
                                             r"c_double_7_2|c_datetime6|c_text|c_bigint_u|c_float_m_d)",
             "datatype.propagate.source.type": r".+\.YEAR,.+\.BIT,.+\.TIME"},
    "my_d": {"decimal.handling.mode": "precise", "time.precision.mode": "adaptive_time_microseconds",
             "binary.handling.mode": "hex", "bigint.unsigned.handling.mode": "precise",
             # column mappers, on columns whose types the other runs cover unmapped
             "column.mask.with.4.chars": r".*\.types\.c_enum,.*\.types\.c_set,.*\.types\.c_json,"
                                         r".*\.types\.c_tinytext,.*\.types\.c_int",
             "column.truncate.to.2.chars": r".*\.types\.c_char,.*\.types\.c_varchar,.*\.types\.c_text_utf8mb4,"
                                           r".*\.types\.c_varbinary,.*\.types\.c_date",
             "column.mask.hash.SHA-256.with.salt.CzQMA0cB5K": r".*\.types\.c_varchar_latin1,.*\.types\.c_text",
             "column.mask.hash.v2.MD5.with.salt.pepper": r".*\.types\.c_mediumtext,.*\.types\.c_longtext"},
}
SCENARIO_RUN = "my_a"

TYPES: tuple[TypeRow, ...] = (
    TypeRow("boolean", "BOOLEAN", ("TRUE", "FALSE")),
    TypeRow("bit1", "BIT(1)", ("b'1'", "b'0'")),
    TypeRow("bit10", "BIT(10)", ("b'1000000101'", "b'0'")),
    TypeRow("bit64", "BIT(64)", ("b'1111111111111111111111111111111111111111111111111111111111111111'",)),
    TypeRow("tinyint", "TINYINT", ("-128", "127")),
    TypeRow("tinyint1", "TINYINT(1)", ("1", "-5")),
    TypeRow("tinyint_u", "TINYINT UNSIGNED", ("255",)),
    TypeRow("smallint", "SMALLINT", ("-32768",)),
    TypeRow("smallint_u", "SMALLINT UNSIGNED", ("65535",)),
    TypeRow("mediumint", "MEDIUMINT", ("-8388608",)),
    TypeRow("mediumint_u", "MEDIUMINT UNSIGNED", ("16777215",)),
    TypeRow("int", "INT", ("-2147483648", "2147483647")),
    TypeRow("int_u", "INT UNSIGNED", ("4294967295",)),
    TypeRow("bigint", "BIGINT", ("-9223372036854775808", "9223372036854775807")),
    TypeRow("bigint_u", "BIGINT UNSIGNED", ("18446744073709551615", "9223372036854775808", "1")),
    TypeRow("real", "REAL", ("1.5", "-1.76229696E8")),
    TypeRow("float", "FLOAT", ("1.5", "-1.76229696E8", "3.4e38", "0.1")),
    TypeRow("float10", "FLOAT(10)", ("2.5",)),
    TypeRow("float30", "FLOAT(30)", ("2.5",)),
    TypeRow("float_m_d", "FLOAT(10,2)", ("12.34",)),
    TypeRow("double", "DOUBLE", ("2.25", "0.1", "1e300", "123456789012.5")),
    # folded in from the former tests/mysql_debezium.py harness
    TypeRow("float_edges", "FLOAT", ("0.3", "-0.0", "1e-5", "100")),
    TypeRow("float_7_2", "FLOAT(7,2)", ("12345.67", "-0.01")),
    TypeRow("double_edges", "DOUBLE", ("-2.2250738585072014e-308", "1.7976931348623157e308", "1e-5", "-0.0",
                                       "123456789.123")),
    TypeRow("double_7_2", "DOUBLE(7,2)", ("1.25", "-5.5")),
    TypeRow("int_zerofill", "INT(5) ZEROFILL", ("42", "0")),
    TypeRow("bit8", "BIT(8)", ("b'10000000'", "b'11111111'")),
    TypeRow("decimal_10_2", "DECIMAL(10,2)", ("12.34", "-0.01", "-1.28", "-327.68", "0")),
    TypeRow("decimal_38_10", "DECIMAL(38,10)", ("1234567890123456789012345678.0123456789",)),
    TypeRow("decimal_65_30", "DECIMAL(65,30)", ("12345678901234567890123456789012345.123456789012345678901234567890",)),
    TypeRow("numeric", "NUMERIC", ("42",)),
    TypeRow("char", "CHAR(3)", ("'abc'", "'a'", "''")),
    TypeRow("varchar", "VARCHAR(20)", ("'héllo ✓'", "''")),
    TypeRow("varchar_latin1", "VARCHAR(20) CHARACTER SET latin1", ("'café'",)),
    TypeRow("text_utf8mb4", "TEXT CHARACTER SET utf8mb4", ("'héllo wörld 🎉'", "'日本語テキスト'")),
    TypeRow("binary4", "BINARY(4)", ("x'01'", "x'01020304'", "''")),
    TypeRow("varbinary", "VARBINARY(8)", ("x'fbff'", "''")),
    TypeRow("tinyblob", "TINYBLOB", ("x'00'",)),
    TypeRow("blob", "BLOB", ("x'0001'",)),
    TypeRow("mediumblob", "MEDIUMBLOB", ("x'ff'",)),
    TypeRow("longblob", "LONGBLOB", ("x'7f'",)),
    TypeRow("tinytext", "TINYTEXT", ("'t'",)),
    TypeRow("text", "TEXT", ("'tab\\there'",)),
    TypeRow("mediumtext", "MEDIUMTEXT", ("'m'",)),
    TypeRow("longtext", "LONGTEXT", ("'l'",)),
    TypeRow("json", "JSON", ("'{\"a\": [1, 2]}'", "'[]'")),
    TypeRow("enum", "ENUM('a','b','c d')", ("'b'", "'c d'", "''")),
    TypeRow("set", "SET('x','y','z')", ("'z,x'", "''", "'y'")),
    TypeRow("year", "YEAR", ("2024", "1901", "0")),
    TypeRow("date", "DATE", ("'2018-06-20'", "'1000-01-01'", "'0000-00-00'", "'1969-12-31'")),
    TypeRow("time", "TIME", ("'10:15:30'", "'-01:00:00'", "'838:59:59'")),
    TypeRow("time3", "TIME(3)", ("'10:15:30.123'",)),
    TypeRow("time6", "TIME(6)", ("'10:15:30.123456'", "'-01:00:00.250000'", "'00:00:00'")),
    TypeRow("time1", "TIME(1)", ("'10:15:30.1'", "'-00:00:00.5'", "'-10:00:00.1'")),
    TypeRow("time6_edges", "TIME(6)", ("'-00:00:00.000001'", "'23:59:59.999999'", "'-838:59:59'")),
    TypeRow("datetime", "DATETIME", ("'2018-06-20 06:37:03'", "'0000-00-00 00:00:00'", "'1000-01-01 00:00:00'")),
    TypeRow("datetime3", "DATETIME(3)", ("'2018-06-20 06:37:03.123'",)),
    TypeRow("datetime6", "DATETIME(6)", ("'2018-06-20 06:37:03.000005'", "'1969-12-31 23:59:59.999999'")),
    TypeRow("timestamp", "TIMESTAMP NULL", ("'2018-06-20 13:37:03'", "'0000-00-00 00:00:00'")),
    TypeRow("datetime1", "DATETIME(1)", ("'2018-06-20 06:37:03.5'", "'1000-01-01 00:00:00.1'")),
    TypeRow("timestamp2", "TIMESTAMP(2) NULL", ("'2018-06-20 13:37:03.12'", "'1970-01-01 00:00:01'")),
    TypeRow("timestamp6", "TIMESTAMP(6) NULL", ("'2018-06-20 13:37:03.120000'", "'2038-01-19 03:14:07.999999'")),
    TypeRow("geometry", "GEOMETRY", ("ST_GeomFromText('POINT(1 2)')", "ST_GeomFromText('POINT(1 2)', 4326)",
                                     "ST_GeomFromText('LINESTRING(0 0, 1 1)')")),
    TypeRow("point", "POINT", ("ST_GeomFromText('POINT(1.5 -2)')",)),
    TypeRow("linestring", "LINESTRING", ("ST_GeomFromText('LINESTRING(0 0, 1 1, 2 0)')",)),
    TypeRow("polygon", "POLYGON", ("ST_GeomFromText('POLYGON((0 0, 4 0, 4 4, 0 0))')",)),
    TypeRow("multipoint", "MULTIPOINT", ("ST_GeomFromText('MULTIPOINT(1 1, 2 2)')",)),
    TypeRow("multilinestring", "MULTILINESTRING", ("ST_GeomFromText('MULTILINESTRING((0 0, 1 1), (2 2, 3 3))')",)),
    TypeRow("multipolygon", "MULTIPOLYGON", ("ST_GeomFromText('MULTIPOLYGON(((0 0, 1 0, 1 1, 0 0)))')",)),
    TypeRow("geometrycollection", "GEOMETRYCOLLECTION",
            ("ST_GeomFromText('GEOMETRYCOLLECTION(POINT(1 1), LINESTRING(0 0, 1 1))')",)),
)

# Column defaults of every kind in the field schemas (literals, CURRENT_TIMESTAMP, expressions, bits,
# unsigned maxima) and NOT NULL zero values (folded in from the former tests/mysql_debezium.py harness).
DEFS_COLUMNS = (
    "a INT NOT NULL DEFAULT 7, b VARCHAR(5) DEFAULT 'x''y', c DECIMAL(5,2) DEFAULT 1.50, d DATE DEFAULT '2020-01-02', "
    "e DATETIME(3) DEFAULT CURRENT_TIMESTAMP(3), "
    "f TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP, "
    "g ENUM('p','q') NOT NULL DEFAULT 'q', h SET('x','y') DEFAULT 'x,y', i BIT(8) DEFAULT b'101', "
    "j TIME DEFAULT '01:02:03', k FLOAT DEFAULT 0.3, l VARCHAR(3) DEFAULT NULL, m TINYINT(1) DEFAULT 1, "
    "n BIGINT UNSIGNED DEFAULT 18446744073709551615, o BINARY(2) DEFAULT 'a', p INT DEFAULT (1+1), "
    "q TIMESTAMP NULL DEFAULT '2020-01-01 00:00:00', r YEAR DEFAULT 2020, s DATETIME DEFAULT '2020-01-01 10:00:00', "
    "t DOUBLE DEFAULT -1.5, u BIT(1) DEFAULT b'1', v DATETIME NOT NULL DEFAULT CURRENT_TIMESTAMP, "
    "w TIMESTAMP(3) NULL DEFAULT CURRENT_TIMESTAMP(3), x VARBINARY(4) DEFAULT 'ab', y TIME(6) DEFAULT '-01:00:00.5', "
    "z DECIMAL(30,2) DEFAULT 0, dz DATE NOT NULL DEFAULT '2000-01-01', tz DATETIME NOT NULL DEFAULT '2000-01-01'"
)
DEFS_SNAPSHOT_ROW = (
    "DEFAULT, DEFAULT, DEFAULT, DEFAULT, '2020-01-01 00:00:00', '2020-01-01 00:00:00', DEFAULT, DEFAULT, DEFAULT, "
    "DEFAULT, DEFAULT, DEFAULT, DEFAULT, DEFAULT, DEFAULT, DEFAULT, DEFAULT, DEFAULT, DEFAULT, DEFAULT, DEFAULT, "
    "'2020-01-01 00:00:00', '2020-01-01 00:00:00', DEFAULT, DEFAULT, DEFAULT, '0000-00-00', '0000-00-00 00:00:00'"
)
DEFS_STREAM_ROWS = (
    "1, 'a', 2.5, '2021-01-01', '2021-01-01 00:00:00', '2021-01-01 00:00:00', 'p', 'x', b'1', '00:00:01', 1.5, "
    "'abc', 0, 5, 'b', 3, '2021-01-01 00:00:00', 2021, '2021-01-01 00:00:00', 2.5, b'0', '2021-01-01 00:00:00', "
    "'2021-01-01 00:00:00', 'cd', '00:00:00', 1, '0000-00-00', '0000-00-00 00:00:00'",
    "2, 'b', 3.5, '2022-01-01', '2022-01-01 00:00:00', '2022-01-01 00:00:00', 'q', 'y', b'0', '00:00:02', 2.5, "
    "'def', 1, 6, 'c', 4, '2022-01-01 00:00:00', 2022, '2022-01-01 00:00:00', 3.5, b'1', '2022-01-01 00:00:00', "
    "'2022-01-01 00:00:00', 'ef', '00:00:01', 2, '2022-01-01', '2022-01-01 00:00:00'",
)

SNAPSHOT_ID = 0
STREAM_ID = 100


def _type_rows(base: int) -> list[str]:
    """One INSERT per variant: row i holds every type's i-th literal (NULL where a type has fewer)."""
    columns = ", ".join(f"c_{t.name}" for t in TYPES)
    width = max(len(t.literals) for t in TYPES)
    out = []
    for i in range(width):
        values = ", ".join(t.literals[i] if i < len(t.literals) else "NULL" for t in TYPES)
        out.append(f"INSERT INTO {{s}}.types (id, {columns}) VALUES ({base + i + 1}, {values})")
    out.append(f"INSERT INTO {{s}}.types (id) VALUES ({base + width + 1})")
    return out


def schema_statements(run: str) -> list[str]:
    columns = ", ".join(f"c_{t.name} {t.sql_type}" for t in TYPES)
    out = ["SET SESSION sql_mode = 'ALLOW_INVALID_DATES'",
           f"CREATE TABLE {{s}}.types (id INT PRIMARY KEY, {columns})", *_type_rows(SNAPSHOT_ID),
           "CREATE TABLE {s}.defaults (id INT PRIMARY KEY, i INT NOT NULL DEFAULT 7, t VARCHAR(5) DEFAULT 'x', "
           "n DECIMAL(6,2) DEFAULT 1.5, e ENUM('p','q') DEFAULT 'q', d DATE DEFAULT '2020-01-02', "
           "dt DATETIME DEFAULT '2020-01-02 03:04:05', ts TIMESTAMP NULL DEFAULT CURRENT_TIMESTAMP, "
           "b BIT(3) DEFAULT b'101', f DOUBLE DEFAULT 1.25)",
           "INSERT INTO {s}.defaults (id, ts) VALUES (1, '2020-01-01 00:00:00')",
           f"CREATE TABLE {{s}}.defs (id INT PRIMARY KEY, {DEFS_COLUMNS})",
           f"INSERT INTO {{s}}.defs VALUES (1, {DEFS_SNAPSHOT_ROW})",
           "CREATE TABLE {s}.sentinel (id INT PRIMARY KEY)"]
    if run == SCENARIO_RUN:
        out += ["CREATE TABLE {s}.pk_change (id INT PRIMARY KEY, v VARCHAR(10))",
                "INSERT INTO {s}.pk_change VALUES (1, 'one'), (2, 'two')",
                "CREATE TABLE {s}.keyless (a INT, b VARCHAR(10))",
                "INSERT INTO {s}.keyless VALUES (1, 'x'), (1, 'x'), (2, NULL)",
                "CREATE TABLE {s}.unique_key (u INT NOT NULL UNIQUE, v VARCHAR(10))",
                "INSERT INTO {s}.unique_key VALUES (1, 'u')",
                "CREATE TABLE {s}.trunc (id INT PRIMARY KEY, v VARCHAR(10))",
                "INSERT INTO {s}.trunc VALUES (1, 'a'), (2, 'b')",
                "CREATE TABLE {s}.multi (id INT PRIMARY KEY, v VARCHAR(10))"]
    return out


def streaming_statements(run: str) -> list[str]:
    out = ["SET SESSION sql_mode = 'ALLOW_INVALID_DATES'", *_type_rows(STREAM_ID),
           f"UPDATE {{s}}.types SET c_text = 'updated' WHERE id = {STREAM_ID + 1}",
           f"DELETE FROM {{s}}.types WHERE id = {STREAM_ID + 2}",
           "INSERT INTO {s}.defaults (id, ts) VALUES (2, '2020-01-01 00:00:00')",
           *(f"INSERT INTO {{s}}.defs VALUES ({STREAM_ID + i}, {row})" for i, row in enumerate(DEFS_STREAM_ROWS, 1))]
    if run == SCENARIO_RUN:
        out += ["UPDATE {s}.pk_change SET id = 10 WHERE id = 1",
                "UPDATE {s}.pk_change SET id = 20, v = 'twenty' WHERE id = 2",
                "INSERT INTO {s}.keyless VALUES (3, 'y')",
                "UPDATE {s}.keyless SET b = 'z' WHERE a = 2",
                "DELETE FROM {s}.keyless WHERE a = 3",
                "UPDATE {s}.unique_key SET u = 2 WHERE u = 1",
                "DELETE FROM {s}.unique_key WHERE u = 2",
                "TRUNCATE TABLE {s}.trunc",
                "INSERT INTO {s}.trunc VALUES (3, 'c')",
                "BEGIN", "INSERT INTO {s}.multi VALUES (1, 'a'), (2, 'b')",
                "UPDATE {s}.multi SET v = 'c'", "DELETE FROM {s}.multi WHERE id = 1", "COMMIT"]
    return out


SENTINEL = "INSERT INTO {s}.sentinel VALUES (1)"
