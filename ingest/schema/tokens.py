"""Tokens for the DDL grammar: sqlglot's per-dialect tokenizer (quoting, escapes, comments) reduced to a few
kinds, statement splitting, and a cursor with the small look-ahead helpers the grammar uses."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from sqlglot.dialects.dialect import Dialect
from sqlglot.errors import TokenError
from sqlglot.tokens import TokenType

from ingest.errors import LakecdcError

SQLGLOT_DIALECT = {"mysql": "mysql", "mariadb": "mysql", "postgres": "postgres", "oracle": "oracle",
                   "tsql": "tsql"}

_STRINGS = {TokenType.STRING, TokenType.NATIONAL_STRING, TokenType.RAW_STRING, TokenType.UNICODE_STRING}
_LITERALS = {TokenType.BIT_STRING, TokenType.HEX_STRING, TokenType.BYTE_STRING}
_OPS = {
    TokenType.L_PAREN: "(", TokenType.R_PAREN: ")", TokenType.COMMA: ",", TokenType.DOT: ".",
    TokenType.SEMICOLON: ";", TokenType.EQ: "=", TokenType.L_BRACKET: "[", TokenType.R_BRACKET: "]",
}


class DdlSyntaxError(LakecdcError):
    """A statement the grammar cannot read."""


@dataclass(frozen=True)
class Tok:
    kind: str        # word ident string number literal op
    text: str        # identifier/string value without quotes; word as written; op symbol
    start: int       # offsets into the statement text (inclusive)
    end: int

    @property
    def upper(self) -> str:
        return self.text.upper() if self.kind == "word" else ""


def tokenize(sql: str, dialect: str) -> list[Tok]:
    return _tokenize(sql, dialect, 0)


def _tokenize(sql: str, dialect: str, base: int) -> list[Tok]:
    """Tokens of `sql[base:]`; offsets are into `sql`."""
    tokenizer = Dialect.get_or_raise(SQLGLOT_DIALECT[dialect]).tokenizer_class
    try:
        raw = Dialect.get_or_raise(SQLGLOT_DIALECT[dialect]).tokenize(sql[base:])
    except TokenError as exc:
        raise DdlSyntaxError(f"cannot tokenize: {str(exc).splitlines()[0][:200]}") from None
    out: list[Tok] = []
    for n, t in enumerate(raw):
        tt = t.token_type
        start, end = t.start + base, t.end + base
        if tt in _STRINGS and n > 0 and raw[n - 1].token_type in tokenizer.COMMANDS:
            # sqlglot keeps the rest of a "command" (RENAME ..., EXECUTE ...) as one string: read it properly
            rest = raw[n - 1].end + base + 1
            while rest < len(sql) and sql[rest].isspace():
                rest += 1
            if rest < len(sql) and sql[rest] not in "'\"`":
                out.extend(_tokenize(sql, dialect, rest))
                break
        if tt == TokenType.IDENTIFIER:
            kind = "ident"
        elif tt in _STRINGS:
            kind = "string"
        elif tt == TokenType.NUMBER:
            kind = "number"
        elif tt in _LITERALS:
            kind = "literal"
        elif tt in _OPS:
            out.append(Tok("op", _OPS[tt], start, end))
            continue
        elif tt == TokenType.VAR or t.text[:1].isalpha() or t.text[:1] in "_@#$":
            kind = "word"
        else:
            kind = "op"
        text = sql[start:end + 1] if kind == "literal" else t.text
        if kind == "word" and (" " in text or "\t" in text or "\n" in text):
            # multi-word keywords (PRIMARY KEY, DOUBLE PRECISION ...): one token per word
            for m in _WORD.finditer(sql, start, end + 1):
                out.append(Tok("word", m.group(0), m.start(), m.end() - 1))
            continue
        if kind == "word" and tt == TokenType.VAR and "." in text and dialect != "tsql":
            # some dialect tokenizers glue a.b; split into parts so names stay uniform
            parts = text.split(".")
            pos = start
            for i, part in enumerate(parts):
                if i:
                    out.append(Tok("op", ".", pos, pos))
                    pos += 1
                out.append(Tok("word", part, pos, pos + len(part) - 1))
                pos += len(part)
            continue
        out.append(Tok(kind, text, start, end))
    return out


_WORD = re.compile(r"\S+")

_ROUTINES = {"PROCEDURE", "FUNCTION", "TRIGGER", "EVENT", "PACKAGE", "TYPE"}


def split_statements(tokens: list[Tok]) -> list[list[Tok]]:
    """Split on top-level semicolons. A routine definition (CREATE ... PROCEDURE/FUNCTION/TRIGGER/EVENT with a
    body) keeps everything after it as one statement, because its body contains semicolons."""
    statements: list[list[Tok]] = []
    current: list[Tok] = []
    depth = 0
    routine = False
    for tok in tokens:
        if tok.kind == "op" and tok.text == ";" and depth == 0 and not routine:
            if current:
                statements.append(current)
            current = []
            continue
        if tok.kind == "op" and tok.text == "(":
            depth += 1
        elif tok.kind == "op" and tok.text == ")":
            depth = max(0, depth - 1)
        current.append(tok)
        if (len(current) <= 8 and current[0].upper == "CREATE" and tok.upper in _ROUTINES
                and not any(t.upper in ("TABLE", "INDEX", "VIEW") for t in current)):
            routine = True
    if current:
        statements.append(current)
    return statements


class Cursor:
    """A position in one statement's tokens."""

    def __init__(self, tokens: list[Tok], sql: str) -> None:
        self.toks = tokens
        self.sql = sql
        self.i = 0

    # --- looking
    def peek(self, k: int = 0) -> Tok | None:
        j = self.i + k
        return self.toks[j] if j < len(self.toks) else None

    def done(self) -> bool:
        return self.i >= len(self.toks)

    def at(self, *words: str) -> bool:
        """True if the next tokens are these words (case-insensitive keywords)."""
        for k, word in enumerate(words):
            tok = self.peek(k)
            if tok is None or tok.upper != word:
                return False
        return True

    def at_op(self, op: str, k: int = 0) -> bool:
        tok = self.peek(k)
        return tok is not None and tok.kind == "op" and tok.text == op

    def at_any(self, words: Iterable[str]) -> bool:
        tok = self.peek()
        return tok is not None and tok.upper in words

    # --- consuming
    def next(self) -> Tok:
        tok = self.peek()
        if tok is None:
            raise DdlSyntaxError("unexpected end of statement")
        self.i += 1
        return tok

    def accept(self, *words: str) -> bool:
        if self.at(*words):
            self.i += len(words)
            return True
        return False

    def accept_op(self, op: str) -> bool:
        if self.at_op(op):
            self.i += 1
            return True
        return False

    def expect(self, *words: str) -> None:
        if not self.accept(*words):
            raise self.error(f"expected {' '.join(words)}")

    def expect_op(self, op: str) -> None:
        if not self.accept_op(op):
            raise self.error(f"expected '{op}'")

    def error(self, message: str) -> DdlSyntaxError:
        tok = self.peek()
        where = f" at {tok.text!r} (offset {tok.start})" if tok is not None else " at end of statement"
        return DdlSyntaxError(message + where)

    def ident(self) -> tuple[str, bool]:
        """(name, quoted). Keywords are accepted as names where the grammar expects a name."""
        tok = self.next()
        if tok.kind == "ident":
            return tok.text, True
        if tok.kind == "word" or (tok.kind == "string" and tok.text):
            return tok.text, tok.kind == "string"
        self.i -= 1
        raise self.error("expected a name")

    def dotted(self) -> list[tuple[str, bool]]:
        parts = [self.ident()]
        while self.at_op("."):
            self.i += 1
            parts.append(self.ident())
        return parts

    def skip_group(self) -> tuple[int, int]:
        """Consume a balanced (...) group; returns the token index range inside the parentheses."""
        self.expect_op("(")
        start = self.i
        depth = 1
        while depth:
            tok = self.next()
            if tok.kind == "op" and tok.text == "(":
                depth += 1
            elif tok.kind == "op" and tok.text == ")":
                depth -= 1
        return start, self.i - 1

    def skip_to_comma(self) -> None:
        """Consume until a top-level ',' or ')' (not consumed) or the end."""
        depth = 0
        while not self.done():
            tok = self.peek()
            if tok.kind == "op" and tok.text in (",", ")") and depth == 0:
                return
            if tok.kind == "op" and tok.text in ("(", "["):  # ARRAY[1, 2] is one expression too
                depth += 1
            elif tok.kind == "op" and tok.text in (")", "]"):
                depth -= 1
            self.i += 1

    def text(self, start: int, end: int) -> str:
        """Source text of tokens[start:end]."""
        if start >= end:
            return ""
        return self.sql[self.toks[start].start:self.toks[end - 1].end + 1]
