"""Debezium's signals (seeds: "Sending signals to a Debezium connector"): a row inserted into the signalling table
(`signal.data.collection`, columns id, type, data) or a line appended to the signal file (`signal.file`, channel
`file`) asks the running connector to act. Parsed here once for every connector; the snapshot actions are carried
out by incremental.py. A signal that cannot be carried out gives one log line (the log notification channel) and
the stream goes on: a signal never stops the connector."""

from __future__ import annotations

import fcntl
import json
import logging
import re
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ingest.errors import ConfigError

log = logging.getLogger(__name__)

EXECUTE_SNAPSHOT, STOP_SNAPSHOT = "execute-snapshot", "stop-snapshot"
PAUSE_SNAPSHOT, RESUME_SNAPSHOT = "pause-snapshot", "resume-snapshot"
LOG = "log"
WINDOW_OPEN, WINDOW_CLOSE = "snapshot-window-open", "snapshot-window-close"   # the connector's own watermarks
ACTIONS = (EXECUTE_SNAPSHOT, STOP_SNAPSHOT, PAUSE_SNAPSHOT, RESUME_SNAPSHOT, LOG, WINDOW_OPEN, WINDOW_CLOSE)
SNAPSHOT_TYPES = ("incremental", "blocking")


class SignalError(ValueError):
    """A signal that cannot be carried out, with the reason in one line."""


@dataclass(frozen=True)
class Signal:
    id: str
    type: str
    data: dict[str, Any]


def parse_signal(signal_id: Any, signal_type: Any, data: Any) -> Signal:
    """A signalling table row as a Signal; SignalError for an unknown type or data that is not a JSON object."""
    kind = str(signal_type or "").strip()
    if kind not in ACTIONS:
        raise SignalError(f"signal {signal_id!r}: unknown type {kind!r} (known: {', '.join(ACTIONS[:5])})")
    if data is None or str(data).strip() == "":
        parsed: Any = {}
    else:
        try:
            parsed = json.loads(data)
        except json.JSONDecodeError as exc:
            raise SignalError(f"signal {signal_id!r} ({kind}): data is not JSON ({exc.msg} at {exc.pos})") from None
    if not isinstance(parsed, dict):
        raise SignalError(f"signal {signal_id!r} ({kind}): data must be a JSON object, not {type(parsed).__name__}")
    return Signal(str(signal_id), kind, parsed)


def snapshot_request(signal: Signal) -> tuple[str, list[str], dict[str, str], str | None]:
    """execute-snapshot's data: the snapshot type (incremental or blocking), the data collections (names or regular
    expressions), the additional condition per data collection (a WHERE condition, or a whole SELECT as
    snapshot.select.statement.overrides takes it) and the surrogate key (a column to read the tables' chunks in the
    order of, instead of the primary key; None: the primary key)."""
    data = signal.data
    kind = str(data.get("type") or "incremental").lower()
    if kind not in SNAPSHOT_TYPES:
        raise SignalError(f"signal {signal.id!r}: snapshot type {kind!r} is not one of {', '.join(SNAPSHOT_TYPES)}")
    surrogate = data.get("surrogate-key") or None
    if surrogate is not None and not isinstance(surrogate, str):
        raise SignalError(f"signal {signal.id!r}: surrogate-key must be a column name")
    collections = data.get("data-collections")
    if not isinstance(collections, list) or not collections or not all(isinstance(c, str) and c for c in collections):
        raise SignalError(f"signal {signal.id!r}: data-collections must be a non-empty list of table names")
    conditions: dict[str, str] = {}
    for item in data.get("additional-conditions") or []:
        if not (isinstance(item, dict) and isinstance(item.get("data-collection"), str)
                and isinstance(item.get("filter"), str)):
            raise SignalError(f"signal {signal.id!r}: each additional-conditions entry needs data-collection and "
                              "filter (strings)")
        conditions[item["data-collection"]] = item["filter"]
    return kind, collections, conditions, surrogate


def is_select(condition: str | None) -> bool:
    """An additional condition that is a whole SELECT (read from as a derived table) rather than a WHERE
    condition: Debezium's blocking snapshot takes snapshot.select.statement.overrides' form."""
    return condition is not None and re.match(r"\s*\(?\s*select\b", condition, re.IGNORECASE) is not None


def notify(source: str, action: str, message: str, *args: Any) -> None:
    """The log notification channel (notification.enabled.channels=log): one line per notification."""
    log.info("%s: notification %s: " + message, source, action, *args)


def refuse(source: str, problem: str) -> None:
    log.warning("%s: signal ignored: %s", source, problem)


class FileSignalChannel:
    """signal.enabled.channels=file (Debezium's file channel): one signal per line of `path`, a JSON object with
    id, type and data (an object, or its JSON text). The connector takes the whole file and empties it under an
    exclusive lock (`append_signal` writes under the same lock, so no line is lost between the two). As with
    Debezium's, a signal taken by a run that dies before its effect lands in bronze is not taken again."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def take(self, source: str) -> list[tuple[Any, Any, Any]]:
        """The signals waiting in the file, as (id, type, data text); the file is left empty."""
        if not self.path.is_file():
            return []
        with self.path.open("r+", encoding="utf-8") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            text = handle.read()
            if text:
                handle.seek(0)
                handle.truncate()
        taken = []
        for number, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                item = json.loads(line)
            except json.JSONDecodeError as exc:
                refuse(source, f"{self.path} line {number}: not JSON ({exc.msg} at {exc.pos})")
                continue
            if not isinstance(item, dict):
                refuse(source, f"{self.path} line {number}: a signal is a JSON object with id, type and data")
                continue
            data = item.get("data")
            taken.append((item.get("id"), item.get("type"),
                          json.dumps(data) if isinstance(data, dict | list) else data))
        return taken


def append_signal(path: Path, signal_type: str, data: dict[str, Any]) -> str:
    """Append one signal line to the signal file (what `lakecdc signal` does for the file channel); returns its id."""
    signal_id = str(uuid.uuid4())
    line = json.dumps({"id": signal_id, "type": signal_type, "data": data})
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        handle.write(line + "\n")
    return signal_id


def file_channel(channels: frozenset[str], file: str, base_dir: Path | None) -> FileSignalChannel | None:
    """The file channel when signal.enabled.channels has `file`; a relative signal.file is under `base_dir` (the
    project folder) or the working directory."""
    if "file" not in channels:
        return None
    return FileSignalChannel((base_dir or Path.cwd()) / file)


def send(channels: frozenset[str], to_table: Callable[[], str] | None, file: FileSignalChannel | None,
         signal_type: str, data: dict[str, Any], to_kafka: Callable[[], str] | None = None) -> str:
    """Write a signal where the running connector reads it (`lakecdc signal`): the signalling table when the source
    channel has one (`to_table` inserts the row), else the signal file, else the signal topic (`to_kafka`
    publishes it); returns the signal's id."""
    if to_table is not None and "source" in channels:
        return to_table()
    if file is not None:
        return append_signal(file.path, signal_type, data)
    if to_kafka is not None:
        return to_kafka()
    raise ConfigError("the source takes no signals: set signal.data.collection (the signalling table) or add "
                      "`file` or `kafka` to signal.enabled.channels")
