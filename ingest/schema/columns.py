"""Grammar for column definitions and table elements, shared by all dialects (differences are small flags).

`parse_column(cursor, dialect)` reads `name type [attributes...]` up to the next top-level ',' or ')' and
returns a `ColumnSpec` (what was written). `ColumnSpec.build(...)` turns it into a model `Column` with the
dialect's implicit rules (charset inheritance, implied NOT NULL, serial/identity).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

from ingest.schema.defaults import convert_default
from ingest.schema.model import Column
from ingest.schema.tokens import Cursor, DdlSyntaxError
from ingest.schema.types import MULTIWORD_TYPES, TypeInfo, resolve_type

# Words that end a DEFAULT expression (the next column attribute starts).
_ATTRIBUTE_WORDS = {
    "NOT", "NULL", "DEFAULT", "AUTO_INCREMENT", "PRIMARY", "KEY", "UNIQUE", "COMMENT", "CHARACTER", "CHARSET",
    "COLLATE", "ON", "INVISIBLE", "VISIBLE", "COLUMN_FORMAT", "STORAGE", "REFERENCES", "CHECK", "CONSTRAINT",
    "GENERATED", "AS", "IDENTITY", "ENABLE", "DISABLE", "VALIDATE", "NOVALIDATE", "FIRST", "AFTER", "SERIAL",
    "ROWGUIDCOL", "SPARSE", "FILESTREAM", "MASKED", "ENCRYPT", "DEFERRABLE", "INITIALLY", "COMPRESSION",
    "WITH", "WITHOUT", "USING", "PERSISTED", "STORED", "VIRTUAL", "PERSISTENT", "CLUSTERED", "NONCLUSTERED",
}
_CONSTRAINT_STATE = {"ENABLE", "DISABLE", "VALIDATE", "NOVALIDATE", "RELY", "NORELY", "DEFERRABLE",
                     "IMMEDIATE", "DEFERRED", "INITIALLY", "CLUSTERED", "NONCLUSTERED", "ASC", "DESC",
                     "NOT", "ENFORCED"}


@dataclass
class ColumnSpec:
    name: str
    quoted: bool
    type_words: list[str] = field(default_factory=list)
    params: list[str] = field(default_factory=list)
    type_text: str = ""
    unsigned: bool = False
    zerofill: bool = False
    array_dims: int = 0
    byte_char: str | None = None
    nullable: bool | None = None          # None: not written
    has_default: bool = False
    default: str | None = None
    default_is_literal: bool = True
    default_number: bool = False          # the default was written as a number (MariaDB YEAR/TIME read it so)
    auto_increment: bool = False
    identity: bool = False                # SQL Server IDENTITY / GENERATED ... AS IDENTITY
    generation_expression: str | None = None
    primary_key: bool = False
    unique: bool = False                  # an inline UNIQUE [KEY] (MySQL: may become the key, create_table.py)
    charset: str | None = None
    collation: str | None = None
    comment: str | None = None
    position: tuple[str, str | None] | None = None  # ("FIRST", None) or ("AFTER", column)
    written: set[str] = field(default_factory=set)  # which attributes appeared (Oracle MODIFY is partial)
    prebuilt: Column | None = None        # a column copied from another table (PostgreSQL LIKE)
    default_on_null: bool = False         # Oracle DEFAULT ON NULL (implies NOT NULL)
    constraint_name: str | None = None    # CONSTRAINT name of an inline constraint (the primary key's)
    default_constraint: str | None = None  # SQL Server: CONSTRAINT name DEFAULT ... (dropped by name later)

    def build(self, dialect: str, table_charset: str | None) -> Column:
        if self.prebuilt is not None:
            return copy.deepcopy(self.prebuilt)
        if self.type_words:
            info = resolve_type(dialect, self.type_words, self.params, unsigned=self.unsigned, zerofill=self.zerofill,
                                array_dims=self.array_dims, byte_char=self.byte_char)
        elif dialect != "tsql" and not (dialect == "oracle" and self.generation_expression):
            raise DdlSyntaxError(f"column {self.name} has no type")
        else:  # a SQL Server computed / Oracle virtual column without a type: derived from the expression
            info = TypeInfo("computed", 1111, "computed", None, None, "STRING", "other")
        type_name = info.type_name
        auto = self.auto_increment or info.implied_auto_increment
        nullable = self.nullable if self.nullable is not None else True
        # Oracle: the key's NOT NULL is added (and undone) by the table (see Statement.fix_primary_key)
        if info.implied_not_null or (self.primary_key and dialect != "oracle") or self.default_on_null or (
                self.identity and dialect in ("tsql", "postgres", "oracle")):
            nullable = False
        if self.identity and dialect == "tsql":  # Debezium SQL Server: typeName "int identity", autoIncremented false
            type_name = f"{type_name} identity"
        charset = None
        if dialect in ("mysql", "mariadb") and info.family in ("string", "text", "enum", "national"):
            charset = self.charset or charset_of_collation(self.collation) or table_charset
            if info.family == "national":
                charset = self.charset or "utf8mb3"
        if dialect in ("mysql", "mariadb") and info.family == "json":  # MariaDB: LONGTEXT utf8mb4 + JSON check
            charset = "utf8mb4"
        if dialect in ("mysql", "mariadb") and info.type_name in ("TEXT", "BLOB") and info.length is not None:
            _size_text_blob(info, charset)
        default = self.default
        has_default = self.has_default
        if info.type_name in ("serial", "bigserial", "smallserial"):
            has_default = True
            default = "nextval"  # the sequence name is filled in by the interpreter
        col = Column(
            name=self.name, type_name=type_name, jdbc_type=info.jdbc_type, source_type=info.source_type,
            type_expression=type_name, length=info.length, scale=info.scale, nullable=nullable,
            has_default=has_default, default=default, default_is_literal=self.default_is_literal and
            info.type_name not in ("serial", "bigserial", "smallserial"),
            auto_increment=auto or (self.identity and dialect != "tsql"),
            generated=bool(self.generation_expression) or (auto and dialect in ("mysql", "mariadb")),
            generation_expression=self.generation_expression, charset=charset, collation=self.collation,
            enum_values=info.enum_values, comment=self.comment, spark_type=info.spark_type,
        )
        convert_default(col, dialect, self.default_number)
        return col


_CHARSET_BYTES = {"utf8mb4": 4, "utf8mb3": 3, "utf8": 3, "ucs2": 2, "utf16": 4, "utf16le": 4, "utf32": 4,
                  "big5": 2, "gbk": 2, "sjis": 2, "ujis": 3, "euckr": 2, "gb2312": 2, "cp932": 2, "eucjpms": 3}


def _size_text_blob(info: TypeInfo, charset: str | None) -> None:
    """TEXT(M)/BLOB(M): MariaDB picks the smallest type holding M characters (bytes for BLOB)."""
    size = (info.length or 0) * (_CHARSET_BYTES.get(charset or "", 1) if info.type_name == "TEXT" else 1)
    prefix = "TINY" if size < 256 else "" if size < 65536 else "MEDIUM" if size < 16777216 else "LONG"
    info.type_name = prefix + info.type_name
    info.source_type = info.type_name.lower()
    info.length = None


_TEXT_SIZES = (("TINYTEXT", 255), ("TEXT", 65535), ("MEDIUMTEXT", 16777215), ("LONGTEXT", 4294967295))


def widen_text(col: Column, old_charset: str | None, new_charset: str) -> None:
    """CONVERT TO CHARACTER SET: a TEXT column keeps its length in characters, so a wider character set moves it
    to the next TEXT size (TINYTEXT latin1 -> TEXT utf8mb4); the server never narrows it."""
    sizes = dict(_TEXT_SIZES)
    if col.type_name not in sizes:
        return
    chars = sizes[col.type_name] // _CHARSET_BYTES.get(old_charset or "", 1)
    needed = chars * _CHARSET_BYTES.get(new_charset, 1)
    for name, size in _TEXT_SIZES:
        if size >= needed or name == "LONGTEXT":
            if size > sizes[col.type_name]:
                col.type_name = col.type_expression = name
                col.source_type = name.lower()
            return


def charset_of_collation(collation: str | None) -> str | None:
    if not collation:
        return None
    name = collation.lower()
    if name == "binary":
        return "binary"
    return name.split("_", 1)[0]


def _read_type(cur: Cursor, dialect: str, spec: ColumnSpec) -> None:
    start = cur.i
    first = cur.next()
    if first.kind not in ("word", "ident"):
        cur.i -= 1
        raise cur.error("expected a column type")
    words = [first.text]
    if dialect == "postgres":  # schema-qualified or quoted user types: public.mood
        if first.kind == "ident" and first.text == "char":  # "char": the internal one-byte type, not CHAR(1)
            words = ['"char"']
        while cur.at_op(".") and cur.peek(1) is not None:
            cur.next()
            words.append(cur.next().text)
        if len(words) > 1 and words[0].lower() in ("public", "pg_catalog"):
            words = words[1:]  # the default search_path: format_type() does not qualify these
        if len(words) > 1:
            words = [".".join(words)]
    upper = [w.upper() for w in words]
    for candidate in MULTIWORD_TYPES.get("mysql" if dialect == "mariadb" else dialect, []):
        if tuple(upper) == candidate[:1] and cur.at(*candidate[1:]):
            cur.i += len(candidate) - 1
            upper = list(candidate)
            break
    if dialect == "oracle" and upper == ["INTERVAL"]:
        return _read_oracle_interval(cur, spec, start)
    if dialect == "postgres" and upper == ["INTERVAL"] and cur.at_any(_INTERVAL_FIELDS):
        upper = ["INTERVAL"]  # interval day to second(3): fields, then the precision
        while cur.at_any(_INTERVAL_FIELDS) or cur.at("TO"):
            upper.append(cur.next().upper)
    if cur.at_op("("):
        params_start, params_end = cur.skip_group()
        spec.params = _params(cur, params_start, params_end, spec)
    # suffixes after the parameters
    while True:
        if dialect in ("postgres", "oracle") and cur.at("WITH", "TIME", "ZONE"):
            cur.i += 3
            upper = upper + ["WITH", "TIME", "ZONE"]
        elif dialect == "oracle" and cur.at("WITH", "LOCAL", "TIME", "ZONE"):
            cur.i += 4
            upper = upper + ["WITH", "LOCAL", "TIME", "ZONE"]
        elif dialect == "postgres" and cur.at("WITHOUT", "TIME", "ZONE"):
            cur.i += 3
            upper = upper + ["WITHOUT", "TIME", "ZONE"]
        elif dialect == "postgres" and cur.at_op("["):
            cur.next()
            while not cur.accept_op("]"):
                cur.next()
            spec.array_dims += 1
        elif dialect == "postgres" and cur.at("ARRAY"):
            cur.next()
            spec.array_dims += 1
            if cur.at_op("["):
                cur.next()
                while not cur.accept_op("]"):
                    cur.next()
        elif dialect in ("mysql", "mariadb") and cur.at_any(("UNSIGNED", "SIGNED", "ZEROFILL")):
            word = cur.next().upper
            spec.unsigned = spec.unsigned or word == "UNSIGNED"
            spec.zerofill = spec.zerofill or word == "ZEROFILL"
        elif dialect in ("mysql", "mariadb") and cur.at_any(("BINARY", "ASCII", "UNICODE", "BYTE")) and \
                upper[0] in ("CHAR", "VARCHAR", "CHARACTER", "TEXT", "TINYTEXT", "MEDIUMTEXT", "LONGTEXT", "ENUM",
                             "SET", "NATIONAL", "NCHAR", "NVARCHAR", "VARCHARACTER"):
            word = cur.next().upper
            if word == "BYTE":
                upper = ["BINARY"] if upper[0] in ("CHAR", "CHARACTER") else ["VARBINARY"]
            elif word == "ASCII":
                spec.charset = "latin1"
            elif word == "UNICODE":
                spec.charset = "ucs2"
            # BINARY: the character set's binary collation, which the schema history does not keep
        else:
            break
    spec.type_words = upper
    spec.type_text = cur.text(start, cur.i)


_INTERVAL_FIELDS = ("YEAR", "MONTH", "DAY", "HOUR", "MINUTE", "SECOND")


def _read_oracle_interval(cur: Cursor, spec: ColumnSpec, start: int) -> None:
    """INTERVAL YEAR [(p)] TO MONTH | INTERVAL DAY [(p)] TO SECOND [(s)]: params = [leading, fractional] with
    '*' for a precision not written."""
    words = ["INTERVAL"]
    params: list[str] = []
    while cur.at_any(("YEAR", "MONTH", "DAY", "SECOND", "TO", "HOUR", "MINUTE")):
        word = cur.next().upper
        words.append(word)
        if word == "TO":
            continue
        if cur.at_op("("):
            s, e = cur.skip_group()
            params.append(next((t.text for t in cur.toks[s:e] if t.kind == "number"), "*"))
        else:
            params.append("*")
    spec.type_words = [" ".join(words)]
    spec.params = params
    spec.type_text = cur.text(start, cur.i)


def _params(cur: Cursor, start: int, end: int, spec: ColumnSpec) -> list[str]:
    out = []
    for tok in cur.toks[start:end]:
        if tok.kind in ("number", "string"):
            out.append(tok.text)
        elif tok.kind == "word" and tok.upper in ("MAX",):
            out.append("MAX")
        elif tok.kind == "word" and tok.upper in ("BYTE", "CHAR"):
            spec.byte_char = tok.upper
        elif tok.kind == "op" and tok.text == "*":
            out.append("*")
    return out


def read_expression(cur: Cursor, stop_words: set[str] | None = None) -> tuple[int, int]:
    """Consume one expression (a DEFAULT value): a primary with optional casts and binary operators.
    Returns the token range."""
    stop = stop_words if stop_words is not None else _ATTRIBUTE_WORDS
    start = cur.i
    _primary(cur)
    while not cur.done():
        tok = cur.peek()
        if tok.kind == "op" and tok.text in ("::",):
            cur.next()
            _read_type(cur, "postgres", ColumnSpec("", False))
        elif tok.kind == "op" and tok.text in ("+", "-", "*", "/", "||", "%", "&", "|"):
            cur.next()
            _primary(cur)
        elif tok.kind == "op" and tok.text == "." and cur.peek(1) is not None:
            cur.next()
            cur.next()
        elif tok.kind == "op" and tok.text == "[":  # ARRAY[1, 2] and subscripts
            _skip_brackets(cur)
        elif tok.kind == "word" and tok.upper in ("AT",) and cur.at("AT", "TIME", "ZONE"):
            cur.i += 3
            _primary(cur)
        else:
            break
    if cur.i == start:
        raise cur.error("expected an expression")
    del stop
    return start, cur.i


def _skip_brackets(cur: Cursor) -> None:
    depth = 0
    while not cur.done():
        tok = cur.next()
        if tok.kind == "op" and tok.text == "[":
            depth += 1
        elif tok.kind == "op" and tok.text == "]":
            depth -= 1
            if depth == 0:
                return
    raise cur.error("unbalanced '['")


def _primary(cur: Cursor) -> None:
    tok = cur.peek()
    if tok is None:
        raise cur.error("expected an expression")
    if tok.kind == "op" and tok.text in ("-", "+"):
        cur.next()
        _primary(cur)
        return
    if tok.kind == "op" and tok.text == "(":
        cur.skip_group()
        return
    if tok.kind in ("string", "number", "literal", "ident"):
        cur.next()
        # PostgreSQL typed literal  DATE '2020-01-01' handled in word branch; here: 'x'::type handled by caller
        return
    if tok.kind == "word":
        cur.next()
        if tok.upper in ("DATE", "TIME", "TIMESTAMP", "INTERVAL") and cur.peek() is not None and \
                cur.peek().kind == "string":
            cur.next()
        elif cur.at_op("("):
            cur.skip_group()
        return
    raise cur.error("expected an expression")


def literal_value(cur: Cursor, start: int, end: int) -> tuple[str | None, bool]:
    """(value, is_literal) for a DEFAULT expression: a string or number literal gives its value, NULL gives None,
    anything else its text (not a literal)."""
    while end - start >= 3 and _encloses(cur.toks, start, end):
        start, end = start + 1, end - 1  # redundant outer parentheses: SQL Server writes DEFAULT ((0))
    toks = cur.toks[start:end]
    if len(toks) == 1 and toks[0].kind in ("string", "number"):
        return toks[0].text, True
    if len(toks) == 2 and toks[0].kind == "op" and toks[0].text == "-" and toks[1].kind == "number":
        return "-" + toks[1].text, True
    if len(toks) == 1 and toks[0].upper == "NULL":
        return None, True
    return cur.text(start, end), False


def is_number(cur: Cursor, start: int, end: int) -> bool:
    """True if the expression toks[start:end] is a (signed) number literal."""
    toks = [t for t in cur.toks[start:end] if not (t.kind == "op" and t.text in "()")]
    return bool(toks) and toks[-1].kind == "number" and all(t.kind == "op" and t.text in "-+" for t in toks[:-1])


def _encloses(toks: list, start: int, end: int) -> bool:
    """True if toks[start] is a '(' whose matching ')' is toks[end - 1]."""
    if not (toks[start].kind == "op" and toks[start].text == "(" and toks[end - 1].kind == "op"
            and toks[end - 1].text == ")"):
        return False
    depth = 0
    for i in range(start, end):
        tok = toks[i]
        if tok.kind == "op" and tok.text == "(":
            depth += 1
        elif tok.kind == "op" and tok.text == ")":
            depth -= 1
            if depth == 0 and i != end - 1:
                return False
    return True


def parse_column(cur: Cursor, dialect: str) -> ColumnSpec:
    name, quoted = cur.ident()
    spec = ColumnSpec(name=name, quoted=quoted)
    if dialect in ("tsql", "oracle") and cur.at("AS"):  # computed / virtual column without a type
        cur.next()
        s, e = read_expression(cur)
        spec.generation_expression = cur.text(s, e)
    elif not (cur.done() or cur.at_op(",") or cur.at_op(")")) and not _is_attribute_start(cur, dialect):
        _read_type(cur, dialect, spec)
    parse_attributes(cur, dialect, spec)
    return spec


def _is_attribute_start(cur: Cursor, dialect: str) -> bool:
    # Oracle MODIFY (c NOT NULL) / MODIFY c DEFAULT 1 omit the type
    return dialect == "oracle" and cur.at_any(("NOT", "NULL", "DEFAULT", "CONSTRAINT", "PRIMARY", "UNIQUE",
                                                "ENABLE", "DISABLE", "INVISIBLE", "VISIBLE", "CHECK", "GENERATED"))


def parse_attributes(cur: Cursor, dialect: str, spec: ColumnSpec) -> None:  # noqa: C901 - a flat keyword switch
    while not cur.done() and not cur.at_op(",") and not cur.at_op(")"):
        if cur.accept("NOT", "NULL"):
            spec.nullable = False
            spec.written.add("nullable")
        elif cur.accept("NULL"):
            spec.nullable = True
            spec.written.add("nullable")
        elif cur.accept("DEFAULT"):
            if cur.accept("ON", "NULL"):  # Oracle DEFAULT ON NULL: implies NOT NULL
                spec.default_on_null = True
                spec.written.add("nullable")
            s, e = read_expression(cur)
            spec.has_default = True
            spec.default, spec.default_is_literal = literal_value(cur, s, e)
            spec.default_number = is_number(cur, s, e)
            spec.written.add("default")
        elif cur.accept("AUTO_INCREMENT") or cur.accept("AUTOINCREMENT"):
            spec.auto_increment = True
        elif cur.accept("SERIAL", "DEFAULT", "VALUE"):
            spec.auto_increment = True
            spec.nullable = False
        elif cur.accept("IDENTITY"):
            spec.identity = True
            if cur.at_op("("):
                cur.skip_group()
        elif cur.at("GENERATED"):
            cur.next()
            if cur.accept("ALWAYS") or cur.accept("BY", "DEFAULT"):
                cur.accept("ON", "NULL")
            cur.expect("AS")
            if cur.accept("ROW"):  # SQL Server system-versioned period column: GENERATED ALWAYS AS ROW START|END
                cur.next()
                cur.accept("HIDDEN")
            elif cur.accept("IDENTITY"):
                spec.identity = True
                if cur.at_op("("):
                    cur.skip_group()
            else:
                s, e = cur.skip_group()
                spec.generation_expression = cur.text(s, e)
                cur.accept("VIRTUAL") or cur.accept("STORED") or cur.accept("PERSISTENT")
        elif cur.at("AS") and cur.at_op("(", 1):
            cur.next()
            s, e = cur.skip_group()
            spec.generation_expression = cur.text(s, e)
        elif cur.at_any(("VIRTUAL", "STORED", "PERSISTENT", "PERSISTED")):
            cur.next()
        elif cur.accept("PRIMARY", "KEY") or (dialect in ("mysql", "mariadb") and cur.accept("KEY")):
            spec.primary_key = True
        elif cur.accept("UNIQUE"):
            cur.accept("KEY") or cur.accept("INDEX")
            spec.unique = True
        elif cur.accept("COMMENT"):
            cur.accept_op("=")
            spec.comment = cur.next().text
        elif cur.accept("CHARACTER", "SET") or cur.accept("CHARSET") or cur.accept("CHAR", "SET"):
            cur.accept_op("=")
            spec.charset = cur.next().text.lower()
        elif cur.accept("COLLATE"):
            cur.accept_op("=")
            spec.collation = cur.next().text
        elif cur.accept("ON", "UPDATE"):
            read_expression(cur)
        elif cur.at_any(("INVISIBLE", "VISIBLE", "ROWGUIDCOL", "SPARSE", "FILESTREAM", "ENABLE", "DISABLE",
                         "VALIDATE", "NOVALIDATE", "RELY", "NORELY", "CLUSTERED", "NONCLUSTERED", "ASC", "DESC")):
            cur.next()
        elif cur.accept("NOT", "FOR", "REPLICATION") or cur.accept("NOT", "DEFERRABLE"):
            pass
        elif cur.accept("DEFERRABLE") or cur.accept("INITIALLY", "DEFERRED") or cur.accept("INITIALLY", "IMMEDIATE"):
            pass
        elif cur.at_any(("COLUMN_FORMAT", "STORAGE", "COMPRESSION")):
            cur.next()
            cur.next()
        elif cur.accept("CONSTRAINT"):
            if not cur.at_any(("PRIMARY", "UNIQUE", "CHECK", "REFERENCES", "NOT", "NULL", "DEFAULT", "KEY")):
                name, quoted = cur.ident()
                folded = name if quoted or dialect not in ("postgres", "oracle") else (
                    name.lower() if dialect == "postgres" else name.upper())
                if cur.at("PRIMARY", "KEY"):
                    spec.constraint_name = folded
                elif cur.at("DEFAULT"):
                    spec.default_constraint = folded
        elif cur.accept("REFERENCES"):
            cur.dotted()
            if cur.at_op("("):
                cur.skip_group()
            while cur.at_any(("MATCH", "ON")):
                if cur.accept("MATCH"):
                    cur.next()
                elif cur.accept("ON"):
                    cur.next()  # DELETE / UPDATE
                    if not (cur.accept("NO", "ACTION") or cur.accept("SET", "NULL") or cur.accept("SET", "DEFAULT")):
                        cur.next()
        elif cur.accept("CHECK"):
            cur.skip_group()
            cur.accept("NO", "INHERIT")
        elif cur.accept("MASKED", "WITH"):
            cur.skip_group()
        elif cur.accept("WITH", "SYSTEM", "VERSIONING") or cur.accept("WITHOUT", "SYSTEM", "VERSIONING"):
            pass
        elif cur.accept("ENCRYPT"):
            while cur.at_any(("USING", "IDENTIFIED", "BY", "SALT", "NO")) or (
                    cur.peek() is not None and cur.peek().kind == "string"):
                cur.next()
        elif cur.accept("USING", "INDEX"):
            if cur.at_op("("):
                cur.skip_group()
            else:
                while cur.at_any(("TABLESPACE", "PCTFREE", "INITRANS", "MAXTRANS", "COMPUTE", "STATISTICS",
                                  "LOGGING", "NOLOGGING", "STORAGE")) or (
                        cur.peek() is not None and cur.peek().kind in ("number", "ident")):
                    tok = cur.next()
                    if tok.upper == "STORAGE" and cur.at_op("("):
                        cur.skip_group()
        elif cur.at_any(("FIRST", "AFTER")):
            return
        elif dialect in ("mysql", "mariadb") and cur.at("REF_SYSTEM_ID"):
            cur.next()
            cur.accept_op("=")
            cur.next()
        else:
            raise cur.error(f"unexpected {cur.peek().text!r} in the definition of column {spec.name}")


def parse_position(cur: Cursor) -> tuple[str, str | None] | None:
    if cur.accept("FIRST"):
        return ("FIRST", None)
    if cur.accept("AFTER"):
        return ("AFTER", cur.ident()[0])
    return None


def parse_key_columns(cur: Cursor, fold) -> list[str]:
    """`(a, b(10) DESC, ...)` -> [a, b], names folded by `fold(name, quoted)`."""
    return [name for name, _ in parse_key_parts(cur, fold)]


def parse_key_parts(cur: Cursor, fold) -> list[tuple[str, bool]]:
    """`(a, b(10) DESC, ...)` -> [(a, False), (b, True)]: each column and whether it has a prefix length."""
    start, end = cur.skip_group()
    parts: list[tuple[str, bool]] = []
    depth = 0
    expect_name = True
    for tok in cur.toks[start:end]:
        if tok.kind == "op" and tok.text == "(":
            if depth == 0 and parts and not expect_name:
                parts[-1] = (parts[-1][0], True)
            depth += 1
        elif tok.kind == "op" and tok.text == ")":
            depth -= 1
        elif tok.kind == "op" and tok.text == "," and depth == 0:
            expect_name = True
        elif expect_name and depth == 0 and tok.kind in ("word", "ident", "string"):
            parts.append((fold(tok.text, tok.kind != "word"), False))
            expect_name = False
    if not parts:
        raise DdlSyntaxError("empty key column list")
    return parts


# MySQL/MariaDB types that need a prefix length in a key (BLOB/TEXT family; JSON is LONGTEXT)
PREFIX_ONLY_TYPES = ("tinytext", "text", "mediumtext", "longtext", "tinyblob", "blob", "mediumblob", "longblob")


def check_mysql_key_part(col: Column, prefix: bool) -> None:
    if not prefix and col.source_type.split("(")[0] in PREFIX_ONLY_TYPES:
        raise DdlSyntaxError(f"BLOB/TEXT column {col.name} used in a key without a key length")
