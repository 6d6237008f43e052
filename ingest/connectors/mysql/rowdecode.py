"""Fast decoding of binlog row events (Write/Update/DeleteRows) straight into Debezium payload values.

mysql-replication decodes rows lazily (when `event.rows` is touched) one column at a time through generic
Python code, and the connector then converts each value again (codec.row through types.py). This module
compiles, once per table map and codec, a plain Python function that reads one row image from the raw
event body with struct.unpack_from / slicing and produces the payload dict `codec.row()` would produce.

Parity with the generic path is the contract: for every column the plan either
  - converts inline (hot types, when the model column's converter is known: integers, DECIMAL in
    precise mode, DATETIME2, TIMESTAMP2, DATE, character strings), or
  - decodes exactly the Python value mysql-replication would produce and passes it to the codec's own
    converter (every other supported binlog type).
A binlog column type it does not handle (MySQL binary JSON, pre-5.6 temporal formats, ...), a table map
without column names, partial row images and MySQL partial JSON updates make `plan_for` return None (or
`decode` return None) and the caller uses the generic path. tests/integration/mysql/test_mysql_rowdecode.py checks
parity on real binlog events.
"""

from __future__ import annotations

import binascii
import codecs
import datetime as dt
import decimal
import functools
import struct
from typing import TYPE_CHECKING, Any

from pymysqlreplication.constants import BINLOG, FIELD_TYPE
from pymysqlreplication.row_event import RowsEvent

from ingest.connectors.mysql.types import (
    DECIMAL_TYPES,
    EPOCH,
    EPOCH_DATE,
    INT_TYPES,
    STRING_TYPES,
    TypeOptions,
    base_type,
    zero_date_value,
)
from ingest.events.json_converter import decimal_base64

if TYPE_CHECKING:
    from ingest.connectors.mysql.codec import TableCodec

_COMPRESSED_BYTES = (0, 1, 1, 2, 2, 3, 3, 4, 4, 4)
_FSP_BYTES = (0, 1, 1, 2, 2, 3, 3)
_CACHE_LIMIT = 4096


class RowPlan:
    """A compiled reader for one table map + codec: `read(data, pos) -> (payload dict, next pos)`."""

    def __init__(self, read: Any, column_count: int, source: str) -> None:
        self.read = read
        self.column_count = column_count
        # columns-present bitmap of a full row image (every column present)
        self.all_present = ((1 << column_count) - 1).to_bytes((column_count + 7) // 8, "little")
        self.source = source  # generated code, for debugging

    def decode(self, event: Any, op: str) -> list[tuple[dict | None, dict | None]] | None:
        """(before, after) payload pairs of every row of mysql-replication's rows event of operation `op`, or None to
        use the generic path."""
        if not event.complete or event.event_type == BINLOG.PARTIAL_UPDATE_ROWS_EVENT:
            return None
        if event._RowsEvent__rows is not None:  # `.rows` already decoded: the packet is no longer at the rows
            return None
        wrapper = event.packet
        if wrapper._BinLogPacketWrapper__data_buffer:  # bytes pushed back by an unread(): not at a clean position
            return None
        raw = wrapper.packet
        return self.decode_rows(op, raw._data, raw._position, raw._position + event.event_size - wrapper.read_bytes,
                                event.number_of_columns, event.columns_present_bitmap,
                                getattr(event, "columns_present_bitmap2", None))

    def decode_rows(self, op: str, data: bytes, pos: int, end: int, columns: int, present: bytes,
                    present2: bytes | None) -> list[tuple[dict | None, dict | None]] | None:
        """The row images in data[pos:end] of a rows event of operation `op` ("c", "u", "d") with `columns` columns
        and its columns-present bitmaps (`present2`: an update's after image), or None to use the generic path."""
        full = self.all_present
        if columns != self.column_count or present != full or (present2 is not None and present2 != full):
            return None
        read = self.read
        out: list[tuple[dict | None, dict | None]] = []
        append = out.append
        if op == "u":
            while pos < end:
                before, pos = read(data, pos)
                after, pos = read(data, pos)
                append((before, after))
        elif op == "d":
            while pos < end:
                before, pos = read(data, pos)
                append((before, None))
        else:
            while pos < end:
                after, pos = read(data, pos)
                append((None, after))
        if pos != end:
            return None
        return out


def _signature(column: Any) -> tuple:
    get = column.__dict__.get
    return (get("type"), get("name"), get("unsigned"), get("max_length"), get("length_size"), get("precision"),
            get("decimals"), get("fsp"), get("bits"), get("bytes"), get("size"), get("character_set_name"),
            tuple(get("enum_values") or ()), tuple(get("set_values") or ()))


class PlanCache:
    """Plans by table-map content and codec (a table map is re-sent before every statement)."""

    def __init__(self, options: TypeOptions) -> None:
        self.options = options
        # values keep their codec alive, so the id() in a key cannot be reused by another codec
        self._plans: dict[tuple, tuple[TableCodec, RowPlan | None]] = {}

    def plan_for(self, table: Any, codec: TableCodec) -> RowPlan | None:
        """The plan for mysql-replication's Table of a table map (`event.table_map[event.table_id]`)."""
        cached = table.__dict__.get("_lakecdc_plan")
        if cached is not None and cached[0] is codec:
            return cached[1]
        key = (id(codec), tuple(_signature(c) for c in table.columns))
        if key in self._plans:
            plan = self._plans[key][1]
        else:
            if len(self._plans) > 256:
                self._plans.clear()
            try:
                plan = compile_plan(table.columns, codec, self.options)
            except _Unsupported:
                plan = None
            self._plans[key] = (codec, plan)
        table.__dict__["_lakecdc_plan"] = (codec, plan)
        return plan


class _Unsupported(Exception):
    pass


# ---------------------------------------------------------------------------------------------- value helpers
def _b64(raw: bytes) -> str:
    return binascii.b2a_base64(raw, newline=False).decode("ascii")


def _bit_string(raw: bytes, bits: int) -> str:
    """mysql-replication's BIT value: the bits as a '0'/'1' string, most significant first."""
    return format(int.from_bytes(raw, "big") & ((1 << bits) - 1), f"0{bits}b") if bits else ""


class _Gen:
    """Source-code generator of one row reader."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.names: dict[str, Any] = {"_b64": _b64, "decimal_base64": decimal_base64, "_bit_string": _bit_string,
                                      "int_from": int.from_bytes, "_date": dt.date, "_datetime": dt.datetime,
                                      "_timedelta": dt.timedelta, "EPOCH": EPOCH, "EPOCH_DATE": EPOCH_DATE}
        self._n = 0

    def const(self, value: Any, hint: str = "k") -> str:
        self._n += 1
        name = f"_{hint}{self._n}"
        self.names[name] = value
        return name

    def emit(self, line: str, indent: int = 2) -> None:
        self.lines.append("    " * (indent - 1) + line)


_STRUCT_FORMATS = {(1, True): "<b", (1, False): "<B", (2, True): "<h", (2, False): "<H", (4, True): "<i",
                   (4, False): "<I", (8, True): "<q", (8, False): "<Q"}


def _unpack(gen: _Gen, fmt: str) -> str:
    """Name of a precompiled struct unpack_from for `fmt` in the generated code."""
    name = "_st_" + fmt.replace("<", "le").replace(">", "be")
    gen.names.setdefault(name, struct.Struct(fmt).unpack_from)
    return name


def _uint(gen: _Gen, size: int, order: str = "little", signed: bool = False) -> str:
    """Expression of an integer of `size` bytes at p."""
    if size == 1 and not signed:
        return "data[p]"
    if size in (1, 2, 4, 8):
        fmt = _STRUCT_FORMATS[(size, signed)]
        return f"{_unpack(gen, fmt if order == 'little' else '>' + fmt[1:])}(data, p)[0]"
    return f"int_from(data[p:p + {size}], {order!r}, signed={signed})"


def _int_reader(gen: _Gen, ctype: int, unsigned: bool, force_signed: bool) -> str:
    """Expression of a little-endian integer column at p (p advanced by the caller)."""
    return _uint(gen, _INT_SIZES[ctype], signed=force_signed or not unsigned)


_INT_SIZES = {FIELD_TYPE.TINY: 1, FIELD_TYPE.SHORT: 2, FIELD_TYPE.INT24: 3, FIELD_TYPE.LONG: 4, FIELD_TYPE.LONGLONG: 8}


def _string_decode(gen: _Gen, column: Any) -> str | None:
    """How mysql-replication turns string bytes into a value: a decode expression on `raw`, or None for bytes."""
    name = column.character_set_name
    if name is None:
        return "raw.decode()"
    encoding = RowsEvent.charset_to_encoding(name)
    try:
        info = codecs.lookup(encoding)
    except LookupError:
        return None
    if info.name not in _C_DECODED and _ascii_compatible(info.name):
        # the same text for ASCII bytes; cp1252 (MySQL's latin1) and the like decode in Python, ASCII in C
        return f"(raw.decode('ascii') if raw.isascii() else raw.decode({encoding!r}))"
    return f"raw.decode({encoding!r})"


# codecs whose decode is C code already (codecs.lookup(...).name)
_C_DECODED = frozenset({"utf-8", "ascii", "iso8859-1"})


@functools.cache
def _ascii_compatible(encoding: str) -> bool:
    """Every byte below 0x80 decodes alone to the same ASCII character (not so for UTF-16 and UTF-32, which pair
    bytes, nor for UTF-7 and the ISO-2022 codecs, where + or ESC start sequences)."""
    try:
        return all(bytes([b]).decode(encoding) == chr(b) for b in range(128))
    except UnicodeDecodeError:
        return False


def compile_plan(columns: list[Any], codec: TableCodec, options: TypeOptions) -> RowPlan:
    """Generate and compile the row reader of a table map (mysql-replication Column list) for a codec."""
    models = codec.model_columns
    if len(models) != len(codec.columns):
        raise _Unsupported("codec without model columns")
    if codec.mapped_columns:
        raise _Unsupported("column mappers (applied by the generic path)")
    by_name = {name: i for i, name in enumerate(codec.columns)}
    gen = _Gen()
    count = len(columns)
    for b in range((count + 7) // 8):   # the null bitmap, a local int per byte
        gen.emit(f"nb{b} = data[p + {b}]")
    gen.emit(f"p += {(count + 7) // 8}")
    targets: dict[int, str] = {}  # codec column index -> local variable
    for j, column in enumerate(columns):
        if not column.name:
            raise _Unsupported("table map without column names")
        i = by_name.get(column.name)
        var = f"v{j}"
        if i is not None:
            targets[i] = var
        model = models[i] if i is not None else None
        convert = codec.converters[i] if i is not None else None
        null_value = convert(None) if convert is not None else None
        gen.emit(f"if nb{j >> 3} & {1 << (j & 7)}:")
        gen.emit(f"{var} = {gen.const(null_value, 'null')}", 3)
        gen.emit("else:")
        _column(gen, column, model, convert, options, var)
    if len(targets) != len(codec.columns):
        # Codec columns missing from the binlog: mysql-replication's dict has no value, codec.row gives convert(None).
        for i, convert in enumerate(codec.converters):
            if i not in targets:
                targets[i] = gen.const(convert(None), "absent")
    items = ", ".join(f"{name!r}: {targets[i]}" for i, name in enumerate(codec.columns))
    body = "\n".join(gen.lines)
    source = f"def read(data, p):\n{body}\n    return {{{items}}}, p\n"
    namespace = dict(gen.names)
    exec(compile(source, f"<rowdecode {codec.table_id}>", "exec"), namespace)  # noqa: S102 (generated above)
    return RowPlan(namespace["read"], count, source)


def _column(gen: _Gen, column: Any, model: Any, convert: Any, options: TypeOptions, var: str) -> None:
    """Code (indent 3) that reads one non-null column value at p into `var` and advances p."""
    ctype = column.type
    mname, munsigned = base_type(model) if model is not None else ("", False)
    emit = gen.emit
    conv = gen.const(convert, "conv") if convert is not None else None

    def finish(expr_value: str, inline: bool) -> None:
        """`expr_value` is mysql-replication's value (inline=False) or the payload value (inline=True)."""
        if conv is None or inline:
            emit(f"{var} = {expr_value}", 3)
        else:
            emit(f"{var} = {conv}({expr_value})", 3)

    if ctype in _INT_SIZES:
        size = _INT_SIZES[ctype]
        unsigned = bool(column.unsigned)
        wraps = mname in ("BIGINT", "INT8") and munsigned and options.bigint_unsigned_mode == "long"
        plain = mname in INT_TYPES and (not munsigned or mname not in ("BIGINT", "INT8"))
        if wraps:  # long mode wraps values >= 2**63 like a Java long: the signed reading
            finish(_int_reader(gen, ctype, unsigned, force_signed=ctype == FIELD_TYPE.LONGLONG), True)
        else:
            finish(_int_reader(gen, ctype, unsigned, False), plain)
        emit(f"p += {size}", 3)
    elif ctype in (FIELD_TYPE.FLOAT, FIELD_TYPE.DOUBLE):
        fmt, size = ("<f", 4) if ctype == FIELD_TYPE.FLOAT else ("<d", 8)
        unpack = gen.const(struct.Struct(fmt).unpack_from, "unpack")
        # the converter writes Java's Float/Double.toString text (json_converter.java_float32, types.double_value)
        finish(f"{unpack}(data, p)[0]", False)
        emit(f"p += {size}", 3)
    elif ctype == FIELD_TYPE.YEAR:
        # mysql-replication: byte + 1900; types._year leaves values >= 100 unchanged
        finish("data[p] + 1900", mname == "YEAR")
        emit("p += 1", 3)
    elif ctype in (FIELD_TYPE.VARCHAR, FIELD_TYPE.STRING, FIELD_TYPE.BLOB, FIELD_TYPE.GEOMETRY):
        if ctype in (FIELD_TYPE.BLOB, FIELD_TYPE.GEOMETRY):
            size = column.length_size
        else:
            size = 2 if column.max_length > 255 else 1
        if size == 1:
            emit("n = data[p]", 3)
        else:
            emit(f"n = {_uint(gen, size)}", 3)
        emit(f"raw = data[p + {size}:p + {size} + n]", 3)
        emit(f"p += {size} + n", 3)
        decode = None if ctype == FIELD_TYPE.GEOMETRY else _string_decode(gen, column)
        if decode is None:
            finish("raw", False)
        else:
            finish(decode, mname in STRING_TYPES or mname == "JSON")
    elif ctype == FIELD_TYPE.NEWDECIMAL:
        _decimal(gen, column, mname, model, options, var, conv)
    elif ctype == FIELD_TYPE.DATETIME2:
        _datetime2(gen, column, mname, model, options, var, conv)
    elif ctype == FIELD_TYPE.TIMESTAMP2:
        _timestamp2(gen, column, mname, model, options, var, conv)
    elif ctype == FIELD_TYPE.DATE:
        _date(gen, mname, model, options, var, conv)
    elif ctype == FIELD_TYPE.TIME2:
        _time2(gen, column, var, conv)
    elif ctype == FIELD_TYPE.ENUM:
        emit(f"idx = {_uint(gen, column.size)}", 3)
        emit(f"p += {column.size}", 3)
        if column.enum_values:
            finish(f"{gen.const(list(column.enum_values), 'enum')}[idx]", False)
        else:
            finish("None", False)
    elif ctype == FIELD_TYPE.SET:
        emit(f"mask = {_uint(gen, column.size)}", 3)
        emit(f"p += {column.size}", 3)
        values = gen.const(list(column.set_values or []), "set")
        emit(f"chosen = {{val for idx, val in enumerate({values}) if mask & (1 << idx)}}", 3)
        finish("chosen", False)
    elif ctype == FIELD_TYPE.BIT:
        emit(f"raw = data[p:p + {column.bytes}]", 3)
        emit(f"p += {column.bytes}", 3)
        finish(f"_bit_string(raw, {column.bits})", False)
    else:
        raise _Unsupported(f"binlog column type {ctype}")


def _fsp_code(gen: _Gen, fsp: int) -> None:
    """mysql-replication's __read_fsp: microseconds into `us`, p advanced."""
    size = _FSP_BYTES[fsp] if 0 <= fsp <= 6 else 0
    if size == 0:
        gen.emit("us = 0", 3)
        return
    gen.emit(f"us = {_uint(gen, size, 'big', signed=True)}", 3)
    gen.emit(f"p += {size}", 3)
    if fsp % 2:
        gen.emit("us = int(us / 10)", 3)
    gen.emit(f"us *= {10 ** (6 - fsp)}", 3)


def _decimal(gen: _Gen, column: Any, mname: str, model: Any, options: TypeOptions, var: str,
             conv: str | None) -> None:
    precision, decimals = column.precision, column.decimals
    integral = precision - decimals
    uncomp_int, comp_int = divmod(integral, 9)
    uncomp_frac, comp_frac = divmod(decimals, 9)
    size = (_COMPRESSED_BYTES[comp_int] + uncomp_int * 4 + uncomp_frac * 4 + _COMPRESSED_BYTES[comp_frac])
    emit = gen.emit
    scale = model.scale if model is not None and model.scale is not None else 0
    inline = mname in DECIMAL_TYPES and options.decimal_mode == "precise" and scale == decimals
    emit(f"raw = data[p:p + {size}]", 3)
    emit(f"p += {size}", 3)
    level = 3
    if inline:  # the payload text depends on the bytes only: cache it (prices and amounts repeat)
        cache = gen.const({}, "deccache")
        emit(f"{var} = {cache}.get(raw)", 3)
        emit(f"if {var} is None:", 3)
        level = 4
    # Flip the sign bit; a negative value has every byte inverted. Groups are big-endian unsigned.
    bits = 8 * size
    emit("x = int_from(raw, 'big')", level)
    emit(f"neg = not x >> {bits - 1}", level)
    emit(f"x ^= {1 << (bits - 1)}", level)
    emit("if neg:", level)
    emit(f"x ^= {(1 << bits) - 1}", level + 1)
    groups = []  # (byte size, digits), most significant first
    if comp_int:
        groups.append((_COMPRESSED_BYTES[comp_int], comp_int))
    groups += [(4, 9)] * (uncomp_int + uncomp_frac)
    if comp_frac:
        groups.append((_COMPRESSED_BYTES[comp_frac], comp_frac))
    expr = ""
    shift = bits
    for nbytes, digits in groups:
        shift -= 8 * nbytes
        term = f"((x >> {shift}) & {(1 << (8 * nbytes)) - 1})"
        expr = f"({expr}) * {10 ** digits} + {term}" if expr else term
    emit(f"u = {expr or '0'}", level)
    emit("if neg:", level)
    emit("u = -u", level + 1)
    if inline:
        emit(f"{var} = decimal_base64(u)", 4)
        emit(f"if len({cache}) > {_CACHE_LIMIT}:", 4)
        emit(f"{cache}.clear()", 5)
        emit(f"{cache}[raw] = {var}", 4)
        return
    # mysql-replication builds Decimal("[-]<integral>.<fraction>"): same digits, exponent -decimals and sign;
    # then the codec's converter
    gen.names["_Decimal"] = decimal.Decimal
    emit(f"value = _Decimal((1 if neg else 0, _Decimal(abs(u)).as_tuple().digits, -{decimals}))", 3)
    emit(f"{var} = {conv}(value)" if conv else f"{var} = value", 3)


def _datetime2(gen: _Gen, column: Any, mname: str, model: Any, options: TypeOptions, var: str,
               conv: str | None) -> None:
    emit = gen.emit
    emit("key = data[p:p + 5]", 3)
    emit("p += 5", 3)
    _fsp_code(gen, column.fsp)
    tpm = options.time_precision_mode
    if mname == "DATETIME" and conv is not None:
        millis = tpm == "connect" or (model.length or 0) <= 3
        cache = gen.const({}, "dtcache")
        zero = gen.const(zero_date_value(model, options), "zero")
        helper = gen.const(_datetime2_base_micros, "dtbase")
        emit(f"base = {cache}.get(key, -1)", 3)
        emit("if base == -1:", 3)
        emit(f"base = {helper}(key, {cache})", 4)
        emit("if base is None:", 3)
        emit(f"{var} = {zero}", 4)
        emit("else:", 3)
        emit(f"{var} = (base + us) // 1000" if millis else f"{var} = base + us", 4)
        return
    emit("packed = int_from(key, 'big')", 3)
    emit("try:", 3)
    emit("ym = (packed >> 22) & 0x1FFFF", 4)
    emit("value = _datetime(ym // 13, ym % 13, (packed >> 17) & 31, (packed >> 12) & 31, (packed >> 6) & 63, "
         "packed & 63)", 4)
    emit("if us > 0:", 4)
    emit("value = value.replace(microsecond=us)", 5)
    emit("except ValueError:", 3)
    emit("value = None", 4)
    emit(f"{var} = {conv}(value)" if conv else f"{var} = value", 3)


def _datetime2_base_micros(key: bytes, cache: dict) -> int | None:
    """Micros since the epoch of a DATETIME2 without its fraction; None where mysql-replication gives None."""
    packed = int.from_bytes(key, "big")
    ym = (packed >> 22) & 0x1FFFF
    try:
        value = dt.datetime(ym // 13, ym % 13, (packed >> 17) & 31, (packed >> 12) & 31, (packed >> 6) & 63,
                            packed & 63)
    except ValueError:
        base = None
    else:
        delta = value - EPOCH
        base = (delta.days * 86_400 + delta.seconds) * 1_000_000
    if len(cache) > _CACHE_LIMIT:
        cache.clear()
    cache[key] = base
    return base


def _timestamp2(gen: _Gen, column: Any, mname: str, model: Any, options: TypeOptions, var: str,
                conv: str | None) -> None:
    emit = gen.emit
    emit(f"secs = {_uint(gen, 4, 'big', signed=True)}", 3)
    emit("p += 4", 3)
    _fsp_code(gen, column.fsp)
    if mname == "TIMESTAMP" and conv is not None:
        fsp = model.length or 0
        cache = gen.const({}, "tscache")
        helper = gen.const(_timestamp_text, "tstext")
        # the zero TIMESTAMP (0 seconds: '0000-00-00 00:00:00'): null, or the column's default or the epoch
        zero = gen.const(zero_date_value(model, options), "zero")
        emit("if secs == 0 and us == 0:", 3)
        emit(f"{var} = {zero}", 4)
        emit("else:", 3)
        level = 4
        emit(f"text = {cache}.get(secs) or {helper}(secs, {cache})", level)
        if fsp > 0:
            emit(f"{var} = text + '.' + f'{{us:06d}}'[:{fsp}] + 'Z'", level)
        else:
            emit(f"{var} = text + 'Z'", level)
        return
    emit("value = EPOCH + _timedelta(seconds=secs)", 3)
    emit("if us > 0:", 3)
    emit("value = value.replace(microsecond=us)", 4)
    emit(f"{var} = {conv}(value)" if conv else f"{var} = value", 3)


def _timestamp_text(secs: int, cache: dict) -> str:
    text = (EPOCH + dt.timedelta(seconds=secs)).strftime("%Y-%m-%dT%H:%M:%S")
    if len(cache) > _CACHE_LIMIT:
        cache.clear()
    cache[secs] = text
    return text


def _date(gen: _Gen, mname: str, model: Any, options: TypeOptions, var: str, conv: str | None) -> None:
    emit = gen.emit
    emit("key = data[p:p + 3]", 3)
    emit("p += 3", 3)
    if mname == "DATE" and conv is not None:
        cache = gen.const({}, "datecache")
        helper = gen.const(_date_days, "datedays")
        zero = gen.const(zero_date_value(model, options), "zero")
        emit(f"days = {cache}.get(key)", 3)
        emit("if days is None:", 3)
        emit(f"days = {helper}(key, {cache})", 4)
        emit(f"{var} = {zero} if days is False else days", 3)
        return
    emit("packed = int_from(key, 'little')", 3)
    emit("y, m, d = packed >> 9, (packed >> 5) & 15, packed & 31", 3)
    emit("value = None if packed == 0 or not (y and m and d) else _date(y, m, d)", 3)
    emit(f"{var} = {conv}(value)" if conv else f"{var} = value", 3)


def _date_days(key: bytes, cache: dict) -> int | bool:
    """Days since the epoch; False for mysql-replication's None (zero dates). Invalid dates raise like it does."""
    packed = int.from_bytes(key, "little")
    y, m, d = packed >> 9, (packed >> 5) & 15, packed & 31
    days: int | bool = False if packed == 0 or not (y and m and d) else (dt.date(y, m, d) - EPOCH_DATE).days
    if len(cache) > _CACHE_LIMIT:
        cache.clear()
    cache[key] = days
    return days


def _time2(gen: _Gen, column: Any, var: str, conv: str | None) -> None:
    """TIME2 through time2_value (mysql-replication's own reading gets negative values with a fraction wrong)."""
    size = 3 + _FSP_BYTES[column.fsp]
    helper = gen.const(time2_value, "time2")
    gen.emit(f"value = {helper}(data[p:p + {size}])", 3)
    gen.emit(f"p += {size}", 3)
    gen.emit(f"{var} = {conv}(value)" if conv else f"{var} = value", 3)


_TIME2_FRACTION_UNIT = {0: 0, 1: 10_000, 2: 100, 3: 1}  # microseconds per unit of a 0..3-byte fraction


def time2_value(raw: bytes) -> dt.timedelta:
    """A binlog TIME2 value (3 bytes of sign/hour/minute/second, then a 0-3 byte fraction) as a timedelta.

    The whole value is one big-endian number offset by its top bit: integer part and fraction together
    form a signed fixed-point number, so a negative value's fraction is its two's complement (-01:00:00.25
    is stored as -(01:00:01) + 0.75). Read as one signed number and split after taking the magnitude."""
    frac_bytes = len(raw) - 3
    packed = int.from_bytes(raw, "big") - (1 << (8 * len(raw) - 1))
    magnitude = -packed if packed < 0 else packed
    hms = magnitude >> (8 * frac_bytes)
    micros = (magnitude & ((1 << (8 * frac_bytes)) - 1)) * _TIME2_FRACTION_UNIT[frac_bytes]
    total = (((hms >> 12) & 1023) * 3600 + ((hms >> 6) & 63) * 60 + (hms & 63)) * 1_000_000 + micros
    return dt.timedelta(microseconds=-total if packed < 0 else total)


def install() -> None:
    """mysql-replication's generic row decoding (the fallback path) reads TIME2 through time2_value too."""
    if getattr(RowsEvent, "_lakecdc_time2", False):
        return

    def read_time2(self: RowsEvent, column: Any) -> dt.timedelta:
        return time2_value(self.packet.read(3 + _FSP_BYTES[column.fsp]))

    RowsEvent._RowsEvent__read_time2 = read_time2  # type: ignore[attr-defined]
    RowsEvent._lakecdc_time2 = True  # type: ignore[attr-defined]
