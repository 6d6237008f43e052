"""Literal defaults as the server stores them: MariaDB and PostgreSQL convert a DEFAULT literal to the column's
type when the column is defined (`SET DEFAULT 1` on YEAR is 2001, on TIME(2) '00:00:01.00'; PostgreSQL prints
'08-00-2B-01-02-03' as macaddr '08:00:2b:01:02:03'). `convert_default(column, dialect, number)` rewrites
`column.default` in place; `number` says the literal was written as a number (MariaDB's YEAR and TIME read
numbers and strings differently). A value the conversion does not understand is left as written (the server
either refuses it or stores it unchanged)."""

from __future__ import annotations

import re
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation, localcontext

from ingest.schema.model import Column

# columns that store a number literal default as its value's text (BLOB/TEXT keep the literal as written)
_MY_STRING_TYPES = ("char", "varchar", "binary", "varbinary")
_NOW = re.compile(r"(?i)(current_timestamp|now|localtime|localtimestamp)\s*(\(\s*(\d*)\s*\))?")


def convert_default(col: Column, dialect: str, number: bool = False, definition: bool = True) -> None:
    """`definition`: the default comes with a column definition (CREATE / ADD / MODIFY), not ALTER ... SET DEFAULT
    (MariaDB gives CURRENT_TIMESTAMP the column's precision only in a definition)."""
    if not col.has_default or col.default is None:
        return
    if dialect in ("mysql", "mariadb"):
        _mysql(col, number, definition)
    elif dialect == "postgres":
        value = _postgres_literal(col.source_type, col.default) if col.default_is_literal else \
            postgres_bit_literal(col.source_type, col.default)
        if value is not None:
            col.default, col.default_is_literal = value


def _fsp(source_type: str) -> int:
    m = re.search(r"\((\d+)\)", source_type)
    return int(m.group(1)) if m else 0


# ------------------------------------------------------------------------------------------------ MariaDB


def _mysql(col: Column, number: bool, definition: bool) -> None:
    base = col.source_type.split("(")[0].split()[0].lower()
    text = col.default or ""
    if not col.default_is_literal:
        now = _NOW.fullmatch(text.strip())
        if now:
            # DATETIME(3) DEFAULT CURRENT_TIMESTAMP: current_timestamp(3) in a definition, current_timestamp()
            # from ALTER ... SET DEFAULT; a written precision 0 is not shown
            in_definition = definition and base in ("datetime", "timestamp")
            fsp = int(now.group(3)) if now.group(3) else _fsp(col.source_type) if in_definition else 0
            col.default = f"current_timestamp({fsp})" if fsp else "current_timestamp()"
        return
    try:
        if base in ("tinyint", "smallint", "mediumint", "int", "bigint", "decimal"):
            col.default = _stored_number(Decimal(text.strip()), base, col.scale)
        elif base == "year":
            col.default = _mysql_year(text.strip(), number)
        elif base == "time":
            col.default = _mysql_time(text.strip(), number, _fsp(col.source_type))
        elif base in ("date", "datetime", "timestamp"):
            col.default = _mysql_datetime(text.strip(), _fsp(col.source_type), base == "date", number)
        elif base in _MY_STRING_TYPES and number and \
                "e" in text.lower():  # a floating-point literal: its value in plain digits (2e3 -> 2000)
            value = Decimal(repr(float(text)))
            if -15 <= value.adjusted() < 15:
                col.default = format(value.normalize(), "f")
        elif base == "bit":  # a number, or a string's bytes as a big-endian number
            bits = int(Decimal(text).quantize(Decimal(1), ROUND_HALF_UP)) if number else \
                int.from_bytes(text.encode("latin1", "replace"), "big")
            col.default, col.default_is_literal = f"b'{bits:b}'", False
    except (InvalidOperation, ValueError):
        pass


def _mysql_year(text: str, number: bool) -> str:
    """Numbers round; 1-69 are 2001-2069 (a string '0' / '00' is 2000 too, the number 0 is 0000), 70-99 19xx."""
    value = int(Decimal(text).quantize(Decimal(1), ROUND_HALF_UP))
    if (value == 0 and number) or (not number and len(text) == 4):
        return f"{value:04d}"
    if 0 <= value < 70:
        return str(2000 + value)
    if 70 <= value < 100:
        return str(1900 + value)
    return str(value)


def _mysql_time(text: str, number: bool, fsp: int) -> str:
    sign = ""
    if text.startswith("-"):
        sign, text = "-", text[1:]
    frac = ""
    stamp = _MY_DATETIME.fullmatch(text)
    if stamp and stamp.group(4) is not None:  # a datetime literal: its time part
        text = f"{stamp.group(4)}:{stamp.group(5)}:{stamp.group(6)}" + (f".{stamp.group(7)}" if stamp.group(7) else "")
    if ":" in text:
        main, _, frac = text.partition(".")
        parts = [int(p) for p in main.split(":")] + [0]
        h, m, s = parts[0], parts[1], parts[2] if len(parts) > 3 else 0
    else:
        main, _, frac = text.partition(".")
        digits = int(main or "0")
        if len(main) > 6:  # YYYYMMDD[HHMMSS]: a datetime; its time part
            digits = digits % 1000000 if len(main) > 8 else 0
        h, m, s = digits // 10000, digits // 100 % 100, digits % 100
        if m > 59 or s > 59:
            raise ValueError(text)
    del number
    out = f"{sign}{h:02d}:{m:02d}:{s:02d}"
    if fsp:
        out += "." + (frac + "0" * fsp)[:fsp]
    return out


_MY_DATETIME = re.compile(r"(\d{1,4})[^\d\s](\d{1,2})[^\d\s](\d{1,2})"
                          r"(?:[ T](\d{1,2})[^\d\s](\d{1,2})[^\d\s](\d{1,2})(?:\.(\d+))?)?")


def _mysql_datetime(text: str, fsp: int, date_only: bool, number: bool) -> str:
    """MariaDB reads 'Y-M-D[ h:m:s[.f]]' with any punctuation as delimiter, YYYYMMDD[hhmmss] as digits; a
    two-digit year 00-69 is 20xx, 70-99 19xx. A DATE keeps the date part."""
    if number and text == "0":  # the zero date
        text = "0000-00-00 00:00:00"
    if re.fullmatch(r"\d{8}|\d{14}", text):
        text = f"{text[:4]}-{text[4:6]}-{text[6:8]}" + (f" {text[8:10]}:{text[10:12]}:{text[12:]}" if len(text) > 8
                                                         else "")
    m = _MY_DATETIME.fullmatch(text)
    if not m:
        return text
    y, mo, d, h, mi, s, frac = m.groups()
    year = int(y) + (2000 if int(y) < 70 else 1900) if len(y) == 2 else int(y)
    out = f"{year:04d}-{int(mo):02d}-{int(d):02d}"
    if date_only:
        return out
    out += f" {int(h or 0):02d}:{int(mi or 0):02d}:{int(s or 0):02d}"
    if fsp:
        out += "." + ((frac or "") + "0" * fsp)[:fsp]
    return out


# ------------------------------------------------------------------------ the rows that predate an ADD COLUMN

_MY_INT_TYPES = ("tinyint", "smallint", "mediumint", "int", "integer", "bigint")
_MY_FLOAT_TYPES = ("double", "real", "float")
_MY_TEXT_TYPES = ("char", "varchar", "tinytext", "text", "mediumtext", "longtext")
_ARITHMETIC_TOKEN = re.compile(r"\s*(\d+(?:\.\d*)?|\.\d+|[-+*()])")


def mysql_added_value(col: Column) -> str | None:
    """MariaDB/MySQL: the value ADD COLUMN gives the rows that already exist, as a SQL string literal, or None
    (NULL, or not known from the statement: a function, AUTO_INCREMENT, a generated column). The server sends
    no change event for those rows, so silver fills them with it. The literal default; a constant arithmetic
    default (+ - * of numbers, e.g. (-887 * 2)) of a numeric column, evaluated exactly and stored as the server
    stores it; NOT NULL without a default: the type's implicit default (0, '')."""
    base = col.source_type.split("(")[0].split()[0].lower() if col.source_type else ""
    if col.auto_increment or col.generation_expression is not None:
        return None
    if not col.has_default:
        if col.nullable:
            return None
        value = "0" if base in _MY_INT_TYPES + _MY_FLOAT_TYPES + ("decimal", "numeric") else \
            "" if base in _MY_TEXT_TYPES else None
    elif col.default is None:
        return None
    elif col.default_is_literal:
        value = col.default
    else:
        value = _numeric_constant(col, base)
    return None if value is None else "'" + value.replace("'", "''") + "'"


def _numeric_constant(col: Column, base: str) -> str | None:
    number = _fold_arithmetic(col.default or "")
    if number is None:
        return None
    if base in _MY_INT_TYPES + ("decimal", "numeric"):
        return _stored_number(number, base, col.scale)
    if base in _MY_FLOAT_TYPES:
        return repr(float(number))
    return None


def _stored_number(number: Decimal, base: str, scale: int | None) -> str:
    """A number as an integer or DECIMAL(p, scale) column stores it: rounded half away from zero."""
    places = 0 if base in _MY_INT_TYPES else (scale or 0)
    return str(number.quantize(Decimal(1).scaleb(-places), ROUND_HALF_UP))


def _fold_arithmetic(text: str) -> Decimal | None:
    """The exact value of an expression of decimal numbers, + - * and parentheses, or None for anything else."""
    tokens: list[str] = []
    pos = 0
    while pos < len(text.rstrip()):
        m = _ARITHMETIC_TOKEN.match(text, pos)
        if m is None:
            return None
        tokens.append(m.group(1))
        pos = m.end()
    at = 0

    def peek() -> str | None:
        return tokens[at] if at < len(tokens) else None

    def take() -> str:
        nonlocal at
        at += 1
        return tokens[at - 1]

    def expression() -> Decimal:
        value = term()
        while peek() in ("+", "-"):
            value = value + term() if take() == "+" else value - term()
        return value

    def term() -> Decimal:
        value = unary()
        while peek() == "*":
            take()
            value *= unary()
        return value

    def unary() -> Decimal:
        token = take() if peek() is not None else ""
        if token in ("-", "+"):
            value = unary()
            return -value if token == "-" else value
        if token == "(":
            value = expression()
            if take() != ")":
                raise ValueError(text)
            return value
        return Decimal(token)

    with localcontext() as exact:
        exact.prec = 200
        try:
            value = expression()
        except (IndexError, ValueError, InvalidOperation):
            return None
    return value if at == len(tokens) and tokens else None


# ------------------------------------------------------------------------------------------------ PostgreSQL

_TRUE = ("t", "true", "y", "yes", "on", "1")
_FALSE = ("f", "false", "n", "no", "off", "0")


def _postgres_literal(source_type: str, text: str) -> tuple[str, bool] | None:
    """(value, is_literal) as pg_get_expr prints the constant, or None to keep the value."""
    if source_type.endswith("]"):
        return None
    value = text.strip()
    lowered = value.lower()
    if source_type == "boolean":
        if lowered in _TRUE or (len(lowered) > 1 and "true".startswith(lowered)) or lowered == "ye":
            return "true", False
        if lowered in _FALSE or (len(lowered) > 1 and "false".startswith(lowered)):
            return "false", False
        return None
    if source_type in ("macaddr", "macaddr8"):
        digits = re.sub(r"[^0-9a-f]", "", lowered)
        if len(digits) == 12 and source_type == "macaddr8":
            digits = digits[:6] + "fffe" + digits[6:]
        if len(digits) not in (12, 16):
            return None
        return ":".join(digits[i:i + 2] for i in range(0, len(digits), 2)), True
    if source_type == "uuid":
        digits = re.sub(r"[^0-9a-f]", "", lowered)
        if len(digits) != 32:
            return None
        return f"{digits[:8]}-{digits[8:12]}-{digits[12:16]}-{digits[16:20]}-{digits[20:]}", True
    if source_type == "date":
        m = re.fullmatch(r"(\d{4})-(\d{1,2})-(\d{1,2})", value)
        return (f"{m.group(1)}-{int(m.group(2)):02d}-{int(m.group(3)):02d}", True) if m else None
    if source_type == "cidr" and "/" not in value:  # a network without a mask: the full address width
        return value + ("/128" if ":" in value else "/32"), True
    if source_type == "bytea" and not value.startswith("\\x"):
        return "\\x" + value.encode().hex(), True
    if source_type.startswith("time") and "with time zone" not in source_type and \
            not source_type.startswith("timestamp"):
        m = re.fullmatch(r"(\d{1,2}):(\d{1,2})(?::(\d{1,2}))?(\.\d+)?", value)
        if m:
            return f"{int(m.group(1)):02d}:{int(m.group(2)):02d}:{int(m.group(3) or 0):02d}{m.group(4) or ''}", True
        return None
    if source_type.startswith("timestamp") and "with time zone" not in source_type:
        m = re.fullmatch(r"(\d{4})-(\d{1,2})-(\d{1,2})(?:[ T](\d{1,2}):(\d{1,2})(?::(\d{1,2}))?(\.\d+)?)?", value)
        if m:
            y, mo, d, h, mi, s, frac = m.groups()
            return f"{y}-{int(mo):02d}-{int(d):02d} {int(h or 0):02d}:{int(mi or 0):02d}:{int(s or 0):02d}" \
                   f"{frac or ''}", True
        return None
    return None


def postgres_bit_literal(source_type: str, text: str) -> tuple[str, bool] | None:
    """B'101' / X'1F' on a bit / bit varying column: the bits as a string literal."""
    m = re.fullmatch(r"(?i)([bx])'([0-9a-f]*)'", text.strip())
    if not m or not source_type.startswith("bit"):
        return None
    if m.group(1).lower() == "b":
        return m.group(2), True
    return "".join(f"{int(ch, 16):04b}" for ch in m.group(2)), True
