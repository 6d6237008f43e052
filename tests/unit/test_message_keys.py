"""message.key.columns (ingest.connectors.message_keys): Debezium's CustomKeyMapper rules, table-driven; and the
snapshot.select.statement.overrides properties. The events of both are compared with the real Debezium in
tests/conformance (runs pga, my_a; pgc, my_b)."""

from __future__ import annotations

import pytest

from ingest.connectors.message_keys import MessageKeyColumns
from ingest.errors import ConfigError

pytestmark = pytest.mark.unit

COLUMNS = ["id", "email", "Region", "code"]


@pytest.mark.parametrize(("setting", "table", "key"), [
    ("inv.customers:email", "inv.customers", ["email"]),
    ("inv.customers:email,id", "inv.customers", ["email", "id"]),          # the order written
    ("inv.customers:region", "inv.customers", ["Region"]),                 # names ignore case
    ("(.*).customers:code;inv.orders:id", "shop.customers", ["code"]),     # table regexes
    ("inv.customers:e.*", "inv.customers", ["email"]),                     # column regexes, matched whole
    ("inv.customers:mail", "inv.customers", None),                         # nothing matched: the primary key
    ("inv.orders:id", "inv.customers", None),
    ("inv.customers:email; inv.orders:code", "inv.orders", ["code"]),      # blanks around a part dropped
    ("inv.customers:(id|code)", "inv.customers", ["id", "code"]),          # one pair: the table's order
])
def test_key_columns(setting: str, table: str, key: list[str] | None) -> None:
    assert MessageKeyColumns.parse(setting).for_table(table, COLUMNS) == key


@pytest.mark.parametrize(("setting", "words"), [
    ("inv.customers", "'inv.customers' is not <table>:<column>[,<column>...]"),
    ("inv.customers:a:b", "is not <table>:<column>"),
    ("inv.customers:a,,b", "is not <table>:<column>"),
    ("inv.(customers:a", "is not a valid regular expression"),
])
def test_bad_settings_are_one_line_errors(setting: str, words: str) -> None:
    with pytest.raises(ConfigError, match="message.key.columns: ") as exc:
        MessageKeyColumns.parse(setting)
    assert words in str(exc.value) and "\n" not in str(exc.value)


def test_not_given_keeps_every_primary_key() -> None:
    assert not MessageKeyColumns.parse(None) and MessageKeyColumns.parse("").for_table("a.b", COLUMNS) is None


@pytest.mark.parametrize(("extra", "expected", "words"), [
    ({"snapshot.select.statement.overrides": "inv.a,inv.b",
      "snapshot.select.statement.overrides.inv.a": "SELECT * FROM inv.a WHERE x % 2 = 0",
      "snapshot.select.statement.overrides.inv.b": "SELECT * FROM inv.b"},
     {"inv.a": "SELECT * FROM inv.a WHERE x % 2 = 0", "inv.b": "SELECT * FROM inv.b"}, None),
    ({}, {}, None),
    ({"snapshot.select.statement.overrides": "inv.a"}, None, "no snapshot.select.statement.overrides.inv.a"),
    ({"snapshot.select.statement.overrides.inv.b": "SELECT 1"}, None, "inv.b has a statement but is not listed"),
])
def test_snapshot_select_overrides(extra: dict, expected: dict | None, words: str | None) -> None:
    """snapshot.select.statement.overrides (tests/conformance runs pgc and my_b compare the events with
    Debezium's): a list of tables, each with its statement property."""
    from ingest.connectors.postgres.properties import parse_properties

    props = {"database.hostname": "h", "database.user": "u", "database.dbname": "d", "topic.prefix": "p", **extra}
    if words is None:
        assert parse_properties(props).snapshot_overrides == expected
    else:
        with pytest.raises(ConfigError, match=words):
            parse_properties(props)
