"""Column types per dialect: canonical name, JDBC type code, Debezium typeName, length/scale rules, the
server's canonical type text (`source_type`) and the Spark SQL type of the decoded value.

`resolve_type(dialect, words, params, unsigned=..., zerofill=...)` takes the type as the parser read it
(upper-case words such as ["DOUBLE", "PRECISION"], parameters as strings) and returns a `TypeInfo`.

Spark types follow Debezium's default converters (decimal.handling.mode=precise, time.precision.mode=
adaptive_time_microseconds, bigint.unsigned.handling.mode=long): e.g. MySQL TINYINT -> SMALLINT (INT16),
INT UNSIGNED -> BIGINT, DATETIME -> TIMESTAMP_NTZ, TIMESTAMP -> TIMESTAMP, TIME -> BIGINT (microseconds),
BIT(1) -> BOOLEAN, BIT(n) -> BINARY; NUMBER/NUMERIC without precision (VariableScaleDecimal) -> STRING (its exact
text, as silver decodes it: no Spark decimal holds every value);
DECIMAL wider than 38 digits -> STRING.
"""

from __future__ import annotations

from dataclasses import dataclass

from ingest.errors import LakecdcError

DIALECTS = ("mysql", "mariadb", "postgres", "oracle", "tsql")

# java.sql.Types codes
BIT, TINYINT, SMALLINT, INTEGER, BIGINT = -7, -6, 5, 4, -5
FLOAT, REAL, DOUBLE, NUMERIC, DECIMAL = 6, 7, 8, 2, 3
CHAR, VARCHAR, LONGVARCHAR, NCHAR, NVARCHAR, LONGNVARCHAR = 1, 12, -1, -15, -9, -16
DATE, TIME, TIMESTAMP, TIME_TZ, TIMESTAMP_TZ = 91, 92, 93, 2013, 2014
BINARY, VARBINARY, LONGVARBINARY, BLOB, CLOB, NCLOB = -2, -3, -4, 2004, 2005, 2011
BOOLEAN, OTHER, ARRAY, SQLXML, ROWID = 16, 1111, 2003, 2009, -8


class ColumnTypeError(LakecdcError):
    """An unknown or malformed column type."""


@dataclass
class TypeInfo:
    type_name: str            # Debezium typeName
    jdbc_type: int
    source_type: str          # the server's canonical type text (MySQL COLUMN_TYPE, PostgreSQL format_type ...)
    length: int | None
    scale: int | None
    spark_type: str
    family: str               # int decimal float string text binary bool temporal enum json spatial other
    enum_values: list[str] | None = None
    implied_not_null: bool = False
    implied_auto_increment: bool = False


def _dec_spark(precision: int | None, scale: int | None) -> str:
    if precision is None:
        return "STRING"
    if precision > 38:
        return "STRING"
    return f"DECIMAL({precision},{scale or 0})"


def _ints(params: list[str]) -> list[int]:
    out = []
    for p in params:
        try:
            out.append(int(p))
        except ValueError:
            raise ColumnTypeError(f"type parameter {p!r} is not a number") from None
    return out


# --------------------------------------------------------------------------------------------- MySQL/MariaDB
_MY_ALIASES = {
    "INTEGER": "INT", "INT4": "INT", "INT1": "TINYINT", "INT2": "SMALLINT", "INT3": "MEDIUMINT",
    "MIDDLEINT": "MEDIUMINT", "INT8": "BIGINT", "DEC": "DECIMAL", "NUMERIC": "DECIMAL", "FIXED": "DECIMAL",
    "REAL": "DOUBLE", "DOUBLE PRECISION": "DOUBLE", "FLOAT4": "FLOAT", "FLOAT8": "DOUBLE", "BOOL": "BOOLEAN",
    "CHARACTER": "CHAR", "CHARACTER VARYING": "VARCHAR", "CHAR VARYING": "VARCHAR", "VARCHARACTER": "VARCHAR",
    "NATIONAL CHAR": "NCHAR", "NATIONAL CHARACTER": "NCHAR", "NATIONAL VARCHAR": "NVARCHAR",
    "NATIONAL CHARACTER VARYING": "NVARCHAR", "NATIONAL CHAR VARYING": "NVARCHAR", "NCHAR VARCHAR": "NVARCHAR",
    "NCHAR VARYING": "NVARCHAR", "LONG VARCHAR": "MEDIUMTEXT", "LONG": "MEDIUMTEXT",
    "LONG CHAR VARYING": "MEDIUMTEXT", "LONG VARBINARY": "MEDIUMBLOB", "CHAR BYTE": "BINARY",
    "GEOMCOLLECTION": "GEOMETRYCOLLECTION", "SQL_TSI_YEAR": "YEAR",
}
# canonical -> (jdbc, family, implicit display width signed / unsigned)
_MY_INTS = {"TINYINT": (SMALLINT, 4, 3), "SMALLINT": (SMALLINT, 6, 5), "MEDIUMINT": (INTEGER, 9, 8),
            "INT": (INTEGER, 11, 10), "BIGINT": (BIGINT, 20, 20)}
_MY_INT_SPARK = {"TINYINT": ("SMALLINT", "SMALLINT"), "SMALLINT": ("SMALLINT", "INT"), "MEDIUMINT": ("INT", "INT"),
                 "INT": ("INT", "BIGINT"), "BIGINT": ("BIGINT", "BIGINT")}
_MY_SIMPLE = {
    # canonical: (jdbc, family, spark)
    "TINYTEXT": (VARCHAR, "text", "STRING"), "TEXT": (VARCHAR, "text", "STRING"),
    "MEDIUMTEXT": (VARCHAR, "text", "STRING"), "LONGTEXT": (VARCHAR, "text", "STRING"),
    "TINYBLOB": (BLOB, "binary", "BINARY"), "BLOB": (BLOB, "binary", "BINARY"),
    "MEDIUMBLOB": (BLOB, "binary", "BINARY"), "LONGBLOB": (BLOB, "binary", "BINARY"),
    "DATE": (DATE, "temporal", "DATE"), "YEAR": (INTEGER, "int", "INT"),
    "JSON": (OTHER, "json", "STRING"), "UUID": (CHAR, "other", "STRING"),
    "INET4": (VARCHAR, "other", "STRING"), "INET6": (VARCHAR, "other", "STRING"),
    "GEOMETRY": (OTHER, "spatial", "STRUCT<srid: INT, wkb: BINARY>"),
    "POINT": (OTHER, "spatial", "STRUCT<srid: INT, wkb: BINARY>"),
    "LINESTRING": (OTHER, "spatial", "STRUCT<srid: INT, wkb: BINARY>"),
    "POLYGON": (OTHER, "spatial", "STRUCT<srid: INT, wkb: BINARY>"),
    "MULTIPOINT": (OTHER, "spatial", "STRUCT<srid: INT, wkb: BINARY>"),
    "MULTILINESTRING": (OTHER, "spatial", "STRUCT<srid: INT, wkb: BINARY>"),
    "MULTIPOLYGON": (OTHER, "spatial", "STRUCT<srid: INT, wkb: BINARY>"),
    "GEOMETRYCOLLECTION": (OTHER, "spatial", "STRUCT<srid: INT, wkb: BINARY>"),
}
_MY_NATIONAL = {"NCHAR": "CHAR", "NVARCHAR": "VARCHAR"}


def _quote_sql(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def _resolve_mysql(words: list[str], params: list[str], unsigned: bool, zerofill: bool) -> TypeInfo:
    name = " ".join(words)
    name = _MY_ALIASES.get(name, name)
    national = name in _MY_NATIONAL
    name = _MY_NATIONAL.get(name, name)
    unsigned = unsigned or zerofill
    suffix = (" unsigned" if unsigned else "") + (" zerofill" if zerofill else "")
    type_name = name + (" UNSIGNED" if unsigned else "") + (" ZEROFILL" if zerofill else "")
    if name in _MY_INTS:
        nums = _ints(params)
        jdbc, width_signed, width_unsigned = _MY_INTS[name]
        width = nums[0] if nums else None
        shown = width if width is not None else (width_unsigned if unsigned else width_signed)
        spark = _MY_INT_SPARK[name][1 if unsigned else 0]
        return TypeInfo(type_name, jdbc, f"{name.lower()}({shown}){suffix}", width, None, spark, "int")
    if name == "BOOLEAN":
        return TypeInfo("BOOLEAN", BOOLEAN, "tinyint(1)", None, None, "BOOLEAN", "bool")
    if name == "SERIAL":
        return TypeInfo("BIGINT UNSIGNED", BIGINT, "bigint(20) unsigned", None, None, "BIGINT", "int",
                        implied_not_null=True, implied_auto_increment=True)
    if name == "DECIMAL":
        nums = _ints(params)
        precision = nums[0] if nums else 10
        scale = nums[1] if len(nums) > 1 else 0
        return TypeInfo(type_name, DECIMAL, f"decimal({precision},{scale}){suffix}", precision, scale,
                        _dec_spark(precision, scale), "decimal")
    if name in ("FLOAT", "DOUBLE"):
        nums = _ints(params)
        if name == "FLOAT" and len(nums) == 1:  # FLOAT(p): precision in bits picks FLOAT or DOUBLE
            name = "DOUBLE" if nums[0] > 24 else "FLOAT"
            type_name = name + (" UNSIGNED" if unsigned else "") + (" ZEROFILL" if zerofill else "")
            nums = []
        jdbc, spark = (FLOAT, "FLOAT") if name == "FLOAT" else (DOUBLE, "DOUBLE")
        if len(nums) == 2:
            return TypeInfo(type_name, jdbc, f"{name.lower()}({nums[0]},{nums[1]}){suffix}", nums[0], nums[1],
                            spark, "float")
        return TypeInfo(type_name, jdbc, f"{name.lower()}{suffix}", None, None, spark, "float")
    if name == "BIT":
        nums = _ints(params)
        bits = nums[0] if nums else 1
        return TypeInfo("BIT", BIT, f"bit({bits})", bits, None, "BOOLEAN" if bits == 1 else "BINARY", "bit")
    if name in ("CHAR", "VARCHAR", "BINARY", "VARBINARY"):
        nums = _ints(params)
        if not nums and name in ("VARCHAR", "VARBINARY"):
            raise ColumnTypeError(f"{name} needs a length")
        length = nums[0] if nums else 1
        jdbc = {"CHAR": CHAR, "VARCHAR": VARCHAR, "BINARY": BINARY, "VARBINARY": VARBINARY}[name]
        family, spark = ("string", "STRING") if name in ("CHAR", "VARCHAR") else ("binary", "BINARY")
        info = TypeInfo(name, jdbc, f"{name.lower()}({length})", length, None, spark, family)
        if national:
            info.family = "national"
        return info
    if name in ("DATETIME", "TIMESTAMP", "TIME"):
        nums = _ints(params)
        fsp = nums[0] if nums else None
        text = name.lower() + (f"({fsp})" if fsp else "")
        if name == "DATETIME":
            return TypeInfo(name, TIMESTAMP, text, fsp, None, "TIMESTAMP_NTZ", "temporal")
        if name == "TIMESTAMP":
            return TypeInfo(name, TIMESTAMP_TZ, text, fsp, None, "TIMESTAMP", "temporal")
        return TypeInfo(name, TIME, text, fsp, None, "BIGINT", "temporal")
    if name in ("ENUM", "SET"):
        return TypeInfo(name, CHAR, f"{name.lower()}({','.join(_quote_sql(p) for p in params)})", None, None,
                        "STRING", "enum", enum_values=list(params))
    if name in ("TEXT", "BLOB") and params:  # TEXT(M)/BLOB(M): the server picks the smallest type; keep M
        nums = _ints(params)
        jdbc, family, spark = _MY_SIMPLE[name]
        return TypeInfo(name, jdbc, name.lower(), nums[0], None, spark, family)
    if name == "YEAR":
        return TypeInfo("YEAR", INTEGER, "year(4)", None, None, "INT", "int")
    if name in _MY_SIMPLE:
        jdbc, family, spark = _MY_SIMPLE[name]
        source = "longtext" if name == "JSON" else name.lower()  # MariaDB stores JSON as LONGTEXT
        return TypeInfo(name, jdbc, source, None, None, spark, family)
    raise ColumnTypeError(f"unknown MySQL/MariaDB type {name}")


# --------------------------------------------------------------------------------------------------- PostgreSQL
_PG_ALIASES = {
    "INT": "int4", "INTEGER": "int4", "INT4": "int4", "SMALLINT": "int2", "INT2": "int2", "BIGINT": "int8",
    "INT8": "int8", "SERIAL": "serial", "SERIAL4": "serial", "BIGSERIAL": "bigserial", "SERIAL8": "bigserial",
    "SMALLSERIAL": "smallserial", "SERIAL2": "smallserial", "DECIMAL": "numeric", "NUMERIC": "numeric",
    "REAL": "float4", "FLOAT4": "float4", "DOUBLE PRECISION": "float8", "FLOAT8": "float8", "FLOAT": "float",
    "BOOLEAN": "bool", "BOOL": "bool", "CHARACTER VARYING": "varchar", "VARCHAR": "varchar",
    "CHAR VARYING": "varchar", "CHARACTER": "bpchar", "CHAR": "bpchar", "BPCHAR": "bpchar", "TEXT": "text",
    "BYTEA": "bytea", "DATE": "date", "TIME": "time", "TIME WITHOUT TIME ZONE": "time",
    "TIME WITH TIME ZONE": "timetz", "TIMETZ": "timetz", "TIMESTAMP": "timestamp",
    "TIMESTAMP WITHOUT TIME ZONE": "timestamp", "TIMESTAMP WITH TIME ZONE": "timestamptz",
    "TIMESTAMPTZ": "timestamptz", "INTERVAL": "interval", "UUID": "uuid", "JSON": "json", "JSONB": "jsonb",
    "XML": "xml", "INET": "inet", "CIDR": "cidr", "MACADDR": "macaddr", "MACADDR8": "macaddr8",
    "MONEY": "money", "BIT": "bit", "BIT VARYING": "varbit", "VARBIT": "varbit", "TSVECTOR": "tsvector",
    "TSQUERY": "tsquery", "POINT": "point", "LINE": "line", "LSEG": "lseg", "BOX": "box", "PATH": "path",
    "POLYGON": "polygon", "CIRCLE": "circle", "OID": "oid", "INT4RANGE": "int4range", "INT8RANGE": "int8range",
    "NUMRANGE": "numrange", "TSRANGE": "tsrange", "TSTZRANGE": "tstzrange", "DATERANGE": "daterange",
    "CITEXT": "citext", "HSTORE": "hstore", "LTREE": "ltree", "NAME": "name", '"CHAR"': "char",
}
# canonical -> (jdbc, spark, format_type name, family)
_PG_TYPES = {
    "int2": (SMALLINT, "SMALLINT", "smallint", "int"), "int4": (INTEGER, "INT", "integer", "int"),
    "int8": (BIGINT, "BIGINT", "bigint", "int"), "float4": (REAL, "FLOAT", "real", "float"),
    "float8": (DOUBLE, "DOUBLE", "double precision", "float"), "bool": (BIT, "BOOLEAN", "boolean", "bool"),
    "text": (VARCHAR, "STRING", "text", "text"), "bytea": (BINARY, "BINARY", "bytea", "binary"),
    "date": (DATE, "DATE", "date", "temporal"), "interval": (OTHER, "BIGINT", "interval", "temporal"),
    "uuid": (OTHER, "STRING", "uuid", "string"), "json": (OTHER, "STRING", "json", "json"),
    "jsonb": (OTHER, "STRING", "jsonb", "json"), "xml": (SQLXML, "STRING", "xml", "string"),
    "inet": (OTHER, "STRING", "inet", "string"), "cidr": (OTHER, "STRING", "cidr", "string"),
    "macaddr": (OTHER, "STRING", "macaddr", "string"), "macaddr8": (OTHER, "STRING", "macaddr8", "string"),
    "money": (DOUBLE, "DECIMAL(19,2)", "money", "decimal"), "tsvector": (OTHER, "STRING", "tsvector", "string"),
    "tsquery": (OTHER, "STRING", "tsquery", "string"), "oid": (BIGINT, "BIGINT", "oid", "int"),
    "citext": (OTHER, "STRING", "citext", "text"), "hstore": (OTHER, "STRING", "hstore", "json"),
    "ltree": (OTHER, "STRING", "ltree", "string"), "name": (VARCHAR, "STRING", "name", "string"),
    "char": (CHAR, "STRING", '"char"', "string"),
}
for _geo in ("point", "line", "lseg", "box", "path", "polygon", "circle"):
    _PG_TYPES[_geo] = (OTHER, "STRUCT<x: DOUBLE, y: DOUBLE, wkb: BINARY, srid: INT>" if _geo == "point"
                       else "STRING", _geo, "spatial")
for _rng in ("int4range", "int8range", "numrange", "tsrange", "tstzrange", "daterange"):
    _PG_TYPES[_rng] = (OTHER, "STRING", _rng, "string")
_PG_ARRAY_SPARK_OK = True


def _resolve_postgres(words: list[str], params: list[str], array_dims: int) -> TypeInfo:
    name = " ".join(words)
    canonical = _PG_ALIASES.get(name, name.lower())
    nums = _ints(params) if canonical not in _PG_TYPES or params else []
    if canonical in ("serial", "bigserial", "smallserial"):
        base = {"serial": "int4", "bigserial": "int8", "smallserial": "int2"}[canonical]
        info = _resolve_postgres([base.upper()], [], 0)
        info.type_name = canonical
        info.implied_not_null = True
        info.implied_auto_increment = True
        return _pg_array(info, array_dims)
    if canonical == "float":  # FLOAT(p): p <= 24 real, else double precision
        canonical = "float4" if nums and nums[0] <= 24 else "float8"
        nums = []
    if canonical == "numeric":
        precision = nums[0] if nums else None
        scale = (nums[1] if len(nums) > 1 else 0) if precision is not None else None
        text = f"numeric({precision},{scale})" if precision is not None else "numeric"
        info = TypeInfo("numeric", NUMERIC, text, precision, scale, _dec_spark(precision, scale), "decimal")
    elif canonical in ("varchar", "bpchar"):
        # CHAR means CHAR(1); BPCHAR without a length is unbounded (format_type: bpchar)
        length = nums[0] if nums else (1 if canonical == "bpchar" and name != "BPCHAR" else None)
        base = "character varying" if canonical == "varchar" else "character"
        text = f"{base}({length})" if length is not None else base if canonical == "varchar" else "bpchar"
        info = TypeInfo(canonical, VARCHAR if canonical == "varchar" else CHAR, text, length, None, "STRING",
                        "string")
    elif canonical in ("bit", "varbit"):
        length = nums[0] if nums else (1 if canonical == "bit" else None)
        base = "bit" if canonical == "bit" else "bit varying"
        text = f"{base}({length})" if length is not None else base
        spark = "BOOLEAN" if canonical == "bit" and length == 1 else "BINARY"
        info = TypeInfo(canonical, BIT, text, length, None, spark, "bit")
    elif canonical in ("time", "timetz", "timestamp", "timestamptz"):
        precision = nums[0] if nums else None
        base = "time" if canonical.startswith("time") and not canonical.startswith("timestamp") else "timestamp"
        zone = " with time zone" if canonical.endswith("tz") else " without time zone"
        text = base + (f"({precision})" if precision is not None else "") + zone
        jdbc, spark = {"time": (TIME, "BIGINT"), "timetz": (TIME_TZ, "STRING"),
                       "timestamp": (TIMESTAMP, "TIMESTAMP_NTZ"),
                       "timestamptz": (TIMESTAMP_TZ, "TIMESTAMP")}[canonical]
        info = TypeInfo(canonical, jdbc, text, precision, None, spark, "temporal")
    elif canonical.startswith("interval"):  # interval [fields] [(p)]: format_type puts the precision last
        precision = nums[0] if nums else None
        text = canonical + (f"({precision})" if precision is not None else "")
        info = TypeInfo("interval", OTHER, text, precision, None, "BIGINT", "temporal")
    elif canonical in _PG_TYPES:
        jdbc, spark, text, family = _PG_TYPES[canonical]
        info = TypeInfo(canonical, jdbc, text, None, None, spark, family)
    else:  # a user-defined type (enum, domain, composite): its text is all we know
        info = TypeInfo(name.lower(), OTHER, name.lower(), None, None, "STRING", "other")
    return _pg_array(info, array_dims)


def _pg_array(info: TypeInfo, array_dims: int) -> TypeInfo:
    if not array_dims:
        return info
    spark = info.spark_type
    for _ in range(array_dims):
        spark = f"ARRAY<{spark}>"
    return TypeInfo("_" + info.type_name, ARRAY, info.source_type + "[]", None, None, spark, "array")


# -------------------------------------------------------------------------------------------------------- Oracle
_ORA_ALIASES = {
    "VARCHAR": "VARCHAR2", "CHARACTER VARYING": "VARCHAR2", "CHAR VARYING": "VARCHAR2", "CHARACTER": "CHAR",
    "NATIONAL CHARACTER VARYING": "NVARCHAR2", "NATIONAL CHAR VARYING": "NVARCHAR2", "NCHAR VARYING": "NVARCHAR2",
    "NATIONAL CHARACTER": "NCHAR", "NATIONAL CHAR": "NCHAR", "DECIMAL": "NUMBER", "NUMERIC": "NUMBER",
    "DEC": "NUMBER", "DOUBLE PRECISION": "FLOAT", "REAL": "FLOAT", "SYS.XMLTYPE": "XMLTYPE",
}


def _resolve_oracle(words: list[str], params: list[str], byte_char: str | None) -> TypeInfo:
    name = " ".join(words)
    original = name
    name = _ORA_ALIASES.get(name, name)
    if name in ("INTEGER", "INT", "SMALLINT"):
        return TypeInfo("NUMBER", NUMERIC, "NUMBER(38)", 38, 0, "DECIMAL(38,0)", "decimal")
    if name == "NUMBER":
        nums = [0 if p == "*" else int(p) for p in params]
        precision = nums[0] if nums and params[0] != "*" else None
        scale = nums[1] if len(nums) > 1 else (0 if params and original in ("DECIMAL", "NUMERIC", "DEC") else None)
        if precision is not None and scale is None:
            scale = 0
        if precision is None:
            text = "NUMBER" if scale is None else f"NUMBER(*,{scale})"
            spark = "STRING" if scale is None else f"DECIMAL(38,{scale})"
        else:
            text = f"NUMBER({precision},{scale})" if scale else f"NUMBER({precision})"
            spark = _oracle_number_spark(precision, scale or 0)
        return TypeInfo("NUMBER", NUMERIC, text, precision, scale, spark, "decimal")
    if name == "FLOAT":
        nums = _ints(params)
        precision = nums[0] if nums else 126
        if original == "REAL":
            precision = 63
        return TypeInfo("FLOAT", FLOAT, f"FLOAT({precision})", precision, None, "DOUBLE", "float")
    if name in ("BINARY_FLOAT", "BINARY_DOUBLE"):
        return TypeInfo(name, 100 if name == "BINARY_FLOAT" else 101, name, None, None,
                        "FLOAT" if name == "BINARY_FLOAT" else "DOUBLE", "float")
    if name in ("VARCHAR2", "NVARCHAR2", "CHAR", "NCHAR", "RAW"):
        nums = _ints(params)
        if not nums and name in ("VARCHAR2", "NVARCHAR2", "RAW"):
            raise ColumnTypeError(f"{name} needs a length")
        length = nums[0] if nums else 1
        jdbc = {"VARCHAR2": VARCHAR, "NVARCHAR2": NVARCHAR, "CHAR": CHAR, "NCHAR": NCHAR, "RAW": VARBINARY}[name]
        unit = f" {byte_char}" if byte_char and name in ("VARCHAR2", "CHAR") else ""
        spark, family = ("BINARY", "binary") if name == "RAW" else ("STRING", "string")
        return TypeInfo(name, jdbc, f"{name}({length}{unit})", length, None, spark, family)
    if name == "DATE":
        return TypeInfo("DATE", TIMESTAMP, "DATE", None, None, "TIMESTAMP_NTZ", "temporal")
    if name.startswith("TIMESTAMP"):
        nums = _ints(params)
        precision = nums[0] if nums else 6
        zone = name[len("TIMESTAMP"):]
        jdbc, spark = (TIMESTAMP, "TIMESTAMP_NTZ") if not zone else (-101 if "LOCAL" not in zone else -102,
                                                                        "TIMESTAMP")
        type_name = f"TIMESTAMP({precision}){zone}"
        return TypeInfo(type_name, jdbc, type_name, precision, None, spark, "temporal")
    if name.startswith("INTERVAL"):  # leading precision defaults to 2, fractional seconds to 6
        given = [p for p in params] + ["*", "*"]
        lead = 2 if given[0] == "*" else int(given[0])
        if name == "INTERVAL YEAR TO MONTH":
            text = f"INTERVAL YEAR({lead}) TO MONTH"
        elif name == "INTERVAL DAY TO SECOND":
            frac = 6 if given[1] == "*" else int(given[1])
            text = f"INTERVAL DAY({lead}) TO SECOND({frac})"
        else:
            raise ColumnTypeError(f"unknown Oracle type {original}")
        return TypeInfo(text, OTHER, text, None, None, "BIGINT" if "SECOND" in name else "STRING", "temporal")
    simple = {"CLOB": (CLOB, "STRING", "text"), "NCLOB": (NCLOB, "STRING", "text"), "BLOB": (BLOB, "BINARY", "binary"),
              "LONG": (LONGVARCHAR, "STRING", "text"), "LONG RAW": (LONGVARBINARY, "BINARY", "binary"),
              "XMLTYPE": (SQLXML, "STRING", "string"), "ROWID": (ROWID, "STRING", "string"),
              "UROWID": (ROWID, "STRING", "string"), "BFILE": (OTHER, "BINARY", "binary"),
              "JSON": (OTHER, "STRING", "json"), "BOOLEAN": (BOOLEAN, "BOOLEAN", "bool")}
    if name in simple:
        jdbc, spark, family = simple[name]
        return TypeInfo(name, jdbc, name, None, None, spark, family)
    raise ColumnTypeError(f"unknown Oracle type {original}")


def _oracle_number_spark(precision: int, scale: int) -> str:
    if scale > 0:
        return _dec_spark(precision, scale)
    if precision < 3:
        return "TINYINT"
    if precision < 5:
        return "SMALLINT"
    if precision < 10:
        return "INT"
    if precision < 19:
        return "BIGINT"
    return _dec_spark(precision, 0)


# ---------------------------------------------------------------------------------------------------- SQL Server
# canonical -> (jdbc, spark, fixed length, fixed scale, family)
_TS_FIXED = {
    "tinyint": (TINYINT, "SMALLINT", 3, 0, "int"), "smallint": (SMALLINT, "SMALLINT", 5, 0, "int"),
    "int": (INTEGER, "INT", 10, 0, "int"), "bigint": (BIGINT, "BIGINT", 19, 0, "int"),
    "bit": (BIT, "BOOLEAN", 1, None, "bool"), "money": (DECIMAL, "DECIMAL(19,4)", 19, 4, "decimal"),
    "smallmoney": (DECIMAL, "DECIMAL(10,4)", 10, 4, "decimal"), "real": (REAL, "FLOAT", 24, None, "float"),
    "date": (DATE, "DATE", 10, None, "temporal"), "datetime": (TIMESTAMP, "TIMESTAMP_NTZ", 23, 3, "temporal"),
    "smalldatetime": (TIMESTAMP, "TIMESTAMP_NTZ", 16, 0, "temporal"),
    "text": (LONGVARCHAR, "STRING", 2147483647, None, "text"),
    "ntext": (LONGNVARCHAR, "STRING", 1073741823, None, "text"),
    "image": (LONGVARBINARY, "BINARY", 2147483647, None, "binary"),
    "uniqueidentifier": (CHAR, "STRING", 36, None, "string"), "xml": (LONGNVARCHAR, "STRING", None, None, "string"),
    "rowversion": (BINARY, "BINARY", 8, None, "binary"), "timestamp": (BINARY, "BINARY", 8, None, "binary"),
    "sql_variant": (OTHER, "STRING", None, None, "other"), "hierarchyid": (VARBINARY, "BINARY", None, None, "binary"),
    "geometry": (VARBINARY, "STRUCT<srid: INT, wkb: BINARY>", None, None, "spatial"),
    "geography": (VARBINARY, "STRUCT<srid: INT, wkb: BINARY>", None, None, "spatial"),
    "sysname": (NVARCHAR, "STRING", 128, None, "string"),
}
_TS_ALIASES = {"integer": "int", "dec": "decimal", "double precision": "float", "character": "char",
               "character varying": "varchar", "char varying": "varchar", "national character": "nchar",
               "national char": "nchar", "national character varying": "nvarchar",
               "national char varying": "nvarchar", "binary varying": "varbinary"}


def _resolve_tsql(words: list[str], params: list[str]) -> TypeInfo:
    name = " ".join(words).lower()
    name = _TS_ALIASES.get(name, name)
    if name.startswith("sys."):
        name = name[4:]
    if name in _TS_FIXED:
        jdbc, spark, length, scale, family = _TS_FIXED[name]
        return TypeInfo(name, jdbc, name, length, scale, spark, family)
    if name in ("decimal", "numeric"):
        nums = _ints(params)
        precision = nums[0] if nums else 18
        scale = nums[1] if len(nums) > 1 else 0
        return TypeInfo(name, DECIMAL if name == "decimal" else NUMERIC, f"{name}({precision},{scale})", precision,
                        scale, _dec_spark(precision, scale), "decimal")
    if name == "float":
        nums = _ints(params)
        bits = nums[0] if nums else 53
        if bits <= 24:
            return TypeInfo("real", REAL, "real", 24, None, "FLOAT", "float")
        return TypeInfo("float", DOUBLE, "float", 53, None, "DOUBLE", "float")
    if name in ("char", "varchar", "nchar", "nvarchar", "binary", "varbinary"):
        is_max = bool(params) and params[0].upper() == "MAX"
        nums = [] if is_max else _ints(params)
        length = nums[0] if nums else (None if is_max else 1)
        if is_max:
            length = 1073741823 if name == "nvarchar" else 2147483647
        jdbc = {"char": CHAR, "varchar": VARCHAR, "nchar": NCHAR, "nvarchar": NVARCHAR, "binary": BINARY,
                "varbinary": VARBINARY}[name]
        text = f"{name}({'max' if is_max else length})"
        spark, family = ("BINARY", "binary") if "binary" in name else ("STRING", "string")
        return TypeInfo(name, jdbc, text, length, None, spark, family)
    if name in ("time", "datetime2", "datetimeoffset"):
        nums = _ints(params)
        fsp = nums[0] if nums else 7
        base = {"time": 8, "datetime2": 19, "datetimeoffset": 26}[name]
        length = base + (fsp + 1 if fsp else 0)
        jdbc, spark = {"time": (TIME, "BIGINT"), "datetime2": (TIMESTAMP, "TIMESTAMP_NTZ"),
                       "datetimeoffset": (-155, "TIMESTAMP")}[name]
        return TypeInfo(name, jdbc, f"{name}({fsp})", length, fsp, spark, "temporal")
    raise ColumnTypeError(f"unknown SQL Server type {name}")


def resolve_type(dialect: str, words: list[str], params: list[str], *, unsigned: bool = False,
                 zerofill: bool = False, array_dims: int = 0, byte_char: str | None = None) -> TypeInfo:
    words = [w.upper() for w in words]
    if dialect in ("mysql", "mariadb"):
        return _resolve_mysql(words, params, unsigned, zerofill)
    if dialect == "postgres":
        return _resolve_postgres(words, params, array_dims)
    if dialect == "oracle":
        return _resolve_oracle(words, params, byte_char)
    if dialect == "tsql":
        return _resolve_tsql(words, params)
    raise LakecdcError(f"unknown DDL dialect {dialect!r} (choose one of {', '.join(DIALECTS)})")


# Multi-word type names the parser must read as one type, per dialect (longest first).
MULTIWORD_TYPES: dict[str, list[tuple[str, ...]]] = {
    "mysql": [("NATIONAL", "CHARACTER", "VARYING"), ("NATIONAL", "CHAR", "VARYING"), ("LONG", "CHAR", "VARYING"),
              ("DOUBLE", "PRECISION"), ("CHARACTER", "VARYING"), ("CHAR", "VARYING"), ("NATIONAL", "CHARACTER"),
              ("NATIONAL", "VARCHAR"), ("NATIONAL", "CHAR"), ("NCHAR", "VARCHAR"), ("NCHAR", "VARYING"),
              ("LONG", "VARCHAR"), ("LONG", "VARBINARY")],
    "postgres": [("TIMESTAMP", "WITHOUT", "TIME", "ZONE"), ("TIMESTAMP", "WITH", "TIME", "ZONE"),
                 ("TIME", "WITHOUT", "TIME", "ZONE"), ("TIME", "WITH", "TIME", "ZONE"), ("DOUBLE", "PRECISION"),
                 ("CHARACTER", "VARYING"), ("CHAR", "VARYING"), ("BIT", "VARYING")],
    "oracle": [("NATIONAL", "CHARACTER", "VARYING"), ("NATIONAL", "CHAR", "VARYING"), ("NATIONAL", "CHARACTER"),
               ("NATIONAL", "CHAR"), ("NCHAR", "VARYING"), ("DOUBLE", "PRECISION"), ("CHARACTER", "VARYING"),
               ("CHAR", "VARYING"), ("LONG", "RAW")],
    "tsql": [("NATIONAL", "CHARACTER", "VARYING"), ("NATIONAL", "CHAR", "VARYING"), ("NATIONAL", "CHARACTER"),
             ("NATIONAL", "CHAR"), ("DOUBLE", "PRECISION"), ("CHARACTER", "VARYING"), ("CHAR", "VARYING"),
             ("BINARY", "VARYING")],
}
