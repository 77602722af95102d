"""core.db.retry_on_conflict: a unit of work run again on a write conflict, never from inside an
outer transaction (issue #31). The real deadlocks are in links/ and analytics/ tests."""

import logging

import pytest
from django.db import OperationalError, connection, transaction

from core.db import on_rollback, retry_on_conflict

pytestmark = pytest.mark.django_db(transaction=True)


def _conflict() -> OperationalError:
    return OperationalError(
        1213, "Deadlock found when trying to get lock; try restarting transaction"
    )


def test_a_conflict_is_retried_in_a_new_transaction_and_logged(caplog, settings):
    calls, undone = [], []

    @retry_on_conflict
    def unit():
        calls.append(connection.in_atomic_block)
        on_rollback(lambda: undone.append(len(calls)))
        if len(calls) < 3:
            raise _conflict()
        return "done"

    with caplog.at_level(logging.WARNING, logger="core.db"):
        assert unit() == "done"
    assert calls == [True, True, True]
    assert undone == [1, 2]  # the committed attempt's callback is not called
    lines = [r.getMessage() for r in caplog.records if r.name == "core.db"]
    assert [line.split(":")[0] for line in lines] == [
        "certification conflict, retrying (attempt 2 of 5)",
        "certification conflict, retrying (attempt 3 of 5)",
    ]


def test_it_gives_up_after_its_attempts():
    calls = []

    @retry_on_conflict(attempts=2)
    def unit():
        calls.append(1)
        raise _conflict()

    with pytest.raises(OperationalError):
        unit()
    assert len(calls) == 2


def test_other_errors_are_not_retried():
    calls = []

    @retry_on_conflict
    def unit():
        calls.append(1)
        raise OperationalError(1146, "Table doesn't exist")

    with pytest.raises(OperationalError):
        unit()
    assert calls == [1]


def test_inside_an_outer_atomic_block_it_does_not_retry(caplog):
    """A transaction cannot be retried from inside: the server rolled all of it back, so the
    conflict goes up to the outer block's owner."""
    calls = []

    @retry_on_conflict
    def unit():
        calls.append(1)
        raise _conflict()

    with (
        caplog.at_level(logging.WARNING, logger="core.db"),
        pytest.raises(OperationalError),
        transaction.atomic(),
    ):
        unit()
    assert calls == [1]
    assert not [r for r in caplog.records if r.name == "core.db"]


def test_a_nested_unit_is_retried_whole_by_the_outer_one():
    inner_calls, outer_calls = [], []

    @retry_on_conflict
    def inner():
        inner_calls.append(1)
        if len(inner_calls) == 1:
            raise _conflict()

    @retry_on_conflict
    def outer():
        outer_calls.append(1)
        inner()

    outer()
    assert (len(outer_calls), len(inner_calls)) == (2, 2)
