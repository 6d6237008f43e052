"""Property names are checked once, the same way on every connector (ingest.connectors.property_names), and
every problem is reported at once (issue 20, item 7): a source whose properties were copied from another
connector's example gets one error listing each unknown name, the closest known name, and each missing one."""

from __future__ import annotations

import pytest

from ingest.config import SourceSettings
from ingest.connectors import registry
from ingest.errors import ConfigError

pytestmark = pytest.mark.unit

MYSQL_EXAMPLE = {"database.hostname": "db", "database.port": 3306, "database.user": "u", "database.server.id": 7,
                 "topic.prefix": "shop", "database.include.list": "shop"}
PG_EXAMPLE = {"database.hostname": "db", "database.port": 5432, "database.user": "u", "database.dbname": "shop",
              "topic.prefix": "shop", "schema.include.list": "public", "slot.name": "shop"}


def error_of(connector: str, props: dict) -> str:
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
    ("mysql", {**MYSQL_EXAMPLE, "databse.user": "x", "column.mask.with.5.chars": "a.b.c"},
     ["unknown property 'databse.user' (did you mean 'database.user'?)",
      "'column.mask.with.5.chars' is a Debezium property that is not supported by this connector"]),
    ("debezium-json", {"topic.prefx": "a"}, ["unknown property 'topic.prefx' (did you mean 'topic.prefix'?)",
                                              "required property 'path' is missing"]),
])
def test_every_problem_in_one_error(connector: str, props: dict, expected: list[str]) -> None:
    text = error_of(connector, props)
    for part in expected:
        assert part in text, (part, text)


def test_known_names_pass() -> None:
    registry.create(SourceSettings("src", "postgresql", PG_EXAMPLE))
    registry.create(SourceSettings("src", "mariadb", MYSQL_EXAMPLE))
