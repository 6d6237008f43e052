"""QuietPolls (debezium_engine/catch_up.py): a Debezium-engine source is caught up only when the check said so at
one quiet poll and a whole quiet poll followed with nothing handed over (a record the engine took from Debezium's
queue reaches a hand-over within that poll)."""

from __future__ import annotations

from ingest.connectors.debezium_engine.catch_up import QuietPolls


def test_caught_up_one_quiet_poll_after_the_check_said_so() -> None:
    polls, asked = QuietPolls(), []

    def check() -> bool:
        asked.append(1)
        return True

    assert polls.quiet(False, check) is False   # the check says so: not yet
    assert polls.quiet(False, check) is True    # a whole quiet poll followed
    assert len(asked) == 1                      # not asked again for the confirmation


def test_a_hand_over_after_the_check_starts_over() -> None:
    polls = QuietPolls()
    assert polls.quiet(False, lambda: True) is False
    polls.handed_over()   # a record that was on its way when the check said so
    assert polls.quiet(False, lambda: False) is False
    assert polls.quiet(False, lambda: True) is False
    assert polls.quiet(False, lambda: True) is True


def test_something_on_its_way_is_never_caught_up_and_resets_the_check() -> None:
    polls, asked = QuietPolls(), []

    def check() -> bool:
        asked.append(1)
        return True

    assert polls.quiet(False, check) is False
    assert polls.quiet(True, check) is False    # a hand-over under way
    assert not asked[1:]                        # the check is not asked while something is on its way
    assert polls.quiet(False, check) is False   # asked again, then one more quiet poll
    assert polls.quiet(False, check) is True


def test_after_a_catch_up_the_next_one_is_asked_afresh() -> None:
    polls = QuietPolls()
    assert [polls.quiet(False, lambda: True) for _ in range(4)] == [False, True, False, True]
