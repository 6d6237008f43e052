"""MongoDB's prerequisites for Debezium's MongoDB connector, over pymongo: a replica set or a sharded cluster
(change streams do not exist on a standalone server); the user's privileges let it open the change stream
Debezium opens (`capture.scope`: deployment, the default, watches every database and needs `find` and
`changeStream` on all non-system collections; database or collection narrow it to `capture.target`) and read the
literally named databases and collections of the include lists (the snapshot); and the oplog window, the time
between its first and last entry: a connector stopped for longer than the window finds its resume token gone
and must snapshot again, so a window below `lakecdc.oplog.min.window.hours` (default 1) is a problem.

The oplog is read from local.oplog.rs, which needs read on `local` (readAnyDatabase does not give it) and is not
reachable through mongos: the window is then reported as not measured rather than guessed.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ingest.connectors.debezium_engine.prerequisites import (
    Probe,
    Properties,
    Results,
    Row,
    connect_timeout,
    integer,
    listed,
    one_line,
    patterns,
    required,
)
from ingest.errors import LakecdcError

# name -> (database, command document); a command's rows: its cursor's first batch, else the reply itself
QUERIES: dict[str, tuple[str, dict[str, Any]]] = {
    "hello": ("admin", {"hello": 1}),
    "connection_status": ("admin", {"connectionStatus": 1, "showPrivileges": True}),
    "oplog_first": ("local", {"find": "oplog.rs", "sort": {"$natural": 1}, "limit": 1, "projection": {"ts": 1}}),
    "oplog_last": ("local", {"find": "oplog.rs", "sort": {"$natural": -1}, "limit": 1, "projection": {"ts": 1}}),
}
MIN_OPLOG_WINDOW = "lakecdc.oplog.min.window.hours"
_DEFAULT_MIN_OPLOG_WINDOW_HOURS = 1
_LITERAL = re.compile(r"(?:[^\\^$*+?()\[\]{}|]|\\\.)+")   # a pattern that names one thing (`.` read as a dot)
_ALL = ("", "")   # the resource {db: "", collection: ""}: all non-system collections of all databases


def _reply(results: Results, name: str) -> Row:
    rows = results.get(name) or []
    return rows[0] if rows else {}


def topology(results: Results) -> str | None:
    """'replica set <name>', 'sharded cluster' or None (a standalone server)."""
    hello = _reply(results, "hello")
    if hello.get("msg") == "isdbgrid":
        return "sharded cluster"
    if hello.get("setName"):
        return f"replica set {hello['setName']}"
    return None


def _scope(properties: Properties) -> tuple[str, tuple[str, str]]:
    """(description, resource) of the change stream Debezium opens."""
    scope = (properties.get("capture.scope") or "deployment").strip().lower()
    if scope == "deployment":
        return "every database (capture.scope=deployment)", _ALL
    if scope not in ("database", "collection"):
        raise LakecdcError(f"capture.scope is {scope!r}: expected deployment, database or collection")
    target = required(properties, "capture.target")
    if scope == "database":
        return f"database {target} (capture.scope=database)", (target, "")
    database, _, collection = target.partition(".")
    if not collection:
        raise LakecdcError(f"capture.target is {target!r}: capture.scope=collection needs database.collection")
    return f"collection {target} (capture.scope=collection)", (database, collection)


def _literals(properties: Properties, name: str) -> list[str]:
    patterns(properties, name)   # an invalid pattern: the same error as everywhere
    return [item.replace("\\.", ".") for item in listed(properties, name) if _LITERAL.fullmatch(item)]


def needed_resources(properties: Properties) -> list[tuple[tuple[str, str], tuple[str, ...]]]:
    """(resource (db, collection), actions) the connector uses: the change stream's, then each literally named
    database and collection of the include lists (read by the snapshot)."""
    _, stream = _scope(properties)
    needed = [(stream, ("find", "changeStream"))]
    needed += [((database, ""), ("find",)) for database in _literals(properties, "database.include.list")]
    needed += [((db, coll), ("find",)) for db, _, coll in
               (item.partition(".") for item in _literals(properties, "collection.include.list")) if coll]
    return needed


def _covers(resource: dict[str, Any], wanted: tuple[str, str]) -> bool:
    if resource.get("anyResource"):
        return True
    if "db" not in resource or "collection" not in resource:   # the cluster resource
        return False
    database, collection = wanted
    return ((resource["db"] == "" or (database != "" and resource["db"] == database))
            and (resource["collection"] == "" or (collection != "" and resource["collection"] == collection)))


def lacking(results: Results, properties: Properties) -> list[tuple[tuple[str, str], list[str]]]:
    """(resource, actions lacking on it) for every needed resource the user's privileges do not cover."""
    privileges = _reply(results, "connection_status").get("authInfo", {}).get("authenticatedUserPrivileges", [])
    out = []
    for wanted, actions in needed_resources(properties):
        missing = [action for action in actions
                   if not any(_covers(p.get("resource", {}), wanted)
                              and (action in p.get("actions", []) or "anyAction" in p.get("actions", []))
                              for p in privileges)]
        if missing:
            out.append((wanted, missing))
    return out


def _user(results: Results) -> dict[str, Any] | None:
    users = _reply(results, "connection_status").get("authInfo", {}).get("authenticatedUsers", [])
    return users[0] if users else None


def _describe(resource: tuple[str, str]) -> str:
    database, collection = resource
    if resource == _ALL:
        return "all non-system collections of every database"
    return f"collection {database}.{collection}" if collection else f"database {database}"


def _grant(user: dict[str, Any], resource: tuple[str, str]) -> str:
    role = ('{role: "readAnyDatabase", db: "admin"}' if resource == _ALL
            else f'{{role: "read", db: {json.dumps(resource[0])}}}')
    return (f'db.getSiblingDB({json.dumps(user.get("db", "admin"))}).grantRolesToUser('
            f'{json.dumps(user.get("user", ""))}, [{role}])')


def oplog_window(results: Results) -> int | None:
    """Seconds between the first and the last oplog entry; None when the oplog was not read."""
    first, last = _reply(results, "oplog_first").get("ts"), _reply(results, "oplog_last").get("ts")
    if first is None or last is None:
        return None
    return int(last.time) - int(first.time)


def _min_window_hours(properties: Properties) -> int:
    return integer(properties, MIN_OPLOG_WINDOW, _DEFAULT_MIN_OPLOG_WINDOW_HOURS)


def duration(seconds: int) -> str:
    if seconds >= 3600:
        return f"{seconds / 3600:.1f} hours"
    return f"{seconds // 60} minutes" if seconds >= 60 else f"{seconds} seconds"


def problems(results: Results, properties: Properties) -> list[str]:
    if topology(results) is None:
        return ["the server is a standalone mongod: change streams need a replica set or a sharded cluster; "
                "restart it with --replSet rs0 and run rs.initiate() (a one-member replica set will do)"]
    found = []
    user = _user(results)
    if user is not None:
        for resource, missing in lacking(results, properties):
            found.append(f"user {user.get('user')} lacks {' and '.join(missing)} on {_describe(resource)}, which "
                         f"Debezium's change stream and snapshot need: {_grant(user, resource)}")
    window, minimum = oplog_window(results), _min_window_hours(properties)
    if window is not None and window < minimum * 3600:
        found.append(f"the oplog window is {duration(window)}, below {MIN_OPLOG_WINDOW}={minimum}: a connector "
                     f"stopped for longer loses its resume position and must snapshot again; on each replica set "
                     f"member: db.adminCommand({{replSetResizeOplog: 1, minRetentionHours: {minimum}}}) (or a "
                     f"larger size)")
    return found


def summary(results: Results, properties: Properties) -> str:
    what, _ = _scope(properties)
    user = _user(results)
    access = (f"user {user.get('user')} may open the change stream on {what}" if user is not None
              else f"no user authenticated, privileges not checked (change stream on {what})")
    window = oplog_window(results)
    if window is not None:
        oplog = f"oplog window {duration(window)}"
    elif topology(results) == "sharded cluster":
        oplog = "oplog window not measured through mongos (check each shard's)"
    else:
        oplog = "oplog window not measured (reading local.oplog.rs needs read on the local database)"
    return f"{topology(results)}, {access}, {oplog}"


# --- the live path -----------------------------------------------------------------------------------------------

def _host_list(connection_string: str) -> str:
    """The hosts of a connection string, without its user information."""
    rest = connection_string.split("://", 1)[-1]
    return rest.rsplit("@", 1)[-1].split("/", 1)[0].split("?", 1)[0]


def collect(properties: Properties) -> Results:
    import pymongo
    import pymongo.errors

    uri = required(properties, "mongodb.connection.string")
    options: dict[str, Any] = {"appname": "lakecdc"}
    if "serverselectiontimeoutms" not in uri.lower():
        options["serverSelectionTimeoutMS"] = int(connect_timeout(properties) * 1000)
    if "connecttimeoutms" not in uri.lower():
        options["connectTimeoutMS"] = int(connect_timeout(properties) * 1000)
    if properties.get("mongodb.user"):
        options.update(username=properties["mongodb.user"], password=properties.get("mongodb.password") or "",
                       authSource=properties.get("mongodb.authsource") or "admin")
    where = f"MongoDB at {_host_list(uri)}"
    try:
        client: Any = pymongo.MongoClient(uri, **options)
    except (pymongo.errors.PyMongoError, ValueError, TypeError) as exc:
        raise LakecdcError(f"cannot use mongodb.connection.string: {one_line(exc)}") from None

    def run(name: str) -> list[Row]:
        database, command = QUERIES[name]
        reply = client[database].command(command)
        return list(reply["cursor"]["firstBatch"]) if "cursor" in reply else [dict(reply)]

    try:
        try:
            results: Results = {"hello": run("hello")}
        except pymongo.errors.ServerSelectionTimeoutError as exc:
            reason = re.split(r", Timeout: | \(configured timeouts", str(exc), maxsplit=1)[0]
            raise LakecdcError(f"cannot reach {where} within {client.options.server_selection_timeout:g} s: "
                               f"{one_line(Exception(reason))}") from None
        results["connection_status"] = run("connection_status")
        if topology(results) is not None and topology(results) != "sharded cluster":
            for name in ("oplog_first", "oplog_last"):
                try:
                    results[name] = run(name)
                except pymongo.errors.OperationFailure:
                    pass   # no read on local: the window is reported as not measured
        return results
    except pymongo.errors.PyMongoError as exc:
        raise LakecdcError(f"{where}: {one_line(exc)}") from None
    finally:
        client.close()


PROBE = Probe(kind="mongodb", queries=QUERIES, collect=collect, problems=problems, summary=summary)
