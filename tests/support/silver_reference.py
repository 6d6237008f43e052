"""The reference model of the silver property test (tests/integration/silver/test_silver_property.py, also used
by the engine lane): a source database and the Debezium events it emits, in commit (seq) order."""

from __future__ import annotations

import json

from tests.support.silver import INT32, PLACEHOLDER, STRING, Bronze

TABLES = ("db.s.t_a", "db.s.t_b")


KEYS = [("id", INT32)]


BASE = [("id", INT32), ("v", STRING), ("n", INT32)]


EXTRA = [*BASE, ("extra", STRING)]


class Reference:
    """The source database and the Debezium events it emits, in commit (seq) order."""

    def __init__(self, bronze: Bronze):
        self.bronze = bronze
        self.rows: dict[str, dict[int, dict]] = {t: {} for t in TABLES}
        self.columns = {t: BASE for t in TABLES}
        self.events: list[dict] = []

    def _emit(self, t: str, op: str | None, key: int | None, before: dict | None, after: dict | None) -> None:
        self.events.append(self.bronze.event(t, op, None if key is None else {"id": key}, before, after,
                                             KEYS, self.columns[t]))

    def _row(self, t: str, key: int, v: str, n: int) -> dict:
        row = {"id": key, "v": v, "n": n}
        if self.columns[t] is EXTRA:
            row["extra"] = f"x{n}"
        return row

    def apply(self, step: tuple) -> None:
        kind, t = step[0], step[1]
        rows = self.rows[t]
        if kind == "upsert":
            _, _, key, v, n = step
            after = self._row(t, key, v, n)
            self._emit(t, "u" if key in rows else "c", key, rows.get(key), after)
            rows[key] = after
        elif kind == "delete" and step[2] in rows:
            key = step[2]
            self._emit(t, "d", key, rows.pop(key), None)
            self._emit(t, None, key, None, None)  # tombstone
        elif kind == "pk_change" and step[2] in rows and step[3] not in rows:
            old, new = step[2], step[3]
            row = rows.pop(old)
            self._emit(t, "d", old, row, None)
            self._emit(t, None, old, None, None)
            rows[new] = {**row, "id": new}
            self._emit(t, "c", new, None, rows[new])
        elif kind == "toast" and step[2] in rows:
            key = step[2]
            self._emit(t, "u", key, None, {**rows[key], "v": PLACEHOLDER})
        elif kind == "truncate":
            rows.clear()
            self.events.append({**self.bronze.event(t, "t", None, None, None, KEYS, self.columns[t]), "key": None})
        elif kind == "add_column":
            self.columns[t] = EXTRA

    def expected_history(self, t: str) -> list[tuple]:
        """(id, v, n, extra, valid_from_seq, valid_to_seq) for every version, from the events in seq order."""
        versions: list[list] = []
        open_by_key: dict[int, list] = {}
        last_v: dict[int, str] = {}
        for e in (e for e in self.events if e["table_id"] == t and e["op"] is not None):
            if e["op"] == "t":
                for ver in open_by_key.values():
                    ver[5] = e["seq"]
                open_by_key.clear()
                continue

            key = json.loads(e["key"])["id"]
            if key in open_by_key:
                open_by_key.pop(key)[5] = e["seq"]
            if e["op"] == "d":
                continue
            after = json.loads(e["value"])["after"]
            v = last_v.get(key) if after["v"] == PLACEHOLDER else after["v"]
            last_v[key] = v
            ver = [key, v, after["n"], after.get("extra"), e["seq"], None]
            versions.append(ver)
            open_by_key[key] = ver
        return sorted(tuple(v) for v in versions)
