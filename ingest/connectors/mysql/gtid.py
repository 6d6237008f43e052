"""GTID sets of both flavours.

MariaDB: `domain-server-sequence`, a set is one `d-s-n` entry per (domain, server), comma-separated
(`@@gtid_binlog_pos`). MySQL: `uuid:interval[:interval...]`, comma-separated (`Executed_Gtid_Set`), where
an interval is `n` or `a-b`.
"""

from __future__ import annotations

import re

from ingest.errors import LakecdcError

_MARIADB = re.compile(r"^(\d+)-(\d+)-(\d+)$")
_MYSQL_INTERVAL = re.compile(r"^(\d+)(?:-(\d+))?$")


class MariaDbGtidSet:
    """Latest sequence number per (domain, server)."""

    def __init__(self, text: str | None = None) -> None:
        self.entries: dict[tuple[int, int], int] = {}
        self._text: str | None = None   # str(self), until the next add
        for item in (text or "").replace("\n", "").split(","):
            item = item.strip()
            if not item:
                continue
            match = _MARIADB.match(item)
            if not match:
                raise LakecdcError(f"not a MariaDB GTID: {item!r} (expected domain-server-sequence)")
            domain, server, seq = (int(g) for g in match.groups())
            self.entries[(domain, server)] = max(seq, self.entries.get((domain, server), 0))
        # The entry that add() keeps moving (one server writes the binlog) and the text around it, so that str()
        # after each transaction formats that entry alone instead of sorting and joining the whole set
        self._moving: tuple[int, int] | None = None
        self._around: tuple[str, str] | None = None

    def add(self, gtid: str) -> None:
        """Every committed transaction's GTID (the streaming hot path)."""
        parts = gtid.strip().split("-")
        if len(parts) != 3 or not (parts[0].isdigit() and parts[1].isdigit() and parts[2].isdigit()):
            raise LakecdcError(f"not a MariaDB GTID: {gtid!r}")
        self.add_numbers(int(parts[0]), int(parts[1]), int(parts[2]))

    def add_numbers(self, domain: int, server: int, sequence: int) -> None:
        """add() of the GTID domain-server-sequence given as its numbers."""
        key = (domain, server)
        if key != self._moving:
            self._moving, self._around = key, None
        self.entries[key] = sequence
        self._text = None

    def contains(self, other: MariaDbGtidSet) -> bool:
        """Has this set seen everything `other` has (per domain and server)?"""
        return all(self.entries.get(key, -1) >= seq for key, seq in other.entries.items())

    def __str__(self) -> str:
        if self._text is None:
            moving, around = self._moving, self._around
            if around is not None and moving is not None:
                self._text = f"{around[0]}{moving[0]}-{moving[1]}-{self.entries[moving]}{around[1]}"
            else:
                keys = sorted(self.entries)
                pieces = [f"{d}-{s}-{self.entries[(d, s)]}" for d, s in keys]
                self._text = ",".join(pieces)
                if moving in self.entries:
                    at = keys.index(moving)
                    self._around = (",".join(pieces[:at]) + ("," if at else ""),
                                    ("," if at + 1 < len(pieces) else "") + ",".join(pieces[at + 1:]))
        return self._text


class MySqlGtidSet:
    """Executed transaction intervals per server UUID."""

    def __init__(self, text: str | None = None) -> None:
        self.entries: dict[str, list[tuple[int, int]]] = {}
        for item in (text or "").replace("\n", "").split(","):
            item = item.strip()
            if not item:
                continue
            uuid, _, rest = item.partition(":")
            if not rest:
                raise LakecdcError(f"not a MySQL GTID set entry: {item!r} (expected uuid:interval)")
            for interval in rest.split(":"):
                match = _MYSQL_INTERVAL.match(interval)
                if not match:
                    raise LakecdcError(f"not a MySQL GTID interval: {interval!r} in {item!r}")
                start = int(match.group(1))
                self._add_interval(uuid.lower(), start, int(match.group(2) or start))

    def _add_interval(self, uuid: str, start: int, end: int) -> None:
        intervals = sorted(self.entries.get(uuid, []) + [(start, end)])
        merged: list[tuple[int, int]] = []
        for a, b in intervals:
            if merged and a <= merged[-1][1] + 1:
                merged[-1] = (merged[-1][0], max(merged[-1][1], b))
            else:
                merged.append((a, b))
        self.entries[uuid] = merged

    def add(self, gtid: str) -> None:
        uuid, _, txn = gtid.strip().partition(":")
        if not txn.isdigit():
            raise LakecdcError(f"not a MySQL GTID: {gtid!r} (expected uuid:transaction)")
        self._add_interval(uuid.lower(), int(txn), int(txn))

    def contains(self, other: MySqlGtidSet) -> bool:
        for uuid, intervals in other.entries.items():
            mine = self.entries.get(uuid, [])
            for a, b in intervals:
                if not any(x <= a and b <= y for x, y in mine):
                    return False
        return True

    def __str__(self) -> str:
        parts = []
        for uuid, intervals in sorted(self.entries.items()):
            text = ":".join(f"{a}" if a == b else f"{a}-{b}" for a, b in intervals)
            parts.append(f"{uuid}:{text}")
        return ",".join(parts)


def gtid_set(flavor: str, text: str | None) -> MariaDbGtidSet | MySqlGtidSet:
    return MariaDbGtidSet(text) if flavor == "mariadb" else MySqlGtidSet(text)
