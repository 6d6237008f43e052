"""A replication slot the server invalidated (it fell further behind than max_slot_wal_keep_size, and the WAL
it needed was removed: pg_replication_slots.wal_status 'lost'). Until stop 51 the connector retried
START_REPLICATION slot.max.retries times with backoff and then failed with the server's first line only
("cannot read from logical replication slot"), which does not say why or what to do. Now a resumed run says
the slot was invalidated and the changes after its position are lost (snapshot.mode=initial), or takes a new
snapshot (when_needed), as it does for a slot that no longer exists. On a private server: the shared one must
not be reconfigured."""

from __future__ import annotations

import logging

import pytest

from ingest.errors import LakecdcError
from tests.support.connector_family import MEMBERS, SCHEMA
from tests.support.pg import Collector

pytestmark = pytest.mark.integration

SLOT = "slotlost"


def _invalidate_slot(member, server) -> None:
    """Keep at most 1 MB of WAL for slots, write and switch past several WAL segments, checkpoint: the
    checkpointer removes the old segments and invalidates the slot that still needed them."""
    conn = member.connect(server)
    conn.autocommit = True
    with conn.cursor() as cur:
        cur.execute("ALTER SYSTEM SET max_slot_wal_keep_size = '1MB'")
        cur.execute("SELECT pg_reload_conf()")
    conn.close()
    for i in range(4):
        member.execute(server, f"INSERT INTO {SCHEMA}.t SELECT g, repeat('x', 500) FROM "
                               f"generate_series({100 + i * 10_000}, {100 + i * 10_000 + 5_000}) g",
                       "SELECT pg_switch_wal()")
    member.execute(server, "CHECKPOINT")
    conn = member.connect(server)
    with conn.cursor() as cur:
        cur.execute("SELECT wal_status FROM pg_replication_slots WHERE slot_name = %s", (SLOT,))
        assert cur.fetchone() == ("lost",)
    conn.close()


def test_an_invalidated_slot_is_reported_at_once_or_replaced_by_a_new_snapshot(caplog) -> None:
    member = MEMBERS["postgresql"]
    with member.private_server() as server:
        member.execute(server, f"CREATE SCHEMA {SCHEMA}", f"CREATE TABLE {SCHEMA}.t (id int PRIMARY KEY, v text)",
                       f"INSERT INTO {SCHEMA}.t VALUES (1, 'a'), (2, 'b')")
        first = Collector(member.make_connector(server, SLOT)).run()
        first.conn.close()
        assert sorted(e.op for e in first.events) == ["r", "r"]
        resume = first.resume_state()
        _invalidate_slot(member, server)

        # snapshot.mode=initial: the run fails at once and says why; nothing is retried
        with caplog.at_level(logging.WARNING), pytest.raises(LakecdcError) as failure:
            Collector(member.make_connector(server, SLOT), resume).run()
        message = str(failure.value)
        assert "was invalidated by the server" in message and "max_slot_wal_keep_size" in message, message
        assert "are lost" in message and "snapshot.mode=when_needed" in message, message
        assert not [r for r in caplog.records if "streaming start failed" in r.getMessage()]

        # when_needed: a new snapshot replaces the slot, then streaming goes on from the new one
        again = Collector(member.make_connector(server, SLOT, **{"snapshot.mode": "when_needed"}), resume)
        again.run()
        rows = {e.key for e in again.events if e.op == "r"}
        assert len(rows) == 2 + 4 * 5_001, len(rows)
        member.execute(server, f"UPDATE {SCHEMA}.t SET v = 'z' WHERE id = 1")
        again.run(until=lambda c: any(e.op == "u" for e in c.events))
        again.conn.close()


def test_starting_the_stream_on_an_invalidated_slot_is_not_retried(caplog) -> None:
    """The stream's own start (a run whose slot was invalidated after the connector checked it, or while it
    streamed and reconnected): the server's SQLSTATE 55000 fails at once, with the server's detail."""
    member = MEMBERS["postgresql"]
    with member.private_server() as server:
        member.execute(server, f"CREATE SCHEMA {SCHEMA}", f"CREATE TABLE {SCHEMA}.t (id int PRIMARY KEY, v text)",
                       f"INSERT INTO {SCHEMA}.t VALUES (1, 'a')")
        collector = Collector(member.make_connector(server, SLOT, **{"slot.max.retries": 2,
                                                                      "slot.retry.delay.ms": 100})).run()
        streaming = collector.conn._streaming
        collector.conn.close()   # its walsender ends (the server would terminate it to invalidate the slot)
        _invalidate_slot(member, server)
        with caplog.at_level(logging.WARNING), pytest.raises(LakecdcError) as failure:
            streaming._connect_stream()
        message = str(failure.value)
        assert "cannot read from logical replication slot" in message, message
        assert "invalidated" in message, message   # the server's DETAIL
        assert not [r for r in caplog.records if "streaming start failed" in r.getMessage()]
