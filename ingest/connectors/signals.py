"""Debezium's signals (seeds: "Sending signals to a Debezium connector"): a row inserted into the signalling table
(`signal.data.collection`, columns id, type, data) asks the running connector to act. Parsed here once for every
connector; the snapshot actions are carried out by incremental.py. A signal that cannot be carried out gives one
log line (the log notification channel) and the stream goes on: a signal never stops the connector."""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from typing import Any

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


def snapshot_request(signal: Signal) -> tuple[list[str], dict[str, str]]:
    """execute-snapshot's data: the data collections (names or regular expressions) and the additional
    condition per data collection. SignalError for what lakecdc does not do (blocking snapshots, surrogate keys)."""
    data = signal.data
    kind = str(data.get("type") or "incremental").lower()
    if kind not in SNAPSHOT_TYPES:
        raise SignalError(f"signal {signal.id!r}: snapshot type {kind!r} is not one of {', '.join(SNAPSHOT_TYPES)}")
    if kind == "blocking":
        raise SignalError(f"signal {signal.id!r}: blocking snapshots are not supported yet; use type incremental")
    if data.get("surrogate-key"):
        raise SignalError(f"signal {signal.id!r}: surrogate-key is not supported yet (chunks follow the primary key)")
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
    return collections, conditions


def notify(source: str, action: str, message: str, *args: Any) -> None:
    """The log notification channel (notification.enabled.channels=log): one line per notification."""
    log.info("%s: notification %s: " + message, source, action, *args)


def refuse(source: str, problem: str) -> None:
    log.warning("%s: signal ignored: %s", source, problem)
