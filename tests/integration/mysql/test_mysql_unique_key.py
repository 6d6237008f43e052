"""A MySQL/MariaDB table without a primary key is keyed by its first unique key when every column of that key
is NOT NULL, as Debezium's MySQL DDL parser keys it (measured by tests/conformance: the unique_key table's
events have the key {"u": 1}); a nullable first unique key keys nothing, and later unique keys are not tried."""

from __future__ import annotations

import pytest

from ingest.schema import SchemaState, TableId


def _key(ddl: str) -> list[str]:
    state = SchemaState()
    state.apply(ddl, "mariadb", "db")
    return list(state.tables[TableId("db", None, "t")].primary_key)


@pytest.mark.parametrize(("ddl", "key"), [
    ("CREATE TABLE t (u INT NOT NULL UNIQUE, v VARCHAR(10))", ["u"]),
    # SHOW CREATE TABLE's form (the snapshot reads it)
    ("CREATE TABLE `t` (\n `u` int(11) NOT NULL,\n `v` varchar(10) DEFAULT NULL,\n UNIQUE KEY `u` (`u`)\n)", ["u"]),
    ("CREATE TABLE t (a INT NOT NULL, b INT NOT NULL, c INT, UNIQUE KEY ab (a, b), UNIQUE KEY c (c))", ["a", "b"]),
    ("CREATE TABLE t (a INT, b INT NOT NULL, UNIQUE KEY a (a), UNIQUE KEY b (b))", []),  # first is nullable
    ("CREATE TABLE t (id INT PRIMARY KEY, u INT NOT NULL UNIQUE)", ["id"]),
    ("CREATE TABLE t (v INT, u INT NOT NULL, CONSTRAINT uq UNIQUE INDEX (u))", ["u"]),
    ("CREATE TABLE t (v INT, KEY k (v))", []),
])
def test_first_not_null_unique_key_is_the_key(ddl: str, key: list[str]) -> None:
    assert _key(ddl) == key
