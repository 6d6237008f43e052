"""Decoder of the pgoutput logical replication protocol, version 1 (PostgreSQL's "Logical Replication
Message Formats"): Begin, Commit, Origin, Relation, Type, Insert, Update, Delete, Truncate, Message.

Column values are kept as the server sent them: None (SQL NULL), UNCHANGED_TOAST, or the text output
of the type as str (bytes when it is not UTF-8: see tuple_data); type conversion happens in `types`.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import NamedTuple

_PG_EPOCH_UNIX_US = 946_684_800_000_000  # PostgreSQL's epoch, 2000-01-01 UTC, in microseconds since 1970


class _UnchangedToast:
    def __repr__(self) -> str:
        return "UNCHANGED_TOAST"


UNCHANGED_TOAST = _UnchangedToast()


class DecodeError(ValueError):
    """The message does not follow the pgoutput format."""


def pg_time_to_unix_us(pg_us: int) -> int:
    """Microseconds since 2000-01-01 (PostgreSQL's epoch) -> microseconds since 1970-01-01."""
    return pg_us + _PG_EPOCH_UNIX_US


def lsn_to_str(lsn: int) -> str:
    return f"{lsn >> 32:X}/{lsn & 0xFFFFFFFF:X}"


def str_to_lsn(text: str) -> int:
    high, low = text.split("/")
    return (int(high, 16) << 32) | int(low, 16)


class Begin(NamedTuple):  # a tuple: built once per message, cheaply
    final_lsn: int       # LSN of the commit record
    commit_ts_us: int    # unix microseconds
    xid: int


class Commit(NamedTuple):  # a tuple: built once per message, cheaply
    flags: int
    commit_lsn: int
    end_lsn: int
    commit_ts_us: int


@dataclass(frozen=True)
class Origin:
    lsn: int
    name: str


@dataclass(frozen=True)
class RelationColumn:
    is_key: bool         # part of the replica identity
    name: str
    type_oid: int
    type_modifier: int


@dataclass(frozen=True)
class Relation:
    relid: int
    namespace: str
    name: str
    replica_identity: str  # d default, n nothing, f full, i index
    columns: tuple[RelationColumn, ...]


@dataclass(frozen=True)
class TypeMessage:
    oid: int
    namespace: str
    name: str


Tuple = list  # list[None | _UnchangedToast | str], an UndecodedTuple when a text is not UTF-8


class Insert(NamedTuple):  # a tuple: built once per message, cheaply
    relid: int
    new: Tuple


class Update(NamedTuple):  # a tuple: built once per message, cheaply
    relid: int
    old_kind: str | None  # 'K' key columns only, 'O' whole old row, None no old tuple
    old: Tuple | None
    new: Tuple


class Delete(NamedTuple):  # a tuple: built once per message, cheaply
    relid: int
    old_kind: str
    old: Tuple


@dataclass(frozen=True)
class Truncate:
    options: int  # 1 CASCADE, 2 RESTART IDENTITY
    relids: tuple[int, ...]


@dataclass(frozen=True)
class LogicalMessage:
    transactional: bool
    lsn: int
    prefix: str
    content: bytes


Message = Begin | Commit | Origin | Relation | TypeMessage | Insert | Update | Delete | Truncate | LogicalMessage

_I8 = struct.Struct(">b")
_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")
_U32 = struct.Struct(">I")
_I64 = struct.Struct(">q")
_BEGIN = struct.Struct(">QqI")
_COMMIT = struct.Struct(">bQQq")


class _Reader:
    __slots__ = ("buf", "pos")

    def __init__(self, buf: bytes) -> None:
        self.buf = buf
        self.pos = 1  # after the message type byte

    def byte(self) -> str:
        value = chr(self.buf[self.pos])
        self.pos += 1
        return value

    def int8(self) -> int:
        value = _I8.unpack_from(self.buf, self.pos)[0]
        self.pos += 1
        return value

    def int16(self) -> int:
        value = _I16.unpack_from(self.buf, self.pos)[0]
        self.pos += 2
        return value

    def int32(self) -> int:
        value = _I32.unpack_from(self.buf, self.pos)[0]
        self.pos += 4
        return value

    def uint32(self) -> int:
        value = _U32.unpack_from(self.buf, self.pos)[0]
        self.pos += 4
        return value

    def int64(self) -> int:
        value = _I64.unpack_from(self.buf, self.pos)[0]
        self.pos += 8
        return value

    def string(self) -> str:
        end = self.buf.index(b"\x00", self.pos)
        value = self.buf[self.pos:end].decode("utf-8")
        self.pos = end + 1
        return value

    def tuple_data(self) -> list:
        """The values of a TupleData: None, UNCHANGED_TOAST or the text as str. A text that is not UTF-8 stays
        bytes and the list is an UndecodedTuple (streaming rejects the change: `text_values`)."""
        # locals instead of attribute updates: this loop runs for every column of every change
        buf, pos = self.buf, self.pos
        count = _I16.unpack_from(buf, pos)[0]
        pos += 2
        values: list = []
        append, unpack_length = values.append, _I32.unpack_from
        undecoded = False
        for _ in range(count):
            kind = buf[pos]
            pos += 1
            if kind == 0x74 or kind == 0x62:  # 't' text, 'b' binary (never requested)
                length = unpack_length(buf, pos)[0]
                pos += 4
                raw = buf[pos:pos + length]
                pos += length
                try:
                    append(raw.decode("utf-8"))
                except UnicodeDecodeError:
                    append(raw)
                    undecoded = True
            elif kind == 0x6E:  # 'n'
                append(None)
            elif kind == 0x75:  # 'u'
                append(UNCHANGED_TOAST)
            else:
                raise DecodeError(f"unknown tuple column kind {chr(kind)!r}")
        self.pos = pos
        return UndecodedTuple(values) if undecoded else values


class UndecodedTuple(list):
    """Tuple values of which at least one is not UTF-8 text (kept as bytes)."""


def text_values(values: list) -> list:
    """The tuple's values with every text as str; raises UnicodeDecodeError (a ValueError) for one that is not
    UTF-8. A plain list is already so (tuple_data decoded it)."""
    if type(values) is list:
        return values
    return [v.decode("utf-8") if isinstance(v, bytes) else v for v in values]


def decode(buf: bytes) -> Message:
    """Decode one pgoutput message (the payload of one XLogData)."""
    if not buf:
        raise DecodeError("empty message")
    kind = chr(buf[0])
    try:
        if kind == "B":  # Begin and Commit: fixed layouts, decoded without a reader (two of every three messages)
            return Begin(*begin_fields(buf))
        if kind == "C":
            return Commit(*commit_fields(buf))
        return _DECODERS[kind](_Reader(buf))
    except KeyError:
        raise DecodeError(f"unknown pgoutput message type {kind!r}") from None
    except (struct.error, IndexError, ValueError) as exc:
        if isinstance(exc, DecodeError):
            raise
        raise DecodeError(f"truncated or malformed {kind!r} message: {exc}") from None


def begin_fields(buf: bytes) -> tuple[int, int, int]:
    """A Begin message's fields (final_lsn, commit_ts_us, xid), without building the Begin (the streaming loop's
    path for most messages). Raises DecodeError when the message is short."""
    try:
        final_lsn, ts, xid = _BEGIN.unpack_from(buf, 1)
    except struct.error as exc:
        raise DecodeError(f"truncated or malformed 'B' message: {exc}") from None
    return final_lsn, ts + _PG_EPOCH_UNIX_US, xid


def commit_fields(buf: bytes) -> tuple[int, int, int, int]:
    """A Commit message's fields (flags, commit_lsn, end_lsn, commit_ts_us), as begin_fields."""
    try:
        flags, lsn, end_lsn, ts = _COMMIT.unpack_from(buf, 1)
    except struct.error as exc:
        raise DecodeError(f"truncated or malformed 'C' message: {exc}") from None
    return flags, lsn, end_lsn, ts + _PG_EPOCH_UNIX_US


def _origin(r: _Reader) -> Origin:
    lsn = r.int64()
    return Origin(lsn=lsn, name=r.string())


def _relation(r: _Reader) -> Relation:
    relid = r.uint32()
    namespace = r.string()
    name = r.string()
    identity = r.byte()
    cols = []
    for _ in range(r.int16()):
        flags = r.int8()
        col_name = r.string()
        type_oid = r.uint32()
        typmod = r.int32()
        cols.append(RelationColumn(bool(flags & 1), col_name, type_oid, typmod))
    return Relation(relid, namespace or "pg_catalog", name, identity, tuple(cols))


def _type(r: _Reader) -> TypeMessage:
    oid = r.uint32()
    namespace = r.string()
    return TypeMessage(oid, namespace, r.string())


def _insert(r: _Reader) -> Insert:
    relid = r.uint32()
    marker = r.byte()
    if marker != "N":
        raise DecodeError(f"Insert: expected 'N', got {marker!r}")
    return Insert(relid, r.tuple_data())


def _update(r: _Reader) -> Update:
    relid = r.uint32()
    marker = r.byte()
    old_kind = old = None
    if marker in ("K", "O"):
        old_kind, old = marker, r.tuple_data()
        marker = r.byte()
    if marker != "N":
        raise DecodeError(f"Update: expected 'N', got {marker!r}")
    return Update(relid, old_kind, old, r.tuple_data())


def _delete(r: _Reader) -> Delete:
    relid = r.uint32()
    marker = r.byte()
    if marker not in ("K", "O"):
        raise DecodeError(f"Delete: expected 'K' or 'O', got {marker!r}")
    return Delete(relid, marker, r.tuple_data())


def _truncate(r: _Reader) -> Truncate:
    count = r.int32()
    options = r.int8()
    return Truncate(options, tuple(r.uint32() for _ in range(count)))


def _message(r: _Reader) -> LogicalMessage:
    flags = r.int8()
    lsn = r.int64()
    prefix = r.string()
    length = r.int32()
    content = r.buf[r.pos:r.pos + length]
    if len(content) != length:
        raise DecodeError("Message: content shorter than its length")
    return LogicalMessage(bool(flags & 1), lsn, prefix, bytes(content))


_DECODERS = {"O": _origin, "R": _relation, "Y": _type, "I": _insert,
             "U": _update, "D": _delete, "T": _truncate, "M": _message}
