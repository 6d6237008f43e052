"""Property validation of the MySQL/MariaDB connector: Debezium names, defaults, one-line ConfigErrors."""

from __future__ import annotations

import pytest

from ingest.config import SourceSettings
from ingest.connectors.mysql import MySqlConnector
from ingest.connectors.mysql.properties import parse_properties
from ingest.errors import ConfigError

pytestmark = pytest.mark.unit

BASE = {"database.hostname": "127.0.0.1", "database.user": "root", "database.server.id": 5401,
        "topic.prefix": "shop"}


def cfg(**extra):
    return parse_properties("mariadb", {**BASE, **{k.replace("__", "."): v for k, v in extra.items()}})


def test_defaults_follow_debezium():
    c = cfg()
    assert (c.port, c.snapshot_mode, c.locking_mode, c.time_precision_mode, c.decimal_mode) == (
        3306, "initial", "minimal", "adaptive_time_microseconds", "precise")
    assert (c.bigint_unsigned_mode, c.binary_mode, c.tombstones_on_delete, c.include_query) == (
        "long", "bytes", True, False)
    assert c.skipped_operations == frozenset({"t"})  # truncate skipped by default


@pytest.mark.parametrize("mode,expected", [("initial", "initial"), ("initial_only", "initial_only"),
                                           ("no_data", "no_data"), ("schema_only", "no_data"),
                                           ("never", "never"), ("when_needed", "when_needed"),
                                           ("recovery", "recovery"), ("schema_only_recovery", "recovery")])
def test_snapshot_modes(mode, expected):
    assert parse_properties("mysql", {**BASE, "snapshot.mode": mode}).snapshot_mode == expected


@pytest.mark.parametrize("key,value,needle", [
    ("snapshot.mode", "always_sometimes", "snapshot.mode: 'always_sometimes' is not one of"),
    ("snapshot.locking.mode", "extended", "snapshot.locking.mode: 'extended' is not one of"),
    ("time.precision.mode", "nanos", "time.precision.mode"),
    ("decimal.handling.mode", "float", "decimal.handling.mode"),
    ("bigint.unsigned.handling.mode", "string", "bigint.unsigned.handling.mode"),
    ("binary.handling.mode", "base32", "binary.handling.mode"),
    ("tombstones.on.delete", "maybe", "is not true or false"),
    ("database.port", "http", "not an integer"),
    ("database.server.id", 0, "is not at least 1"),
    ("topic.prefix", "bad prefix!", "topic.prefix"),
    ("skipped.operations", "c,x", "skipped.operations"),
    ("table.include.list", "shop.(", "is not a valid regular expression"),
    ("databse.hostname", "x", "unknown property 'databse.hostname' (did you mean 'database.hostname'?)"),
    ("converters", "isbn", "is a Debezium property lakecdc does not support yet"),
    ("signal.enabled.channels", "kafka", "signal.enabled.channels"),
])
def test_invalid_values_are_one_line_errors(key, value, needle):
    with pytest.raises(ConfigError) as err:
        parse_properties("mariadb", {**BASE, key: value})
    assert needle in str(err.value) and "\n" not in str(err.value)


def test_required_and_exclusive_properties():
    for key in ("database.hostname", "database.user", "topic.prefix", "database.server.id"):
        props = {k: v for k, v in BASE.items() if k != key}
        with pytest.raises(ConfigError, match=key):
            parse_properties("mariadb", props)
    with pytest.raises(ConfigError, match="cannot both be set"):
        cfg(**{"table.include.list": "a.b", "table.exclude.list": "a.c"})


def test_filters_are_anchored_and_system_databases_excluded():
    f = cfg(**{"table.include.list": "inventory.cust", "column.exclude.list": r"inventory\.customers\.email"}).filters
    assert not f.table("inventory", "customers")          # anchored: must match the whole name
    assert f.table("inventory", "cust")
    assert not f.column("inventory", "customers", "email") and f.column("inventory", "customers", "id")
    assert not cfg().filters.table("mysql", "user")
    g = cfg(**{"database.exclude.list": "tmp.*"}).filters
    assert g.database("shop") and not g.database("tmp1")


def test_kafka_only_properties_are_accepted_and_initial_statements_split():
    c = cfg(**{"schema.history.internal.kafka.topic": "h", "tasks.max": 1,
               "database.initial.statements": "SET a=1;SET b=';;'"})
    assert c.initial_statements == ("SET a=1", "SET b=';'")


def test_connector_validates_before_connecting():
    settings = SourceSettings(name="s", connector="mariadb", properties={**BASE, "database.port": 1,
                                                                        "decimal.handling.mode": "bogus"})
    with pytest.raises(ConfigError, match="decimal.handling.mode"):
        MySqlConnector(settings)
    ok = MySqlConnector(SourceSettings(name="s", connector="mysql", properties=dict(BASE)))
    assert ok.flavor == "mysql" and ok._conn is None   # nothing connected yet
    with pytest.raises(ConfigError, match="postgresql"):
        MySqlConnector(SourceSettings(name="s", connector="postgresql", properties=dict(BASE)))
