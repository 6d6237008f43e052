"""The property framework (ingest.connectors.properties): each kind of declaration, older names and values,
defaults, required, ignored and unsupported names, did-you-mean, exclusive pairs, all problems in one error;
the connectors' declarations; the docs' tables and doctor's line generated from them."""

from __future__ import annotations

import pytest

from ingest.config import SourceSettings
from ingest.connectors import registry
from ingest.connectors.properties import Field, FieldSet, ignored, unsupported
from ingest.connectors.property_docs import documented_connectors, out_of_date, render, table
from ingest.doctor import source_properties
from ingest.errors import ConfigError

pytestmark = pytest.mark.unit

FIELDS = FieldSet(
    Field("host", required=True, hint="where the server runs"),
    Field("port", "int", default=5432, minimum=1, maximum=65535),
    Field("secret", "password", default=""),
    Field("flag", "bool", default=False),
    Field("mode", "choice", default="fast", allowed=("fast", "safe"), value_aliases={"quick": "fast"}),
    Field("prefix", default="p", pattern=r"[a-z]+", pattern_meaning="a valid prefix (lower-case letters)"),
    Field("names", "list"),
    Field("include", "regex-list", exclusive_with="exclude", aliases=("whitelist",)),
    Field("exclude", "regex-list", aliases=("blacklist",)),
    Field("ops", "choice-list", default="t", allowed=("c", "u", "d", "t")),
    ignored("tasks.max", "history.*"),
    unsupported("mask.*", "read.only"),
)


def parse(**raw):
    return FIELDS.parse({"host": "h", **{k.replace("__", "."): v for k, v in raw.items()}}, "test")


def error_of(raw: dict) -> str:
    with pytest.raises(ConfigError) as err:
        FIELDS.parse(raw, "test")
    text = str(err.value)
    assert "\n" not in text and text.startswith("test: "), text
    return text


@pytest.mark.parametrize(("name", "given", "expected"), [
    ("host", " db ", "db"),                        # strings are stripped
    ("secret", " s p ", " s p "),                  # passwords are not
    ("port", None, 5432), ("port", "", 5432), ("port", " 6543 ", 6543), ("port", 1, 1),
    ("flag", "yes", True), ("flag", "OFF", False), ("flag", True, True), ("flag", "1", True),
    ("mode", "SAFE", "safe"), ("mode", "quick", "fast"), ("mode", None, "fast"),
    ("prefix", "abc", "abc"),
    ("names", "a, b,,c", ("a", "b", "c")), ("names", ["x", "y"], ("x", "y")), ("names", "", ()),
    ("ops", None, frozenset({"t"})), ("ops", "c,U", frozenset({"c", "u"})), ("ops", "None", frozenset()),
    ("ops", "", frozenset()),
])
def test_each_kind_parses(name: str, given, expected) -> None:
    raw = {} if given is None else {name: given}
    assert parse(**raw)[name] == expected


def test_regex_lists_are_anchored_case_insensitive_patterns_under_older_names() -> None:
    (pattern,) = parse(whitelist=r"public\.a.*")["include"]
    assert pattern.fullmatch("PUBLIC.ABC") and not pattern.fullmatch("x.public.abc")
    assert parse()["include"] == ()


@pytest.mark.parametrize(("raw", "problem"), [
    ({"port": "http"}, "port: 'http' is not an integer"),
    ({"port": 0}, "port: 0 is not at least 1"),
    ({"port": "70000"}, "port: 70000 is not at most 65535"),
    ({"flag": "maybe"}, "flag: 'maybe' is not true or false"),
    ({"mode": "slow"}, "mode: 'slow' is not one of fast, safe"),
    ({"prefix": "A-1"}, "prefix: 'A-1' is not a valid prefix (lower-case letters)"),
    ({"ops": "c,x"}, "ops: 'x' is not one of c, u, d, t, none"),
    ({"whitelist": "a.(b"}, "whitelist: 'a.(b' is not a valid regular expression (missing ), unterminated"),
    ({"hosst": "x"}, "unknown property 'hosst' (did you mean 'host'?)"),
    ({"zzz": "x"}, "unknown property 'zzz'"),
    ({"mask.with.5": "x"}, "'mask.with.5' is a Debezium property lakecdc does not support yet"),
    ({"read.only": "true"}, "'read.only' is a Debezium property lakecdc does not support yet"),
    ({"include": "a", "whitelist": "b"}, "'include' and 'whitelist' both given: they name one property; keep "
                                         "'include'"),
    ({"include": "a", "blacklist": "b"}, "include and exclude cannot both be set"),
])
def test_one_wording_per_problem(raw: dict, problem: str) -> None:
    assert problem in error_of({"host": "h", **raw})


def test_required_names_and_every_problem_at_once() -> None:
    text = error_of({"host": " ", "hosst": "x", "port": "http", "mode": "slow"})
    assert text == ("test: unknown property 'hosst' (did you mean 'host'?); required property 'host' is missing "
                    "(where the server runs); port: 'http' is not an integer; mode: 'slow' is not one of fast, safe")


def test_ignored_names_are_accepted_and_reported() -> None:
    parsed = parse(tasks__max=3, history__kafka__topic="h")
    assert parsed.ignored == ("tasks.max", "history.kafka.topic")
    assert "tasks.max" not in parsed.values


def test_non_defaults_hide_passwords_and_translate_older_values() -> None:
    parsed = parse(port="5432", secret="s3cret", mode="quick", ops="u,c", whitelist="a,b")
    assert parsed.non_defaults() == [("host", "h"), ("secret", "(hidden)"), ("include", "a,b"), ("ops", "c,u")]


@pytest.mark.parametrize("groups", [
    (Field("a"), Field("a", "int")),                            # one name twice
    (Field("a", aliases=("b",)), Field("b")),                   # an older name that is also a current one
    (Field("a", "regex-list", exclusive_with="c"),),            # excludes an undeclared name
])
def test_declaring_a_name_twice_fails(groups) -> None:
    with pytest.raises(ValueError):
        FieldSet(*groups)


def test_but_changes_a_common_declaration() -> None:
    port = Field("database.port", "int", minimum=1)
    assert FieldSet(port.but(default=3306)).parse({}, "x")["database.port"] == 3306


# --- the connectors' declarations ---------------------------------------------------------------------------

MYSQL_EXAMPLE = {"database.hostname": "db", "database.port": 3306, "database.user": "u", "database.server.id": 7,
                 "topic.prefix": "shop", "database.include.list": "shop"}
PG_EXAMPLE = {"database.hostname": "db", "database.port": 5432, "database.user": "u", "database.dbname": "shop",
              "topic.prefix": "shop", "schema.include.list": "public", "slot.name": "shop"}


def connector_error(connector: str, props: dict) -> str:
    with pytest.raises(ConfigError) as err:
        registry.create(SourceSettings("src", connector, props))
    text = str(err.value)
    assert "\n" not in text
    return text


@pytest.mark.parametrize(("connector", "props", "expected"), [
    # a MySQL example under the PostgreSQL connector: both foreign names and the missing database, at once
    ("postgresql", MYSQL_EXAMPLE, ["unknown property 'database.server.id'",
                                   "unknown property 'database.include.list'",
                                   "required property 'database.dbname' is missing"]),
    # a PostgreSQL example under the MariaDB connector
    ("mariadb", PG_EXAMPLE, ["unknown property 'database.dbname'", "unknown property 'schema.include.list'",
                             "unknown property 'slot.name'",
                             "required property 'database.server.id' is missing (a numeric replica id"]),
    # typos: the closest known name
    ("postgresql", {**PG_EXAMPLE, "snapshot.mod": "initial", "tabel.include.list": "public.t"},
     ["unknown property 'snapshot.mod' (did you mean 'snapshot.mode'?)",
      "unknown property 'tabel.include.list' (did you mean 'table.include.list'?)"]),
    ("mysql", {**MYSQL_EXAMPLE, "databse.user": "x", "converters": "isbn"},
     ["unknown property 'databse.user' (did you mean 'database.user'?)",
      "'converters' is a Debezium property lakecdc does not support yet"]),
    ("postgresql", {**PG_EXAMPLE, "converters": "isbn"},
     ["'converters' is a Debezium property lakecdc does not support yet"]),
    # a family of names (column.mask.with.N.chars): a name outside the family is unknown, values are checked
    ("mariadb", {**MYSQL_EXAMPLE, "column.mask.with.five.chars": "a.b.c", "column.mask.with.5.chars": "a.(b"},
     ["unknown property 'column.mask.with.five.chars'",
      "column.mask.with.5.chars: 'a.(b' is not a valid regular expression"]),
    ("debezium-json", {"topic.prefx": "a"}, ["unknown property 'topic.prefx' (did you mean 'topic.prefix'?)",
                                              "required property 'path' is missing"]),
    # the same wording for the same problem on every connector
    ("postgresql", {**PG_EXAMPLE, "decimal.handling.mode": "x"},
     ["decimal.handling.mode: 'x' is not one of precise, double, string"]),
    ("mariadb", {**MYSQL_EXAMPLE, "decimal.handling.mode": "x"},
     ["decimal.handling.mode: 'x' is not one of precise, double, string"]),
    ("postgresql", {**PG_EXAMPLE, "topic.prefix": "a b"}, ["topic.prefix: 'a b' is not a valid topic prefix"]),
    ("mariadb", {**MYSQL_EXAMPLE, "topic.prefix": "a b"}, ["topic.prefix: 'a b' is not a valid topic prefix"]),
    ("debezium-json", {"path": "x", "poll.interval.ms": "0"}, ["poll.interval.ms: 0 is not at least 1"]),
    # the embedded engine's records are converted by lakecdc (JsonConverter's bytes, without schemas)
    ("debezium", {"connector.class": "a.B", "topic.prefix": "p", "converter.class": "x",
                  "converter.schemas.enable": "true"},
     ["'converter.class' cannot be set: bronze keeps keys and values as Kafka Connect's JsonConverter writes them",
      "'converter.schemas.enable' cannot be set: bronze keeps every record's schema"]),
])
def test_every_problem_in_one_error(connector: str, props: dict, expected: list[str]) -> None:
    text = connector_error(connector, props)
    for part in expected:
        assert part in text, (part, text)


def test_known_names_pass_and_connectors_keep_their_own_defaults() -> None:
    registry.create(SourceSettings("src", "postgresql", PG_EXAMPLE))
    registry.create(SourceSettings("src", "mariadb", MYSQL_EXAMPLE))
    pg, maria = registry.property_fields("postgresql"), registry.property_fields("mariadb")
    assert (pg["time.precision.mode"].default, maria["time.precision.mode"].default) == (
        "adaptive", "adaptive_time_microseconds")
    # older names differ: database.server.name is topic.prefix on PostgreSQL, accepted and ignored on MySQL
    older = {**{k: v for k, v in PG_EXAMPLE.items() if k != "topic.prefix"}, "database.server.name": "old"}
    assert pg.parse(older, "pg")["topic.prefix"] == "old"
    assert maria.parse({**MYSQL_EXAMPLE, "database.server.name": "old"}, "m").ignored == ("database.server.name",)


@pytest.mark.parametrize(("connector", "example"), [("postgresql", "PG_EXAMPLE"), ("mariadb", "MYSQL_EXAMPLE")])
def test_one_policy_for_kafka_connect_names_and_unsupported_features(connector: str, example: str) -> None:
    fields = registry.property_fields(connector)
    base = globals()[example]
    assert fields.parse({**base, "tasks.max": 1, "connector.class": "x"}, connector).ignored == \
        ("tasks.max", "connector.class")
    with pytest.raises(ConfigError, match="'converters' is a Debezium property lakecdc does not support yet"):
        fields.parse({**base, "converters": "isbn"}, connector)


@pytest.mark.parametrize(("connector", "example"), [("postgresql", "PG_EXAMPLE"), ("mariadb", "MYSQL_EXAMPLE")])
def test_the_kafka_signal_channel_settings(connector: str, example: str) -> None:
    from ingest.connectors import common_properties as common

    fields = registry.property_fields(connector)
    base = {**globals()[example], "signal.enabled.channels": "source,kafka"}
    with pytest.raises(ConfigError, match="set signal.kafka.bootstrap.servers"):
        common.signal_kafka(fields.parse(base, connector))
    settings = common.signal_kafka(fields.parse({**base, "signal.kafka.bootstrap.servers": "b:9092",
                                                 "signal.consumer.security.protocol": "SASL_SSL"}, connector))
    assert settings is not None and settings.topic == f"{base['topic.prefix']}-signal"
    assert settings.connector_name == base["topic.prefix"] and settings.group_id == "kafka-signal"
    assert settings.consumer == {"security.protocol": "SASL_SSL"} and settings.poll_timeout_ms == 0
    assert common.signal_kafka(fields.parse(globals()[example], connector)) is None


def test_incremental_snapshots_are_declared_where_they_are_built() -> None:
    pg = registry.property_fields("postgresql").parse(
        {**PG_EXAMPLE, "signal.data.collection": "public.sig", "incremental.snapshot.chunk.size": 100}, "pg")
    assert pg["signal.data.collection"] == "public.sig" and pg["incremental.snapshot.chunk.size"] == 100
    maria = registry.property_fields("mariadb").parse(
        {**MYSQL_EXAMPLE, "signal.data.collection": "shop.sig", "incremental.snapshot.chunk.size": 100}, "m")
    assert maria["signal.data.collection"] == "shop.sig" and maria["incremental.snapshot.chunk.size"] == 100
    channels = registry.property_fields("mariadb").parse(
        {**MYSQL_EXAMPLE, "notification.enabled.channels": "log", "signal.enabled.channels": "source,file"}, "m")
    assert set(channels["notification.enabled.channels"]) == {"log"}
    assert set(channels["signal.enabled.channels"]) == {"source", "file"}
    with pytest.raises(ConfigError, match="notification.enabled.channels"):
        registry.property_fields("postgresql").parse({**PG_EXAMPLE, "notification.enabled.channels": "jmx"}, "p")
    with pytest.raises(ConfigError, match="'incremental.snapshot.foo' is a Debezium property lakecdc does "
                                          "not support yet"):
        registry.property_fields("mariadb").parse({**MYSQL_EXAMPLE, "incremental.snapshot.foo": 100}, "m")


def test_every_connector_declares_its_properties() -> None:
    assert set(registry.PROPERTY_FIELDS) == set(registry.CONNECTORS)
    for name in registry.known_connectors():
        assert isinstance(registry.property_fields(name), FieldSet)


# --- generated from the declarations ------------------------------------------------------------------------

def test_docs_property_tables_are_up_to_date() -> None:
    assert documented_connectors() == {"postgresql", "mariadb", "debezium-json", "sqlserver", "kafka"}
    assert out_of_date() == [], "run: python -m ingest.connectors.property_docs"


def test_docs_table_is_rendered_from_the_declarations() -> None:
    text = render("x\n<!-- properties: debezium-json -->\nold\n<!-- end properties -->\ny\n")
    assert "old" not in text and text.startswith("x\n") and text.endswith("<!-- end properties -->\ny\n")
    assert "| `path` | required | the file or directory to read" in text
    assert "| `max.line.bytes` | `67108864` | longer lines become rejects; at least 1 |" in text


def test_docs_say_a_declared_property_is_accepted_where_a_refused_pattern_covers_it() -> None:
    overlapping = table(FieldSet(Field("signal.file"), *unsupported("signal.*", "converters*")))
    assert "Refused apart from the properties declared above (Debezium features lakecdc does not support yet): " \
           "`signal.*`, `converters*`." in overlapping
    apart = table(FieldSet(Field("host"), *unsupported("signal.*")))
    assert "Refused (Debezium features lakecdc does not support yet): `signal.*`." in apart


def test_doctor_shows_what_a_source_sets_without_passwords() -> None:
    pg = SourceSettings("s", "postgresql", {**PG_EXAMPLE, "database.password": "s3cret", "snapshot.mode": "never",
                                            "database.port": "5432"})
    assert source_properties(pg) == ("database.hostname=db, database.user=u, database.password=(hidden), "
                                     "database.dbname=shop, topic.prefix=shop, slot.name=shop, "
                                     "snapshot.mode=no_data, schema.include.list=public")
    maria = SourceSettings("s", "mariadb", {**MYSQL_EXAMPLE, "tasks.max": 1})
    assert source_properties(maria).endswith("; ignored: tasks.max")
    assert source_properties(SourceSettings("s", "debezium-json", {"path": "in"})) == "path=in"
    assert source_properties(SourceSettings("s", "postgresql", {})) == ""   # invalid: the check says why


def test_gtid_source_filters_are_refused_not_ignored() -> None:
    with pytest.raises(ConfigError, match="'gtid.source.includes' is a Debezium property lakecdc does not support"):
        registry.property_fields("mariadb").parse({**MYSQL_EXAMPLE, "gtid.source.includes": "0-1"}, "mariadb")


def test_read_only_incremental_snapshots_are_mariadbs() -> None:
    from ingest.connectors.mysql.properties import parse_properties

    assert parse_properties("mariadb", {**MYSQL_EXAMPLE, "read.only": True}).read_only
    assert not parse_properties("mariadb", MYSQL_EXAMPLE).read_only
    with pytest.raises(ConfigError, match="read.only=true needs MariaDB"):
        parse_properties("mysql", {**MYSQL_EXAMPLE, "read.only": True})
