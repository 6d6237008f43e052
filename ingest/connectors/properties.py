"""Connector properties, declared once and parsed one way, after Debezium's `Field` and `ConfigDef`.

A connector declares each property it reads as a `Field` (name, kind, default, allowed values, older names,
documentation) and combines its declarations into a `FieldSet`; `FieldSet.parse` turns a source's raw
properties into validated values. The properties every Debezium connector shares are declared once in
`connectors/common_properties.py`. The declarations also give the docs' property tables
(`python -m ingest.connectors.property_docs`) and what `lakecdc doctor` shows of a source.

One policy for every connector. A name that is neither declared nor an older name of a declared one is an
error, with the closest declared name (properties copied from another connector's example usually differ by a
word). A name declared `ignored` (meaningful only inside Kafka Connect) is accepted and has no effect. A name
declared `unsupported` (a Debezium feature lakecdc does not implement) is an error rather than silently doing
something else. Every problem of a source, with names or with values, is reported in one ConfigError, so that
a user fixes them in one pass instead of one run per mistake. Each value problem reads
`name: 'value' is not <what it must be>`.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from ingest.errors import ConfigError

# string: text; password: text never shown; int: a whole number (at least `minimum`); bool: true/false;
# choice: one of `allowed` (case-insensitive); list: comma-separated texts; regex-list: comma-separated regular
# expressions, each matched against a whole name (case-insensitive); choice-list: comma-separated values of
# `allowed`, or `none` for no value (a frozenset).
Kind = Literal["string", "password", "int", "bool", "choice", "list", "regex-list", "choice-list"]
LIST_KINDS = ("list", "regex-list", "choice-list")
_TRUE = ("true", "1", "yes", "on")
_FALSE = ("false", "0", "no", "off")


class _Invalid(Exception):
    """A value that is not what its field needs: `value` is not `expected`."""

    def __init__(self, value: Any, expected: str) -> None:
        super().__init__(f"{value!r} is not {expected}")


@dataclass(frozen=True)
class Field:
    """One property. `default` is written as a user would write it (docs show it; it is parsed like a given
    value). `ignored`: accepted and without effect; `unsupported`: refused (with `hint` as the reason, when given);
    `forwarded`: accepted and handed on as given (ParsedProperties.forwarded). A name ending in `*` declares every
    name that starts with what comes before it (only for ignored, unsupported and forwarded names; `*` alone: every
    name not declared otherwise). With `name_pattern`
    the field is a family of properties whose names carry parameters, like Debezium's
    `column.mask.with.N.chars`: `name` is how the docs show it, every given name matching the pattern is one
    member, and the parsed value is a tuple of `FamilyMember`s in the order given."""

    name: str
    kind: Kind = "string"
    default: Any = None
    doc: str = ""
    allowed: tuple[str, ...] = ()                      # choice, choice-list
    value_aliases: Mapping[str, str] = field(default_factory=dict)   # older value -> current value (choice)
    aliases: tuple[str, ...] = ()                      # older names of the property
    minimum: int = 0                                   # int
    maximum: int | None = None                         # int
    pattern: str | None = None                         # string: the whole value must match
    pattern_meaning: str = ""                          # what the pattern asks for, as "a valid ..."
    required: bool = False
    hint: str = ""                                     # what to put in a missing required property
    exclusive_with: str | None = None                  # a property that cannot be set together with this one
    name_pattern: str | None = None                    # a family of names (the whole name must match; see below)
    secret_name_group: int | None = None               # family: the name's group shown as (hidden), e.g. a salt
    ignored: bool = False
    unsupported: bool = False
    forwarded: bool = False                            # passed on as given, e.g. to the real Debezium connector

    @property
    def is_family(self) -> bool:
        return self.name_pattern is not None

    def shown_name(self, member: FamilyMember) -> str:
        """A family member's name as doctor shows it: a secret part of it (a salt) as `(hidden)`."""
        if self.secret_name_group is None:
            return member.name
        match = re.fullmatch(self.name_pattern, member.name)  # type: ignore[arg-type]
        assert match is not None
        start, end = match.span(self.secret_name_group)
        return member.name[:start] + "(hidden)" + member.name[end:]

    def but(self, **changes: Any) -> Field:
        """This declaration with some attributes changed (a connector narrowing a common property)."""
        return replace(self, **changes)

    @property
    def is_prefix(self) -> bool:
        return self.name.endswith("*")

    def covers(self, key: str) -> bool:
        return key.startswith(self.name[:-1]) if self.is_prefix else key == self.name

    def parse(self, value: Any) -> Any:
        """The validated value; `None` and "" mean not given: the default (an empty value for list kinds)."""
        if _blank(value) and self.kind not in LIST_KINDS:
            if _blank(self.default):
                return self.default   # None, or "" (a password)
            value = self.default
        if self.kind == "password":
            return str(value)
        if self.kind == "string":
            text = str(value).strip()
            if self.pattern is not None and not re.fullmatch(self.pattern, text):
                raise _Invalid(text, self.pattern_meaning)
            return text
        if self.kind == "int":
            return self._parse_int(value)
        if self.kind == "bool":
            return self._parse_bool(value)
        if self.kind == "choice":
            return self._parse_choice(value)
        items = [] if _blank(value) else _items(value)
        if self.kind == "list":
            return tuple(items)
        if self.kind == "regex-list":
            return tuple(_compile(item) for item in items)
        if [item.lower() for item in items] in ([], ["none"]):
            return frozenset()
        return frozenset(self._parse_choice(item) for item in items)

    def _parse_int(self, value: Any) -> int:
        try:
            number = int(str(value).strip())
        except ValueError:
            raise _Invalid(value, "an integer") from None
        if number < self.minimum:
            raise _Invalid(number, f"at least {self.minimum}")
        if self.maximum is not None and number > self.maximum:
            raise _Invalid(number, f"at most {self.maximum}")
        return number

    @staticmethod
    def _parse_bool(value: Any) -> bool:
        if isinstance(value, bool):
            return value
        text = str(value).strip().lower()
        if text in _TRUE or text in _FALSE:
            return text in _TRUE
        raise _Invalid(value, "true or false")

    def _parse_choice(self, value: Any) -> str:
        text = str(value).strip().lower()
        text = self.value_aliases.get(text, text)
        if text not in self.allowed:
            raise _Invalid(value, "one of " + ", ".join(self.allowed + (("none",) if self.kind == "choice-list"
                                                                         else ())))
        return text

    def show(self, value: Any) -> str:
        """A parsed value (or a raw default) as a user would write it; "" for none."""
        if value is None:
            return ""
        if self.kind == "bool" and isinstance(value, bool):
            return "true" if value else "false"
        if self.kind == "regex-list" and not isinstance(value, str):
            return ",".join(p.pattern for p in value)
        if self.kind == "choice-list" and not isinstance(value, str):
            return ",".join(op for op in self.allowed if op in value) or "none"
        if self.kind == "list" and not isinstance(value, str):
            return ",".join(value)
        return str(value)


def _items(value: Any) -> list[str]:
    """The entries of a comma-separated list (or a YAML list), blank entries dropped."""
    raw = value if isinstance(value, list) else str(value).split(",")
    return [str(item).strip() for item in raw if str(item).strip()]


def _compile(text: str) -> re.Pattern[str]:
    try:
        return re.compile(text, re.IGNORECASE)
    except re.error as exc:
        raise _Invalid(text, f"a valid regular expression ({exc})") from None


def ignored(*names: str) -> list[Field]:
    """Names accepted and without effect (Kafka Connect's own settings)."""
    return [Field(name, ignored=True) for name in names]


def unsupported(*names: str) -> list[Field]:
    """Debezium properties lakecdc refuses: it does not implement what they ask for."""
    return [Field(name, unsupported=True) for name in names]


@dataclass(frozen=True)
class FamilyMember:
    """One given property of a family field: its name, the groups its name matched, its parsed value."""

    name: str
    groups: tuple[str, ...]
    value: Any


@dataclass(frozen=True)
class ParsedProperties:
    """The validated values of a source's properties (every declared, used name -> its value or default),
    what was given, and the given names that have no effect."""

    fields: FieldSet
    values: Mapping[str, Any]
    given: frozenset[str]
    ignored: tuple[str, ...]
    forwarded: Mapping[str, Any] = field(default_factory=dict)   # given names a `forwarded` field took, as given

    def __getitem__(self, name: str) -> Any:
        return self.values[name]

    def non_defaults(self) -> list[tuple[str, str]]:
        """(name, value as written) of every given property whose value is not its default; passwords as
        `(hidden)`."""
        out = []
        for spec in self.fields.used():
            if spec.name not in self.given:
                continue
            if spec.is_family:
                out += [(spec.shown_name(member), spec.show(member.value)) for member in self.values[spec.name]]
                continue
            shown = spec.show(self.values[spec.name])
            if shown != spec.show(spec.parse(spec.default)):
                out.append((spec.name, "(hidden)" if spec.kind == "password" else shown))
        out += [(name, "(hidden)" if looks_secret(name) else str(value)) for name, value in self.forwarded.items()]
        return out


def looks_secret(name: str) -> bool:
    """A forwarded property whose value must not be shown (Debezium's passwords, keys, connection strings)."""
    lowered = name.lower()
    return any(word in lowered for word in ("password", "secret", "credential", "connection.string", ".key",
                                            "token", "salt"))


class FieldSet:
    """A connector's property declarations. A name is declared once: a connector changes a common declaration
    with `Field.but` rather than declaring it again."""

    def __init__(self, *groups: Field | Iterable[Field]) -> None:
        self._fields: dict[str, Field] = {}
        self._by_alias: dict[str, str] = {}
        for group in groups:
            for spec in [group] if isinstance(group, Field) else group:
                for name in (spec.name, *spec.aliases):
                    if name in self._fields or name in self._by_alias:
                        raise ValueError(f"property {name!r} declared twice")
                self._fields[spec.name] = spec
                self._by_alias.update(dict.fromkeys(spec.aliases, spec.name))
        for spec in self.used():
            if spec.exclusive_with is not None and spec.exclusive_with not in self._fields:
                raise ValueError(f"{spec.name}: exclusive_with names the undeclared {spec.exclusive_with!r}")

    def __iter__(self) -> Iterator[Field]:
        return iter(self._fields.values())

    def __getitem__(self, name: str) -> Field:
        return self._fields[name]

    def used(self) -> list[Field]:
        """The declarations whose values the connector reads (neither ignored nor unsupported)."""
        return [spec for spec in self._fields.values() if not (spec.ignored or spec.unsupported or spec.forwarded)]

    def _find(self, key: str) -> Field | None:
        if key in self._fields and not (self._fields[key].is_prefix or self._fields[key].is_family):
            return self._fields[key]
        if key in self._by_alias:
            return self._fields[self._by_alias[key]]
        for spec in self._fields.values():
            if spec.is_family and re.fullmatch(spec.name_pattern, key):  # type: ignore[arg-type]
                return spec
        prefixes = [spec for spec in self._fields.values() if spec.is_prefix and spec.covers(key)]
        return max(prefixes, key=lambda spec: len(spec.name), default=None)   # the most specific

    def _did_you_mean(self, key: str) -> str:
        names = [name for name in [*self._fields, *self._by_alias]
                 if not name.endswith("*") and not self._fields.get(name, Field(name)).is_family]
        close = difflib.get_close_matches(key, names, n=1, cutoff=0.8)
        return f" (did you mean {close[0]!r}?)" if close else ""

    def parse(self, raw: Mapping[str, Any], label: str) -> ParsedProperties:
        """Validate the raw properties of a `label` source (e.g. "postgresql"); raise one ConfigError naming
        every problem: unknown, unsupported or doubly given names, missing required ones, properties that
        exclude each other, invalid values."""
        problems: list[str] = []
        given: dict[str, tuple[str, Any]] = {}   # declared name -> (the name used, raw value)
        families: dict[str, list[tuple[str, Any]]] = {}   # family field name -> its given (name, raw value)s
        ignored_names = []
        forwarded: dict[str, Any] = {}
        for key, value in raw.items():
            spec = self._find(key)
            if spec is None:
                problems.append(f"unknown property {key!r}{self._did_you_mean(key)}")
            elif spec.unsupported:
                problems.append(f"{key!r} cannot be set: {spec.hint}" if spec.hint
                                else f"{key!r} is a Debezium property lakecdc does not support yet")
            elif spec.forwarded:
                forwarded[key] = value
            elif spec.ignored:
                ignored_names.append(key)
            elif spec.is_family:
                families.setdefault(spec.name, []).append((key, value))
            elif spec.name in given:
                problems.append(f"{given[spec.name][0]!r} and {key!r} both given: they name one property; "
                                f"keep {spec.name!r}")
            else:
                given[spec.name] = (key, value)
        present = {name for name, (_, value) in given.items() if not _blank(value)}
        for spec in self.used():
            if spec.required and spec.name not in present:
                problems.append(f"required property {spec.name!r} is missing" + (f" ({spec.hint})" if spec.hint
                                                                                   else ""))
            if spec.exclusive_with in present and spec.name in present:
                problems.append(f"{spec.name} and {spec.exclusive_with} cannot both be set")
        values: dict[str, Any] = {}
        for spec in self.used():
            if spec.is_family:
                values[spec.name] = tuple(self._members(spec, families.get(spec.name, []), problems))
                continue
            key, value = given.get(spec.name, (spec.name, spec.default))
            try:
                values[spec.name] = spec.parse(value)
            except _Invalid as exc:
                problems.append(f"{key}: {exc}")
        if problems:
            raise ConfigError(f"{label}: " + "; ".join(problems))
        return ParsedProperties(self, values, frozenset(given) | frozenset(families), tuple(ignored_names),
                                forwarded)

    @staticmethod
    def _members(spec: Field, given: list[tuple[str, Any]], problems: list[str]) -> Iterator[FamilyMember]:
        for key, value in given:
            match = re.fullmatch(spec.name_pattern, key)  # type: ignore[arg-type]
            assert match is not None   # _find chose the field by this pattern
            try:
                yield FamilyMember(key, match.groups(), spec.parse(value))
            except _Invalid as exc:
                problems.append(f"{spec.shown_name(FamilyMember(key, match.groups(), value))}: {exc}")


def _blank(value: Any) -> bool:
    return value is None or (isinstance(value, str) and not value.strip())
